-- name: UserCreate :one
-- A new user, unless the email is taken (then no row).
INSERT INTO users (id, tenant_id, email, name, role, password_hash, password_changed_at)
VALUES (@id, @tenant_id, lower(@email), @name, @role, @password_hash, CASE WHEN @password_hash::text = '' THEN NULL ELSE now() END)
ON CONFLICT (email) DO NOTHING
RETURNING *;

-- name: UserInTenant :one
SELECT * FROM users WHERE tenant_id = @tenant_id AND id = @id;

-- name: UserInTenantForUpdate :one
SELECT * FROM users WHERE tenant_id = @tenant_id AND id = @id FOR UPDATE;

-- name: UserActiveAdminsLock :many
-- The tenant's active admins, locked: a demotion or deactivation that would leave none
-- waits for another one under way, so two admins cannot remove each other at once.
SELECT id FROM users WHERE tenant_id = $1 AND role = 'admin' AND deactivated_at IS NULL ORDER BY id FOR UPDATE;

-- name: UserSetRole :exec
UPDATE users SET role = @role WHERE tenant_id = @tenant_id AND id = @id;

-- name: UserSetDeactivated :exec
-- A deactivation also ends the user's sessions and API tokens for good.
UPDATE users SET deactivated_at = CASE WHEN @deactivate::boolean THEN now() ELSE NULL END,
    sessions_revoked_at = CASE WHEN @deactivate::boolean THEN now() ELSE sessions_revoked_at END,
    tokens_revoked_at = CASE WHEN @deactivate::boolean THEN now() ELSE tokens_revoked_at END
WHERE tenant_id = @tenant_id AND id = @id;

-- name: UserSetPassword :exec
-- A new password ends the sessions signed in with the old one.
UPDATE users SET password_hash = @password_hash, password_changed_at = now(), sessions_revoked_at = now() WHERE id = @id;

-- name: UserListAll :many
SELECT * FROM users ORDER BY tenant_id, role, email;

-- name: PasswordLinkRevokeOpen :exec
-- Ends a user's unused links (a newer one replaces them).
UPDATE password_links SET revoked_at = now() WHERE user_id = $1 AND used_at IS NULL AND revoked_at IS NULL;

-- name: PasswordLinkInsert :exec
INSERT INTO password_links (hash, tenant_id, user_id, purpose, created_by, expires_at)
VALUES (@hash, @tenant_id, @user_id, @purpose, @created_by, @expires_at);

-- name: PasswordLinkGet :one
SELECT * FROM password_links WHERE hash = $1;

-- name: PasswordLinkLock :one
SELECT * FROM password_links WHERE hash = $1 FOR UPDATE;

-- name: PasswordLinkUse :exec
UPDATE password_links SET used_at = now() WHERE hash = $1;

-- name: TenantCreate :one
-- A new tenant, unless the id is taken (then no row).
INSERT INTO tenants (id, name) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING RETURNING *;
