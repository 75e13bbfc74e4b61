-- Accounts that people manage (issue 34): a user can be deactivated (sessions and the API
-- tokens they issued stop working at once, and stay ended when the account is reactivated;
-- nothing is deleted, so the audit log still names them), and one-time links set or reset a password. A link's secret is stored hashed
-- (sha256), used once, and expires, like a resume token. A user created with a link has no
-- password until the link is used (password_hash is empty: no password matches it).

-- +goose Up
ALTER TABLE users ADD COLUMN deactivated_at timestamptz;
ALTER TABLE users ADD COLUMN password_changed_at timestamptz;
-- Sessions signed in before sessions_revoked_at (a deactivation, a new password) no longer
-- count, and API tokens the user issued before tokens_revoked_at (a deactivation) stay dead:
-- reactivating an account does not bring back what was ended.
ALTER TABLE users ADD COLUMN sessions_revoked_at timestamptz;
ALTER TABLE users ADD COLUMN tokens_revoked_at timestamptz;

CREATE TABLE password_links (
    hash       text PRIMARY KEY, -- sha256 of the secret
    tenant_id  text NOT NULL REFERENCES tenants (id),
    user_id    text NOT NULL REFERENCES users (id),
    purpose    text NOT NULL CHECK (purpose IN ('set', 'reset')),
    created_by text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    revoked_at timestamptz -- a newer link for the same user replaced it
);
CREATE INDEX password_links_user ON password_links (user_id);

GRANT SELECT, INSERT, UPDATE, DELETE ON password_links TO weft_app;

-- +goose Down
DROP TABLE password_links;
ALTER TABLE users DROP COLUMN tokens_revoked_at;
ALTER TABLE users DROP COLUMN sessions_revoked_at;
ALTER TABLE users DROP COLUMN password_changed_at;
ALTER TABLE users DROP COLUMN deactivated_at;
