-- name: EvaluationInsert :exec
INSERT INTO evaluations (id, tenant_id, project_id, supplier_id, thread_id) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (project_id, supplier_id) DO NOTHING;

-- name: EvaluationGet :one
SELECT * FROM evaluations WHERE tenant_id = $1 AND id = $2;

-- name: EvaluationGetForUpdate :one
SELECT * FROM evaluations WHERE tenant_id = $1 AND id = $2 FOR UPDATE;

-- name: EvaluationListByProject :many
SELECT e.*, s.name AS supplier_name
FROM evaluations e JOIN suppliers s ON s.id = e.supplier_id AND s.tenant_id = e.tenant_id
WHERE e.tenant_id = $1 AND e.project_id = $2
ORDER BY e.total_score DESC NULLS LAST, s.name;

-- name: EvaluationSetJob :exec
-- Points an evaluation at the job that runs it now, which makes it queued again (its earlier
-- result no longer stands as the current one) unless the evaluation changed since the job
-- was created: a worker may have claimed the job and run it to its end (persisting the
-- report, which marks the evaluation completed) before this statement, and that must not be
-- undone. A job a worker claimed but has not finished still makes it queued. A job older
-- than the one it points at already (a start whose request stalled while the job ran, and
-- another start followed) changes nothing.
UPDATE evaluations
SET job_id = @job_id,
    status = CASE WHEN EXISTS (SELECT 1 FROM jobs j WHERE j.id = @job_id AND j.tenant_id = @tenant_id
            AND j.created_at > evaluations.updated_at)
        THEN 'queued' ELSE evaluations.status END,
    updated_at = now()
WHERE evaluations.tenant_id = @tenant_id AND evaluations.id = @id
    AND NOT EXISTS (SELECT 1 FROM jobs cur, jobs nw
        WHERE cur.id = evaluations.job_id AND nw.id = @job_id AND cur.created_at > nw.created_at);

-- name: EvaluationSetStatus :exec
UPDATE evaluations SET status = $3, updated_at = now() WHERE tenant_id = $1 AND id = $2;

-- name: EvaluationSetResult :exec
UPDATE evaluations SET status = 'completed', outcome = $3, total_score = $4, report_version = $5, updated_at = now()
WHERE tenant_id = $1 AND id = $2;

-- name: EvaluationRestoreCompleted :exec
-- Marks an evaluation that has a persisted report completed again (its result fields are
-- those of that report): a run that re-persisted nothing new leaves it as it was. It is
-- touched even when it still reads completed, so that EvaluationSetJob, run after, sees
-- that the new job's run has reached its result.
UPDATE evaluations SET status = 'completed', updated_at = now()
WHERE tenant_id = @tenant_id AND id = @id AND report_version >= 1;

-- name: EvaluationPeerTotals :many
SELECT e.id, s.name AS supplier_name, e.total_score::double precision AS total_score
FROM evaluations e JOIN suppliers s ON s.id = e.supplier_id AND s.tenant_id = e.tenant_id
WHERE e.tenant_id = $1 AND e.project_id = $2 AND e.id <> $3 AND e.status = 'completed' AND e.total_score IS NOT NULL AND e.outcome IS DISTINCT FROM 'rejected' AND e.outcome IS DISTINCT FROM 'disqualified'
ORDER BY e.id;

-- name: EvaluationByThread :one
SELECT * FROM evaluations WHERE tenant_id = $1 AND thread_id = $2;

-- name: EvaluationSummaryByProject :many
-- Per tender of a tenant: how many evaluations, how many completed (of those how many a
-- reviewer rejected, and how many a hard rule disqualified), and how many of the rest ended
-- in their job failing (dead-lettered).
SELECT e.project_id, count(*)::bigint AS total,
    count(*) FILTER (WHERE e.status = 'completed')::bigint AS completed,
    count(*) FILTER (WHERE e.status = 'completed' AND e.outcome = 'rejected')::bigint AS rejected,
    count(*) FILTER (WHERE e.status <> 'completed' AND j.status = 'failed')::bigint AS failed,
    count(*) FILTER (WHERE e.status = 'completed' AND e.outcome = 'disqualified')::bigint AS disqualified
FROM evaluations e
LEFT JOIN jobs j ON j.id = e.job_id AND j.tenant_id = e.tenant_id
WHERE e.tenant_id = @tenant_id
GROUP BY e.project_id;

-- name: EvaluationDescribe :many
-- The supplier and tender of those of a tenant's evaluations among ids (what lists name a
-- run of bid evaluation by: its job's subject is its evaluation's id).
SELECT e.id, e.thread_id, s.name AS supplier_name, p.id AS project_id, p.name AS project_name
FROM evaluations e
JOIN suppliers s ON s.id = e.supplier_id AND s.tenant_id = e.tenant_id
JOIN projects p ON p.id = e.project_id AND p.tenant_id = e.tenant_id
WHERE e.tenant_id = @tenant_id AND e.id = ANY(@ids::text[]);

-- name: EvaluationRunStatus :one
-- The status of the job an evaluation last ran in ('' when it never ran).
SELECT coalesce(j.status, '')::text AS status
FROM evaluations e LEFT JOIN jobs j ON j.id = e.job_id AND j.tenant_id = e.tenant_id
WHERE e.tenant_id = @tenant_id AND e.id = @id;
