-- name: SupplierInsert :exec
INSERT INTO suppliers (id, tenant_id, project_id, name) VALUES ($1, $2, $3, $4);

-- name: SupplierGet :one
SELECT * FROM suppliers WHERE tenant_id = $1 AND id = $2;

-- name: SupplierListByProject :many
SELECT * FROM suppliers WHERE tenant_id = $1 AND project_id = $2 ORDER BY name, id;
