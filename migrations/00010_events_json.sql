-- Stream events are written once and read back whole, never queried inside: store their data
-- as json (kept as text) instead of jsonb, which saves parsing every event on insert.

-- +goose Up
ALTER TABLE events ALTER COLUMN data TYPE json USING data::json;

-- +goose Down
ALTER TABLE events ALTER COLUMN data TYPE jsonb USING data::jsonb;
