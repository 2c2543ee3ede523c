-- A run that ended with failed nodes is `finished_with_failures`, or `failed` when no node succeeded
-- (`RunStatus::ended` in src/api/scheduler.rs); earlier versions recorded both `finished`. Their rows
-- get the status they would have now, from the node counts in their summary.
UPDATE runs
SET status = CASE
        WHEN COALESCE((summary::jsonb ->> 'succeeded')::bigint, 0) = 0 THEN 'failed'
        ELSE 'finished_with_failures'
    END
WHERE status = 'finished'
  AND summary IS NOT NULL
  AND COALESCE((summary::jsonb ->> 'failed')::bigint, 0) > 0;
