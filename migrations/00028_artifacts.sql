-- Artifacts: the files a run makes (a redlined contract, generated pages, a chart, a CSV),
-- kept per tenant and thread, under a key unique in the thread. A node writes one with
-- ArtifactPut: the same bytes again are a no-op (a replayed node writes nothing twice),
-- other bytes replace the file and bump its version. They are served with the thread's
-- tenant and role checks, HTML only from a sandboxed path (internal/server).

-- +goose Up
CREATE TABLE artifacts (
    id           text        PRIMARY KEY,
    tenant_id    text        NOT NULL,
    thread_id    text        NOT NULL,
    key          text        NOT NULL,
    name         text        NOT NULL,
    content_type text        NOT NULL,
    size         integer     NOT NULL CHECK (size >= 0),
    sha256       text        NOT NULL,
    data         bytea       NOT NULL,
    version      integer     NOT NULL DEFAULT 1,
    job_id       text        NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (tenant_id, thread_id, key)
);

-- +goose Down
DROP TABLE artifacts;
