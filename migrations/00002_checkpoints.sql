-- Checkpoints of graph threads (internal/postgres.Checkpointer).
--
-- A "space" is one (thread_id, ns) pair: a thread's root graph or one subgraph namespace. Its
-- row in checkpoint_heads carries the head, advanced by compare-and-set, and a bigint id that
-- every other table uses instead of repeating thread_id and ns in each row and index entry.
-- There are no foreign keys: rows are only written by the checkpointer, which deletes a
-- space's rows together (DeleteThread, Prune) in one transaction.

-- +goose Up
CREATE TABLE checkpoint_heads (
    space_id  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    head      uuid NOT NULL,
    thread_id text NOT NULL,
    ns        text NOT NULL,
    UNIQUE (thread_id, ns)
);

-- One row per checkpoint, without channel values. Ids are UUIDv7 (time-ordered), so the
-- primary key also pages a space's history newest first.
CREATE TABLE checkpoints (
    space_id   bigint NOT NULL,
    id         uuid NOT NULL,
    parent_id  uuid,
    created_at timestamptz NOT NULL,
    step       integer NOT NULL,
    source     text NOT NULL,
    -- channel -> version (the id of the checkpoint that wrote the value).
    versions   jsonb NOT NULL,
    -- next, barriers, resume, skip_before, nodes, fork_of: json, not jsonb, so embedded raw
    -- JSON (resume values, Send arguments) comes back as the engine wrote it (jsonb would
    -- re-space it).
    meta       json NOT NULL,
    PRIMARY KEY (space_id, id)
);

-- One row per (channel, version): the value a checkpoint wrote for a channel it changed.
-- A full blob has pos 0 and root = version. A delta blob (an append channel's new items)
-- has base = the version it appends to, root = the full blob its chain starts from and
-- pos = base's pos + 1, so one range scan of (space_id, channel, root, pos <= tip's pos)
-- reads a whole chain. Forks share a chain's prefix; the reader follows base pointers to
-- drop sibling branches' rows.
CREATE TABLE checkpoint_blobs (
    space_id bigint NOT NULL,
    version  uuid NOT NULL,
    root     uuid NOT NULL,
    base     uuid,
    pos      integer NOT NULL,
    channel  text NOT NULL,
    data     bytea NOT NULL,
    PRIMARY KEY (space_id, channel, version),
    CHECK (pos >= 0 AND (base IS NULL) = (pos = 0))
);
CREATE INDEX checkpoint_blobs_chain ON checkpoint_blobs (space_id, channel, root, pos);

-- Pending writes saved against a checkpoint before the step after it completed.
CREATE TABLE checkpoint_writes (
    space_id      bigint NOT NULL,
    checkpoint_id uuid NOT NULL,
    seq           integer NOT NULL,
    task_id       text NOT NULL,
    channel       text NOT NULL,
    node          text NOT NULL,
    data          bytea NOT NULL,
    PRIMARY KEY (space_id, checkpoint_id, task_id, seq, channel)
);

-- +goose Down
DROP TABLE checkpoint_writes;
DROP TABLE checkpoint_blobs;
DROP TABLE checkpoints;
DROP TABLE checkpoint_heads;
