-- The queue table becomes the truth for admission (src/pg/history.rs, `PgHistory::admit`): a trigger
-- on any gateway coalesces into the node's waiting row, whoever queued it, and `max_queue` counts the
-- waiting rows of every gateway. A row is waiting until the gateway running it marks it started.
ALTER TABLE queue ADD COLUMN started_at TIMESTAMPTZ;
-- Rows of gateways older than this schema cannot say which of theirs started: none counts as waiting.
UPDATE queue SET started_at = enqueued_at;
-- At most one waiting run per node and mode (a running node may have one more waiting behind it).
CREATE UNIQUE INDEX queue_waiting ON queue (node, why_run) WHERE started_at IS NULL;

-- Admit a trigger in one call: serialized with every other admission by a transaction advisory lock
-- (the one-bigint key "netg": its key space is apart from the two-int node locks), so the count against max_queue cannot be passed by two gateways at once.
-- Nodes with a waiting row join it (that run's trigger count goes up once); the others go into the
-- new run p_run, owned by p_gateway. Refused (no row changed): one row, o_node NULL, o_depth the
-- waiting count. Otherwise one row per node: the run it is in.
CREATE FUNCTION netgw_admit(p_run TEXT, p_nodes TEXT[], p_why_run BOOLEAN, p_by TEXT,
                            p_gateway TEXT, p_created_at TEXT, p_max_queue BIGINT)
RETURNS TABLE (o_node TEXT, o_run TEXT, o_depth BIGINT)
LANGUAGE plpgsql AS $$
DECLARE
    v_depth BIGINT;
    v_fresh TEXT[];
BEGIN
    PERFORM pg_advisory_xact_lock(1852142695::BIGINT);
    SELECT count(*) INTO v_depth FROM queue q WHERE q.started_at IS NULL;
    SELECT COALESCE(array_agg(n ORDER BY i), '{}') INTO v_fresh
      FROM unnest(p_nodes) WITH ORDINALITY AS u(n, i)
     WHERE NOT EXISTS (SELECT 1 FROM queue q
                        WHERE q.node = u.n AND q.why_run = p_why_run AND q.started_at IS NULL);
    IF v_depth + cardinality(v_fresh) > p_max_queue THEN
        RETURN QUERY SELECT NULL::TEXT, NULL::TEXT, v_depth;
        RETURN;
    END IF;
    UPDATE runs r SET triggers = r.triggers + 1
     WHERE r.id IN (SELECT q.run_id FROM queue q
                     WHERE q.node = ANY (p_nodes) AND q.why_run = p_why_run AND q.started_at IS NULL);
    RETURN QUERY SELECT q.node, q.run_id, v_depth FROM queue q
                  WHERE q.node = ANY (p_nodes) AND q.why_run = p_why_run AND q.started_at IS NULL;
    IF cardinality(v_fresh) > 0 THEN
        INSERT INTO runs (id, gateway, status, why_run, requested_by, created_at, nodes)
        VALUES (p_run, p_gateway, 'queued', p_why_run, p_by, p_created_at, to_jsonb(v_fresh)::TEXT);
        INSERT INTO run_nodes (run_id, node) SELECT p_run, unnest(v_fresh);
        INSERT INTO queue (run_id, node, why_run, requested_by, gateway)
        SELECT p_run, unnest(v_fresh), p_why_run, p_by, p_gateway;
        RETURN QUERY SELECT f, p_run, v_depth FROM unnest(v_fresh) AS f;
    END IF;
END
$$;
