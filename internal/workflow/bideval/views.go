package bideval

import (
	"context"
	"fmt"
	"strings"

	"weft/internal/workflow"
)

// Reports is what the report view reads beyond the state: the persisted report of a thread
// whose checkpoints were pruned.
type Reports interface {
	ReportByThread(ctx context.Context, tenantID, threadID string) (Report, bool, error)
}

// ReportView is the thread page's report of an evaluation: report_payload as blocks (the
// persisted report when the thread's checkpoints were pruned); nil blocks before there is one.
func ReportView(chunks Chunks, reports Reports) func(ctx context.Context, t workflow.Thread) ([]workflow.Block, error) {
	return func(ctx context.Context, t workflow.Thread) ([]workflow.Block, error) {
		s, err := workflow.DecodeState[State](t.State)
		if err != nil {
			return nil, fmt.Errorf("decode the evaluation's state: %w", err)
		}
		rp := s.ReportPayload
		var note string
		if rp == nil && len(t.State) == 0 && reports != nil {
			r, ok, err := reports.ReportByThread(ctx, t.TenantID, t.ThreadID)
			if err != nil || !ok {
				return nil, err
			}
			rp, note = &r, fmt.Sprintf("The report as persisted (version %d): the thread's checkpoints were pruned.", r.ReportVersion)
		}
		if rp == nil {
			return nil, nil
		}
		ids := make([]string, 0, len(rp.Citations))
		for _, c := range rp.Citations {
			ids = append(ids, c.ChunkID)
		}
		for _, rr := range rp.RuleResults {
			ids = append(ids, rr.ChunkIDs...)
		}
		withdrawn, err := Reviewer{Chunks: chunks}.withdrawn(ctx, t, ids)
		if err != nil {
			return nil, err
		}
		var bs []workflow.Block
		if note != "" {
			bs = append(bs, workflow.Notice{Kind: "info", Text: note})
		}
		return append(bs, reportBlocks(*rp, t, withdrawn)...), nil
	}
}

// reportBlocks is a report: its figures, facts, the decision, the criteria, the hard rules,
// the ranking and the citations.
func reportBlocks(rp Report, t workflow.Thread, withdrawn map[string]string) []workflow.Block {
	var bs []workflow.Block
	if rp.Outcome == OutcomeDisqualified {
		bs = append(bs, workflow.Stats{Items: []workflow.Stat{{Label: "not scored: disqualified", Value: "—"}, {Label: "not ranked: disqualified", Value: "—"}}})
	} else {
		stats := []workflow.Stat{{Label: "total score / 100", Value: Score(rp.TotalScore)}}
		switch {
		case rp.Rank > 0:
			stats = append(stats, workflow.Stat{Label: "rank when reported", Value: fmt.Sprintf("%d of %d", rp.Rank, rp.RankOf)})
		case rp.Outcome == OutcomeRejected:
			stats = append(stats, workflow.Stat{Label: "not ranked: rejected", Value: "—"})
		}
		stats = append(stats, workflow.Stat{Label: "confidence", Value: Percent(rp.Confidence)}, workflow.Stat{Label: "citation coverage", Value: Percent(rp.Coverage)})
		bs = append(bs, workflow.Stats{Items: stats})
	}
	project := workflow.KV{Key: "Project", Value: rp.Project}
	if t.Reader.Role == "pm" || t.Reader.Role == "admin" { // the tender's page is theirs to open
		project.Href = "/projects/" + pathEscape(rp.ProjectID)
	}
	scoredBy := workflow.KV{Key: "Scored by", Value: rp.ScoredBy}
	if rp.ScoredOffline {
		scoredBy = workflow.KV{Key: "Scored by", Value: "offline provider", Badge: "offline"}
	}
	facts := []workflow.KV{{Key: "Supplier", Value: rp.Supplier}, project,
		{Key: "Outcome", Value: OutcomeLabel(rp.Outcome), Badge: rp.Outcome},
		{Key: "Rule pack", Value: fmt.Sprintf("%s · report v%d", rp.RulePackVersion, rp.ReportVersion), Code: true}}
	if rp.Outcome != OutcomeDisqualified {
		facts = append(facts, scoredBy)
	}
	bs = append(bs, workflow.KeyValues{Items: facts})
	if rp.Outcome == OutcomeDisqualified {
		var items []workflow.Block
		for _, rr := range Disqualifying(rp.RuleResults) {
			items = append(items, workflow.Paragraph{Text: fmt.Sprintf("%s (%s): %s", rr.Name, rr.RuleID, rr.Reason)})
		}
		bs = append(bs, workflow.Section{ID: "disqualified", Title: "Disqualified", Badge: "disqualified", Class: "disqualified",
			Blocks: append([]workflow.Block{workflow.Paragraph{Text: "A hard rule of severity disqualify failed, so the bid was not scored or ranked:"}}, items...)})
	}
	if rp.ReviewRequired || rp.Decision != "" {
		var review []workflow.Block
		if len(rp.ReviewReasons) > 0 {
			labels := make([]string, len(rp.ReviewReasons))
			for i, k := range rp.ReviewReasons {
				labels[i] = cmpOr(ReasonLabels[k], k)
			}
			review = append(review, workflow.Paragraph{Text: "Sent to review because: " + strings.Join(labels, "; ")})
		}
		if rp.Decision != "" {
			kv := []workflow.KV{{Key: "Decision", Value: DecisionLabel(rp.Decision), Badge: rp.Outcome}, {Key: "Reviewer", Value: reviewerOf(rp, t)}}
			if rp.Comment != "" {
				kv = append(kv, workflow.KV{Key: "Comment", Value: rp.Comment})
			}
			review = append(review, workflow.KeyValues{Items: kv})
		}
		bs = append(bs, workflow.Section{ID: "human-review", Title: "Human review", Blocks: review})
	}
	if rp.Outcome != OutcomeDisqualified {
		crit := workflow.Table{Columns: []workflow.Column{{Title: "Criterion", Type: workflow.ColWide}, {Title: "Weight", Type: workflow.ColNumber},
			{Title: "Score"}, {Title: "Confidence", Type: workflow.ColNumber}, {Title: "Explanation and citations", Type: workflow.ColWide}}}
		for _, c := range rp.Criteria {
			score := workflow.Cell{Text: Score(c.Score) + " / " + Score(c.MaxScore)}
			conf := workflow.Cell{Text: Percent(c.Confidence)}
			expl := workflow.Cell{Text: c.Explanation}
			if c.Edited {
				score.Note = "edited"
				if c.ModelScore != nil {
					score.Note = "edited model: " + Score(*c.ModelScore) + " / " + Score(c.MaxScore)
				}
				conf.Note = "the model's"
				expl.Text = "The model's explanation of its score: " + c.Explanation
			}
			if len(c.Citations) > 0 {
				expl.Note = "cites " + strings.Join(c.Citations, ", ")
			}
			crit.Rows = append(crit.Rows, workflow.Row{Cells: []workflow.Cell{{Text: c.Name, Note: c.CriterionID}, {Text: Percent(c.Weight)}, score, conf, expl}})
		}
		bs = append(bs, workflow.Heading{Text: "Criteria", Level: 3}, crit)
	}
	bs = append(bs, workflow.Heading{Text: "Hard rules", Level: 3}, rulesTable(rp.RuleResults, withdrawn, true))
	if len(rp.Ranking) > 0 {
		caption := fmt.Sprintf("As it stood when this report was written (version %d); reports written earlier or later may rank differently.", rp.ReportVersion)
		if project.Href != "" {
			caption += " The tender's comparison shows the current results."
		}
		rank := workflow.Table{Caption: caption,
			Columns: []workflow.Column{{Title: "Rank", Type: workflow.ColNumber}, {Title: "Supplier"}, {Title: "Total", Type: workflow.ColNumber}}}
		for _, k := range rp.Ranking {
			rank.Rows = append(rank.Rows, workflow.Row{Highlight: k.EvaluationID == rp.EvaluationID,
				Cells: []workflow.Cell{{Text: fmt.Sprintf("#%d", k.Rank)}, {Text: k.Supplier}, {Text: Score(k.TotalScore)}}})
		}
		bs = append(bs, workflow.Heading{Text: "Ranking", Level: 3}, rank)
	}
	if len(rp.Citations) > 0 {
		cites := workflow.Citations{}
		for _, c := range rp.Citations {
			cites.Items = append(cites.Items, workflow.Citation{ID: c.ChunkID, Document: c.Document, Text: clip(c.Text, 320),
				Mark: workflow.MarkCited, Withdrawn: withdrawn[c.ChunkID]})
		}
		bs = append(bs, workflow.Heading{Text: "Citations", Level: 3}, cites)
	}
	return bs
}

// OutcomeLabel is a report's outcome in words.
func OutcomeLabel(o string) string {
	switch o {
	case OutcomePassed:
		return "Passed"
	case OutcomeApproved:
		return "Scores approved in review"
	case OutcomeRejected:
		return "Rejected in review"
	case OutcomeScoresEdited:
		return "Scores edited in review"
	case OutcomeDisqualified:
		return "Disqualified by a hard rule"
	}
	return strings.ReplaceAll(o, "_", " ")
}

// DecisionLabel is a review decision in words.
func DecisionLabel(d string) string {
	switch d {
	case DecisionApprove:
		return "Approved as scored"
	case DecisionReject:
		return "Rejected"
	case DecisionEditScores:
		return "Scores edited"
	}
	return d
}

func clip(s string, n int) string {
	r := []rune(strings.TrimSpace(s))
	if len(r) <= n {
		return string(r)
	}
	return string(r[:n-1]) + "…"
}

// Panel is the thread page's panel of an evaluation: the bid, its tender (a link for those
// who may open tenders: pm and admin) and the evaluation.
func Panel(_ context.Context, t workflow.Thread) ([]workflow.Block, error) {
	s, err := workflow.DecodeState[State](t.State)
	if err != nil || s.EvaluationID == "" {
		return nil, err
	}
	tender := workflow.KV{Key: "Tender", Value: cmpOr(s.Project.Name, s.ProjectID)}
	if (t.Reader.Role == "pm" || t.Reader.Role == "admin") && s.ProjectID != "" {
		tender.Href = "/projects/" + pathEscape(s.ProjectID)
	}
	items := []workflow.KV{{Key: "Supplier", Value: cmpOr(s.Supplier.Name, s.SupplierID)}}
	if tender.Value != "" {
		items = append(items, tender)
	}
	items = append(items, workflow.KV{Key: "Evaluation", Value: s.EvaluationID, Code: true})
	return []workflow.Block{workflow.KeyValues{Items: items}}, nil
}

// reviewerOf names who decided the report's review: the recorded decision that is the
// report's (its decision and comment), as the runs table names it (a decision sent through an
// API token says so), else the reviewer by name.
func reviewerOf(rp Report, t workflow.Thread) string {
	name := t.NameOf(rp.ReviewerID)
	for i := len(t.Decisions) - 1; i >= 0; i-- {
		d := t.Decisions[i]
		if d.Decision == rp.Decision && strings.TrimSpace(d.Comment) == strings.TrimSpace(rp.Comment) &&
			(d.By == name || strings.HasPrefix(d.By, name+" via ")) {
			return d.By
		}
	}
	return name
}
