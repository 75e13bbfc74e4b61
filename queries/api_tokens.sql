-- name: APITokenInsert :exec
INSERT INTO api_tokens (hash, tenant_id, name, role, created_by) VALUES ($1, $2, $3, $4, $5);

-- name: APITokenUse :one
-- Finds a live token and stamps its use.
UPDATE api_tokens SET last_used_at = now()
WHERE hash = $1 AND revoked_at IS NULL
RETURNING tenant_id, name, role, created_by;
