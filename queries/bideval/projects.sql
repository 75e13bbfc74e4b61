-- name: ProjectInsert :exec
INSERT INTO projects (id, tenant_id, name, description, budget, currency) VALUES ($1, $2, $3, $4, $5, $6);

-- name: ProjectGet :one
SELECT * FROM projects WHERE tenant_id = $1 AND id = $2;

-- name: ProjectList :many
SELECT * FROM projects WHERE tenant_id = $1 ORDER BY created_at DESC, id;
