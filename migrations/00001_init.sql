-- +goose Up
CREATE TABLE weft_schema_info (
    key   text PRIMARY KEY,
    value text NOT NULL
);

-- +goose Down
DROP TABLE weft_schema_info;
