-- Tenders a project manager sets up (issue 34): a reference (unique in its tenant, any case),
-- a deadline, and the rule pack version the tender pins (empty: its newest, as before). Rule
-- packs record who wrote each version. A tender's rule pack is never edited in place: an
-- edit adds a version, and the tender pins it; evaluations keep the version they ran with.

-- +goose Up
ALTER TABLE projects ADD COLUMN reference text NOT NULL DEFAULT '';
ALTER TABLE projects ADD COLUMN deadline timestamptz;
ALTER TABLE projects ADD COLUMN rule_pack_version text NOT NULL DEFAULT '';
CREATE UNIQUE INDEX projects_reference ON projects (tenant_id, lower(reference)) WHERE reference <> '';

ALTER TABLE rule_packs ADD COLUMN created_by text NOT NULL DEFAULT '';
CREATE INDEX rule_packs_project ON rule_packs (tenant_id, project_id, created_at DESC);

-- +goose Down
DROP INDEX rule_packs_project;
ALTER TABLE rule_packs DROP COLUMN created_by;
DROP INDEX projects_reference;
ALTER TABLE projects DROP COLUMN rule_pack_version;
ALTER TABLE projects DROP COLUMN deadline;
ALTER TABLE projects DROP COLUMN reference;
