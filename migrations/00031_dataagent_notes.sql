-- The data agent's business notes ("GMV means the sum of paid orders' amounts", "华东 =
-- Shanghai, Jiangsu, Zhejiang"), per analysis schema, found with full-text search over
-- postgres.SearchTokens (Latin words, CJK bigrams) in a 'simple' tsvector. They live in a
-- schema of their own that no analyst role (weft_analyst_<schema>) is granted: analysis
-- queries cannot read them. dataagentpg.Notes.Ensure creates the same table where this
-- migration has not run (a data agent on a database of its own).

-- +goose Up
CREATE SCHEMA IF NOT EXISTS dataagent;
CREATE TABLE IF NOT EXISTS dataagent.notes (
    schema_name text NOT NULL,
    id          text NOT NULL,
    title       text NOT NULL DEFAULT '',
    body        text NOT NULL,
    search      text NOT NULL,
    tsv         tsvector GENERATED ALWAYS AS (to_tsvector('simple', search)) STORED,
    PRIMARY KEY (schema_name, id)
);
CREATE INDEX IF NOT EXISTS notes_tsv ON dataagent.notes USING gin (tsv);

-- +goose Down
DROP TABLE IF EXISTS dataagent.notes;
DROP SCHEMA IF EXISTS dataagent;
