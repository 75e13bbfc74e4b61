package dataagent

import (
	"strings"
	"testing"
	"time"

	"weft/internal/workflow/dataagent/nlsql"
)

// TestSummaryOfAGroupedRate: a rate by group (a share of each group's own rows, "refund rate by
// region") states each group's rate with its parts; it said "n/a" for every group.
func TestSummaryOfAGroupedRate(t *testing.T) {
	t.Parallel()
	rate := append(append([]nlsql.Note(nil), notes...), nlsql.Note{ID: "refund-rate", Text: "Refund rate (退款率) is the share of orders whose status is refunded."})
	for _, c := range []struct{ q, lang, want string }{
		{"Which region has the highest refund rate?", "en", "Shanghai 6.5% (396 of 6,135)"},
		{"Which region has the highest refund rate?", "zh", "Shanghai 6.5%（396 / 6,135）"},
		{"Refund rate by region", "en", "Jiangsu 5.0% (50 of 1,000)"},
	} {
		in := summaryIn{questionIn: questionIn{Parts: []string{c.q}, Catalog: shop, Notes: rate, Now: time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)}, Language: c.lang,
			Steps: []StepRun{{PlanStep: PlanStep{Tool: ToolSQL}, Status: StepDone, Result: &ResultSet{
				Columns: []ResultColumn{{Name: "region"}, {Name: "part"}, {Name: "total"}, {Name: "share"}},
				Rows:    [][]string{{"Shanghai", "396", "6135", "0.0645"}, {"Jiangsu", "50", "1000", "0.0500"}}}}}}
		if u := nlsql.Understand(in.question()); !u.Feasible || !strings.Contains(u.SQL, "AS share") {
			t.Fatalf("%s: %v\n%s", c.q, u.Problems, u.SQL)
		}
		got := offlineSummary(in)
		if !strings.Contains(got, c.want) || strings.Contains(got, "n/a") {
			t.Errorf("%s: %q, want it to say %q", c.q, got, c.want)
		}
	}
}

// TestSummaryOfAPeriodWithoutData: a total over a period without rows (this month, before any
// order) says there is no data, not "n/a".
func TestSummaryOfAPeriodWithoutData(t *testing.T) {
	t.Parallel()
	in := summaryIn{questionIn: questionIn{Parts: []string{"What was the GMV last month?"}, Catalog: shop, Notes: notes, Now: time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC)}, Language: "en",
		Steps: []StepRun{{PlanStep: PlanStep{Tool: ToolSQL}, Status: StepDone, Result: &ResultSet{Columns: []ResultColumn{{Name: "gmv"}}, Rows: [][]string{{""}}}}}}
	if got := offlineSummary(in); !strings.Contains(got, "there is no data for it") || strings.Contains(got, "n/a") {
		t.Errorf("%q", got)
	}
}
