-- An API token is known by its name: the audit log records what it did as token:<name>, and
-- `weft token revoke` ends it by name. So two live tokens of a tenant may not share a name.
-- Older live duplicates (possible before this migration) keep working under a new name, their
-- old one with the first 8 hex digits of their hash appended (`weft token list` shows it; the
-- hash is of the secret, not the secret); the newest keeps the name.

-- +goose Up
UPDATE api_tokens t SET name = t.name || '-' || left(t.hash, 8)
WHERE t.revoked_at IS NULL AND EXISTS (
    SELECT 1 FROM api_tokens n
    WHERE n.tenant_id = t.tenant_id AND n.name = t.name AND n.revoked_at IS NULL
      AND (n.created_at, n.hash) > (t.created_at, t.hash)
);
CREATE UNIQUE INDEX api_tokens_live_name ON api_tokens (tenant_id, name) WHERE revoked_at IS NULL;

-- +goose Down
DROP INDEX api_tokens_live_name;
