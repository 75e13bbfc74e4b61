package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"weft/internal/fault"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
)

func TestAuditAppendList(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	a := postgres.NewAudit(b.db)
	base := time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)
	for i := range 12 {
		e, err := a.Append(b.ctx, postgres.Entry{TenantID: tenantA, Actor: fmt.Sprintf("u_%d", i%3), Action: []string{"job.retry", "dlq.discard"}[i%2],
			Subject: fmt.Sprintf("job-%d", i%4), Workflow: "bideval", Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)),
			At: base.Add(time.Duration(i) * time.Hour)})
		if err != nil || e.ID == 0 || !e.At.Equal(base.Add(time.Duration(i)*time.Hour)) {
			t.Fatalf("append %d: %+v, %v", i, e, err)
		}
	}
	if _, err := a.Append(b.ctx, postgres.Entry{TenantID: tenantB, Actor: "u_0", Action: "job.retry"}); err != nil {
		t.Fatal(err)
	}
	list := func(f postgres.AuditFilter) []int {
		t.Helper()
		f.TenantID = tenantA
		var is []int
		var before int64
		for pages := 0; ; pages++ {
			entries, next, err := a.List(b.ctx, f, before, 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				var p struct{ I int }
				if err := json.Unmarshal(e.Payload, &p); err != nil {
					t.Fatal(err)
				}
				is = append(is, p.I)
			}
			if before = next; next == 0 || pages > 20 {
				return is
			}
		}
	}
	for _, c := range []struct {
		f    postgres.AuditFilter
		want string
	}{
		{postgres.AuditFilter{}, "[11 10 9 8 7 6 5 4 3 2 1 0]"},
		{postgres.AuditFilter{Actor: "u_1"}, "[10 7 4 1]"},
		{postgres.AuditFilter{Action: "job.retry", Subject: "job-2"}, "[10 6 2]"},
		{postgres.AuditFilter{From: base.Add(3 * time.Hour), To: base.Add(6 * time.Hour)}, "[5 4 3]"},
		{postgres.AuditFilter{Workflow: "other"}, "[]"},
	} {
		if got := fmt.Sprint(list(c.f)); got != c.want {
			t.Errorf("%+v: %s, want %s", c.f, got, c.want)
		}
	}
	_, err := a.Append(b.ctx, postgres.Entry{TenantID: tenantA, Actor: "u"})
	wantFault(t, err, fault.Validation, fault.CodeValidation)
	_, err = a.Append(b.ctx, postgres.Entry{TenantID: tenantA, Actor: "u", Action: "x", Payload: json.RawMessage(`{`)})
	wantFault(t, err, fault.Validation, fault.CodeValidation)
}

// TestAuditAppendOnly: the app role may read and add audit rows, never change or remove
// them; the trigger stops even a superuser.
func TestAuditAppendOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := pgtest.URL(t)
	d, err := postgres.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	if _, err := postgres.NewAudit(d).Append(ctx, postgres.Entry{TenantID: tenantA, Actor: "u", Action: "job.retry"}); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, pgtest.AdminURL(t, u))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(ctx) })
	var super bool
	if err := conn.QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&super); err != nil || !super {
		t.Fatalf("the admin connection is not a superuser (%v)", err)
	}
	refused := func(sql, want string) {
		t.Helper()
		_, err := conn.Exec(ctx, sql)
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != "42501" || !strings.Contains(pgErr.Message, want) {
			t.Errorf("%s: %v, want SQLSTATE 42501 %q", sql, err, want)
		}
	}
	mutations := []string{`UPDATE audit_log SET actor = 'mallory'`, `DELETE FROM audit_log`, `TRUNCATE audit_log`}
	for _, sql := range mutations {
		refused(sql, "append-only")
	}

	if _, err := conn.Exec(ctx, `SET ROLE `+pgtest.AppRole); err != nil {
		t.Fatal(err)
	}
	for _, sql := range mutations {
		refused(sql, "permission denied")
	}
	refused(`UPDATE goose_db_version SET is_applied = false`, "permission denied")
	refused(`DELETE FROM job_transitions`, "permission denied")
	// What the app needs works: audit inserts (and their sequence), the job tables, and
	// tables of later migrations (default privileges).
	for _, sql := range []string{
		`INSERT INTO audit_log (tenant_id, actor, action) VALUES ('t', 'app', 'x')`,
		`INSERT INTO jobs (id, tenant_id, workflow, thread_id, trace_id) VALUES (gen_random_uuid(), 't', 'wf', 'th', 'tr')`,
		`UPDATE jobs SET status = 'running', lease_owner = 'w', lease_until = now()`,
		`INSERT INTO side_effects (tenant_id, key, result) VALUES ('t', 'k', '1')`,
		`SELECT count(*) FROM events`,
		`SELECT count(*) FROM checkpoints`,
		`SELECT count(*) FROM job_counts`,
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Errorf("as %s: %s: %v", pgtest.AppRole, sql, err)
		}
	}
	if _, err := conn.Exec(ctx, `RESET ROLE`); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE actor <> 'mallory'`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d audit rows (%v), want 2", n, err)
	}
}
