-- Job counts per (tenant, workflow, status), kept by triggers on jobs as signed delta rows.

-- name: JobCountsList :many
SELECT workflow, status, sum(n)::bigint AS n
FROM job_counts
WHERE tenant_id = @tenant_id
GROUP BY workflow, status
HAVING sum(n) <> 0
ORDER BY workflow, status;

-- name: JobCountsTryLock :one
-- Compactions take this transaction-scoped lock; one that cannot get it skips its turn.
SELECT pg_try_advisory_xact_lock(@key::bigint);

-- name: JobCountsCompact :one
-- Folds every tenant's delta rows into one row per key; keys that have one row already are
-- left alone. Returns how many rows it removed (each now a dead tuple) and whether the
-- connected role may vacuum the table (in PostgreSQL 15: its owner, the database's owner or a
-- superuser, or a member of an owner with its privileges). The workers run it
-- every 2 s (CountJobs, at every dashboard request, only reads: folding there rewrote the
-- rows, flushed the WAL and left dead tuples at the dashboard's request rate). Deltas
-- inserted concurrently are not in this statement's snapshot and stay as they are.
WITH keys AS (
    SELECT tenant_id, workflow, status FROM job_counts
    GROUP BY tenant_id, workflow, status
    HAVING count(*) > 1
), gone AS (
    DELETE FROM job_counts c USING keys k
    WHERE c.tenant_id = k.tenant_id AND c.workflow = k.workflow AND c.status = k.status
    RETURNING c.tenant_id, c.workflow, c.status, c.n
), folded AS (
    INSERT INTO job_counts (tenant_id, workflow, status, n)
    SELECT tenant_id, workflow, status, sum(n)::bigint
    FROM gone
    GROUP BY tenant_id, workflow, status
    HAVING sum(n) <> 0
)
SELECT (SELECT count(*) FROM gone)::bigint AS removed,
       (SELECT pg_has_role(c.relowner, 'USAGE') OR pg_has_role(d.datdba, 'USAGE')
        FROM pg_catalog.pg_class c CROSS JOIN pg_catalog.pg_database d
        WHERE c.oid = 'job_counts'::regclass AND d.datname = current_database())::boolean AS may_vacuum;
