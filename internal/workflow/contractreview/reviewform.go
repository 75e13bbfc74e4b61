package contractreview

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"weft/internal/graph"
	"weft/internal/usertext"
	"weft/internal/workflow"
)

// The review form's choices (the answer's decision).
const (
	// DecisionSubmit records a decision per change (the items).
	DecisionSubmit = "submit"
	// DecisionApproveAll approves every change the items leave undecided.
	DecisionApproveAll = "approve_all"
)

// Outcomes of a decision, as the thread and the audit log record it.
const (
	OutcomeApproved = workflow.Approve  // every change approved
	OutcomeRejected = workflow.Reject   // every change rejected
	OutcomePartly   = "partly_approved" // some approved, some rejected
)

// Answer keys of the review, beside the platform's (decision, comment, editor).
const (
	AnswerItems      = "items"       // {"<diff id>": {"decision": "approve"|"reject", "feedback": "…"}}
	AnswerApproveAll = "approve_all" // true: approve what items leave undecided
	AnswerClauseID   = "clause_id"   // the clause decided on: refused when it is not the paused one
)

// Machine codes of refused answers.
const (
	CodeNotPaused   = "CONTRACT_CLAUSE_NOT_PAUSED"
	CodeUnknownDiff = "CONTRACT_DIFF_UNKNOWN"
)

// MaxFeedback bounds the feedback on one change, in characters (the form's text box).
const MaxFeedback = 4000

// ReasonLabels names the reasons a paused clause gives for its review.
var ReasonLabels = map[string]string{
	"changes_proposed": "Changes proposed",
	"reproposed":       "Re-proposed after feedback",
}

// Reviewer is the review of a paused clause: the clause with its risks' words marked, and
// each proposed change as a redline to approve or reject. Its decisions are written with
// update_state (user_decisions, user_feedback; seed §7), as clause_validate, and the run
// continues.
type Reviewer struct{}

var _ workflow.Reviewer = Reviewer{}

// snapshotOf is the thread as the approval helpers read it.
func snapshotOf(t workflow.Thread) (graph.Snapshot[ReviewGraphState], error) {
	s, err := workflow.DecodeState[ReviewGraphState](t.State)
	if err != nil {
		return graph.Snapshot[ReviewGraphState]{}, fmt.Errorf("decode the review's state: %w", err)
	}
	return graph.Snapshot[ReviewGraphState]{Values: s, Next: t.Next, Interrupts: t.Interrupts}, nil
}

// Form implements workflow.Reviewer.
func (Reviewer) Form(_ context.Context, r workflow.Review) (workflow.Form, error) {
	snap, err := snapshotOf(r.Thread)
	if err != nil {
		return workflow.Form{}, err
	}
	s := snap.Values
	clauseID, ok := Paused(snap)
	if !ok {
		return workflow.Form{Blocks: []workflow.Block{workflow.Notice{Kind: "info",
			Text: "The review does not wait for a decision on a clause now."}}}, nil
	}
	pending := PendingDiffs(s)
	item, n := checklistItem(s, clauseID)
	reason := workflow.Reason{Key: "changes_proposed", Label: ReasonLabels["changes_proposed"],
		Detail: fmt.Sprintf("%s to clause %s", plural(len(pending), "change"), clauseID)}
	if slices.ContainsFunc(pending, func(d DocumentDiff) bool { return d.Round > 0 }) {
		reason = workflow.Reason{Key: "reproposed", Label: ReasonLabels["reproposed"],
			Detail: "A change rejected with feedback, drafted again from the feedback"}
	}
	doc, _ := primary(s)
	return workflow.Form{
		Subject:       "Clause " + strings.TrimSpace(clauseID+" "+clauseName(s, item)),
		SubjectDetail: fmt.Sprintf("clause %d of %d · %s · for %s", n, len(s.ReviewChecklist), doc.Filename, s.OurParty),
		Reasons:       []workflow.Reason{reason},
		Blocks:        clauseBlocks(s, item),
		Inputs:        []workflow.Block{decisionItems(s, pending)},
		Choices: []workflow.Choice{
			{Value: DecisionSubmit, Label: "Record the decisions", Style: "primary", Validate: true},
			{Value: DecisionApproveAll, Label: "Approve every undecided change", Style: "ok"},
		},
		CommentHint: "Optional: a note for the thread and the audit log. Feedback on a change goes in its own box.",
	}, nil
}

// checklistItem is the clause's checklist entry and its place in the checklist (1-based).
func checklistItem(s ReviewGraphState, clauseID string) (ChecklistItem, int) {
	for i, it := range s.ReviewChecklist {
		if it.ClauseID == clauseID {
			return it, i + 1
		}
	}
	return ChecklistItem{ClauseID: clauseID}, s.CurrentClauseIndex + 1
}

// clauseName is the clause's title in the contract, else its checklist name.
func clauseName(s ReviewGraphState, it ChecklistItem) string {
	if c, ok := s.PrimaryStructure.Find(it.ClauseID); ok && c.Title != "" {
		return c.Title
	}
	if !isChinese(s.Language, "") && it.ClauseNameEn != "" {
		return it.ClauseNameEn
	}
	return it.ClauseName
}

// clauseBlocks show the paused clause: its text with each risk's words marked, its risks,
// and what earlier clauses said that the review used.
func clauseBlocks(s ReviewGraphState, it ChecklistItem) []workflow.Block {
	risks := s.CurrentRisks
	q := workflow.Quote{ID: "clause-text", Text: s.CurrentClauseText}
	for i, rk := range risks {
		if rk.Span != nil {
			q.Marks = append(q.Marks, workflow.Mark{Start: rk.Span.Start, End: rk.Span.End, Class: rk.Severity,
				Label: riskLabel(i), Note: rk.Severity + ": " + rk.Description})
		}
	}
	clause := []workflow.Block{q}
	if it.Description != "" && s.DomainID != "" { // a generated checklist's description adds nothing
		clause = append([]workflow.Block{workflow.Paragraph{Text: "Checklist: " + it.Description, Muted: true}}, clause...)
	}
	out := []workflow.Block{
		workflow.Section{ID: "clause", Title: "The clause", Meta: "The words each risk cites are marked; hover a mark for why.", Blocks: clause},
		workflow.Section{ID: "risks", Title: "Its risks", Blocks: []workflow.Block{riskTable(risks, true)}},
	}
	if facts := usedFacts(s, risks); len(facts) > 0 {
		out = append(out, workflow.Section{ID: "earlier", Title: "From earlier clauses", Meta: "What the review of this clause relied on.",
			Blocks: []workflow.Block{workflow.KeyValues{Items: facts}}})
	}
	return out
}

func riskLabel(i int) string { return fmt.Sprintf("R%d", i+1) }

// riskTable lists risks: with labels (R1 …) tying them to the marks of a clause's text, or
// with their clause.
func riskTable(risks []RiskPoint, labels bool) workflow.Table {
	first := workflow.Column{Title: "Clause", Type: workflow.ColCode}
	if labels {
		first = workflow.Column{Title: "", Type: workflow.ColCode}
	}
	t := workflow.Table{Columns: []workflow.Column{first, {Title: "Severity", Type: workflow.ColBadge},
		{Title: "Risk", Type: workflow.ColWide}, {Title: "Cited words", Type: workflow.ColText}},
		Empty: "No risks found in this clause."}
	for i, rk := range risks {
		key := rk.ClauseID
		if labels {
			key = riskLabel(i)
		}
		note := "found by the " + strings.ReplaceAll(rk.Rule, "_", " ") + " rule"
		if rk.Rule == RuleModel {
			note = "found by " + rk.Source
		}
		if len(rk.Uses) > 0 {
			note += "; uses " + strings.Join(rk.Uses, ", ")
		}
		cited := rk.Excerpt
		if cited == "" {
			cited = "—"
		}
		t.Rows = append(t.Rows, workflow.Row{ID: "risk-" + rk.RiskID, Cells: []workflow.Cell{{Text: key},
			{Text: rk.Severity, Badge: rk.Severity}, {Text: rk.Description, Note: note}, {Text: cited}}})
	}
	return t
}

// usedFacts are the scratchpad facts the risks used ("1.1: contract_price"), in words.
func usedFacts(s ReviewGraphState, risks []RiskPoint) []workflow.KV {
	var out []workflow.KV
	seen := map[string]bool{}
	for _, rk := range risks {
		for _, u := range rk.Uses {
			clause, key, _ := strings.Cut(u, ":")
			if seen[u] {
				continue
			}
			seen[u] = true
			for _, f := range s.Findings[clause].Facts {
				if f.Key == key {
					out = append(out, workflow.KV{Key: factLabel(f.Key) + " (clause " + clause + ")", Value: strings.TrimRight(f.Value, ",;:. ")})
				}
			}
		}
	}
	return out
}

func factLabel(key string) string {
	switch {
	case key == FactContractPrice:
		return "Contract Price"
	case strings.HasPrefix(key, FactPartyPrefix):
		return capitalize(strings.TrimPrefix(key, FactPartyPrefix))
	case strings.HasPrefix(key, FactTermPrefix):
		return "“" + strings.TrimPrefix(key, FactTermPrefix) + "”"
	}
	return key
}

// decisionItems asks for a decision per pending change, each shown as a redline.
func decisionItems(s ReviewGraphState, pending []DocumentDiff) workflow.ItemDecisions {
	risks := map[string]int{}
	for i, rk := range s.CurrentRisks {
		risks[rk.RiskID] = i
	}
	items := workflow.ItemDecisions{Name: AnswerItems, ApproveAll: true,
		FeedbackLabel: "Feedback (to reject with a re-proposal, say what the change should say)"}
	for i, d := range pending {
		title := fmt.Sprintf("Change %d of %d", i+1, len(pending))
		if k, ok := risks[d.RiskID]; ok {
			rk := s.CurrentRisks[k]
			title += fmt.Sprintf(" · answers %s (%s)", riskLabel(k), rk.Severity)
		}
		blocks := []workflow.Block{workflow.Redline{ID: "redline-" + d.DiffID, Before: d.Original, After: d.Suggested, Note: d.Reason}}
		if d.Round > 0 {
			blocks = append([]workflow.Block{workflow.Notice{Kind: "info", Text: fmt.Sprintf(
				"Drafted again from the feedback on its rejection (a change is re-proposed once: rejected again, it is dropped): %s", quote(d.Feedback))}}, blocks...)
		}
		items.Items = append(items.Items, workflow.DecisionItem{ID: d.DiffID, Title: title, Blocks: blocks})
	}
	return items
}

// itemAnswer is the answer on one change, as the form and the API send it.
type itemAnswer struct {
	Decision string `json:"decision"`
	Feedback string `json:"feedback"`
}

// Decide implements workflow.Reviewer: the answer on every pending change of the paused
// clause, checked, becomes the update_state writes of seed §7 (DecisionWrites), applied as
// clause_validate before the run continues. A change rejected with feedback is re-proposed.
func (Reviewer) Decide(_ context.Context, r workflow.Review, a workflow.Answer) (workflow.Decision, error) {
	snap, err := snapshotOf(r.Thread)
	if err != nil {
		return workflow.Decision{}, err
	}
	d, err := readDecisions(r, a)
	if err != nil {
		return workflow.Decision{}, err
	}
	paused, ok := Paused(snap)
	if !ok || d.ClauseID != "" && d.ClauseID != paused {
		msg := "The review does not wait for a decision on a clause."
		if ok {
			msg = fmt.Sprintf("Clause %s is not waiting for a decision: clause %s is.", d.ClauseID, paused)
		}
		return workflow.Decision{}, &workflow.AnswerError{Code: CodeNotPaused, Message: msg, Fields: map[string]string{AnswerClauseID: "is not the paused clause"}}
	}
	pending := PendingDiffs(snap.Values)
	if err := checkItems(paused, pending, d); err != nil {
		return workflow.Decision{}, err
	}
	ws, err := DecisionWrites(snap, d)
	if err != nil {
		return workflow.Decision{}, &workflow.AnswerError{Message: sentenceOf(err)}
	}
	dec := workflow.Decision{Update: ws, AsNode: NodeClauseValidate, Comment: strings.TrimSpace(a.Comment)}
	reproposed, rejected := 0, 0
	for _, p := range pending {
		it, given := d.Items[p.DiffID]
		verdict := "approved"
		if given && it.Verdict == Reject {
			verdict, rejected = "rejected", rejected+1
			if it.Feedback != "" && p.Round == 0 {
				verdict, reproposed = "rejected: re-propose from the feedback", reproposed+1
			}
		}
		dec.Summary = append(dec.Summary, workflow.KV{Key: fmt.Sprintf("%s · %s → %s", paused, quote(p.Original), quote(p.Suggested)), Value: verdict})
	}
	switch rejected {
	case 0:
		dec.Outcome = OutcomeApproved
	case len(pending):
		dec.Outcome = OutcomeRejected
	default:
		dec.Outcome = OutcomePartly
	}
	if reproposed > 0 {
		dec.Note = fmt.Sprintf("%s will be re-proposed from your feedback; the clause then waits for you again.", plural(reproposed, "change"))
	}
	return dec, nil
}

// readDecisions reads the answer's items, approve-all and clause.
func readDecisions(r workflow.Review, a workflow.Answer) (Decisions, error) {
	d := Decisions{Items: map[string]Decision{}, Reviewer: cmpOr(r.Reader.Name, r.Reader.ID), At: r.Now.UTC()}
	switch a.Decision {
	case "", DecisionSubmit:
	case DecisionApproveAll:
		d.ApproveAll = true
	default:
		return d, &workflow.AnswerError{Message: fmt.Sprintf(`The decision must be %q (with a decision per change in %q) or %q, not %q.`,
			DecisionSubmit, AnswerItems, DecisionApproveAll, a.Decision), Fields: map[string]string{"decision": "is not a choice of this review"}}
	}
	bad := func(key, msg string) error {
		return &workflow.AnswerError{Message: msg, Fields: map[string]string{key: msg}}
	}
	for _, k := range slices.Sorted(maps.Keys(a.Values)) {
		raw := a.Values[k]
		switch k {
		case AnswerItems:
			var items map[string]itemAnswer
			if err := json.Unmarshal(raw, &items); err != nil {
				return d, bad(k, `items must be {"<diff id>": {"decision": "approve" or "reject", "feedback": "…"}}`)
			}
			for id, it := range items {
				d.Items[id] = Decision{Verdict: strings.TrimSpace(it.Decision), Feedback: strings.TrimSpace(it.Feedback)}
			}
		case AnswerApproveAll:
			var all bool
			if err := json.Unmarshal(raw, &all); err != nil {
				return d, bad(k, "approve_all must be true or false")
			}
			d.ApproveAll = d.ApproveAll || all
		case AnswerClauseID:
			if err := json.Unmarshal(raw, &d.ClauseID); err != nil {
				return d, bad(k, "clause_id must be a string")
			}
		default:
			return d, bad(k, fmt.Sprintf("%q is not a field of this review: send %q, %q or %q", k, AnswerItems, AnswerApproveAll, AnswerClauseID))
		}
	}
	return d, nil
}

// checkItems refuses, field by field, decisions on changes that are not pending, changes
// left undecided (unless approve-all), verdicts other than approve and reject, and feedback
// that is too long or not readable text.
func checkItems(clauseID string, pending []DocumentDiff, d Decisions) error {
	known := map[string]bool{}
	for _, p := range pending {
		known[p.DiffID] = true
	}
	fields := map[string]string{}
	code := ""
	for id, it := range d.Items {
		key := AnswerItems + "." + id
		switch {
		case !known[id]:
			fields[key], code = fmt.Sprintf("no pending change of clause %s has this id", clauseID), CodeUnknownDiff
		case it.Verdict == "" && d.ApproveAll:
			delete(d.Items, id) // approve-all decides it; its feedback, if any, goes with an approval
		case it.Verdict != Approve && it.Verdict != Reject:
			fields[key] = "approve or reject this change"
		case utf8.RuneCountInString(it.Feedback) > MaxFeedback:
			fields[key] = fmt.Sprintf("the feedback is too long (at most %d characters)", MaxFeedback)
		default:
			if err := usertext.Check("the feedback", it.Feedback); err != nil {
				fields[key] = err.Error()
			}
		}
	}
	for _, p := range pending {
		if _, ok := d.Items[p.DiffID]; !ok && !d.ApproveAll {
			fields[AnswerItems+"."+p.DiffID] = "approve or reject this change"
		}
	}
	if len(fields) == 0 {
		return nil
	}
	msg := "Decide every change of clause " + clauseID + ": approve it, or reject it (with feedback to have it re-proposed)."
	if code == CodeUnknownDiff {
		var ids []string
		for id := range d.Items {
			if !known[id] {
				ids = append(ids, id)
			}
		}
		slices.Sort(ids)
		msg = fmt.Sprintf("No pending change of clause %s has the id %s.", clauseID, strings.Join(ids, ", "))
	}
	return &workflow.AnswerError{Code: code, Message: msg, Fields: fields}
}

// sentenceOf is an error's message as a sentence.
func sentenceOf(err error) string {
	msg := err.Error()
	if msg == "" {
		return msg
	}
	msg = strings.ToUpper(msg[:1]) + msg[1:]
	if !strings.HasSuffix(msg, ".") {
		msg += "."
	}
	return msg
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
