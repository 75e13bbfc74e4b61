-- Stream events are stored packed: one row holds a batch of events (up to 256 of them, and
-- about 7 KB), not one row each. The bus writes a batch every few milliseconds while threads
-- run, and a row per event cost the checkpoints' transactions, which carry the batches, a heap
-- tuple and three index entries per event (BenchmarkEventsOverhead: events on kept a median
-- 0.88-0.90 of the steps without them; packed, 0.92 over 24 runs).
--
-- An event's id is its row's id * 256 + its index in the row, so ids stay one ascending
-- bigint (SSE Last-Event-ID). Rows are still inserted under the events' advisory lock, so
-- they commit in id order.
--
-- events: one row per batch (or part of a batch).
--   n        the row's last event index + 1 (its events' ids are below id * 256 + n)
--   at       the newest event's time (pruning)
--   tenants  the distinct tenants of its events
--   keys     the distinct threads of its events, each as threadKey: the tenant's length in
--            bytes, ':', the tenant, then the thread ("4:acmeev_1"); a GIN index finds a thread's rows
--   events   a JSON array of the events, each {"i": index, "t": tenant, "h": thread, "k": kind,
--            "a": at, and when not empty "s": namespace, "p": step, "n": node, "x": task id,
--            "d": data}
--
-- Rows stored before this migration keep their ids: the event with id e moves to row e >> 8
-- at index e & 255.

-- +goose Up
ALTER TABLE events RENAME TO events_unpacked;
ALTER INDEX events_thread RENAME TO events_unpacked_thread;
ALTER INDEX events_tenant RENAME TO events_unpacked_tenant;
ALTER INDEX events_pkey RENAME TO events_unpacked_pkey;

CREATE TABLE events (
    id      bigint PRIMARY KEY,
    n       integer NOT NULL CHECK (n BETWEEN 1 AND 256),
    at      timestamptz NOT NULL,
    tenants text[] NOT NULL,
    keys    text[] NOT NULL,
    events  text NOT NULL
) WITH (toast_tuple_target = 8160); -- rows the writer keeps under 8 KB stay inline, uncompressed
CREATE SEQUENCE events_row_id OWNED BY events.id;
ALTER TABLE events ALTER COLUMN id SET DEFAULT nextval('events_row_id');
CREATE INDEX events_keys ON events USING gin (keys);
-- New entries of a GIN index wait in a pending list, which lookups scan, until autovacuum
-- moves them into the index; the events prune calls this where autovacuum is off. Only the
-- index's owner may, so it runs as the owner.
-- +goose StatementBegin
CREATE FUNCTION events_clean_pending_keys() RETURNS bigint
LANGUAGE sql SECURITY DEFINER SET search_path = pg_catalog, public
AS $$ SELECT gin_clean_pending_list('public.events_keys'::regclass) $$;
-- +goose StatementEnd

INSERT INTO events (id, n, at, tenants, keys, events)
SELECT e.id >> 8, max(e.id & 255) + 1, max(e.at),
    array_agg(DISTINCT e.tenant_id), array_agg(DISTINCT octet_length(e.tenant_id) || ':' || e.tenant_id || e.thread_id),
    json_agg(jsonb_strip_nulls(jsonb_build_object(
        'i', e.id & 255, 't', e.tenant_id, 'h', e.thread_id, 'k', e.kind, 'a', e.at,
        's', nullif(e.ns, ''), 'p', nullif(e.step, 0), 'n', nullif(e.node, ''),
        'x', nullif(e.task_id, ''))) || CASE WHEN e.data IS NULL THEN '{}'::jsonb ELSE jsonb_build_object('d', e.data::jsonb) END
        ORDER BY e.id)::text
FROM events_unpacked e
GROUP BY e.id >> 8;
-- New rows come after every id the old sequence gave, stored or pruned since: a client's
-- Last-Event-ID from before the migration must not name an event still to come.
SELECT setval('events_row_id', greatest(
    coalesce((SELECT max(id) FROM events), 0) + 1,
    (SELECT last_value FROM events_id_seq) / 256 + 1), false);
DROP TABLE events_unpacked;

-- +goose Down
DROP FUNCTION events_clean_pending_keys();
CREATE TABLE events_unpacked (
    id        bigserial PRIMARY KEY,
    tenant_id text NOT NULL,
    thread_id text NOT NULL,
    ns        text NOT NULL,
    kind      text NOT NULL,
    step      integer NOT NULL,
    node      text NOT NULL,
    task_id   text NOT NULL,
    at        timestamptz NOT NULL,
    data      json
);
INSERT INTO events_unpacked (id, tenant_id, thread_id, ns, kind, step, node, task_id, at, data)
SELECT r.id * 256 + (x->>'i')::bigint, x->>'t', x->>'h', coalesce(x->>'s', ''), x->>'k',
    coalesce((x->>'p')::integer, 0), coalesce(x->>'n', ''), coalesce(x->>'x', ''), (x->>'a')::timestamptz,
    x->'d'
FROM events r, json_array_elements(r.events::json) x;
SELECT setval('events_unpacked_id_seq', coalesce((SELECT max(id) FROM events_unpacked), 0) + 1, false);
DROP TABLE events;
ALTER TABLE events_unpacked RENAME TO events;
ALTER SEQUENCE events_unpacked_id_seq RENAME TO events_id_seq;
ALTER INDEX events_unpacked_pkey RENAME TO events_pkey;
CREATE INDEX events_thread ON events (thread_id, id);
CREATE INDEX events_tenant ON events (tenant_id, id);
