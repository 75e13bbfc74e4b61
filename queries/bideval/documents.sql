-- name: DocumentInsert :exec
INSERT INTO documents (id, tenant_id, supplier_id, title, media_type, body) VALUES ($1, $2, $3, $4, $5, $6);

-- name: DocumentListBySupplier :many
SELECT id, tenant_id, supplier_id, title, media_type, octet_length(body)::int AS size, created_at
FROM documents WHERE tenant_id = $1 AND supplier_id = $2 ORDER BY created_at, id;

-- name: DocumentListByProject :many
-- A tender's bid documents, by supplier then upload time, with their sizes and chunk counts
-- (without their text), withdrawn ones included.
SELECT d.id, d.supplier_id, s.name AS supplier_name, d.title, octet_length(d.body)::int AS size,
       (SELECT count(*) FROM chunks c WHERE c.document_id = d.id)::int AS chunks, d.created_at,
       d.withdrawn_at, d.withdrawn_by
FROM documents d JOIN suppliers s ON s.id = d.supplier_id AND s.tenant_id = d.tenant_id
WHERE d.tenant_id = @tenant_id AND s.project_id = @project_id
ORDER BY s.name, d.created_at, d.id;

-- name: SupplierLock :exec
-- Serialises the uploads to one supplier's bid and their withdrawals (so two uploads of one
-- text at once cannot both find the other missing, and an upload waits for a withdrawal of
-- the same text to commit).
SELECT 1 FROM suppliers WHERE tenant_id = $1 AND id = $2 FOR NO KEY UPDATE;

-- name: DocumentSameBody :one
-- The supplier's document with this text, if one was added already: the same once line
-- endings (CRLF, CR) and the blank space around the text are set aside, as they split into
-- the same chunks. A withdrawn document does not count: its text may be added again.
SELECT title, created_at FROM documents
WHERE tenant_id = @tenant_id AND supplier_id = @supplier_id AND withdrawn_at IS NULL
  AND btrim(regexp_replace(body, E'\r\n?', E'\n', 'g'), E' \t\n')
    = btrim(regexp_replace(@body::text, E'\r\n?', E'\n', 'g'), E' \t\n')
ORDER BY created_at
LIMIT 1;

-- name: DocumentInProject :one
-- One of a tender's bid documents, with its supplier (its text is read as its chunks).
SELECT d.id, d.supplier_id, s.name AS supplier_name, d.title, octet_length(d.body)::int AS size, d.created_at,
       d.withdrawn_at, d.withdrawn_by
FROM documents d JOIN suppliers s ON s.id = d.supplier_id AND s.tenant_id = d.tenant_id
WHERE d.tenant_id = @tenant_id AND s.project_id = @project_id AND d.id = @id;

-- name: DocumentSetWithdrawn :one
-- Withdraws a bid document that is not withdrawn (withdraw, by actor) or restores one that is
-- (no row: it is in that state already), and returns the evaluation of its supplier's bid in
-- the tender ('' if none). The caller has found the document in the tender and locked its
-- supplier (SupplierLock).
UPDATE documents d
SET withdrawn_at = CASE WHEN @withdraw::boolean THEN now() END,
    withdrawn_by = CASE WHEN @withdraw::boolean THEN @actor::text ELSE '' END
WHERE d.tenant_id = @tenant_id AND d.id = @id AND (d.withdrawn_at IS NULL) = @withdraw::boolean
RETURNING coalesce((SELECT e.id FROM evaluations e
              WHERE e.tenant_id = d.tenant_id AND e.project_id = @project_id::text AND e.supplier_id = d.supplier_id), '')::text AS evaluation_id;

-- name: DocumentBody :one
SELECT body FROM documents WHERE tenant_id = @tenant_id AND id = @id;

-- name: ChunkListByDocument :many
-- A document's chunks in order: what retrieval searches and evidence cites.
SELECT id, seq, text FROM chunks
WHERE tenant_id = @tenant_id AND document_id = @document_id
ORDER BY seq;

-- name: DocumentCountActive :one
-- How many bid documents a supplier has, withdrawn ones aside: an evaluation needs one.
SELECT count(*)::int FROM documents WHERE tenant_id = @tenant_id AND supplier_id = @supplier_id AND withdrawn_at IS NULL;
