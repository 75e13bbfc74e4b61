package bideval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"weft/internal/fault"
	"weft/internal/workflow"
)

// Withdrawal is a bid document's withdrawal: when, and by whom.
type Withdrawal struct {
	At time.Time
	By string
}

// Chunks is what the review and the report read about evidence beyond the state: which
// chunks come from a document withdrawn since.
type Chunks interface {
	ChunkWithdrawals(ctx context.Context, tenantID string, chunkIDs []string) (map[string]Withdrawal, error)
}

// Reviewer is the bid evaluation's review (seed 000 §7): the quality gate's reasons, the
// scoring and the hard rules, each criterion with its evidence, and a decision to approve
// as scored, reject with a comment, or save edited scores (in steps of 0.1).
type Reviewer struct{ Chunks Chunks }

var _ workflow.Reviewer = Reviewer{}

// Choices of the review.
var reviewChoices = []workflow.Choice{
	{Value: DecisionEditScores, Label: "Save edited scores", Style: "primary", Validate: true},
	{Value: DecisionApprove, Label: "Approve as scored", Style: "ok"},
	{Value: DecisionReject, Label: "Reject", Style: "danger"},
}

// ScoreField is the form field of a criterion's score.
func ScoreField(criterionID string) string { return "scores." + criterionID }

// Form implements workflow.Reviewer.
func (rv Reviewer) Form(ctx context.Context, r workflow.Review) (workflow.Form, error) {
	s, err := workflow.DecodeState[State](r.State)
	if err != nil {
		return workflow.Form{}, fmt.Errorf("decode the evaluation's state: %w", err)
	}
	withdrawn, err := rv.withdrawn(ctx, r.Thread, evidenceIDs(s))
	if err != nil {
		return workflow.Form{}, err
	}
	f := workflow.Form{Subject: cmpOr(s.Supplier.Name, s.SupplierID), Choices: reviewChoices,
		CommentHint: "What you checked and why you decided so (kept in the report and the audit log)"}
	if s.EvaluationID != "" {
		f.SubjectDetail = "evaluation " + s.EvaluationID
		if s.Project.Name != "" {
			f.SubjectDetail += " · " + s.Project.Name
		}
	}
	reasons := s.ReviewReasons
	if len(reasons) == 0 {
		var p ReviewPayload
		_ = json.Unmarshal(r.Interrupt.Value, &p)
		reasons = p.Reasons
	}
	f.Reasons = reasonDetails(reasons, s)
	scoredBy := workflow.KV{Key: "Scored by", Value: s.ScoredBy}
	if s.ScoredOffline {
		scoredBy = workflow.KV{Key: "Scored by", Value: "offline provider", Badge: "offline"}
	}
	f.Blocks = append(f.Blocks, workflow.Section{Title: "Scoring summary", Blocks: []workflow.Block{workflow.KeyValues{Items: []workflow.KV{
		{Key: "Supplier", Value: s.Supplier.Name}, {Key: "Tender", Value: s.Project.Name},
		{Key: "Total score", Value: Score(s.TotalScore) + " / 100"}, {Key: "Confidence", Value: Percent(s.Confidence)},
		{Key: "Claims with a citation", Value: Percent(s.CitationCoverage)}, scoredBy}}}})
	if len(s.RuleResults) > 0 {
		f.Blocks = append(f.Blocks, workflow.Section{Title: "Hard rules", Blocks: []workflow.Block{rulesTable(s.RuleResults, withdrawn, false)}})
	}
	f.Blocks = append(f.Blocks, workflow.Heading{Text: "Criteria and evidence", Level: 2})
	chunks := chunkByID(s)
	for _, cs := range s.CriteriaScores {
		sec := workflow.Section{ID: "criterion-" + cs.CriterionID, Title: cs.Name,
			Meta:  fmt.Sprintf("weight %s · confidence %s · %s", Percent(cs.Weight), Percent(cs.Confidence), claimsCited(cs.CitedClaims, cs.Claims)),
			Badge: Score(cs.Score) + " / " + num(cs.MaxScore), Class: "score"}
		if cs.Explanation != "" {
			sec.Blocks = append(sec.Blocks, workflow.Paragraph{Text: cs.Explanation})
		}
		sec.Blocks = append(sec.Blocks, workflow.Citations{Items: criterionEvidence(s, cs, chunks, withdrawn),
			Empty: "No evidence was retrieved for this criterion."})
		f.Blocks = append(f.Blocks, sec)
		f.Inputs = append(f.Inputs, workflow.ScoreField{Name: ScoreField(cs.CriterionID), Label: cs.Name,
			Hint: "scored " + Score(cs.Score) + " of " + num(cs.MaxScore), Min: 0, Max: cs.MaxScore, Step: 0.1, Value: Score(cs.Score)})
	}
	return f, nil
}

// Decide implements workflow.Reviewer: the §7.2 decision, checked as human_review_interrupt
// checks it (ValidateDecision), one rule for the console's form and the API.
func (Reviewer) Decide(_ context.Context, r workflow.Review, a workflow.Answer) (workflow.Decision, error) {
	s, err := workflow.DecodeState[State](r.State)
	if err != nil {
		return workflow.Decision{}, fmt.Errorf("decode the evaluation's state: %w", err)
	}
	refuse := func(fields map[string]string, format string, args ...any) error {
		return &workflow.AnswerError{Code: CodeDecisionInvalid, Message: fmt.Sprintf(format, args...), Fields: fields}
	}
	if _, ok := a.Values["value"]; ok && !a.FromForm {
		return workflow.Decision{}, refuse(map[string]string{"value": "not taken"},
			"value is for other workflows' reviews; a bid evaluation's decision is its decision, comment and scores")
	}
	if _, ok := a.Values["scores"]; ok && !a.FromForm && a.Decision != DecisionEditScores {
		switch a.Decision {
		case DecisionApprove:
			return workflow.Decision{}, refuse(map[string]string{"scores": "not taken"}, "approve keeps the model's scores: send scores with edit_scores only")
		case DecisionReject:
			return workflow.Decision{}, refuse(map[string]string{"scores": "not taken"}, "reject records no scores: send scores with edit_scores only")
		}
	}
	for k := range a.Values {
		if k != "scores" {
			return workflow.Decision{}, refuse(map[string]string{k: "unknown field"},
				"%s is not part of a bid evaluation's decision (its decision, comment and scores)", k)
		}
	}
	texts, err := scoreTexts(a)
	if err != nil {
		return workflow.Decision{}, err
	}
	known := map[string]CriterionScore{}
	for _, cs := range s.CriteriaScores {
		known[cs.CriterionID] = cs
	}
	for _, id := range slices.Sorted(mapsKeys(texts)) {
		if _, ok := known[id]; !ok {
			return workflow.Decision{}, refuse(map[string]string{ScoreField(id): "unknown criterion"},
				"edit_scores names unknown criterion %q (this evaluation scores %s)", id, strings.Join(criterionIDs(s), ", "))
		}
	}
	d := Decision{Decision: a.Decision, Comment: strings.TrimSpace(a.Comment), Editor: Editor{ReviewerID: r.Reader.ID}, At: r.Now.UTC()}
	out := workflow.Decision{Outcome: a.Decision, Comment: d.Comment, SummaryTitle: "Scores saved"}
	// changed are the criteria whose sent score differs from the model's (or is no number).
	changed := map[string]string{}
	for _, cs := range s.CriteriaScores {
		if text, ok := texts[cs.CriterionID]; ok {
			if v, perr := ParseScore(text, math.Inf(1)); perr != nil || editsScore(v, cs.Score) {
				changed[ScoreField(cs.CriterionID)] = "differs from the model's score"
			}
		}
	}
	switch a.Decision {
	case DecisionApprove:
		if len(changed) > 0 {
			return workflow.Decision{}, refuse(changed, "You changed %s. Approving keeps the model's scores: save the edited scores "+
				"instead, or put the scores back to approve as scored.", plural(len(changed), "score", "scores"))
		}
	case DecisionReject:
		if d.Comment == "" {
			return workflow.Decision{}, refuse(map[string]string{"comment": "is required to reject"},
				"Say why you reject the evaluation: a rejection needs a comment, which the report and the audit log keep.")
		}
		if len(changed) > 0 { // a rejection records no scores: say which edits it dropped
			if !a.FromForm {
				return workflow.Decision{}, refuse(changed, "reject records no scores: send scores with edit_scores only")
			}
			var names []string
			for _, cs := range s.CriteriaScores {
				if changed[ScoreField(cs.CriterionID)] != "" {
					names = append(names, cs.Name)
				}
			}
			out.Note = "Scores you changed before rejecting were not saved: " + strings.Join(names, ", ") + "."
		}
	case DecisionEditScores:
		d.Scores = map[string]float64{}
		fields := map[string]string{}
		var problems []string
		for _, cs := range s.CriteriaScores {
			text, ok := texts[cs.CriterionID]
			if !ok {
				if a.FromForm {
					problems = append(problems, fmt.Sprintf("%s needs a score (0 to %s).", cs.Name, num(cs.MaxScore)))
					fields[ScoreField(cs.CriterionID)] = "is required"
				}
				continue
			}
			v, perr := ParseScore(text, cs.MaxScore)
			if perr != nil {
				if !a.FromForm { // a program names the criterion by its id
					return workflow.Decision{}, refuse(map[string]string{ScoreField(cs.CriterionID): perr.Error()}, "scores.%s: %v", cs.CriterionID, perr)
				}
				problems = append(problems, fmt.Sprintf("%s: %v.", cs.Name, perr))
				fields[ScoreField(cs.CriterionID)] = perr.Error()
				continue
			}
			if editsScore(v, cs.Score) {
				d.Scores[cs.CriterionID] = v
				out.Summary = append(out.Summary, workflow.KV{Key: cs.Name, Value: strconv.FormatFloat(v, 'f', -1, 64)})
			}
		}
		if len(problems) > 0 {
			return workflow.Decision{}, refuse(fields, "Check the scores: %s", strings.Join(problems, " "))
		}
		if len(d.Scores) == 0 {
			return workflow.Decision{}, refuse(nil, "No score differs from the model's: edit_scores changes no score. Change at least one score, or approve as scored.")
		}
	default:
		return workflow.Decision{}, refuse(map[string]string{"decision": "unknown"}, "Choose approve, reject or edit_scores, not %q.", a.Decision)
	}
	if err := ValidateDecision(d, s.RulePack.Criteria); err != nil {
		var fe *fault.Error
		if errors.As(err, &fe) {
			return workflow.Decision{}, refuse(nil, "The decision was not accepted: %s.", fe.Message)
		}
		return workflow.Decision{}, err
	}
	out.Resume = d
	return out, nil
}

// scoreTexts reads the answer's scores (criterion id → the score as written): the console's
// texts (a decimal comma taken as a point), the API's JSON numbers as written.
func scoreTexts(a workflow.Answer) (map[string]string, error) {
	raw, ok := a.Values["scores"]
	if !ok || string(raw) == "null" {
		return map[string]string{}, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, &workflow.AnswerError{Code: CodeDecisionInvalid, Message: "scores must be an object of criterion id → score"}
	}
	out := make(map[string]string, len(m))
	for id, v := range m {
		var s string
		switch {
		case json.Unmarshal(v, &s) == nil && a.FromForm:
			out[id] = strings.TrimSpace(strings.ReplaceAll(s, ",", "."))
		case len(v) > 0 && (v[0] == '-' || v[0] >= '0' && v[0] <= '9'):
			out[id] = string(v)
		default:
			return nil, &workflow.AnswerError{Code: CodeDecisionInvalid, Message: fmt.Sprintf("scores.%s must be a number, not %s", id, workflow.JSONValueKind(v)),
				Fields: map[string]string{ScoreField(id): "must be a number"}}
		}
	}
	return out, nil
}

// editsScore says a score v changes the model's score: only scores that differ from the one
// the form shows (rounded to a tenth) are edits.
func editsScore(v, model float64) bool { return math.Abs(v-math.Round(model*10)/10) > 1e-9 }

// reasonDetails puts the quality gate's numbers next to its reasons.
func reasonDetails(keys []string, s State) []workflow.Reason {
	th := s.RulePack.Thresholds
	out := make([]workflow.Reason, 0, len(keys))
	for _, k := range keys {
		r := workflow.Reason{Key: k, Label: cmpOr(ReasonLabels[k], k)}
		switch k {
		case "low_confidence":
			r.Detail = fmt.Sprintf("The scorer's confidence is %s; the rule pack asks for at least %s.", Percent(s.Confidence), Percent(th.MinConfidence))
		case "citation_coverage_low":
			r.Detail = fmt.Sprintf("%s of the scorer's claims cite evidence; the rule pack asks for at least %s.", Percent(s.CitationCoverage), Percent(th.MinCitationCoverage))
		case "hard_rule_failed_high_score":
			var failed []string
			for _, rr := range s.RuleResults {
				if !rr.Passed {
					failed = append(failed, rr.Name)
				}
			}
			r.Detail = fmt.Sprintf("%s failed, yet the total %s reaches the high-score mark %s.", strings.Join(failed, ", "), Score(s.TotalScore), Score(th.HighScore))
		case "score_outlier":
			r.Detail = fmt.Sprintf("The total %s is more than %s points away from the other bids' mean.", Score(s.TotalScore), Score(th.OutlierDelta))
		}
		out = append(out, r)
	}
	return out
}

// rulesTable is the hard rules with their results and evidence.
func rulesTable(rs []RuleResult, withdrawn map[string]string, report bool) workflow.Table {
	t := workflow.Table{Columns: []workflow.Column{{Title: "Rule", Type: workflow.ColWide}, {Title: "Result", Type: workflow.ColBadge},
		{Title: "Severity", Type: workflow.ColBadge}, {Title: "Found"}, {Title: "Why", Type: workflow.ColWide}}}
	for _, rr := range rs {
		result := workflow.Cell{Text: "passed", Badge: "pass"}
		if !rr.Passed {
			result = workflow.Cell{Text: "failed", Badge: "fail"}
		}
		why := workflow.Cell{Text: rr.Reason}
		if len(rr.ChunkIDs) > 0 {
			notes := make([]string, 0, len(rr.ChunkIDs))
			for _, id := range rr.ChunkIDs {
				n := id
				if w := withdrawn[id]; w != "" {
					n += " (" + w + ")"
				}
				notes = append(notes, n)
			}
			why.Note = "evidence: " + strings.Join(notes, ", ")
		}
		name := workflow.Cell{Text: rr.Name}
		if report {
			name.Note = rr.RuleID + " · " + rr.Kind
		}
		t.Rows = append(t.Rows, workflow.Row{Highlight: !rr.Passed, Cells: []workflow.Cell{name, result,
			{Text: rr.Severity, Badge: rr.Severity}, {Text: rr.Value}, why}})
	}
	return t
}

// criterionEvidence lists a criterion's evidence: the chunks it cites first (the score rests
// on them), then those its explanation names without citing (where the bid falls short of a
// rubric number), then the rest retrieved for it, each with where its search ranked it.
func criterionEvidence(s State, cs CriterionScore, chunks map[string]RetrievedChunk, withdrawn map[string]string) []workflow.Citation {
	ev := s.EvidenceBundle[cs.CriterionID]
	cited := make(map[string]bool, len(cs.Citations))
	for _, id := range cs.Citations {
		cited[id] = true
	}
	named := map[string]bool{}
	for _, id := range ev.ChunkIDs {
		if !cited[id] && strings.Contains(cs.Explanation, "["+id+"]") {
			named[id] = true
		}
	}
	rank, tie := searchRanks(ev)
	var out []workflow.Citation
	seen := map[string]bool{}
	add := func(id string) {
		if seen[id] {
			return
		}
		seen[id] = true
		ch, ok := chunks[id]
		c := workflow.Citation{ID: id, Document: cmpOr(ch.Document, ch.DocumentID), Text: ch.Text, Withdrawn: withdrawn[id]}
		if !ok {
			c.Text = "(this chunk is no longer in the retrieved evidence)"
		}
		switch {
		case cited[id]:
			c.Mark = workflow.MarkCited
		case named[id]:
			c.Mark = workflow.MarkShortfall
		}
		if ok && s.ProjectID != "" && ch.DocumentID != "" {
			c.Href = ChunkHref(s.ProjectID, ch.DocumentID, id)
		}
		if r, found := rank[id]; found {
			c.Note = fmt.Sprintf("search match %d of %d", r, len(ev.ChunkIDs))
			if r == 1 {
				c.Note = fmt.Sprintf("best search match of %d", len(ev.ChunkIDs))
				if len(ev.ChunkIDs) == 1 {
					c.Note = "the only search match"
				}
			}
			if tie[id] {
				c.Note += ", tied"
			}
		}
		out = append(out, c)
	}
	for _, id := range cs.Citations {
		add(id)
	}
	for _, id := range ev.ChunkIDs {
		add(id)
	}
	order := func(c workflow.Citation) int {
		switch c.Mark {
		case workflow.MarkCited:
			return 0
		case workflow.MarkShortfall:
			return 1
		}
		return 2
	}
	sort.SliceStable(out, func(i, j int) bool { return order(out[i]) < order(out[j]) })
	return out
}

// searchRanks is where the search ranked each chunk retrieved for a criterion: one more than
// the chunks it scored higher; chunks scored alike tie (a full-text rank, a few hundredths
// for a good match, reads as no relevance to people, so the rank is shown instead).
func searchRanks(ev Evidence) (map[string]int, map[string]bool) {
	rank := make(map[string]int, len(ev.ChunkIDs))
	tie := map[string]bool{}
	scores := ev.Scores[:min(len(ev.Scores), len(ev.ChunkIDs))]
	for i, id := range ev.ChunkIDs {
		if _, ok := rank[id]; ok {
			continue
		}
		rank[id] = i + 1
		if i < len(scores) {
			rank[id] = 1
			for k, sc := range scores {
				if sc > scores[i] {
					rank[id]++
				} else if k != i && sc == scores[i] && ev.ChunkIDs[k] != id {
					tie[id] = true
				}
			}
		}
	}
	return rank, tie
}

// withdrawn notes, by chunk id, the evidence whose bid document was withdrawn since.
func (rv Reviewer) withdrawn(ctx context.Context, t workflow.Thread, ids []string) (map[string]string, error) {
	out := map[string]string{}
	if rv.Chunks == nil || len(ids) == 0 {
		return out, nil
	}
	found, err := rv.Chunks.ChunkWithdrawals(ctx, t.TenantID, ids)
	if err != nil {
		return nil, err
	}
	for id, w := range found {
		out[id] = WithdrawnNote(w.At, t.NameOf(w.By))
	}
	return out, nil
}

// WithdrawnNote says when and by whom a bid document was withdrawn.
func WithdrawnNote(at time.Time, by string) string {
	return "Withdrawn by " + cmpOr(by, "someone") + " on " + at.UTC().Format("2006-01-02 15:04") + " UTC"
}

func evidenceIDs(s State) []string {
	seen := map[string]bool{}
	var ids []string
	add := func(id string) {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	for _, cs := range s.CriteriaScores {
		for _, id := range cs.Citations {
			add(id)
		}
		for _, id := range s.EvidenceBundle[cs.CriterionID].ChunkIDs {
			add(id)
		}
	}
	for _, rr := range s.RuleResults {
		for _, id := range rr.ChunkIDs {
			add(id)
		}
	}
	if s.ReportPayload != nil {
		for _, c := range s.ReportPayload.Citations {
			add(c.ChunkID)
		}
	}
	return ids
}

// ChunkHref is where a chunk opens: its bid document's page, at the chunk.
func ChunkHref(projectID, documentID, chunkID string) string {
	href := "/projects/" + pathEscape(projectID) + "/documents/" + pathEscape(documentID)
	if i := strings.LastIndexByte(chunkID, '#'); i >= 0 {
		if _, err := strconv.Atoi(chunkID[i+1:]); err == nil {
			href += "#chunk-" + chunkID[i+1:]
		}
	}
	return href
}

func criterionIDs(s State) []string {
	ids := make([]string, len(s.CriteriaScores))
	for i, cs := range s.CriteriaScores {
		ids[i] = cs.CriterionID
	}
	return ids
}

func claimsCited(cited, claims int) string {
	if claims == 0 {
		return "no claims made"
	}
	return fmt.Sprintf("%d of %s cited", cited, plural(claims, "claim", "claims"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// Percent shows a 0–1 fraction as a percentage with at most one decimal.
func Percent(v float64) string { return strconv.FormatFloat(math.Round(v*1000)/10, 'f', -1, 64) + "%" }

// Score shows a score with one decimal.
func Score(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func pathEscape(s string) string { return url.PathEscape(s) }

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}
