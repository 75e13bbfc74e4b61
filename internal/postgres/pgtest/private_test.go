package pgtest

import (
	"strings"
	"testing"

	"weft/internal/postgres/pgcluster"
)

// TestPrivateFallback: a default address where nothing listens starts a private server; an
// explicit one fails with the reason.
func TestPrivateFallback(t *testing.T) {
	t.Parallel()
	if _, err := pgcluster.FindBinDir(); err != nil {
		t.Skipf("no PostgreSQL server binaries: %v", err)
	}
	dead := "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable"
	if _, _, c, err := resolve(dead, true, false); err == nil || c != nil || !strings.Contains(err.Error(), "does not answer") {
		t.Fatalf("explicit dead URL: err = %v, cluster = %v", err, c)
	}
	conf, shown, c, err := resolve(dead, false, false)
	if err != nil {
		t.Fatal(err)
	}
	if c == nil {
		t.Fatal("no private server started")
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Error(err)
		}
	})
	if shown != c.URL() || conf.Port == "1" || conf.DriverName != "pgx" || !strings.Contains(conf.Options, "sslmode=disable") {
		t.Fatalf("config = %+v (%s)", conf, shown)
	}
	if err := ping(c.URL()); err != nil {
		t.Fatal(err)
	}
}
