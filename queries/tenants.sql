-- name: TenantUpsert :exec
INSERT INTO tenants (id, name) VALUES ($1, $2)
ON CONFLICT (id) DO UPDATE SET name = EXCLUDED.name;

-- name: TenantGet :one
SELECT * FROM tenants WHERE id = $1;

-- name: TenantCount :one
SELECT count(*) FROM tenants;

-- name: TenantList :many
SELECT * FROM tenants ORDER BY id;
