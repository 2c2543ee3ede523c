-- netgw serve on PostgreSQL: the run history shared by every gateway (src/pg/history.rs) and the
-- gateway registry. Applied once, in a transaction, recorded in netgw_schema_migrations (src/pg/mod.rs).
-- Timestamps the API shows are kept as the RFC 3339 text the gateway wrote, as in SQLite; the registry's
-- heartbeats use the server's clock (now()) so gateways with skewed clocks still agree on who is alive.

CREATE TABLE gateways (
    id           TEXT PRIMARY KEY,
    host         TEXT NOT NULL,
    pid          INTEGER NOT NULL,
    listen       TEXT NOT NULL,
    started_at   TIMESTAMPTZ NOT NULL DEFAULT now(),
    heartbeat_at TIMESTAMPTZ NOT NULL DEFAULT now(),
    stopped_at   TIMESTAMPTZ
);

CREATE TABLE runs (
    seq           BIGSERIAL PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    gateway       TEXT NOT NULL,
    status        TEXT NOT NULL,
    why_run       BOOLEAN NOT NULL,
    requested_by  TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    started_at    TEXT,
    finished_at   TEXT,
    nodes         TEXT NOT NULL,
    triggers      BIGINT NOT NULL DEFAULT 1,
    duration_secs DOUBLE PRECISION,
    summary       TEXT,
    note          TEXT
);
-- Runs in flight, per gateway: what a sweep of a dead gateway's runs reads.
CREATE INDEX runs_in_flight ON runs (gateway) WHERE status IN ('queued', 'running');

CREATE TABLE run_nodes (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    node   TEXT NOT NULL,
    PRIMARY KEY (run_id, node)
);
CREATE INDEX run_nodes_node ON run_nodes (node);

CREATE TABLE node_results (
    run_id      TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    node        TEXT NOT NULL,
    status      TEXT NOT NULL,
    finished_at TEXT NOT NULL,
    report      TEXT NOT NULL,
    PRIMARY KEY (run_id, node)
);
CREATE INDEX node_results_node ON node_results (node);

CREATE TABLE events (
    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq    BIGINT NOT NULL,
    event  TEXT NOT NULL,
    PRIMARY KEY (run_id, seq)
);

CREATE TABLE gateway_log (
    id      BIGSERIAL PRIMARY KEY,
    gateway TEXT NOT NULL,
    at      TEXT NOT NULL,
    event   TEXT NOT NULL,
    detail  TEXT NOT NULL
);
