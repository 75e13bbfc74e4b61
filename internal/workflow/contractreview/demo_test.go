package contractreview_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"weft/internal/doctext"
	"weft/internal/graph"
	cr "weft/internal/workflow/contractreview"
)

// The Chinese demo, on the generated checklist: 第十四条之一 is a clause of
// its own, the rules read Chinese, the cap is sized from 第二条's price.
func TestChineseDemo(t *testing.T) {
	t.Parallel()
	b, s, pauses := reviewDemo(t, 1)
	if s.Language != "zh" || s.Summary.ClausesReviewed != 9 || pauses != 4 {
		t.Fatalf("language %s, %d clauses, %d pauses", s.Language, s.Summary.ClausesReviewed, pauses)
	}
	want := map[string][]string{"14": {cr.RulePaymentTerms}, "15": {cr.RuleClaimNotice}, "16": {cr.RuleLiabilityCap, cr.RuleLiabilityCap},
		"17": {cr.RuleModel, cr.RuleTermination}, "3": {}, "14-1": {}}
	for id, rules := range want {
		if got := rulesOf(s.Findings[id].Risks); !slices.Equal(got, rules) {
			t.Errorf("第%s条 risks = %v, want %v", id, got, rules)
		}
	}
	if d := s.Findings["16"].Risks[0].Description; !strings.Contains(d, "即 CNY 6,000,000（合同价格 CNY 120,000,000，见第 2 条）") {
		t.Errorf("16's cap risk = %q", d)
	}
	if !strings.HasPrefix(s.SummaryNotes, "审查完成。共审查 9 个条款，发现 6 个风险点") {
		t.Errorf("summary_notes = %q", s.SummaryNotes)
	}
	page := string(artifact(t, b, "redline.html"))
	if !strings.Contains(page, `<html lang="zh">`) || !strings.Contains(page, "<del title=") {
		t.Error("the Chinese redline page is not in Chinese or has no deletions")
	}
}

// A contract uploaded as a Word document reads through doctext (pandoc)
// into the same clauses and risks as its text.
func TestDOCXUploadReviewed(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("pandoc"); err != nil {
		t.Skip("pandoc is not installed: apt-get install pandoc")
	}
	demo := cr.DemoContracts()[0]
	dir := t.TempDir()
	md := filepath.Join(dir, "epc.md")
	// Each line a paragraph, as a Word user types it.
	if err := os.WriteFile(md, []byte(strings.ReplaceAll(demo.Text, "\n", "\n\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "pandoc", "-f", "markdown", "-t", "docx", "-o", filepath.Join(dir, "epc.docx"), md).CombinedOutput(); err != nil {
		t.Fatalf("pandoc: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "epc.docx"))
	if err != nil {
		t.Fatal(err)
	}
	text, err := doctext.Extract(ctx, "epc.docx", data)
	if err != nil {
		t.Fatalf("extract: %v", err)
	}
	fromDocx, fromText := cr.ParseStructure("d", text.Body), cr.ParseStructure("d", demo.Text)
	ids := func(ds cr.DocumentStructure) []string {
		var out []string
		for _, c := range ds.Clauses {
			out = append(out, c.ID+" "+strings.ReplaceAll(c.Title, "’", "'")) // pandoc makes quotes typographic
		}
		return out
	}
	if !slices.Equal(ids(fromDocx), ids(fromText)) || len(fromText.Clauses) != 15 {
		t.Fatalf("clauses from the DOCX:\n%v\nfrom the text:\n%v", ids(fromDocx), ids(fromText))
	}
	st := demo.Start("docx")
	st.Document.Text, st.Document.Filename = text.Body, "epc.docx"
	b := setup(t, true)
	res := b.run(t, st)
	if got := rulesOf(res.State.AllRisks); len(got) != 6 {
		t.Errorf("risks from the DOCX = %v, want the 6 of the text", got)
	}
	if d := res.State.Findings["17.6"].Risks[0].Description; !strings.Contains(d, "USD 4,800,000") {
		t.Errorf("17.6 from the DOCX (smart quotes in 1.1) = %q", d)
	}
}

// Text from a PDF (pdftotext -layout) is wrapped and indented: the same
// clauses and risks come out of it.
func TestWrappedTextReviewed(t *testing.T) {
	t.Parallel()
	demo := cr.DemoContracts()[0]
	var wrapped strings.Builder
	for _, line := range strings.Split(demo.Text, "\n") {
		width := 0
		wrapped.WriteString("   ")
		for i, w := range strings.Fields(line) {
			if width+len(w) > 60 && i > 0 {
				wrapped.WriteString("\n   ")
				width = 0
			} else if i > 0 {
				wrapped.WriteString("  ")
			}
			wrapped.WriteString(w)
			width += len(w) + 1
		}
		wrapped.WriteString("\n")
	}
	st := demo.Start("wrapped")
	st.Document.Text = wrapped.String()
	st.DomainID, st.DomainSubtype = "", ""
	b := setup(t, true)
	res := b.run(t, st)
	s := res.State
	if s.Summary.ClausesReviewed != 15 || len(s.AllRisks) != 6 || len(s.AllDiffs) != 6 {
		t.Fatalf("wrapped text: %s", s.SummaryNotes)
	}
	if _, err := cr.Artifacts(s, s.Documents[0], *s.Summary); err != nil {
		t.Fatal(err)
	}
}

// contract300 is a generated contract of 300 clauses (30 clauses of 10
// sub-clauses), with numbers inside the sentences.
func contract300() string {
	var b strings.Builder
	for c := 1; c <= 30; c++ {
		fmt.Fprintf(&b, "%d General Matters %d\n", c, c)
		for s := 1; s <= 9; s++ {
			fmt.Fprintf(&b, "%d.%d Sub-Clause Title %d\nThe Contractor shall give notice within 28 days under Sub-Clause\n%d.%d of the Conditions, and the Employer shall pay within 56 days.\n", c, s, s, c, s)
		}
	}
	return b.String()
}

func TestContract300Parses(t *testing.T) {
	t.Parallel()
	if n := len(cr.ParseStructure("d", contract300()).Clauses); n != 300 {
		t.Fatalf("%d clauses, want 300", n)
	}
}

// BenchmarkParseStructure measures the structure parser on a 300-clause contract.
func BenchmarkParseStructure(b *testing.B) {
	text := contract300()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for b.Loop() {
		if n := len(cr.ParseStructure("d", text).Clauses); n != 300 {
			b.Fatalf("%d clauses", n)
		}
	}
	b.ReportMetric(float64(300*b.N)/b.Elapsed().Seconds(), "clauses/s")
}

// BenchmarkReview measures a whole review of the English demo (15 clauses,
// generated checklist, offline provider, in-memory checkpointer, artifacts).
func BenchmarkReview(b *testing.B) {
	demo := cr.DemoContracts()[0]
	st := demo.Start("bench")
	st.DomainID, st.DomainSubtype = "", ""
	ws, err := st.Writes()
	if err != nil {
		b.Fatal(err)
	}
	bd := setup(b, true)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		res, err := bd.g.Invoke(context.Background(), graph.Config{ThreadID: fmt.Sprintf("bench-%d", i)}, graph.Update(ws...))
		if err != nil || !res.State.IsComplete || res.State.Summary.ClausesReviewed != 15 {
			b.Fatalf("review: %v", err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/review")
}

// Our party named as the Chinese demo's preamble names it (发包人：上海滨江置业有限公司),
// as the start form invites: the review is the Employer's, so the terms that burden
// the Contractor (90-day payment, 14-day claim notice, the Employer's low cap) are not
// its risks, and the advance paid without a guarantee is.
func TestChineseDemoOurPartyByName(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	st := cr.DemoContracts()[1].Start("demo")
	st.OurParty = "上海滨江置业有限公司"
	res, _ := b.approveAll(t, b.run(t, st))
	s := res.State
	want := map[string][]string{"3": {cr.RuleAdvanceGuarantee}, "14": {}, "15": {}, "16": {}, "17": {}}
	for id, rules := range want {
		if got := rulesOf(s.Findings[id].Risks); !slices.Equal(got, rules) {
			t.Errorf("第%s条 risks = %v, want %v", id, got, rules)
		}
	}
}
