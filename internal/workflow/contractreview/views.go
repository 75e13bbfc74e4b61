package contractreview

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"weft/internal/graph"
	"weft/internal/workflow"
)

// Panel is the thread page's panel: how far the review got (clause n of N, with a bar), what
// it is reviewing, the clause waiting for a decision, and the findings so far, one row per
// clause. The thread page renders it again on every step.
func Panel(_ context.Context, t workflow.Thread) ([]workflow.Block, error) {
	snap, err := snapshotOf(t)
	if err != nil {
		return nil, err
	}
	s := snap.Values
	doc, ok := primary(s)
	if !ok {
		return nil, nil // not started
	}
	total, done := len(s.ReviewChecklist), min(s.CurrentClauseIndex, len(s.ReviewChecklist))
	var progress workflow.Progress
	switch {
	case s.IsComplete:
		progress = workflow.Progress{Label: fmt.Sprintf("Review complete: %s reviewed", plural(len(s.Findings), "clause")), Done: 1, Total: 1}
	case s.PrimaryStructure == nil:
		progress = workflow.Progress{Label: "Reading the contract…", Total: 1}
	default:
		progress = workflow.Progress{Label: fmt.Sprintf("Clause %d of %d", min(done+1, total), total), Done: done, Total: total}
		if s.CurrentClauseID != "" && done < total {
			progress.Label += " · " + strings.TrimSpace(s.CurrentClauseID+" "+clauseName(s, s.ReviewChecklist[done]))
		}
	}
	out := []workflow.Block{progress, workflow.KeyValues{Items: aboutReview(s, doc)}}
	if clause, paused := Paused(snap); paused {
		out = append(out, workflow.Notice{Kind: "info", Text: fmt.Sprintf("Clause %s waits for a decision on %s: open the review to approve or reject each.",
			clause, plural(len(s.PendingDiffs), "proposed change"))})
	}
	for _, g := range s.GlobalIssues {
		out = append(out, workflow.Notice{Kind: "warn", Text: g})
	}
	if s.Error != "" {
		out = append(out, workflow.Notice{Kind: "error", Text: s.Error})
	}
	return append(out, findingsTable(snap)), nil
}

// aboutReview says what the review is of and for.
func aboutReview(s ReviewGraphState, doc TaskDocument) []workflow.KV {
	checklist := "generated from the contract's top-level clauses"
	if s.DomainID != "" {
		checklist = "FIDIC Silver Book"
		if s.DomainID+"/"+s.DomainSubtype != DomainSilverBook {
			checklist = s.DomainID + " " + s.DomainSubtype
		}
	}
	items := []workflow.KV{{Key: "Contract", Value: doc.Filename}, {Key: "Our party", Value: s.OurParty},
		{Key: "Checklist", Value: checklist}}
	if s.Provider != "" {
		model := workflow.KV{Key: "Model", Value: s.Provider}
		if s.Offline {
			model.Value, model.Badge = "offline: rules and a phrase list, no model", "offline"
		}
		items = append(items, model)
	}
	return items
}

// findingsTable lists the clauses reviewed so far, and the one under review.
func findingsTable(snap graph.Snapshot[ReviewGraphState]) workflow.Table {
	s := snap.Values
	_, paused := Paused(snap)
	caption := "Findings so far"
	if s.IsComplete {
		caption = "Findings"
	}
	t := workflow.Table{Caption: caption, Columns: []workflow.Column{{Title: "Clause", Type: workflow.ColCode},
		{Title: "Title", Type: workflow.ColText}, {Title: "Risks", Type: workflow.ColText}, {Title: "Changes", Type: workflow.ColText},
		{Title: "Status", Type: workflow.ColBadge}}, Empty: "No clause reviewed yet."}
	for i, it := range s.ReviewChecklist {
		f, reviewed := s.Findings[it.ClauseID]
		current := !reviewed && !s.IsComplete && i == s.CurrentClauseIndex && s.CurrentClauseID == it.ClauseID
		if !reviewed && !current {
			continue
		}
		risks, status, class := s.CurrentRisks, "under review", "running"
		changes := workflow.Cell{Text: "drafting"}
		if current && paused {
			status, class = "waiting for you", "waiting_review"
			changes.Text = fmt.Sprintf("%d proposed", len(s.PendingDiffs))
		}
		if reviewed {
			risks, status, class = f.Risks, "reviewed", "done"
			changes = workflow.Cell{Text: fmt.Sprintf("%d approved, %d rejected", len(f.Diffs), len(f.Rejected))}
			if f.Proposed == 0 {
				changes.Text = "none"
			}
			switch {
			case f.Missing:
				status, class = "missing", "failed"
			case f.SkippedAfterRetries:
				status, class = "no changes: validation failed", "retry_scheduled"
				changes.Note = "redrafted " + strconv.Itoa(f.Retries) + " times"
			}
		}
		t.Rows = append(t.Rows, workflow.Row{ID: "finding-" + it.ClauseID, Highlight: current, Cells: []workflow.Cell{
			{Text: it.ClauseID}, {Text: clauseName(s, it)}, severityCell(risks), changes, {Text: status, Badge: class}}})
	}
	return t
}

// severityCell counts risks by severity, as badges ("2 critical", "1 medium").
func severityCell(risks []RiskPoint) workflow.Cell {
	if len(risks) == 0 {
		return workflow.Cell{Text: "none"}
	}
	counts := map[string]int{}
	for _, r := range risks {
		counts[r.Severity]++
	}
	c := workflow.Cell{}
	for _, sev := range Severities {
		if n := counts[sev]; n > 0 {
			c.Badges = append(c.Badges, workflow.Badge{Text: fmt.Sprintf("%d %s", n, sev), Class: sev})
		}
	}
	return c
}

// Report is the review's result once it is complete: the counts, the risks by severity, the
// approved changes as redlines, what is left to negotiate, and the tracked-changes DOCX and
// the HTML redline to download.
func Report(_ context.Context, t workflow.Thread) ([]workflow.Block, error) {
	s, err := workflow.DecodeState[ReviewGraphState](t.State)
	if err != nil || !s.IsComplete {
		return nil, err
	}
	sum := Summarize(s)
	if s.Summary != nil {
		sum = *s.Summary
	}
	out := []workflow.Block{
		workflow.Stats{Items: []workflow.Stat{{Label: "Clauses reviewed", Value: strconv.Itoa(sum.ClausesReviewed)},
			{Label: "Risks", Value: strconv.Itoa(sum.Risks)}, {Label: "Changes proposed", Value: strconv.Itoa(sum.DiffsProposed)},
			{Label: "Approved", Value: strconv.Itoa(sum.DiffsApproved)}, {Label: "Rejected", Value: strconv.Itoa(sum.DiffsRejected)}}},
		workflow.Paragraph{Text: s.SummaryNotes},
	}
	if dl := downloads(s); len(dl.Items) > 0 {
		out = append(out, dl)
	}
	bySeverity := workflow.Table{Columns: []workflow.Column{{Title: "Severity", Type: workflow.ColBadge}, {Title: "Risks", Type: workflow.ColNumber},
		{Title: "Answered by an approved change", Type: workflow.ColNumber}}}
	answered := map[string]bool{}
	for _, d := range s.AllDiffs {
		answered[d.RiskID] = true
	}
	for _, sev := range Severities {
		n, a := 0, 0
		for _, r := range s.AllRisks {
			if r.Severity == sev {
				n++
				if answered[r.RiskID] {
					a++
				}
			}
		}
		bySeverity.Rows = append(bySeverity.Rows, workflow.Row{Cells: []workflow.Cell{{Text: sev, Badge: sev}, {Text: strconv.Itoa(n)}, {Text: strconv.Itoa(a)}}})
	}
	out = append(out, workflow.Section{ID: "risks-by-severity", Title: "Risks by severity", Blocks: []workflow.Block{bySeverity,
		workflow.Heading{Text: "Every risk", Level: 3}, riskTable(s.AllRisks, false)}})
	changes := []workflow.Block{}
	for _, d := range s.AllDiffs {
		note := d.Reason
		if d.DecidedBy != "" {
			note = fmt.Sprintf("%s Approved by %s, %s.", d.Reason, d.DecidedBy, d.DecidedAt.UTC().Format("2006-01-02 15:04 UTC"))
		}
		changes = append(changes, workflow.Redline{ID: "approved-" + d.DiffID, Title: "Clause " + d.ClauseID, Before: d.Original, After: d.Suggested, Note: note})
	}
	if len(changes) == 0 {
		changes = append(changes, workflow.Paragraph{Text: "No change was approved.", Muted: true})
	}
	out = append(out, workflow.Section{ID: "approved-changes", Title: "Approved changes", Meta: "In the DOCX as tracked changes, by the reviewer who approved each.", Blocks: changes})
	if len(s.AllActions) > 0 {
		acts := workflow.Table{Columns: []workflow.Column{{Title: "Clause", Type: workflow.ColCode}, {Title: "Priority", Type: workflow.ColBadge},
			{Title: "Action", Type: workflow.ColWide}}}
		for _, a := range s.AllActions {
			acts.Rows = append(acts.Rows, workflow.Row{Cells: []workflow.Cell{{Text: a.ClauseID}, {Text: a.Priority, Badge: a.Priority}, {Text: a.Action}}})
		}
		out = append(out, workflow.Section{ID: "actions", Title: "Left to negotiate", Meta: "Risks no approved change answers.", Blocks: []workflow.Block{acts}})
	}
	return out, nil
}

// downloads offers the review's files: the tracked-changes DOCX first.
func downloads(s ReviewGraphState) workflow.Downloads {
	var dl workflow.Downloads
	for _, a := range s.Artifacts {
		label := a.Name
		switch a.Key {
		case "redline.docx":
			label = "Word, with tracked changes (" + a.Name + ")"
		case "redline.html":
			label = "HTML redline (" + a.Name + ")"
		}
		dl.Items = append(dl.Items, workflow.Download{Key: a.Key, Label: label})
	}
	return dl
}
