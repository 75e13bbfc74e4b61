-- name: RulePackInsert :exec
INSERT INTO rule_packs (id, tenant_id, project_id, version, body) VALUES ($1, $2, $3, $4, $5);

-- name: RulePackLatest :one
SELECT * FROM rule_packs WHERE tenant_id = $1 AND project_id = $2 ORDER BY created_at DESC, version DESC LIMIT 1;
