package contractreview

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"weft/internal/graph"
	"weft/internal/workflow"
)

// saveClause is the seed's node_save_clause: the clause's findings go to the
// scratchpad, its risks and approved diffs to the totals, and the index
// moves on. A clause whose validation never passed keeps its risks and no
// diffs.
func (r *reviewer) saveClause(_ context.Context, s ReviewGraphState) (graph.Command, error) {
	approved, rejected := []DocumentDiff{}, []DocumentDiff{}
	proposed := 0
	for _, d := range s.CurrentDiffs {
		switch d.Status {
		case StatusApproved:
			approved = append(approved, d)
			proposed++
		case StatusRejected:
			rejected = append(rejected, d)
			proposed++
		}
	}
	skipped := s.ValidationResult == "fail"
	name := ""
	for _, it := range s.ReviewChecklist {
		if it.ClauseID == s.CurrentClauseID {
			name = it.ClauseName
		}
	}
	f := ClauseFindings{ClauseID: s.CurrentClauseID, ClauseName: name, Risks: nonNilRisks(s.CurrentRisks), Diffs: approved, Rejected: rejected,
		Proposed: proposed, Facts: nonNilFacts(s.CurrentFacts), Retries: s.ClauseRetryCount, SkippedAfterRetries: skipped, Completed: true}
	for _, rk := range s.CurrentRisks {
		f.Missing = f.Missing || rk.Rule == RuleMissingClause
	}
	return graph.Update(
		keyFindings.Set(map[string]ClauseFindings{s.CurrentClauseID: f}),
		keyAllRisks.Set(nonNilRisks(s.CurrentRisks)),
		keyAllDiffs.Set(approved),
		keyAllActions.Set(actions(s, approved)),
		keyCurrentClauseIndex.Set(s.CurrentClauseIndex+1),
	), nil
}

// actions recommends what to do about each risk no approved change answers.
func actions(s ReviewGraphState, approved []DocumentDiff) []ActionRecommendation {
	zh := isChinese(s.Language, "")
	answered := map[string]bool{}
	for _, d := range approved {
		answered[d.RiskID] = true
	}
	out := []ActionRecommendation{}
	for _, rk := range s.CurrentRisks {
		if answered[rk.RiskID] {
			continue
		}
		act := say(zh, "Negotiate: "+rk.Description, "谈判处理："+rk.Description)
		if rk.Rule == RuleMissingClause {
			act = say(zh, "Add the clause: "+rk.Description, "补充条款："+rk.Description)
		}
		out = append(out, ActionRecommendation{ClauseID: rk.ClauseID, RiskID: rk.RiskID, Priority: rk.Severity, Action: act})
	}
	return out
}

func nonNilRisks(r []RiskPoint) []RiskPoint {
	if r == nil {
		return []RiskPoint{}
	}
	return r
}

func nonNilFacts(f []Fact) []Fact {
	if f == nil {
		return []Fact{}
	}
	return f
}

// Summarize counts a review's results from its state.
func Summarize(s ReviewGraphState) Summary {
	sum := Summary{ClausesReviewed: len(s.Findings), RisksBySeverity: map[string]int{}, ClausesSkipped: []string{}, ClausesMissing: []string{}}
	for _, sev := range Severities {
		sum.RisksBySeverity[sev] = 0
	}
	reviewers := map[string]bool{}
	for _, id := range findingOrder(s) {
		f := s.Findings[id]
		sum.Risks += len(f.Risks)
		for _, rk := range f.Risks {
			sum.RisksBySeverity[rk.Severity]++
		}
		sum.DiffsProposed += f.Proposed
		sum.DiffsApproved += len(f.Diffs)
		sum.DiffsRejected += len(f.Rejected)
		for _, d := range append(slices.Clone(f.Diffs), f.Rejected...) {
			reviewers[d.DecidedBy] = true
		}
		if f.SkippedAfterRetries {
			sum.ClausesSkipped = append(sum.ClausesSkipped, id)
		}
		if f.Missing {
			sum.ClausesMissing = append(sum.ClausesMissing, id)
		}
	}
	for name := range reviewers {
		if name != "" {
			sum.Reviewers = append(sum.Reviewers, name)
		}
	}
	sort.Strings(sum.Reviewers)
	return sum
}

// findingOrder lists the reviewed clauses in checklist order.
func findingOrder(s ReviewGraphState) []string {
	var out []string
	for _, it := range s.ReviewChecklist {
		if _, ok := s.Findings[it.ClauseID]; ok && !slices.Contains(out, it.ClauseID) {
			out = append(out, it.ClauseID)
		}
	}
	for id := range s.Findings { // a finding outside the checklist (a state edited by hand)
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// notes writes summary_notes in the contract's language; the first
// sentence is the seed's.
func notes(s ReviewGraphState, sum Summary) string {
	zh := isChinese(s.Language, "")
	var b strings.Builder
	sev := func(sep string) string {
		parts := make([]string, 0, len(Severities))
		for _, v := range Severities {
			parts = append(parts, fmt.Sprintf("%s %d", v, sum.RisksBySeverity[v]))
		}
		return strings.Join(parts, sep)
	}
	if zh {
		fmt.Fprintf(&b, "审查完成。共审查 %d 个条款，发现 %d 个风险点（%s），生成 %d 条修改建议，批准 %d 条，拒绝 %d 条。",
			sum.ClausesReviewed, sum.Risks, sev("，"), sum.DiffsProposed, sum.DiffsApproved, sum.DiffsRejected)
		if len(sum.ClausesSkipped) > 0 {
			fmt.Fprintf(&b, "%d 个条款（%s）的修改建议多次验证未通过，已跳过，只保留风险。", len(sum.ClausesSkipped), strings.Join(sum.ClausesSkipped, "、"))
		}
		if len(sum.ClausesMissing) > 0 {
			fmt.Fprintf(&b, "合同缺少条款：%s。", strings.Join(sum.ClausesMissing, "、"))
		}
		if s.Error != "" {
			fmt.Fprintf(&b, "错误：%s。", s.Error)
		}
		return b.String()
	}
	fmt.Fprintf(&b, "Review complete. %d clauses reviewed, %d risks found (%s), %d changes proposed, %d approved, %d rejected.",
		sum.ClausesReviewed, sum.Risks, sev(", "), sum.DiffsProposed, sum.DiffsApproved, sum.DiffsRejected)
	if len(sum.ClausesSkipped) > 0 {
		fmt.Fprintf(&b, " %d clauses (%s) were skipped after their changes failed validation %d times: their risks are kept, with no changes.",
			len(sum.ClausesSkipped), strings.Join(sum.ClausesSkipped, ", "), s.MaxRetries+1)
	}
	if len(sum.ClausesMissing) > 0 {
		fmt.Fprintf(&b, " Missing from the contract: %s.", strings.Join(sum.ClausesMissing, ", "))
	}
	if s.Error != "" {
		fmt.Fprintf(&b, " Error: %s.", s.Error)
	}
	return b.String()
}

// summarize is the seed's node_summarize: the counts, summary_notes, and the
// artifacts (the contract with the approved changes as Word tracked changes,
// and an HTML redline). It is the graph's last node, where the one side
// effect (storing the artifacts) happens; the files are built only from
// state, so a replay writes the same bytes, which the store ignores.
func (r *reviewer) summarize(ctx context.Context, s ReviewGraphState) (graph.Command, error) {
	sum := Summarize(s)
	ws := []graph.Write{keySummary.Set(&sum), keySummaryNotes.Set(notes(s, sum)), keyIsComplete.Set(true)}
	refs := []workflow.ArtifactRef{}
	if doc, ok := primary(s); ok && r.artifacts != nil && s.PrimaryStructure != nil {
		arts, err := Artifacts(s, doc, sum)
		if err != nil {
			return graph.Command{}, err
		}
		for _, a := range arts {
			ref, err := r.artifacts.PutArtifact(ctx, a)
			if err != nil {
				return graph.Command{}, fmt.Errorf("store %s: %w", a.Key, err)
			}
			refs = append(refs, ref)
		}
	}
	return graph.Update(append(ws, keyArtifacts.Set(refs))...), nil
}
