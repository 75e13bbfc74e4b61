package bideval

import (
	"context"
	"strconv"
	"time"

	"weft/internal/workflow"
)

// Tender is a tender as the dashboard lists it: what is tendered, and how its evaluations
// stand. Completed counts the evaluations that completed, Rejected those of them a reviewer
// rejected and Disqualified those a hard rule disqualified; Failed those of the rest whose
// run was dead-lettered.
type Tender struct {
	ID, Name, Description, Currency string
	Reference                       string     // the organisation's own reference ("" for the demo's)
	Deadline                        *time.Time // when bids are due, if set
	Budget                          float64
	CreatedAt                       time.Time
	Evaluations, Completed          int
	Rejected, Failed, Disqualified  int
}

// dashboardView is bid evaluation's part of the dashboard: the tenant's tenders.
func dashboardView(store Store) func(ctx context.Context, tenantID string, reader workflow.Person) ([]workflow.Block, error) {
	return func(ctx context.Context, tenantID string, _ workflow.Person) ([]workflow.Block, error) {
		ts, err := store.Tenders(ctx, tenantID)
		if err != nil {
			return nil, err
		}
		return DashboardBlocks(ts), nil
	}
}

// DashboardBlocks lists the tenders, newest first as given: each links to its page, with its
// budget, how many of its evaluations completed (and of those, how many were rejected in
// review or disqualified; of the rest, how many failed) and when it was created.
func DashboardBlocks(ts []Tender) []workflow.Block {
	table := workflow.Table{
		Columns: []workflow.Column{{Title: "Tender", Type: workflow.ColWide}, {Title: "Budget", Type: workflow.ColNumber},
			{Title: "Evaluations completed"}, {Title: "Created"}},
		Empty: "No tenders yet.",
	}
	for _, t := range ts {
		done := workflow.Cell{Text: strconv.Itoa(t.Completed) + " of " + strconv.Itoa(t.Evaluations),
			Progress: &workflow.Progress{Label: "Evaluations completed", Done: t.Completed, Total: t.Evaluations}}
		for _, b := range []struct {
			n                   int
			class, words, title string
		}{
			{t.Rejected, "rejected", " rejected in review", "Reviewers rejected these evaluations: they get no rank"},
			{t.Disqualified, "disqualified", " disqualified", "A hard rule disqualified these bids: their reports say which; they get no rank"},
			{t.Failed, "failed", " failed", "These runs were dead-lettered: see Dead letters"},
		} {
			if b.n > 0 {
				done.Badges = append(done.Badges, workflow.Badge{Text: strconv.Itoa(b.n) + b.words, Class: b.class, Title: b.title})
			}
		}
		table.Rows = append(table.Rows, workflow.Row{ID: "tender-" + t.ID, Cells: []workflow.Cell{
			{Text: t.Name, Href: ProjectPath(t.ID), Note: t.ID},
			{Text: Money(t.Budget, t.Currency)},
			done,
			{Text: t.CreatedAt.UTC().Format("2006-01-02")},
		}})
	}
	newTender := workflow.KeyValues{Items: []workflow.KV{{Key: "Your own tender", Value: "New tender…", Href: NewTenderPath}}}
	return []workflow.Block{workflow.Section{ID: "tenders", Title: "Tenders", Blocks: []workflow.Block{table, newTender}}}
}
