-- Segments of delta chains (internal/postgres.Checkpointer), so reading an append channel
-- does not cost one row per step of the thread's history.
--
-- A chain (see 00002) is a root blob and one delta row per position. A segment holds the
-- items of the deltas at positions (hi - 32, hi], joined into one JSON array, with no
-- brackets: it is built after the delta at position hi (a multiple of 32) commits, when the
-- chain's previous segment exists (so segments always cover a prefix of the chain), when
-- the chain is linear, and when it is small (a few KB; large items gain little from fewer
-- rows and would cost their size again). A reader at position p reads the root, the
-- segments up to p and the few deltas after the last of them. Segments duplicate data the
-- deltas hold, so they can always be rebuilt or dropped.
--
-- A chain is forked when a delta appends to a version that already has a successor (a
-- fork from an old checkpoint). Positions then no longer name one value, so the chain gets
-- a checkpoint_forked_chains row in the same statement, no more segments, and its readers
-- follow base pointers over every delta, as before segments.
--
-- Both tables are keyed by space too: a root is a checkpoint id, which another thread or
-- namespace may hold as well (checkpoint_blobs is keyed by space for the same reason).

-- +goose Up
CREATE TABLE checkpoint_segments (
    space_id bigint NOT NULL,
    root     uuid NOT NULL,
    channel  text NOT NULL,
    hi       integer NOT NULL CHECK (hi > 0),
    items    bytea NOT NULL,
    PRIMARY KEY (space_id, root, channel, hi)
);

CREATE TABLE checkpoint_forked_chains (
    space_id bigint NOT NULL,
    root     uuid NOT NULL,
    channel  text NOT NULL,
    PRIMARY KEY (space_id, root, channel)
);

-- A delta's JSON as parts of a joined array: whether it is an array (null, an append
-- channel's nil slice, counts as an empty one), and its items without the brackets (NULL when
-- there are none). Simple SQL functions, inlined into the queries that call them (so not
-- STRICT: PostgreSQL does not inline a STRICT function whose body is not strict, and calling
-- one per row costs several microseconds).
CREATE FUNCTION checkpoint_is_array(data bytea) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN data = 'null'::bytea OR (length(data) >= 2 AND get_byte(data, 0) = 91
        AND get_byte(data, length(data) - 1) = 93);

CREATE FUNCTION checkpoint_array_items(data bytea) RETURNS bytea
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN data = 'null'::bytea OR length(data) < 2 THEN NULL
        ELSE NULLIF(btrim(substring(data FROM 2 FOR length(data) - 2), '\x20090a0d'::bytea), ''::bytea) END;

-- +goose Down
DROP FUNCTION checkpoint_array_items(bytea);
DROP FUNCTION checkpoint_is_array(bytea);
DROP TABLE checkpoint_forked_chains;
DROP TABLE checkpoint_segments;
