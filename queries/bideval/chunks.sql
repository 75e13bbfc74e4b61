-- name: ChunkInsert :exec
INSERT INTO chunks (id, tenant_id, supplier_id, document_id, seq, text, search) VALUES ($1, $2, $3, $4, $5, $6, $7);

-- name: ChunkSearch :many
-- Full-text search over a supplier's chunks; the query is an OR of search tokens.
-- Normalisation 32 maps the rank into [0, 1). Withdrawn documents are left out.
SELECT c.id, c.document_id, d.title AS document, c.text,
       ts_rank(c.tsv, to_tsquery('simple', sqlc.arg(query)::text), 32)::double precision AS score
FROM chunks c JOIN documents d ON d.id = c.document_id
WHERE c.tenant_id = sqlc.arg(tenant_id) AND c.supplier_id = sqlc.arg(supplier_id)
  AND d.withdrawn_at IS NULL
  AND c.tsv @@ to_tsquery('simple', sqlc.arg(query)::text)
ORDER BY score DESC, c.id
LIMIT sqlc.arg(k);

-- name: ChunksWithdrawn :many
-- Which of these chunks of a tenant belong to a withdrawn bid document, with when and by whom
-- it was withdrawn: evidence that cites them says so.
SELECT c.id, d.withdrawn_at::timestamptz AS withdrawn_at, d.withdrawn_by
FROM chunks c JOIN documents d ON d.id = c.document_id AND d.tenant_id = c.tenant_id
WHERE c.tenant_id = @tenant_id AND c.id = ANY(@ids::text[]) AND d.withdrawn_at IS NOT NULL;
