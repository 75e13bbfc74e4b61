package chaos_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"weft/internal/postgres/pgcluster"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
)

// Restart test parameters: fewer, slower jobs than the crash test, run in this process.
const (
	restartJobs   = 50
	restartWork   = 20 * time.Millisecond // per node
	restartDown   = time.Second           // how long the server stays down
	restartBudget = 2 * time.Minute
)

// TestPostgresRestart: the database server stops mid-run (fast shutdown: every connection
// is cut) and starts again on the same port a second later. The worker reconnects and every
// job completes, with no duplicate side effect and clean trails.
func TestPostgresRestart(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts a private PostgreSQL server")
	}
	if _, err := pgcluster.FindBinDir(); err != nil {
		t.Skipf("cannot start a private PostgreSQL server to restart: %v", err)
	}
	// Not t.TempDir: its parent is private to this user, and when root the server runs as
	// another one.
	parent, err := os.MkdirTemp("", "weft-chaos-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(parent) })
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "pgdata")
	ctx := context.Background()
	c, err := pgcluster.Start(ctx, pgcluster.Options{Dir: dir})
	if err != nil {
		t.Skipf("cannot start a private PostgreSQL server to restart: %v", err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	conn, err := pgx.Connect(ctx, c.URL())
	if err != nil {
		t.Fatal(err)
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE chaos")
	_ = conn.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	url := strings.Replace(c.URL(), "/postgres?", "/chaos?", 1)

	start := time.Now()
	b := newBench(t, url, restartJobs) // postgres.Open migrates the new database
	stop, _ := inProcessWorker(t, url, restartWork)

	deadline := start.Add(restartBudget)
	before, ok := b.waitFor(deadline, func(st map[string]int) bool { return st[string(runner.Succeeded)] >= restartJobs/5 })
	if !ok {
		t.Fatalf("the run did not get going: %v", before)
	}
	if err := c.Stop(); err != nil {
		t.Fatalf("stop the server: %v", err)
	}
	downAt := time.Now()
	time.Sleep(restartDown)
	c2, err := pgcluster.Start(ctx, pgcluster.Options{Dir: dir, Port: c.Port()})
	if err != nil {
		t.Fatalf("start the server again on port %d: %v", c.Port(), err)
	}
	t.Cleanup(func() { _ = c2.Stop() })
	down := time.Since(downAt)

	st, ok := b.waitFor(deadline, b.allSucceeded)
	if !ok {
		t.Fatalf("not done within %v of the start: job statuses %v, want all %d succeeded", restartBudget, st, restartJobs)
	}
	took := time.Since(start)
	stop()
	f := b.verify(t)
	t.Logf("postgres restart: %d jobs × %d nodes of %v; server stopped with %d jobs succeeded, down %v; all succeeded after %v",
		restartJobs, len(line), restartWork, before[string(runner.Succeeded)], down.Round(time.Millisecond), took.Round(time.Millisecond))
	t.Logf("postgres restart: %s", f)
}

// TestKillConnections: every connection to the database is terminated mid-run
// (pg_terminate_backend, from an admin session), three times. The worker reconnects and
// every job completes, with no duplicate side effect and clean trails.
func TestKillConnections(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	ctx := context.Background()
	start := time.Now()
	b := newBench(t, url, restartJobs)
	admin, err := pgx.Connect(ctx, pgtest.AdminURL(t, url))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = admin.Close(ctx) })
	stop, _ := inProcessWorker(t, url, restartWork)

	deadline := start.Add(restartBudget)
	var killed []string
	for i := range 3 {
		st, ok := b.waitFor(deadline, func(st map[string]int) bool {
			return st[string(runner.Succeeded)] >= (i+1)*restartJobs/5
		})
		if !ok {
			t.Fatalf("the run stalled before kill %d: %v", i+1, st)
		}
		var n int
		err := admin.QueryRow(ctx, `SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()) AS k`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		killed = append(killed, fmt.Sprintf("%d connections at %d succeeded", n, st[string(runner.Succeeded)]))
	}
	st, ok := b.waitFor(deadline, b.allSucceeded)
	if !ok {
		t.Fatalf("not done within %v of the start: job statuses %v, want all %d succeeded", restartBudget, st, restartJobs)
	}
	took := time.Since(start)
	stop()
	f := b.verify(t)
	t.Logf("kill connections: %d jobs × %d nodes of %v; terminated %s; all succeeded after %v",
		restartJobs, len(line), restartWork, strings.Join(killed, ", "), took.Round(time.Millisecond))
	t.Logf("kill connections: %s", f)
}
