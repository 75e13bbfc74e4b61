// Package runner is Weft's durable execution service: workers claim jobs
// (FOR UPDATE SKIP LOCKED, through the Store), hold a lease with heartbeats,
// run one thread of one registered graph per job, classify errors, retry
// transient ones with backoff, send the rest through the dead-letter flow,
// and resume paused threads with single-use tokens. It declares the store
// interfaces it needs and contains no SQL; internal/postgres implements them.
// Each job attempt is an OpenTelemetry span with a child span per node task
// (internal/telemetry), and an Observer hears of claims, rests, pauses and
// resumes (the metrics).
// It imports internal/graph, internal/fault, internal/telemetry, the
// OpenTelemetry trace API and the standard library.
package runner
