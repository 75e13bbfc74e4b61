-- Node execution records (internal/postgres.NodeRecords).

-- name: NodeExecutionsInsert :exec
-- Inserts a batch of records in one statement.
INSERT INTO node_executions (tenant_id, job_id, workflow, trace_id, thread_id, node, task_id,
    started_at, ended_at, latency_ms, input_size, output_size, attempts, error_code, cached)
SELECT r.tenant_id, r.job_id, r.workflow, r.trace_id, r.thread_id, r.node, r.task_id,
    r.started_at, r.ended_at, r.latency_ms, r.input_size, r.output_size, r.attempts,
    r.error_code, r.cached
FROM (
    SELECT unnest(@tenant_ids::text[]) AS tenant_id, unnest(@job_ids::text[]) AS job_id,
        unnest(@workflows::text[]) AS workflow, unnest(@trace_ids::text[]) AS trace_id,
        unnest(@thread_ids::text[]) AS thread_id, unnest(@nodes::text[]) AS node,
        unnest(@task_ids::text[]) AS task_id, unnest(@started_ats::timestamptz[]) AS started_at,
        unnest(@ended_ats::timestamptz[]) AS ended_at,
        unnest(@latencies_ms::double precision[]) AS latency_ms,
        unnest(@input_sizes::integer[]) AS input_size, unnest(@output_sizes::integer[]) AS output_size,
        unnest(@attempts::integer[]) AS attempts, unnest(@error_codes::text[]) AS error_code,
        unnest(@cached::boolean[]) AS cached
) AS r;

-- name: NodeExecutionsList :many
-- Lists a thread's node executions of a tenant in the order they started (the console's node
-- timeline).
SELECT id, tenant_id, job_id, workflow, trace_id, thread_id, node, task_id, started_at,
    ended_at, latency_ms, input_size, output_size, attempts, error_code, cached
FROM node_executions
WHERE tenant_id = @tenant_id::text AND thread_id = @thread_id::text
ORDER BY started_at, id
LIMIT @max_rows::integer;
