-- name: APITokenInsert :exec
INSERT INTO api_tokens (hash, tenant_id, name, role, created_by) VALUES ($1, $2, $3, $4, $5);

-- name: APITokenUse :one
-- Finds a live token and stamps its use. A token issued by a user who is deactivated, or was
-- deactivated after issuing it, is not live.
UPDATE api_tokens SET last_used_at = now()
WHERE hash = $1 AND revoked_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM users u WHERE u.id = api_tokens.created_by
      AND (u.deactivated_at IS NOT NULL OR u.tokens_revoked_at > api_tokens.created_at))
RETURNING tenant_id, name, role, created_by;

-- name: APITokenList :many
-- A tenant's tokens, live ones first, newest first (never their secrets: only hashes are kept).
SELECT name, role, created_by, created_at, last_used_at, revoked_at
FROM api_tokens
WHERE tenant_id = $1
ORDER BY revoked_at IS NOT NULL, created_at DESC;

-- name: APITokenRevoke :many
-- Ends a tenant's live token by name, in any case (live names are unique in any case), and
-- returns its name as stored.
UPDATE api_tokens SET revoked_at = now()
WHERE tenant_id = @tenant_id AND lower(name) = lower(@name::text) AND revoked_at IS NULL
RETURNING name;

-- name: APITokenLive :one
-- Whether a token is still live (not revoked), without stamping a use: a long-lived stream
-- checks it now and then.
SELECT EXISTS (SELECT 1 FROM api_tokens t WHERE t.hash = $1 AND t.revoked_at IS NULL
  AND NOT EXISTS (SELECT 1 FROM users u WHERE u.id = t.created_by
      AND (u.deactivated_at IS NOT NULL OR u.tokens_revoked_at > t.created_at))) AS live;

-- name: APITokenLiveName :one
-- The stored name of a tenant's live token named name in any case.
SELECT name FROM api_tokens
WHERE tenant_id = @tenant_id AND lower(name) = lower(@name::text) AND revoked_at IS NULL;
