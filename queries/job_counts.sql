-- Job counts per (tenant, workflow, status), kept by triggers on jobs as signed delta rows.

-- name: JobCountsList :many
SELECT workflow, status, sum(n)::bigint AS n
FROM job_counts
WHERE tenant_id = @tenant_id
GROUP BY workflow, status
HAVING sum(n) <> 0
ORDER BY workflow, status;

-- name: JobCountsTryLock :one
-- Compactions take this transaction-scoped lock; a reader that cannot get it just sums.
SELECT pg_try_advisory_xact_lock(@key::bigint);

-- name: JobCountsCompact :execrows
-- Folds the delta rows (of one tenant, or of all when tenant_id is NULL) into one row per
-- key. Deltas inserted concurrently are not in this statement's snapshot and stay as they are.
WITH gone AS (
    DELETE FROM job_counts
    WHERE sqlc.narg('tenant_id')::text IS NULL OR tenant_id = sqlc.narg('tenant_id')::text
    RETURNING tenant_id, workflow, status, n
)
INSERT INTO job_counts (tenant_id, workflow, status, n)
SELECT tenant_id, workflow, status, sum(n)::bigint
FROM gone
GROUP BY tenant_id, workflow, status
HAVING sum(n) <> 0;
