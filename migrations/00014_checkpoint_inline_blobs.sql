-- Full blobs inside their checkpoint's row (internal/postgres.Checkpointer), so a step that
-- only rewrites whole values (the common case) writes one row and moves its head, as little
-- as a durable step can: a blob row per changed channel cost a Put about a third more time
-- than the checkpoint row itself.
--
-- A checkpoint's row now carries, in blob_channels and blob_data (parallel arrays; NULL when
-- none), the full values (pos 0) it wrote at its own version. Delta blobs stay in
-- checkpoint_blobs, which their chains' range scans need, as do full blobs of another
-- version and rows written before this migration. When Prune deletes a checkpoint whose
-- inline values a remaining checkpoint still needs (an unchanged channel's version, or a
-- delta chain's root), it first copies them into checkpoint_blobs.
--
-- checkpoint_values is every stored value, wherever it lives: looking a value up by (space,
-- version, channel) through it probes checkpoint_blobs' primary key and checkpoints' primary
-- key (the predicates reach both branches of the UNION ALL). Inline values come first: they are
-- the common case.

-- +goose Up
ALTER TABLE checkpoints ADD COLUMN blob_channels text[], ADD COLUMN blob_data bytea[];

CREATE VIEW checkpoint_values AS
SELECT c.space_id, c.id AS version, c.id AS root, NULL::uuid AS base, 0 AS pos, u.channel, u.data
FROM checkpoints c
CROSS JOIN LATERAL unnest(c.blob_channels, c.blob_data) AS u (channel, data)
UNION ALL
SELECT b.space_id, b.version, b.root, b.base, b.pos, b.channel, b.data
FROM checkpoint_blobs b;

-- +goose Down
DROP VIEW checkpoint_values;
INSERT INTO checkpoint_blobs (space_id, version, root, base, pos, channel, data)
SELECT c.space_id, c.id, c.id, NULL, 0, u.channel, u.data
FROM checkpoints c
CROSS JOIN LATERAL unnest(c.blob_channels, c.blob_data) AS u (channel, data)
ON CONFLICT DO NOTHING;
ALTER TABLE checkpoints DROP COLUMN blob_data, DROP COLUMN blob_channels;
