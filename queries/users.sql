-- name: UserInsert :exec
INSERT INTO users (id, tenant_id, email, name, role, password_hash) VALUES (@id, @tenant_id, lower(@email), @name, @role, @password_hash)
ON CONFLICT (email) DO NOTHING;

-- name: UserByEmail :one
SELECT * FROM users WHERE email = lower(@email);

-- name: UserGet :one
SELECT * FROM users WHERE id = $1;

-- name: UserListByTenant :many
SELECT * FROM users WHERE tenant_id = $1 ORDER BY role, email;
