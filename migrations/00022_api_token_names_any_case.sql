-- Two live tokens of a tenant may not share a name in any case either: the audit log's actor
-- filter finds a token's actions by its name whatever the case, and `weft token revoke` ends
-- a token by its name whatever the case. Older live duplicates that differ only in case keep
-- working under a new name, as in 00019 (the name with the first 8 hex digits of the hash of
-- their secret appended); the newest keeps the name.

-- +goose Up
UPDATE api_tokens t SET name = t.name || '-' || left(t.hash, 8)
WHERE t.revoked_at IS NULL AND EXISTS (
    SELECT 1 FROM api_tokens n
    WHERE n.tenant_id = t.tenant_id AND lower(n.name) = lower(t.name) AND n.revoked_at IS NULL
      AND (n.created_at, n.hash) > (t.created_at, t.hash)
);
DROP INDEX api_tokens_live_name;
CREATE UNIQUE INDEX api_tokens_live_name ON api_tokens (tenant_id, lower(name)) WHERE revoked_at IS NULL;

-- +goose Down
DROP INDEX api_tokens_live_name;
CREATE UNIQUE INDEX api_tokens_live_name ON api_tokens (tenant_id, name) WHERE revoked_at IS NULL;
