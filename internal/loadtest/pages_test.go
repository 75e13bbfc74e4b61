package loadtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"weft/internal/postgres/pgtest"
)

// Page load targets (the "Load" section).
const (
	pageP99Target = 30 * time.Millisecond
	auditRows     = 1_000_000
	pageLoadTime  = 10 * time.Second
	pageConns     = 16
)

// BenchmarkDashboardAndAudit: wrk -t2 -c16 for 10 s against the dashboard, the audit log's
// first page and a filtered audit page, with a million audit rows; p99 ≤ 30 ms each.
func BenchmarkDashboardAndAudit(b *testing.B) {
	k := setup(b)
	start := time.Now()
	insertAudit(b, pgtest.AdminURL(b, k.URL), auditRows)
	b.Logf("inserted %d audit rows in %v", auditRows, time.Since(start).Round(time.Millisecond))
	cookie := login(b, k.Base, "admin@demo.weft")
	pages := []struct{ name, path, want string }{
		{"dashboard", "/dashboard", "Bid evaluation"},
		{"audit", "/audit", "job.retry"},
		{"audit_filtered", "/audit?action=job.retry", "job.retry"},
	}
	for _, p := range pages {
		checkPage(b, k.Base, cookie, p.path, p.want)
	}
	b.ResetTimer()
	for _, p := range pages {
		r := load(b, k.Base+p.path, cookie, pageLoadTime, pageConns)
		b.Logf("%s %s (target p99 ≤ %v)", p.path, r, pageP99Target)
		b.ReportMetric(ms(r.P99), p.name+"_p99_ms")
		b.ReportMetric(ms(r.P50), p.name+"_p50_ms")
		b.ReportMetric(r.RPS, p.name+"_req/s")
		if r.P99 > pageP99Target {
			b.Logf("TARGET MISSED: %s p99 %.2f ms > %v", p.path, ms(r.P99), pageP99Target)
		}
	}
}

// insertAudit appends n audit rows to the demo tenant (one statement, as the admin: the
// log is append-only for the application role), a second apart going back from now, with
// the actions Weft writes (one in eight a job.retry), and a few thousand for the other
// tenant; then vacuums and analyzes the table (autovacuum would otherwise
// run through the new rows during the measurements).
func insertAudit(b *testing.B, adminURL string, n int) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, `
INSERT INTO audit_log (tenant_id, actor, action, subject, workflow, payload, at)
SELECT CASE WHEN i % 200 = 0 THEN 'acme' ELSE 'demo' END,
       'user-' || (i % 17),
       (ARRAY['evaluation.start','evaluation.report','run.start','thread.resume','thread.fork',
              'job.retry','dlq.discard','evaluation.start'])[1 + i % 8],
       'subject-' || (i % 5000),
       CASE WHEN i % 3 = 0 THEN 'tour' ELSE 'bid_evaluation' END,
       jsonb_build_object('n', i, 'note', 'load test row'),
       now() - make_interval(secs => i)
FROM generate_series(1, $1::int) AS i`, n); err != nil {
		b.Fatalf("insert audit rows: %v", err)
	}
	if _, err := conn.Exec(ctx, `VACUUM (ANALYZE) audit_log`); err != nil {
		b.Fatal(err)
	}
}
