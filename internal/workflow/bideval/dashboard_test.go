package bideval_test

import (
	"testing"
	"time"

	"weft/internal/workflow"
	"weft/internal/workflow/bideval"
)

// The dashboard's tenders: each links to its page, with its budget in its currency, how many
// of its evaluations completed (a bar, and in words) with badges for those rejected,
// disqualified and failed, and its day of creation.
func TestDashboardBlocks(t *testing.T) {
	t.Parallel()
	created := time.Date(2026, 11, 23, 18, 35, 0, 0, time.UTC)
	blocks := bideval.DashboardBlocks([]bideval.Tender{
		{ID: "p/1", Name: "Core network", Currency: "CNY", Budget: 1_200_000.5, CreatedAt: created, Evaluations: 4, Completed: 2,
			Disqualified: 1, Failed: 1},
		{ID: "p2", Name: "Empty tender", Currency: "EUR", Budget: 900, CreatedAt: created},
	})
	sec, ok := blocks[0].(workflow.Section)
	if len(blocks) != 1 || !ok || sec.Title != "Tenders" {
		t.Fatalf("blocks = %+v", blocks)
	}
	tb := sec.Blocks[0].(workflow.Table)
	if len(tb.Rows) != 2 || len(tb.Columns) != 4 || tb.Columns[1].Type != workflow.ColNumber {
		t.Fatalf("table = %+v", tb)
	}
	first := tb.Rows[0].Cells
	if first[0].Text != "Core network" || first[0].Href != "/projects/p%2F1" || first[0].Note != "p/1" {
		t.Errorf("tender cell = %+v", first[0])
	}
	if first[1].Text != "CNY 1,200,000.50" || first[3].Text != "2026-11-23" {
		t.Errorf("budget %q, created %q", first[1].Text, first[3].Text)
	}
	done := first[2]
	if done.Text != "2 of 4" || done.Progress == nil || done.Progress.Done != 2 || done.Progress.Total != 4 {
		t.Errorf("completed cell = %+v", done)
	}
	var badges []string
	for _, b := range done.Badges {
		badges = append(badges, b.Class+":"+b.Text)
	}
	if len(badges) != 2 || badges[0] != "disqualified:1 disqualified" || badges[1] != "failed:1 failed" {
		t.Errorf("badges = %v", badges)
	}
	if second := tb.Rows[1].Cells; second[1].Text != "EUR 900" || second[2].Text != "0 of 0" || len(second[2].Badges) != 0 {
		t.Errorf("the empty tender = %+v", second)
	}
}

func TestOutcomeLabel(t *testing.T) {
	t.Parallel()
	for o, want := range map[string]string{bideval.OutcomePassed: "Passed", bideval.OutcomeRejected: "Rejected in review",
		bideval.OutcomeDisqualified: "Disqualified by a hard rule", "some_new_one": "some new one"} {
		if got := bideval.OutcomeLabel(o); got != want {
			t.Errorf("OutcomeLabel(%q) = %q, want %q", o, got, want)
		}
	}
	if got := bideval.Money(-1234.5, ""); got != "-1,234.50" {
		t.Errorf("Money(-1234.5) = %q", got)
	}
}
