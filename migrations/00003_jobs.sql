-- Durable jobs (internal/postgres.JobStore, the runner's Store): the job queue, its
-- dead-letter queue, resume tokens, reviewers' decisions and per-status counters.
--
-- The status machine is runner.CheckTransition; the store checks every change with it before
-- its SQL. job_transitions repeats the machine (a test keeps the two equal) so the database
-- refuses an illegal change whoever makes it, and a job can only become failed once its DLQ
-- row exists (seed 000 §11.4).

-- +goose Up
CREATE TABLE jobs (
    id          uuid PRIMARY KEY, -- UUIDv7: time-ordered
    tenant_id   text NOT NULL,
    workflow    text NOT NULL,
    thread_id   text NOT NULL,
    trace_id    text NOT NULL,
    subject     text NOT NULL DEFAULT '',
    status      text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'running', 'waiting_review',
                    'retry_scheduled', 'dlq_pending', 'dlq_recorded', 'failed', 'succeeded')),
    retry_count integer NOT NULL DEFAULT 0 CHECK (retry_count >= 0),
    input       jsonb,
    -- interrupt id -> the reviewer's decision, set by a resume.
    resume      jsonb,
    -- the checkpoint a retry forks from when the graph's error route recorded the failure
    -- (runner.JobError.CheckpointID of the latest failure).
    retry_from  text,
    -- every error of the job, oldest first (seed 004): runner.JobError objects.
    errors      jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(errors) = 'array'),
    -- the pending interrupts while waiting_review: graph.PendingInterrupt objects.
    interrupts  jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(interrupts) = 'array'),
    run_after   timestamptz NOT NULL DEFAULT now(),
    lease_owner text,
    lease_until timestamptz,
    paused_at   timestamptz,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    -- A worker holds a lease exactly while the job runs or walks the DLQ subflow.
    CONSTRAINT jobs_lease CHECK ((lease_owner IS NULL) = (lease_until IS NULL)
        AND (status IN ('running', 'dlq_pending', 'dlq_recorded')) = (lease_owner IS NOT NULL)),
    CONSTRAINT jobs_paused CHECK ((status = 'waiting_review') = (paused_at IS NOT NULL))
);
-- Claim: runnable jobs in run_after order (a partial index stays as small as the backlog).
CREATE INDEX jobs_claim ON jobs (run_after, id) WHERE status IN ('queued', 'retry_scheduled');
-- Rescue: running jobs by lease expiry.
CREATE INDEX jobs_lease_until ON jobs (lease_until) WHERE status = 'running';
-- The console: a tenant's jobs newest first (keyset pagination on (created_at, id)).
CREATE INDEX jobs_tenant ON jobs (tenant_id, created_at DESC, id DESC);
CREATE INDEX jobs_tenant_thread ON jobs (tenant_id, thread_id);

-- Every failed job links to one DLQ row per dead-lettering; the key is (job_id, retry_count)
-- (seed 000 §8, retry_or_dlq).
CREATE TABLE dlq (
    id          uuid PRIMARY KEY,
    tenant_id   text NOT NULL,
    job_id      uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    workflow    text NOT NULL,
    class       text NOT NULL CHECK (class IN ('validation', 'business', 'transient', 'permanent', 'security')),
    code        text NOT NULL,
    message     text NOT NULL,
    trace_id    text NOT NULL,
    node        text NOT NULL DEFAULT '',
    retry_count integer NOT NULL,
    attempts    integer NOT NULL GENERATED ALWAYS AS (retry_count + 1) STORED,
    status      text NOT NULL DEFAULT 'recorded' CHECK (status IN ('recorded', 'retried', 'discarded')),
    created_at  timestamptz NOT NULL DEFAULT now(),
    resolved_at timestamptz,
    resolved_by text,
    CONSTRAINT dlq_job_attempt UNIQUE (job_id, retry_count),
    CONSTRAINT dlq_resolved CHECK ((status = 'recorded') = (resolved_at IS NULL))
);
CREATE INDEX dlq_tenant ON dlq (tenant_id, created_at DESC, id DESC);

-- Resume tokens: only the SHA-256 of the secret is stored; single use, expiring, bound to
-- one job, thread and interrupt.
CREATE TABLE resume_tokens (
    hash         text PRIMARY KEY,
    tenant_id    text NOT NULL,
    job_id       uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    thread_id    text NOT NULL,
    interrupt_id text NOT NULL,
    issued_at    timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz,
    used_by      text,
    CHECK ((used_at IS NULL) = (used_by IS NULL))
);
CREATE INDEX resume_tokens_job ON resume_tokens (job_id);

-- What each reviewer decided (seed 000 §7.2), one row per consumed token.
CREATE TABLE review_decisions (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id    text NOT NULL,
    job_id       uuid NOT NULL REFERENCES jobs (id) ON DELETE CASCADE,
    thread_id    text NOT NULL,
    interrupt_id text NOT NULL,
    token_hash   text NOT NULL UNIQUE,
    actor        text NOT NULL,
    decision     jsonb NOT NULL,
    at           timestamptz NOT NULL
);
CREATE INDEX review_decisions_job ON review_decisions (job_id, id);

-- The status machine, as data (runner.AllowedTransitions; a test keeps them equal).
CREATE TABLE job_transitions (
    from_status text NOT NULL,
    to_status   text NOT NULL,
    PRIMARY KEY (from_status, to_status)
);
INSERT INTO job_transitions (from_status, to_status) VALUES
    ('queued', 'running'),
    ('running', 'waiting_review'), ('running', 'succeeded'), ('running', 'retry_scheduled'),
    ('running', 'dlq_pending'), ('running', 'queued'),
    ('waiting_review', 'running'),
    ('retry_scheduled', 'running'),
    ('dlq_pending', 'dlq_recorded'),
    ('dlq_recorded', 'failed'),
    ('failed', 'queued');

-- +goose StatementBegin
CREATE FUNCTION jobs_guard() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.status <> 'queued' THEN
            RAISE EXCEPTION 'WF_ILLEGAL_STATUS_TRANSITION: a new job must be queued, not %', NEW.status
                USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
    END IF;
    IF NEW.id <> OLD.id OR NEW.tenant_id <> OLD.tenant_id OR NEW.thread_id <> OLD.thread_id
        OR NEW.workflow <> OLD.workflow OR NEW.created_at <> OLD.created_at THEN
        RAISE EXCEPTION 'WF_IMMUTABLE_FIELD: job % keeps its id, tenant, thread, workflow and created_at', OLD.id
            USING ERRCODE = 'check_violation';
    END IF;
    IF NEW.status <> OLD.status THEN
        IF NOT EXISTS (SELECT 1 FROM job_transitions WHERE from_status = OLD.status AND to_status = NEW.status) THEN
            RAISE EXCEPTION 'WF_ILLEGAL_STATUS_TRANSITION: job % status % → % is not allowed', OLD.id, OLD.status, NEW.status
                USING ERRCODE = 'check_violation';
        END IF;
        IF NEW.status = 'failed' AND NOT EXISTS (
            SELECT 1 FROM dlq WHERE job_id = NEW.id AND retry_count = NEW.retry_count) THEN
            RAISE EXCEPTION 'WF_ILLEGAL_STATUS_TRANSITION: job % cannot fail without a DLQ row for retry_count %', OLD.id, NEW.retry_count
                USING ERRCODE = 'check_violation';
        END IF;
    END IF;
    NEW.updated_at := now();
    RETURN NEW;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER jobs_guard BEFORE INSERT OR UPDATE ON jobs FOR EACH ROW EXECUTE FUNCTION jobs_guard();

-- Job counts per (tenant, workflow, status) for dashboards, so nothing counts the jobs table.
-- The triggers below append one signed delta row per (tenant, workflow, status) a statement
-- changed, instead of updating one counter row: every worker's claim would otherwise lock the
-- same hot rows until commit, and transactions that touch several statuses in different
-- orders (claim, dead-letter, admin retry) could deadlock on them. Readers sum the rows;
-- JobCountsCompact folds a tenant's rows into one per key.
CREATE TABLE job_counts (
    tenant_id text NOT NULL,
    workflow  text NOT NULL,
    status    text NOT NULL,
    n         bigint NOT NULL
);
CREATE INDEX job_counts_key ON job_counts (tenant_id, workflow, status);

-- The same function serves the three statement-level triggers (transition tables allow one
-- event per trigger). It also wakes idle workers (NOTIFY weft_jobs, delivered at commit and
-- sent once per transaction) whenever a statement made a job queued.
-- +goose StatementBegin
CREATE FUNCTION jobs_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO job_counts (tenant_id, workflow, status, n)
        SELECT tenant_id, workflow, status, count(*) FROM new_rows GROUP BY 1, 2, 3;
        IF EXISTS (SELECT 1 FROM new_rows WHERE status = 'queued') THEN
            PERFORM pg_notify('weft_jobs', '');
        END IF;
    ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO job_counts (tenant_id, workflow, status, n)
        SELECT tenant_id, workflow, status, -count(*) FROM old_rows GROUP BY 1, 2, 3;
    ELSE
        INSERT INTO job_counts (tenant_id, workflow, status, n)
        SELECT tenant_id, workflow, status, sum(d) FROM (
            SELECT o.tenant_id, o.workflow, o.status, -1 AS d
            FROM old_rows o JOIN new_rows w ON w.id = o.id WHERE w.status <> o.status
            UNION ALL
            SELECT w.tenant_id, w.workflow, w.status, 1
            FROM old_rows o JOIN new_rows w ON w.id = o.id WHERE w.status <> o.status
        ) AS delta GROUP BY 1, 2, 3 HAVING sum(d) <> 0;
        IF EXISTS (SELECT 1 FROM old_rows o JOIN new_rows w ON w.id = o.id
                   WHERE w.status = 'queued' AND o.status <> 'queued') THEN
            PERFORM pg_notify('weft_jobs', '');
        END IF;
    END IF;
    RETURN NULL;
END
$$;
-- +goose StatementEnd
CREATE TRIGGER jobs_count_insert AFTER INSERT ON jobs REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION jobs_count();
CREATE TRIGGER jobs_count_update AFTER UPDATE ON jobs REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION jobs_count();
CREATE TRIGGER jobs_count_delete AFTER DELETE ON jobs REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION jobs_count();

-- +goose Down
DROP TABLE job_counts;
DROP TABLE review_decisions;
DROP TABLE resume_tokens;
DROP TABLE dlq;
DROP TABLE jobs;
DROP TABLE job_transitions;
DROP FUNCTION jobs_count();
DROP FUNCTION jobs_guard();
