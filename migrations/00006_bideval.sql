-- Bid evaluation's domain (seed 000): tenants, tender projects, suppliers, versioned rule
-- packs, bid documents split into chunks with stable ids, evaluations (one per supplier per
-- project, each bound to a thread) and their reports.
--
-- Retrieval: chunks.search holds the chunk's search tokens (lower-cased words and CJK
-- bigrams, computed in Go by postgres.SearchTokens), and chunks.tsv indexes them with the
-- 'simple' configuration, so Chinese and English text are searched alike whatever the
-- database's locale.

-- +goose Up
CREATE TABLE tenants (
    id         text PRIMARY KEY,
    name       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE projects (
    id          text PRIMARY KEY,
    tenant_id   text NOT NULL REFERENCES tenants (id),
    name        text NOT NULL,
    description text NOT NULL DEFAULT '',
    budget      double precision NOT NULL CHECK (budget >= 0),
    currency    text NOT NULL DEFAULT 'CNY',
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX projects_tenant ON projects (tenant_id, created_at DESC);

CREATE TABLE rule_packs (
    id         text PRIMARY KEY,
    tenant_id  text NOT NULL REFERENCES tenants (id),
    project_id text NOT NULL REFERENCES projects (id),
    version    text NOT NULL,
    body       jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, version)
);

CREATE TABLE suppliers (
    id         text PRIMARY KEY,
    tenant_id  text NOT NULL REFERENCES tenants (id),
    project_id text NOT NULL REFERENCES projects (id),
    name       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX suppliers_project ON suppliers (tenant_id, project_id);

CREATE TABLE documents (
    id          text PRIMARY KEY,
    tenant_id   text NOT NULL REFERENCES tenants (id),
    supplier_id text NOT NULL REFERENCES suppliers (id),
    title       text NOT NULL,
    media_type  text NOT NULL DEFAULT 'text/plain',
    body        text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX documents_supplier ON documents (tenant_id, supplier_id);

CREATE TABLE chunks (
    id          text PRIMARY KEY, -- <document id>#<seq>: stable for a document's text
    tenant_id   text NOT NULL,
    supplier_id text NOT NULL REFERENCES suppliers (id),
    document_id text NOT NULL REFERENCES documents (id) ON DELETE CASCADE,
    seq         integer NOT NULL,
    text        text NOT NULL,
    search      text NOT NULL,
    tsv         tsvector GENERATED ALWAYS AS (to_tsvector('simple', search)) STORED,
    UNIQUE (document_id, seq)
);
CREATE INDEX chunks_tsv ON chunks USING gin (tsv);
CREATE INDEX chunks_supplier ON chunks (tenant_id, supplier_id);

CREATE TABLE evaluations (
    id             text PRIMARY KEY,
    tenant_id      text NOT NULL REFERENCES tenants (id),
    project_id     text NOT NULL REFERENCES projects (id),
    supplier_id    text NOT NULL REFERENCES suppliers (id),
    thread_id      text NOT NULL UNIQUE,
    job_id         uuid,
    status         text NOT NULL DEFAULT 'not_started',
    outcome        text NOT NULL DEFAULT '',
    total_score    double precision,
    report_version integer NOT NULL DEFAULT 0,
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (project_id, supplier_id)
);
CREATE INDEX evaluations_project ON evaluations (tenant_id, project_id);

-- persist_result's idempotency key is (evaluation_id, report_version) (seed 000 §8).
CREATE TABLE evaluation_reports (
    evaluation_id  text NOT NULL REFERENCES evaluations (id),
    report_version integer NOT NULL,
    tenant_id      text NOT NULL,
    payload        jsonb NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (evaluation_id, report_version)
);

GRANT SELECT, INSERT, UPDATE, DELETE ON tenants, projects, rule_packs, suppliers, documents, chunks,
    evaluations, evaluation_reports TO weft_app;

-- +goose Down
DROP TABLE evaluation_reports, evaluations, chunks, documents, suppliers, rule_packs, projects, tenants;
