-- name: DocumentInsert :exec
INSERT INTO documents (id, tenant_id, supplier_id, title, media_type, body) VALUES ($1, $2, $3, $4, $5, $6);

-- name: DocumentListBySupplier :many
SELECT id, tenant_id, supplier_id, title, media_type, length(body)::int AS size, created_at
FROM documents WHERE tenant_id = $1 AND supplier_id = $2 ORDER BY created_at, id;
