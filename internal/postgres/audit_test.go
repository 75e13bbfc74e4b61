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
			Subject: fmt.Sprintf("job-%d", i%4), Workflow: "wf", Payload: json.RawMessage(fmt.Sprintf(`{"i":%d}`, i)),
			At: base.Add(time.Duration(i) * time.Hour)})
		if err != nil || e.ID == 0 || !e.At.Equal(base.Add(time.Duration(i)*time.Hour)) {
			t.Fatalf("append %d: %+v, %v", i, e, err)
		}
	}
	if _, err := a.Append(b.ctx, postgres.Entry{TenantID: tenantB, Actor: "u_0", Action: "job.retry"}); err != nil {
		t.Fatal(err)
	}
	// At and id grow together here, so List (by id) and Browse (by time) agree.
	type lister func(context.Context, postgres.AuditFilter, int64, int) ([]postgres.Entry, int64, error)
	list := func(l lister, f postgres.AuditFilter) []int {
		t.Helper()
		f.TenantID = tenantA
		var is []int
		var before int64
		for pages := 0; ; pages++ {
			entries, next, err := l(b.ctx, f, before, 2)
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
		{postgres.AuditFilter{Actor: "u_0", Action: "dlq.discard", Subject: "job-1", Workflow: "wf"}, "[9]"},
		{postgres.AuditFilter{Action: "dlq.discard", From: base.Add(3 * time.Hour)}, "[11 9 7 5 3]"},
		{postgres.AuditFilter{Subject: "job-3", To: base.Add(8 * time.Hour)}, "[7 3]"},
	} {
		for name, l := range map[string]lister{"List": a.List, "Browse": a.Browse} {
			if got := fmt.Sprint(list(l, c.f)); got != c.want {
				t.Errorf("%s %+v: %s, want %s", name, c.f, got, c.want)
			}
		}
	}
	_, err := a.Append(b.ctx, postgres.Entry{TenantID: tenantA, Actor: "u"})
	wantFault(t, err, fault.Validation, fault.CodeValidation)
	_, err = a.Append(b.ctx, postgres.Entry{TenantID: tenantA, Actor: "u", Action: "x", Payload: json.RawMessage(`{`)})
	wantFault(t, err, fault.Validation, fault.CodeValidation)
}

// TestAuditBrowse: Browse pages by time then id, when the two disagree too (an entry
// written later about an earlier moment), with the cursor inside a filter and a time range;
// a cursor that is not one of the tenant's entries yields nothing.
func TestAuditBrowse(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	a := postgres.NewAudit(b.db)
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	// i-th entry at hour hours[i]; two share hour 4 (the id breaks the tie).
	hours := []int{5, 1, 4, 2, 4, 0, 3, 6}
	ids := make([]int64, len(hours))
	for i, h := range hours {
		e, err := a.Append(b.ctx, postgres.Entry{TenantID: tenantA, Actor: fmt.Sprintf("u_%d", i%2), Action: "job.retry",
			Subject: fmt.Sprintf("s%d", i), Workflow: "wf", At: base.Add(time.Duration(h) * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = e.ID
	}
	other, err := a.Append(b.ctx, postgres.Entry{TenantID: tenantB, Actor: "u_0", Action: "job.retry", At: base.Add(9 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	browse := func(f postgres.AuditFilter, before int64) (subjects []string) {
		t.Helper()
		f.TenantID = tenantA
		for pages := 0; pages < 20; pages++ {
			entries, next, err := a.Browse(b.ctx, f, before, 3)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				subjects = append(subjects, e.Subject)
			}
			if before = next; next == 0 {
				break
			}
		}
		return subjects
	}
	for _, c := range []struct {
		f      postgres.AuditFilter
		before int64
		want   string
	}{
		{postgres.AuditFilter{}, 0, "[s7 s0 s4 s2 s6 s3 s1 s5]"},
		{postgres.AuditFilter{}, ids[4], "[s2 s6 s3 s1 s5]"},
		{postgres.AuditFilter{Actor: "u_0"}, 0, "[s0 s4 s2 s6]"},
		{postgres.AuditFilter{Actor: "u_1"}, ids[7], "[s3 s1 s5]"},
		{postgres.AuditFilter{From: base.Add(2 * time.Hour), To: base.Add(5 * time.Hour)}, 0, "[s4 s2 s6 s3]"},
		{postgres.AuditFilter{Action: "job.retry", From: base.Add(2 * time.Hour)}, ids[2], "[s6 s3]"},
		{postgres.AuditFilter{Workflow: "wf"}, other.ID, "[]"},
		{postgres.AuditFilter{}, ids[len(ids)-1] + 1000, "[]"},
	} {
		if got := fmt.Sprint(browse(c.f, c.before)); got != c.want {
			t.Errorf("%+v before %d: %s, want %s", c.f, c.before, got, c.want)
		}
	}
	// Back up the pages from the oldest (the "Newer" link): the same pages, newest first,
	// until the newest page's entries.
	f := postgres.AuditFilter{TenantID: tenantA}
	var back []string
	for after := ids[5]; after != 0; { // s5, the oldest
		entries, newer, err := a.BrowseNewer(b.ctx, f, after, 3)
		if err != nil {
			t.Fatal(err)
		}
		var page []string
		for _, e := range entries {
			page = append(page, e.Subject)
		}
		back = append(back, fmt.Sprint(page))
		if newer != 0 && newer != entries[0].ID {
			t.Fatalf("newer %d, want the page's first entry %d", newer, entries[0].ID)
		}
		after = newer
	}
	if got := fmt.Sprint(back); got != "[[s6 s3 s1] [s0 s4 s2] [s7]]" {
		t.Errorf("the pages newer and newer from the oldest: %s", got)
	}
	if entries, newer, err := a.BrowseNewer(b.ctx, postgres.AuditFilter{TenantID: tenantB}, ids[5], 3); err != nil || len(entries) != 0 || newer != 0 {
		t.Errorf("another tenant's entry as the cursor: %d entries, newer %d (%v)", len(entries), newer, err)
	}
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
