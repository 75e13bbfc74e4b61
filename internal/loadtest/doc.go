// Package loadtest holds Weft's load benchmarks (run by `make bench`, never by `make test`):
// the console's pages under wrk with a million audit rows, ten thousand idle SSE clients on
// one server process, and the dashboard while the runner checkpoints. Each reports its
// figures with b.ReportMetric next to the target it checks, and skips with the reason when a
// tool it needs (PostgreSQL, wrk) is missing. The package has no code of its own besides this
// comment: everything is in its _test.go files.
package loadtest
