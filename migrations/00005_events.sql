-- Stream events of runs (internal/postgres.EventBus) and per-node execution records
-- (internal/postgres.NodeRecords).
--
-- events: every graph.Event a run published, so that any instance can stream any thread and a
-- subscriber that connects late (SSE Last-Event-ID) replays from an id. Writers insert in
-- batches under one transaction-scoped advisory lock, so ids become visible in id order and a
-- reader that pages with "id > last seen" never skips a row that commits later. Each batch
-- sends one NOTIFY on 'weft_events' saying where to read; the table is the source of truth.

-- +goose Up
CREATE TABLE events (
    id        bigserial PRIMARY KEY,
    tenant_id text NOT NULL,
    thread_id text NOT NULL,
    ns        text NOT NULL,
    kind      text NOT NULL,
    step      integer NOT NULL,
    node      text NOT NULL,
    task_id   text NOT NULL,
    at        timestamptz NOT NULL,
    -- the JSON of graph.Event.Data; NULL when the event had none.
    data      jsonb
);
CREATE INDEX events_thread ON events (thread_id, id);
CREATE INDEX events_tenant ON events (tenant_id, id);

-- One row per node execution (seed 000 §10), for the console's node timeline.
CREATE TABLE node_executions (
    id          bigserial PRIMARY KEY,
    tenant_id   text NOT NULL,
    job_id      text NOT NULL,
    workflow    text NOT NULL,
    trace_id    text NOT NULL,
    thread_id   text NOT NULL,
    node        text NOT NULL,
    task_id     text NOT NULL,
    started_at  timestamptz NOT NULL,
    ended_at    timestamptz NOT NULL,
    latency_ms  double precision NOT NULL,
    input_size  integer NOT NULL,
    output_size integer NOT NULL,
    attempts    integer NOT NULL,
    error_code  text NOT NULL,
    cached      boolean NOT NULL
);
CREATE INDEX node_executions_thread ON node_executions (tenant_id, thread_id, started_at);

-- +goose Down
DROP TABLE node_executions;
DROP TABLE events;
