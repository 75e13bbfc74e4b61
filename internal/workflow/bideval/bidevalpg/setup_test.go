package bidevalpg_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/workflow/bideval"
	"weft/internal/workflow/bideval/bidevalpg"
)

// TestTenderSetup: a tender, its rule pack versions (each edit a new version the tender pins,
// which the evaluation's context then reads), suppliers added and renamed; refusals change
// nothing; another tenant's tender is not found; each change audited.
func TestTenderSetup(t *testing.T) {
	t.Parallel()
	d, s := seeded(t)
	ctx := context.Background()
	due := time.Date(2027, 3, 1, 12, 0, 0, 0, time.UTC)
	nt := bidevalpg.NewTender{Name: "Harbour cranes", Reference: "HW-2027-01", Description: "Two cranes", Currency: "eur", Budget: 2_500_000, Deadline: &due}
	id, err := s.CreateTender(ctx, "demo", "u_pm", nt)
	if err != nil {
		t.Fatal(err)
	}
	nt.Reference = "hw-2027-01"
	if _, err := s.CreateTender(ctx, "demo", "u_pm", nt); !hasCode(err, bideval.CodeReferenceTaken) {
		t.Fatalf("a duplicate reference in another case: %v", err)
	}
	if _, err := s.CreateTender(ctx, "acme", "u_acme", nt); err != nil {
		t.Fatalf("another tenant's tender may use the same reference: %v", err)
	}
	for _, bad := range []bidevalpg.NewTender{{Name: "", Reference: "X1", Currency: "EUR", Budget: 1}, {Name: "A", Reference: "X2", Currency: "euro", Budget: 1},
		{Name: "A", Reference: "X3", Currency: "EUR", Budget: -5}} {
		if _, err := s.CreateTender(ctx, "demo", "u_pm", bad); err == nil {
			t.Errorf("tender %+v was accepted", bad)
		}
	}
	p, err := s.Project(ctx, "demo", id)
	if err != nil || p.Reference != "HW-2027-01" || p.Currency != "EUR" || p.Deadline == nil || !p.Deadline.Equal(due) || p.RulePackVersion != "" {
		t.Fatalf("the tender: %+v %v", p, err)
	}
	if _, err := s.Project(ctx, "acme", id); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("another tenant's tender: %v", err)
	}

	rp, err := bideval.ParseRulePackYAML([]byte(bideval.RulePackYAMLExample))
	if err != nil {
		t.Fatal(err)
	}
	bad := rp
	bad.Criteria = append([]bideval.Criterion(nil), rp.Criteria...)
	bad.Criteria[0].Weight = 0.5
	if _, err := s.SaveRulePack(ctx, "demo", id, "u_pm", bad, "form"); !errors.Is(err, bideval.ErrRulePackInvalid) || !strings.Contains(err.Error(), "sum to 90") {
		t.Fatalf("weights summing to 90: %v", err)
	}
	if v, err := s.SaveRulePack(ctx, "demo", id, "u_pm", rp, "yaml"); err != nil || v != "v1" {
		t.Fatalf("first version: %q %v", v, err)
	}
	if v, err := s.SaveRulePack(ctx, "demo", id, "u_pm", rp, "yaml"); err != nil || v != "v1" {
		t.Fatalf("the same pack again: %q %v, want v1 kept", v, err)
	}
	edited := rp
	edited.Criteria = append([]bideval.Criterion(nil), rp.Criteria...)
	edited.Criteria[0].Weight, edited.Criteria[1].Weight = 0.7, 0.3
	if v, err := s.SaveRulePack(ctx, "demo", id, "u_pm", edited, "form"); err != nil || v != "v2" {
		t.Fatalf("edited: %q %v", v, err)
	}
	if _, err := s.SaveRulePack(ctx, "acme", id, "u_acme", edited, "form"); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("another tenant saves a rule pack: %v", err)
	}
	packs, err := s.RulePacks(ctx, "demo", id)
	if err != nil || len(packs) != 2 || packs[0].Version != "v2" || !packs[0].Pinned || packs[1].Pinned || packs[1].Pack.Criteria[0].Weight != 0.6 {
		t.Fatalf("versions: %+v %v", packs, err)
	}

	sup, err := s.AddTenderSupplier(ctx, "demo", id, "u_pm", "Kranbau GmbH")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddTenderSupplier(ctx, "demo", id, "u_pm", "kranbau gmbh"); !hasCode(err, bideval.CodeSupplierTaken) {
		t.Fatalf("a second supplier of the same name: %v", err)
	}
	other, err := s.AddTenderSupplier(ctx, "demo", id, "u_pm", "Lift & Co")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.RenameSupplier(ctx, "demo", id, other.ID, "u_pm", "Kranbau GmbH"); !hasCode(err, bideval.CodeSupplierTaken) {
		t.Fatalf("renamed onto another's name: %v", err)
	}
	if err := s.RenameSupplier(ctx, "demo", id, sup.ID, "u_pm", "Kranbau Nord GmbH"); err != nil {
		t.Fatal(err)
	}
	if err := s.RenameSupplier(ctx, "acme", id, sup.ID, "u_acme", "Stolen"); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("another tenant renames: %v", err)
	}
	ec, err := s.LoadContext(ctx, "demo", sup.EvaluationID)
	if err != nil || ec.RulePack.Version != "v2" || ec.Supplier.Name != "Kranbau Nord GmbH" || ec.Project.Currency != "EUR" {
		t.Fatalf("the evaluation's context: %+v %v", ec, err)
	}

	entries, _, err := postgres.NewAudit(d).List(ctx, postgres.AuditFilter{TenantID: "demo", Subject: id}, 0, 20)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Action)
	}
	want := "supplier.rename supplier.add supplier.add rule_pack.version rule_pack.version tender.create"
	if strings.Join(got, " ") != want {
		t.Fatalf("audit: %q, want %q", got, want)
	}
}

func hasCode(err error, code string) bool {
	var fe *fault.Error
	return errors.As(err, &fe) && fe.Code == code
}
