-- The audit log (internal/postgres.Audit), idempotent side effects (internal/postgres.Effects)
-- and the application role.
--
-- audit_log is append-only twice over: a trigger refuses UPDATE, DELETE and TRUNCATE for
-- everyone, the owner and superusers included, and the application role weft_app has no
-- UPDATE, DELETE or TRUNCATE privilege on it. The application should connect as a login role
-- that is a member of weft_app (GRANT weft_app TO weft_web), not as the owner that migrates.
--
-- weft_app is created here when the migrating role may create roles (a superuser, or a role
-- with CREATEROLE); otherwise an administrator creates it once per server beforehand:
--     CREATE ROLE weft_app NOLOGIN;

-- +goose Up
CREATE TABLE audit_log (
    id        bigserial PRIMARY KEY,
    tenant_id text NOT NULL,
    actor     text NOT NULL,
    action    text NOT NULL,
    subject   text NOT NULL DEFAULT '',
    workflow  text NOT NULL DEFAULT '',
    payload   jsonb NOT NULL DEFAULT '{}',
    at        timestamptz NOT NULL DEFAULT now()
);
-- The console pages a tenant's log newest first (keyset on id), optionally by subject
-- (a job's or thread's history) or by actor.
CREATE INDEX audit_log_tenant ON audit_log (tenant_id, id DESC);
CREATE INDEX audit_log_subject ON audit_log (tenant_id, subject, id DESC);
CREATE INDEX audit_log_actor ON audit_log (tenant_id, actor, id DESC);

-- +goose StatementBegin
CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only: % is not allowed', TG_OP
        USING ERRCODE = 'insufficient_privilege';
END
$$;
-- +goose StatementEnd
CREATE TRIGGER audit_log_no_change BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();
CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_append_only();

-- Side effects done once per idempotency key (seed 000 §8): persist_result is keyed by
-- evaluation_id + report_version, retry_or_dlq by job_id + retry_count. The row is inserted
-- before the effect runs and its result stored in the same transaction, so a concurrent
-- caller waits on the key and then reads the result. result is NULL only inside that
-- transaction.
CREATE TABLE side_effects (
    tenant_id  text NOT NULL,
    key        text NOT NULL,
    result     jsonb,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant_id, key)
);

-- +goose StatementBegin
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'weft_app') THEN
        CREATE ROLE weft_app NOLOGIN;
    END IF;
EXCEPTION
    -- another database on this server created it in the meantime
    WHEN duplicate_object OR unique_violation THEN NULL;
END
$$;
-- +goose StatementEnd
GRANT USAGE ON SCHEMA public TO weft_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO weft_app;
GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO weft_app;
-- Tables and sequences later migrations create (they run as the same role) too.
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO weft_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO weft_app;
REVOKE UPDATE, DELETE, TRUNCATE ON audit_log FROM weft_app;
-- Migrations are the owner's business.
REVOKE ALL ON goose_db_version FROM weft_app;
GRANT SELECT ON goose_db_version TO weft_app;
REVOKE INSERT, UPDATE, DELETE ON job_transitions FROM weft_app;

-- +goose Down
ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE ALL ON TABLES FROM weft_app;
ALTER DEFAULT PRIVILEGES IN SCHEMA public REVOKE ALL ON SEQUENCES FROM weft_app;
REVOKE ALL ON ALL TABLES IN SCHEMA public FROM weft_app;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA public FROM weft_app;
REVOKE ALL ON SCHEMA public FROM weft_app;
DROP TABLE side_effects;
DROP TABLE audit_log;
DROP FUNCTION audit_log_append_only();
