package bidevalpg_test

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
	"weft/internal/workflow"
	"weft/internal/workflow/bideval"
	"weft/internal/workflow/bideval/bidevalpg"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// seeded is a store on a fresh database with the demo tender loaded for two tenants.
func seeded(t *testing.T) (*postgres.DB, *bidevalpg.Store) {
	t.Helper()
	d := pgtest.DB(t)
	s := bidevalpg.New(d)
	for _, tenant := range []string{"demo", "acme"} {
		if loaded, err := s.SeedDemo(context.Background(), bideval.Demo(tenant, tenant)); err != nil || !loaded {
			t.Fatalf("seed %s: %v %v", tenant, loaded, err)
		}
	}
	return d, s
}

// Lists name a run of bid evaluation by its subject, the evaluation: its supplier and tender,
// linked to the tender's page. Another tenant's evaluations and unknown subjects are left out.
func TestDescribe(t *testing.T) {
	t.Parallel()
	_, s := seeded(t)
	got, err := s.Describe(context.Background(), "demo", []string{"ev_demo-northwind", "ev_demo-harbor", "ev_acme-northwind", "a question"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]workflow.Subject{
		"ev_demo-northwind": {Title: "Northwind Networks", Detail: "Data centre network upgrade 2026", Href: "/projects/demo-dc-network-2026"},
		"ev_demo-harbor":    {Title: "Harbor Systems", Detail: "Data centre network upgrade 2026", Href: "/projects/demo-dc-network-2026"},
	}
	if len(got) != len(want) || got["ev_demo-northwind"] != want["ev_demo-northwind"] || got["ev_demo-harbor"] != want["ev_demo-harbor"] {
		t.Errorf("Describe = %+v, want %+v", got, want)
	}
	if none, err := s.Describe(context.Background(), "demo", nil); err != nil || len(none) != 0 {
		t.Errorf("no subjects: %v %v", none, err)
	}
}

// A tenant's tenders say how their evaluations ended: completed, and of those rejected in
// review or disqualified.
func TestTenders(t *testing.T) {
	t.Parallel()
	d, s := seeded(t)
	ctx := context.Background()
	for id, outcome := range map[string]string{"ev_demo-northwind": bideval.OutcomePassed, "ev_demo-bluewater": bideval.OutcomeRejected,
		"ev_demo-crestline": bideval.OutcomeDisqualified} {
		if _, err := s.PersistResult(ctx, "demo", bideval.Report{EvaluationID: id, ReportVersion: 1, Outcome: outcome, TotalScore: 70}); err != nil {
			t.Fatal(err)
		}
	}
	// Harbor's run is queued: neither completed nor failed (a dead-lettered run counts as
	// failed: the dashboard's test runs one).
	j, err := postgres.NewJobStore(d).Enqueue(ctx, runner.NewJob{TenantID: "demo", Workflow: bideval.Name, ThreadID: "ev_demo-harbor",
		Subject: "ev_demo-harbor", Input: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.SetJob(ctx, "demo", "ev_demo-harbor", j.ID); err != nil {
		t.Fatal(err)
	}
	ts, err := s.Tenders(ctx, "demo")
	if err != nil || len(ts) != 1 {
		t.Fatalf("tenders: %+v %v", ts, err)
	}
	got := ts[0]
	if got.ID != "demo-dc-network-2026" || got.Name != "Data centre network upgrade 2026" || got.Budget != 1_200_000 || got.Currency != "CNY" ||
		got.Evaluations != 4 || got.Completed != 3 || got.Rejected != 1 || got.Disqualified != 1 || got.Failed != 0 {
		t.Errorf("tender = %+v", got)
	}
	// The other tenant's tender is its own, untouched.
	if ts, err := s.Tenders(ctx, "acme"); err != nil || len(ts) != 1 || ts[0].ID != "acme-dc-network-2026" || ts[0].Completed != 0 {
		t.Errorf("acme's tenders: %+v %v", ts, err)
	}
	// The dashboard's blocks list it with those counts.
	blocks := bideval.DashboardBlocks(ts[:0])
	if tb := blocks[0].(workflow.Section).Blocks[0].(workflow.Table); len(tb.Rows) != 0 || tb.Empty == "" {
		t.Errorf("no tenders: %+v", tb)
	}
}

// The demo loads once per tenant; a tenant that exists (created by the platform) gets it too.
func TestSeedDemoOnce(t *testing.T) {
	t.Parallel()
	d, s := seeded(t)
	ctx := context.Background()
	if loaded, err := s.SeedDemo(ctx, bideval.Demo("demo", "demo")); err != nil || loaded {
		t.Errorf("seeding again: %v %v, want nothing loaded", loaded, err)
	}
	if err := postgres.NewTenants(d).Create(ctx, "third", "Third Co."); err != nil {
		t.Fatal(err)
	}
	if loaded, err := s.SeedDemo(ctx, bideval.Demo("third", "ignored")); err != nil || !loaded {
		t.Fatalf("seeding an existing tenant without the tender: %v %v", loaded, err)
	}
	if ids, err := postgres.NewTenants(d).List(ctx); err != nil || !slices.Equal(ids, []string{"acme", "demo", "third"}) {
		t.Errorf("tenants %v %v", ids, err)
	}
	if p, err := s.Project(ctx, "third", "third-dc-network-2026"); err != nil || p.RulePackVersion != "dc-net-2026.1" || p.HardRules != 4 || p.Criteria != 4 {
		t.Errorf("third's tender: %+v %v", p, err)
	}
}

func TestPersistResultKey(t *testing.T) {
	t.Parallel()
	if got, want := bidevalpg.PersistResultKey("ev:1", "2"), "persist_result:ev%3A1:2"; got != want {
		t.Errorf("PersistResultKey = %q, want %q", got, want)
	}
}
