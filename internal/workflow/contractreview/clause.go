package contractreview

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"weft/internal/graph"
)

// clauseAnalyze is the seed's node_clause_analyze: the clause's text, the
// facts it states, and its risks from the rules and the provider. The rules
// read the scratchpad: facts of earlier clauses (the Contract Price in 1.1)
// size a cap stated as a percentage, and party names resolve our role.
func (r *reviewer) clauseAnalyze(ctx context.Context, s ReviewGraphState) (graph.Command, error) {
	if s.CurrentClauseIndex >= len(s.ReviewChecklist) {
		return graph.Command{}, graph.Permanent(fmt.Errorf("clause_analyze at index %d of %d clauses", s.CurrentClauseIndex, len(s.ReviewChecklist)))
	}
	item := s.ReviewChecklist[s.CurrentClauseIndex]
	zh := isChinese(s.Language, "")
	reset := []graph.Write{
		keyCurrentClauseID.Set(item.ClauseID),
		keyCurrentDiffs.Set([]DocumentDiff{}),
		keyPendingDiffs.Set([]DocumentDiff{}),
		keyValidationResult.Set(""),
		keyValidationIssues.Set([]ValidationIssue{}),
		keyClauseRetryCount.Set(0),
	}
	doc, _ := primary(s)
	clause, found := s.PrimaryStructure.Find(item.ClauseID)
	if !found {
		sev := SeverityMedium
		if item.Priority == SeverityCritical || item.Priority == SeverityHigh {
			sev = SeverityHigh
		}
		name := item.ClauseName
		if !zh && item.ClauseNameEn != "" {
			name = item.ClauseNameEn
		}
		risk := RiskPoint{RiskID: item.ClauseID + "/" + RuleMissingClause, ClauseID: item.ClauseID, Rule: RuleMissingClause, Severity: sev, Source: "rule",
			Description: say(zh, fmt.Sprintf("Clause %s (%s) is not in the contract.", item.ClauseID, name), fmt.Sprintf("合同中没有第 %s 条（%s）。", item.ClauseID, name))}
		return graph.Update(append(reset, keyCurrentClauseText.Set(""), keyCurrentFacts.Set([]Fact{}),
			keyCurrentRisks.Set([]RiskPoint{risk}))...), nil
	}
	text := clause.Text(doc.Text)
	facts := extractFacts(item.ClauseID, text)
	known := append(preambleParties(doc.Text, s.PrimaryStructure), priorFacts(s)...)
	known = append(known, facts...)
	in := ruleInput{clauseID: item.ClauseID, text: text, us: roleOf(s.OurParty, known), facts: known, checks: item.Checks, zh: zh}
	risks := []RiskPoint{}
	for _, h := range runRules(in) {
		risks = append(risks, RiskPoint{RiskID: riskID(item.ClauseID, h.rule, h.span), ClauseID: item.ClauseID, Rule: h.rule,
			Severity: h.severity, Description: h.desc, Span: h.span, Excerpt: excerpt(text, h.span), Source: "rule", Uses: h.uses})
	}
	out, err := riskTask.Do(ctx, r.provider, riskIn{ClauseID: item.ClauseID, Title: clause.Title, Text: text, OurParty: s.OurParty, OurRole: in.us, Language: s.Language})
	if err != nil {
		return graph.Command{}, fmt.Errorf("clause %s: %w", item.ClauseID, err)
	}
	for _, m := range out.Risks {
		at := strings.Index(text, m.Excerpt)
		sp := &Span{Start: at, End: at + len(m.Excerpt)}
		if overlapsAny(sp, risks) {
			continue // a rule already cites these words
		}
		risks = append(risks, RiskPoint{RiskID: riskID(item.ClauseID, RuleModel, sp), ClauseID: item.ClauseID, Rule: RuleModel,
			Severity: m.Severity, Description: m.Description, Span: sp, Excerpt: m.Excerpt, Source: r.provider.Name()})
	}
	return graph.Update(append(reset, keyCurrentClauseText.Set(text), keyCurrentFacts.Set(facts), keyCurrentRisks.Set(risks))...), nil
}

func riskID(clause, rule string, sp *Span) string {
	if sp == nil {
		return clause + "/" + rule
	}
	return fmt.Sprintf("%s/%s@%d", clause, rule, sp.Start)
}

func excerpt(text string, sp *Span) string {
	if sp == nil {
		return ""
	}
	return text[sp.Start:sp.End]
}

func overlaps(a, b Span) bool { return a.Start < b.End && b.Start < a.End }

func overlapsAny(sp *Span, risks []RiskPoint) bool {
	for _, r := range risks {
		if r.Span != nil && overlaps(*sp, *r.Span) {
			return true
		}
	}
	return false
}

// DiffID is a diff's stable id: a hash of the clause id, the span and the
// suggestion, so the same proposal always has the same id.
func DiffID(clauseID string, sp Span, suggested string) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d:%d\x00%s", clauseID, sp.Start, sp.End, suggested))
	return "d" + hex.EncodeToString(h[:6])
}

// generateDiffs is the seed's node_clause_generate_diffs. It drafts, through
// the provider, one change per risk the first time; after a failed
// validation it redrafts the proposals that failed, told why; after a
// rejection with feedback it re-proposes those diffs, told the feedback.
// Decided diffs are kept as they are.
func (r *reviewer) generateDiffs(ctx context.Context, s ReviewGraphState) (graph.Command, error) {
	var (
		targets []draftTarget
		keep    []DocumentDiff
		round   int
		ws      []graph.Write
	)
	issues := map[string]ValidationIssue{}
	for _, is := range s.ValidationIssues {
		issues[is.DiffID] = is
	}
	risks := map[string]RiskPoint{}
	for _, rk := range s.CurrentRisks {
		risks[rk.RiskID] = rk
	}
	proposed, toRevise := byStatus(s.CurrentDiffs, StatusProposed), revisable(s.CurrentDiffs)
	switch {
	case len(proposed) > 0: // validation failed: redraft the proposals
		for _, d := range s.CurrentDiffs {
			if d.Status != StatusProposed {
				keep = append(keep, d)
				continue
			}
			is := issues[d.DiffID]
			targets = append(targets, draftTarget{Risk: risks[d.RiskID], Previous: &d, Issue: is.Check, Detail: is.Detail, Feedback: d.Feedback})
			round = d.Round
		}
		ws = append(ws, keyClauseRetryCount.Set(s.ClauseRetryCount+1))
	case len(toRevise) > 0: // rejected with feedback: re-propose once
		keep = s.CurrentDiffs
		for _, d := range toRevise {
			targets = append(targets, draftTarget{Risk: risks[d.RiskID], Previous: &d, Feedback: d.Feedback})
		}
		round = 1
		ws = append(ws, keyClauseRetryCount.Set(0))
	default:
		for _, rk := range s.CurrentRisks {
			if rk.Span != nil {
				targets = append(targets, draftTarget{Risk: rk})
			}
		}
	}
	diffs := append([]DocumentDiff{}, keep...)
	if len(targets) > 0 {
		out, err := draftTask.Do(ctx, r.provider, draftIn{ClauseID: s.CurrentClauseID, Text: s.CurrentClauseText, OurParty: s.OurParty,
			Language: s.Language, Attempt: s.ClauseRetryCount, Targets: targets})
		if err != nil {
			return graph.Command{}, fmt.Errorf("clause %s: %w", s.CurrentClauseID, err)
		}
		byRisk := map[string]draftTarget{}
		for _, t := range targets {
			byRisk[t.Risk.RiskID] = t
		}
		for _, it := range out.Diffs {
			d := r.newDiff(s, it, round, byRisk[it.RiskID])
			if round == 1 && d.Revises != "" {
				for i := range diffs {
					if diffs[i].DiffID == d.Revises {
						diffs[i].RevisedBy = d.DiffID
					}
				}
			}
			if !overlapsDiffs(d, diffs) {
				diffs = append(diffs, d)
			}
		}
	}
	return graph.Update(append(ws, keyCurrentDiffs.Set(diffs))...), nil
}

// newDiff places a drafted change in the clause text.
func (r *reviewer) newDiff(s ReviewGraphState, it draftItem, round int, t draftTarget) DocumentDiff {
	at := strings.Index(s.CurrentClauseText, it.Original)
	sp := Span{Start: at, End: at + len(it.Original)}
	if at < 0 || it.Original == "" {
		sp = Span{Start: -1, End: -1}
	}
	d := DocumentDiff{DiffID: DiffID(s.CurrentClauseID, sp, it.Suggested), ClauseID: s.CurrentClauseID, RiskID: it.RiskID, Span: sp,
		Original: it.Original, Suggested: it.Suggested, Reason: it.Reason, Status: StatusProposed, Round: round}
	if t.Previous != nil {
		d.Feedback = t.Feedback
		if round == 1 {
			d.Revises = t.Previous.Revises
			if d.Revises == "" {
				d.Revises = t.Previous.DiffID
			}
		}
	}
	return d
}

// overlapsDiffs: a change may not touch words another change of the clause
// already rewrites (one of two risks in the same words gets the diff).
func overlapsDiffs(d DocumentDiff, others []DocumentDiff) bool {
	for _, o := range others {
		if o.Status == StatusRejected || d.Span.Start < 0 || o.Span.Start < 0 {
			continue
		}
		if o.DiffID == d.Revises || o.RevisedBy == d.DiffID {
			continue
		}
		if overlaps(d.Span, o.Span) {
			return true
		}
	}
	return false
}

func byStatus(diffs []DocumentDiff, status string) []DocumentDiff {
	var out []DocumentDiff
	for _, d := range diffs {
		if d.Status == status {
			out = append(out, d)
		}
	}
	return out
}

// validate is the seed's node_clause_validate. Each proposal must cite words
// that occur exactly once in the clause, say something, and leave our party
// no worse off under the same rules (the risk it answers gone, no new one).
func (r *reviewer) validate(_ context.Context, s ReviewGraphState) (graph.Command, error) {
	proposed := byStatus(s.CurrentDiffs, StatusProposed)
	issues := []ValidationIssue{}
	doc := s.CurrentClauseText
	main, _ := primary(s)
	known := append(preambleParties(main.Text, s.PrimaryStructure), priorFacts(s)...)
	known = append(known, s.CurrentFacts...)
	in := ruleInput{clauseID: s.CurrentClauseID, us: roleOf(s.OurParty, known), facts: known, zh: isChinese(s.Language, "")}
	risks := map[string]RiskPoint{}
	for _, rk := range s.CurrentRisks {
		risks[rk.RiskID] = rk
	}
	for _, item := range s.ReviewChecklist {
		if item.ClauseID == s.CurrentClauseID {
			in.checks = item.Checks
		}
	}
	for _, d := range proposed {
		if is, ok := checkDiff(in, doc, d, risks[d.RiskID]); !ok {
			issues = append(issues, is)
		}
	}
	if len(issues) > 0 {
		return graph.Update(keyValidationResult.Set("fail"), keyValidationIssues.Set(issues), keyPendingDiffs.Set([]DocumentDiff{})), nil
	}
	return graph.Update(keyValidationResult.Set("pass"), keyValidationIssues.Set(issues), keyPendingDiffs.Set(nonNil(proposed))), nil
}

// checkDiff runs the three checks on one proposal.
func checkDiff(in ruleInput, text string, d DocumentDiff, risk RiskPoint) (ValidationIssue, bool) {
	fail := func(check, detail string) (ValidationIssue, bool) {
		return ValidationIssue{DiffID: d.DiffID, RiskID: d.RiskID, Check: check, Detail: detail}, false
	}
	if strings.TrimSpace(d.Suggested) == "" || strings.TrimSpace(d.Original) == "" || d.Suggested == d.Original {
		return fail(CheckEmpty, "the change is empty or changes nothing")
	}
	if n := occurrences(text, d.Original); n != 1 {
		return fail(CheckSpan, fmt.Sprintf("the original words occur %d times in the clause, not once", n))
	}
	in.text = text
	before := ruleCounts(runRules(in))
	in.text = text[:d.Span.Start] + d.Suggested + text[d.Span.End:]
	after := ruleCounts(runRules(in))
	for rule, n := range after {
		if n > before[rule] {
			return fail(CheckWeakens, fmt.Sprintf("the change adds a %s risk", rule))
		}
	}
	if isRule(risk.Rule) && after[risk.Rule] >= before[risk.Rule] {
		return fail(CheckWeakens, fmt.Sprintf("the change leaves the %s risk in place", risk.Rule))
	}
	if risk.Rule == RuleModel && risk.Excerpt != "" && strings.Contains(d.Suggested, risk.Excerpt) {
		return fail(CheckWeakens, "the change keeps the words at risk")
	}
	return ValidationIssue{}, true
}

func nonNil(d []DocumentDiff) []DocumentDiff {
	if d == nil {
		return []DocumentDiff{}
	}
	return d
}
