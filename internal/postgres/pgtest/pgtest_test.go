package pgtest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"weft/internal/postgres/pgcluster"
	"weft/internal/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestFreshDatabases(t *testing.T) {
	t.Parallel()
	a, b := pgtest.URL(t), pgtest.URL(t)
	if a == b {
		t.Fatal("two tests share a database")
	}
	d := pgtest.DB(t)
	if err := d.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestForcedPrivateServer runs this test binary again with WEFT_PG_FORCE_PRIVATE=1: the child
// runs on a private server, and Main stops it when the child's tests finish.
func TestForcedPrivateServer(t *testing.T) {
	if os.Getenv("PGTEST_CHILD") == "1" {
		if !pgtest.Private(t) {
			t.Fatalf("running on %s, not a private server", pgtest.ServerURL(t))
		}
		if err := pgtest.DB(t).Ping(context.Background()); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("private server: %s\n", pgtest.ServerURL(t))
		return
	}
	t.Parallel()
	if _, err := pgcluster.FindBinDir(); err != nil {
		t.Skipf("no PostgreSQL server binaries: %v", err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestForcedPrivateServer$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "PGTEST_CHILD=1", pgtest.EnvForcePrivate+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	m := regexp.MustCompile(`private server: (\S+)`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("child did not report its server:\n%s", out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if conn, err := pgconn.Connect(ctx, string(m[1])); err == nil {
		_ = conn.Close(ctx)
		t.Fatalf("the child's private server %s still answers after its tests finished", m[1])
	}
}
