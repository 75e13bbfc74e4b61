-- Checkpoint blob indexes, reworked after measuring (see 00002 for the tables).
--
-- A chain now reads as its root, by primary key, plus one range scan of the deltas:
-- (root, channel, 0 < pos <= the tip's pos). The primary key (space_id, version, channel) and
-- the chain index (root, channel, pos) share no useful prefix on purpose. A lookup by version
-- can only use the former, a delta range only the latter, so the plans stay right before the
-- first ANALYZE. With a shared (space_id, channel) prefix the planner, lacking statistics,
-- read a tip or a chain through the wrong index and filtered the thread's whole history.
-- Full blobs (most rows) need no chain entry, so the index covers deltas only. root is a
-- checkpoint id (UUIDv7), unique across spaces in practice; queries also filter on space_id.

-- +goose Up
ALTER TABLE checkpoint_blobs DROP CONSTRAINT checkpoint_blobs_pkey;
ALTER TABLE checkpoint_blobs ADD CONSTRAINT checkpoint_blobs_pkey PRIMARY KEY (space_id, version, channel);
DROP INDEX checkpoint_blobs_chain;
CREATE INDEX checkpoint_blobs_chain ON checkpoint_blobs (root, channel, pos) WHERE pos > 0;
COMMENT ON COLUMN checkpoints.versions IS
    'channel -> version (the id of the checkpoint that wrote the value); "" stands for this checkpoint''s own id';

-- +goose Down
COMMENT ON COLUMN checkpoints.versions IS NULL;
DROP INDEX checkpoint_blobs_chain;
CREATE INDEX checkpoint_blobs_chain ON checkpoint_blobs (space_id, channel, root, pos);
ALTER TABLE checkpoint_blobs DROP CONSTRAINT checkpoint_blobs_pkey;
ALTER TABLE checkpoint_blobs ADD CONSTRAINT checkpoint_blobs_pkey PRIMARY KEY (space_id, channel, version);
