-- Node runs queued or running, each owned by the gateway running it (src/pg/history.rs). The owner's
-- heartbeat in `gateways` is the lease of all its rows: when it stops or misses its heartbeats for the
-- lease time, or hands a row back (gateway NULL: graceful drain), any gateway claims the row with
-- SELECT ... FOR UPDATE SKIP LOCKED and runs the node itself. A node result deletes its row.
CREATE TABLE queue (
    run_id       TEXT NOT NULL,
    node         TEXT NOT NULL,
    why_run      BOOLEAN NOT NULL,
    requested_by TEXT NOT NULL,
    gateway      TEXT,
    enqueued_at  TIMESTAMPTZ NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, node)
);
CREATE INDEX queue_gateway ON queue (gateway);
-- Claims take the oldest first.
CREATE INDEX queue_enqueued ON queue (enqueued_at);
