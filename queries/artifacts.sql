-- name: ArtifactPut :one
-- Writes a thread's artifact under its key: new, or replacing other bytes (its version goes
-- up); the same bytes again change nothing and return no row (ArtifactGetByKey reads it).
INSERT INTO artifacts (id, tenant_id, thread_id, key, name, content_type, size, sha256, data, job_id)
VALUES (@id, @tenant_id, @thread_id, @key, @name, @content_type, @size, @sha256, @data, @job_id)
ON CONFLICT (tenant_id, thread_id, key) DO UPDATE
SET name = EXCLUDED.name, content_type = EXCLUDED.content_type, size = EXCLUDED.size, sha256 = EXCLUDED.sha256,
    data = EXCLUDED.data, job_id = EXCLUDED.job_id, version = artifacts.version + 1, updated_at = now()
WHERE artifacts.sha256 <> EXCLUDED.sha256 OR artifacts.name <> EXCLUDED.name OR artifacts.content_type <> EXCLUDED.content_type
RETURNING id, key, name, content_type, size, sha256, version, created_at, updated_at;

-- name: ArtifactGetByKey :one
-- A thread's artifact with its bytes (no row for another tenant's thread).
SELECT id, key, name, content_type, size, sha256, version, created_at, updated_at, data
FROM artifacts WHERE tenant_id = @tenant_id AND thread_id = @thread_id AND key = @key;

-- name: ArtifactListByThread :many
-- A thread's artifacts without their bytes, by key.
SELECT id, key, name, content_type, size, sha256, version, created_at, updated_at
FROM artifacts WHERE tenant_id = @tenant_id AND thread_id = @thread_id
ORDER BY key;
