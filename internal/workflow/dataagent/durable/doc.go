// Package durable holds the data agent's proofs on the durable runner: a worker process
// killed with SIGKILL while SqlExecute runs, whose job another process rescues and finishes
// from the last checkpoint without running the Python step twice. It has no code of its
// own: everything is in its tests, which import internal/app/platform, internal/postgres,
// internal/runner, internal/sandbox and the workflow with its store adapter.
package durable
