-- Console access: users (one role per user, in one tenant), sessions (the table layout of
-- github.com/alexedwards/scs/pgxstore) and per-tenant API tokens (stored hashed).

-- +goose Up
CREATE TABLE users (
    id            text PRIMARY KEY,
    tenant_id     text NOT NULL REFERENCES tenants (id),
    email         text NOT NULL UNIQUE,
    name          text NOT NULL,
    role          text NOT NULL CHECK (role IN ('pm', 'reviewer', 'admin')),
    password_hash text NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX users_tenant ON users (tenant_id);

CREATE TABLE sessions (
    token  text PRIMARY KEY,
    data   bytea NOT NULL,
    expiry timestamptz NOT NULL
);
CREATE INDEX sessions_expiry_idx ON sessions (expiry);

CREATE TABLE api_tokens (
    hash         text PRIMARY KEY, -- sha256 of the secret
    tenant_id    text NOT NULL REFERENCES tenants (id),
    name         text NOT NULL,
    role         text NOT NULL CHECK (role IN ('pm', 'reviewer', 'admin')),
    created_by   text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX api_tokens_tenant ON api_tokens (tenant_id);

GRANT SELECT, INSERT, UPDATE, DELETE ON users, sessions, api_tokens TO weft_app;

-- +goose Down
DROP TABLE api_tokens, sessions, users;
