-- A bid document added by mistake (the wrong file, another supplier's) can be withdrawn
-- from its tender's page. It is kept, not deleted: reports and reviews that cite its chunks
-- keep their evidence links, and the audit log says who withdrew it. Retrieval (ChunkSearch)
-- leaves withdrawn documents out, so the next evaluation scores without them, and the
-- duplicate check ignores them, so the same text can be added again. withdrawn_by is who
-- withdrew it as the pages show them (an email); the audit row names the user's id.

-- +goose Up
ALTER TABLE documents
    ADD COLUMN withdrawn_at timestamptz,
    ADD COLUMN withdrawn_by text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE documents
    DROP COLUMN withdrawn_by,
    DROP COLUMN withdrawn_at;
