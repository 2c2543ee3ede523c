#!/usr/bin/env bash
# Claims per second of the shared queue (docs/serve.md, "Capacity"), on this machine: a
# throwaway PostgreSQL (scripts/peers/postgres.sh, fsync off as in the tests: the figure is the
# database's CPU cost, not the disk's), the repository's migrations, ROWS orphaned node runs, then
# pgbench with CLIENTS connections each running the exact claim statement of src/pg/history.rs
# (claim_orphans) with LIMIT BATCH until the queue is empty. Loopback only; bounded by ROWS.
#
#   scripts/pg-claims.sh [ROWS=50000] [CLIENTS=3] [BATCH=1]
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
ROWS="${1:-50000}" CLIENTS="${2:-3}" BATCH="${3:-1}"
BIN="$(ls -d /usr/lib/postgresql/*/bin | head -1)"
DIR="$(mktemp -d)"
trap 'bash "$ROOT/scripts/peers/postgres.sh" stop "$DIR" >/dev/null 2>&1; rm -rf "$DIR"' EXIT
bash "$ROOT/scripts/peers/postgres.sh" start "$DIR" >/dev/null
# shellcheck disable=SC1091
. "$DIR/postgres.env"
export PGPASSWORD="$PG_PASSWORD"
psql() { "$BIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U netgw -d netgw -qAt -v ON_ERROR_STOP=1 "$@"; }
for f in "$ROOT"/migrations/postgres/*.sql; do psql -f "$f" >/dev/null; done
psql -c "INSERT INTO gateways (id, host, pid, listen, heartbeat_at) VALUES ('dead', 'h', 1, 'x', now() - interval '1 hour')"
psql -c "INSERT INTO queue (run_id, node, why_run, requested_by, gateway) \
         SELECT 'run-' || (i / 10), 'node-' || i, false, 'bench', 'dead' FROM generate_series(1, $ROWS) i"
cat >"$DIR/claim.sql" <<SQL
WITH c AS (
  SELECT run_id, node FROM queue
  WHERE gateway IS NULL OR gateway NOT IN (SELECT id FROM gateways WHERE stopped_at IS NULL
        AND heartbeat_at > now() - make_interval(secs => 30))
  ORDER BY enqueued_at LIMIT $BATCH FOR UPDATE SKIP LOCKED)
DELETE FROM queue q USING c WHERE q.run_id = c.run_id AND q.node = c.node
RETURNING q.run_id, q.node, q.why_run, q.requested_by;
SQL
per_client=$(( ROWS / BATCH / CLIENTS ))
out="$("$BIN/pgbench" -h 127.0.0.1 -p "$PG_PORT" -U netgw -n -M prepared -c "$CLIENTS" -j "$CLIENTS" \
    -t "$per_client" -f "$DIR/claim.sql" netgw 2>&1)"
tps="$(echo "$out" | sed -n 's/^tps = \([0-9.]*\).*/\1/p')"
left="$(psql -c 'SELECT count(*) FROM queue')"
echo "rows=$ROWS clients=$CLIENTS batch=$BATCH statements/s=$tps claims/s=$(python3 -c "print(round($tps*$BATCH))") left=$left"
echo "$out" | grep -E "latency average|number of transactions actually processed"
