-- Retention by age (src/history/sql.rs, `prune`) deletes runs by their end, and gateway log lines by
-- their time: indexes so a periodic prune reads only what it deletes.
CREATE INDEX IF NOT EXISTS runs_finished_at ON runs (finished_at);
CREATE INDEX IF NOT EXISTS gateway_log_at ON gateway_log (at);
