-- A run's OpenTelemetry trace continues its caller's: the W3C traceparent of the request that
-- started the job (or last resumed it) is kept with the job, so the worker that claims it,
-- on any machine, makes its run's span that request's child (or links to it). Empty: none.

-- +goose Up
ALTER TABLE jobs ADD COLUMN trace_parent text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE jobs DROP COLUMN trace_parent;
