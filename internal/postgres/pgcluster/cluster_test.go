package pgcluster_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"weft/internal/postgres/pgcluster"
)

func binaries(t *testing.T) {
	t.Helper()
	if _, err := pgcluster.FindBinDir(); err != nil {
		t.Skipf("no PostgreSQL server binaries: %v", err)
	}
}

func query(t *testing.T, url, sql string) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql).ReadAll()
	return err
}

func TestThrowawayCluster(t *testing.T) {
	t.Parallel()
	binaries(t)
	c, err := pgcluster.Start(context.Background(), pgcluster.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	if err := query(t, c.URL(), "CREATE TABLE t (x int); INSERT INTO t VALUES (1)"); err != nil {
		t.Fatalf("query %s: %v", c.URL(), err)
	}
	root := filepath.Dir(c.Dir())
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatalf("second Stop: %v", err)
	}
	if _, err := os.Stat(root); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("Stop left %s behind (%v)", root, err)
	}
	if err := query(t, c.URL(), "SELECT 1"); err == nil {
		t.Fatal("the server still answers after Stop")
	}
}

// TestLastingCluster: a cluster in a directory of the caller's keeps its data across starts.
func TestLastingCluster(t *testing.T) {
	t.Parallel()
	binaries(t)
	// Not t.TempDir: its parent is private to this user, and when root the server runs as
	// another one.
	parent, err := os.MkdirTemp("", "pgcluster-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(parent) })
	if err := os.Chmod(parent, 0o755); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(parent, "pgdata")
	for i, sql := range []string{"CREATE TABLE kept (x int); INSERT INTO kept VALUES (42)", "SELECT x FROM kept"} {
		c, err := pgcluster.Start(context.Background(), pgcluster.Options{Dir: dir})
		if err != nil {
			t.Fatalf("start %d: %v", i, err)
		}
		qerr := query(t, c.URL(), sql)
		if err := c.Stop(); err != nil {
			t.Fatal(err)
		}
		if qerr != nil {
			t.Fatalf("start %d: %v", i, qerr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "PG_VERSION")); err != nil {
		t.Fatalf("Stop removed a caller's data directory: %v", err)
	}
}
