-- name: SchemaInfoGet :one
SELECT key, value
FROM weft_schema_info
WHERE key = $1;
