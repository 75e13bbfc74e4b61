package bideval

import (
	"context"
	"strings"
	"testing"
)

// The comparison's empty text says why nothing is ranked: nothing completed yet, or only
// bids rejected in their review (which complete without a rank).
func TestComparisonEmptyText(t *testing.T) {
	total := 32.6
	for _, c := range []struct {
		name string
		rows []ProjectEvalVM
		want string
	}{
		{"none completed", []ProjectEvalVM{{Supplier: "Bluewater", Status: "running"}}, "No evaluation has completed yet"},
		{"only a rejected bid", []ProjectEvalVM{{Supplier: "Bluewater", Status: "completed", Outcome: "rejected", Total: &total}},
			"No completed evaluation can be ranked: a bid rejected in its review gets no rank"},
	} {
		var b strings.Builder
		if err := ProjectResults(ProjectResultsVM{ProjectID: "p", Rows: c.rows}).Render(context.Background(), &b); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) {
			t.Errorf("%s: the comparison does not say %q", c.name, c.want)
		}
	}
}
