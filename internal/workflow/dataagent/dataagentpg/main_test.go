package dataagentpg_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"weft/internal/postgres/pgtest"
	"weft/internal/workflow/dataagent/dataagentpg"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// demoEnd is the day after the demo's last order in every test.
var demoEnd = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// demoDB is a fresh database holding the demo data set in schema, with a
// pool connected as the unprivileged test role.
func demoDB(t *testing.T, schema string) *pgxpool.Pool {
	t.Helper()
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(pool.Close)
	start := time.Now()
	if err := dataagentpg.InstallDemo(ctx, pool, dataagentpg.Demo{Schema: schema, End: demoEnd}); err != nil {
		t.Fatalf("install demo: %v", err)
	}
	t.Logf("demo data set installed in %s", time.Since(start).Round(time.Millisecond))
	return pool
}
