-- Idempotent side effects (internal/postgres.Effects).

-- name: SideEffectClaim :execrows
-- Takes the key for this transaction: one row when the key was free. A concurrent claim of
-- the same key waits until this transaction ends, then gets no row (or the key, if this one
-- rolled back).
INSERT INTO side_effects (tenant_id, key)
VALUES (@tenant_id, @key)
ON CONFLICT DO NOTHING;

-- name: SideEffectGet :one
SELECT result FROM side_effects
WHERE tenant_id = @tenant_id AND key = @key;

-- name: SideEffectSave :one
UPDATE side_effects
SET result = @result::jsonb
WHERE tenant_id = @tenant_id AND key = @key
RETURNING result;
