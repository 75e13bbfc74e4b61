-- name: TenderCreate :exec
INSERT INTO projects (id, tenant_id, name, reference, description, budget, currency, deadline)
VALUES (@id, @tenant_id, @name, @reference, @description, @budget, @currency, @deadline);

-- name: TenderByReference :one
SELECT id FROM projects WHERE tenant_id = @tenant_id AND lower(reference) = lower(@reference::text);

-- name: ProjectLock :one
SELECT * FROM projects WHERE tenant_id = $1 AND id = $2 FOR UPDATE;

-- name: ProjectPinRulePack :exec
UPDATE projects SET rule_pack_version = @version WHERE tenant_id = @tenant_id AND id = @id;

-- name: RulePackGet :one
SELECT * FROM rule_packs WHERE tenant_id = @tenant_id AND project_id = @project_id AND version = @version;

-- name: RulePackList :many
SELECT * FROM rule_packs WHERE tenant_id = $1 AND project_id = $2 ORDER BY created_at DESC, version DESC;

-- name: RulePackCreate :exec
INSERT INTO rule_packs (id, tenant_id, project_id, version, body, created_by) VALUES (@id, @tenant_id, @project_id, @version, @body, @created_by);

-- name: SupplierRename :execrows
UPDATE suppliers SET name = @name WHERE tenant_id = @tenant_id AND project_id = @project_id AND id = @id;

-- name: SupplierNameTaken :one
SELECT EXISTS (SELECT 1 FROM suppliers WHERE tenant_id = @tenant_id AND project_id = @project_id AND lower(name) = lower(@name::text) AND id <> @id::text) AS taken;
