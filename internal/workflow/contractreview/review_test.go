package contractreview_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"weft/internal/checkpoint"
	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/llm"
	cr "weft/internal/workflow/contractreview"
)

// The seed's §9 tests (tests/test_review_graph.py), on the real nodes. The
// seed's nodes were stubs returning empty lists, so its inputs had no
// contract; here each test gives the contract text its clauses need.

// test_build_graph.
func TestBuildGraph(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	want := []string{"init", "parse_document", "clause_analyze", "clause_generate_diffs", "clause_validate", "human_approval", "save_clause", "summarize"}
	if got := b.g.Nodes(); !slices.Equal(got, want) {
		t.Fatalf("nodes = %v, want the seed's %v", got, want)
	}
	if _, err := cr.New(cr.Deps{Checkpointer: checkpoint.NewMemory()}); err == nil {
		t.Error("New without a provider: no error")
	}
	if _, err := cr.New(cr.Deps{Provider: llm.NewOffline()}); err == nil {
		t.Error("New without a checkpointer: no error")
	}
}

// test_empty_checklist: init → parse_document → summarize → END.
func TestEmptyChecklist(t *testing.T) {
	t.Parallel()
	t.Run("a contract without numbered clauses", func(t *testing.T) {
		t.Parallel()
		b := setup(t, true)
		res := b.run(t, contract("Contractor", "This letter confirms our order of ten pumps.\nPayment on delivery.\n"))
		s := res.State
		if !res.Done() || !s.IsComplete || s.Error != "" {
			t.Fatalf("done %v, is_complete %v, error %q", res.Done(), s.IsComplete, s.Error)
		}
		if !strings.HasPrefix(s.SummaryNotes, "Review complete. 0 clauses reviewed") {
			t.Errorf("summary_notes = %q", s.SummaryNotes)
		}
		if got, want := b.visited(t), []string{"init", "parse_document", "summarize"}; !slices.Equal(got, want) {
			t.Errorf("path = %v, want %v", got, want)
		}
		if len(s.GlobalIssues) == 0 || !strings.Contains(s.GlobalIssues[0], "No numbered clauses") {
			t.Errorf("global_issues = %v", s.GlobalIssues)
		}
	})
	t.Run("the seed's input: no documents, no checklist", func(t *testing.T) {
		t.Parallel()
		b := setup(t, true)
		in := graph.Update(graph.Set("task_id", "test_001"), graph.Set("our_party", "承包商"), graph.Set("material_type", "contract"),
			graph.Set("language", "zh"), graph.Set("documents", []cr.TaskDocument{}), graph.Set("review_checklist", []cr.ChecklistItem{}))
		res, err := b.g.Invoke(context.Background(), b.cfg, in)
		if err != nil {
			t.Fatal(err)
		}
		s := res.State
		if !s.IsComplete || !strings.Contains(s.SummaryNotes, "审查完成") || s.Error != "未找到主文档" {
			t.Errorf("is_complete %v, summary %q, error %q", s.IsComplete, s.SummaryNotes, s.Error)
		}
		if got, want := b.visited(t), []string{"init", "parse_document", "summarize"}; !slices.Equal(got, want) {
			t.Errorf("path = %v, want %v", got, want)
		}
	})
}

const advanceClause = `14.2 Advance Payment
The Employer shall make an advance payment of 10% of the Contract Price within 14 days after the Commencement Date. The Contractor shall not be required to provide an advance payment guarantee.
`

// test_single_clause_no_interrupt.
func TestSingleClause(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	res := b.run(t, contract("Employer", advanceClause, cr.ChecklistItem{ClauseID: "14.2", ClauseName: "预付款", Priority: "high",
		RequiredSkills: []string{"get_clause_context"}, Description: "核查预付款条款"}))
	s := res.State
	if !res.Done() || !s.IsComplete {
		t.Fatalf("did not complete: next %v", res.Next)
	}
	if s.CurrentClauseIndex != 1 {
		t.Errorf("current_clause_index = %d, want 1", s.CurrentClauseIndex)
	}
	f, ok := s.Findings["14.2"]
	if !ok || !f.Completed {
		t.Fatalf("findings[14.2] = %+v", s.Findings)
	}
	if got := rulesOf(f.Risks); !slices.Equal(got, []string{cr.RuleAdvanceGuarantee}) {
		t.Errorf("14.2 risks = %v, want the missing guarantee", got)
	}
	if r := f.Risks[0]; r.Excerpt != "not be required to provide an advance payment guarantee" || s.CurrentClauseText[r.Span.Start:r.Span.End] != r.Excerpt {
		t.Errorf("risk cites %q at %+v", r.Excerpt, r.Span)
	}
	if len(s.AllDiffs) != 1 || !strings.Contains(s.AllDiffs[0].Suggested, "shall provide an advance payment guarantee") {
		t.Errorf("all_diffs = %+v", s.AllDiffs)
	}
	want := append(append([]string{"init", "parse_document"}, clauseSteps(true)...), "summarize")
	if got := b.visited(t); !slices.Equal(got, want) {
		t.Errorf("path = %v, want %v", got, want)
	}
}

const capContract = `1.1 Definitions
"Contract Price" means USD 20,000,000, subject to adjustment under the Contract.
17.6 Limitation of Liability
The total liability of the Employer to the Contractor shall not exceed 10% of the Contract Price. The Contractor shall give notice of any claim within 14 days.
`

// test_interrupt_and_resume: a pause before human_approval, the decisions
// injected with update_state, the run continued to save_clause.
func TestInterruptAndResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	item := cr.ChecklistItem{ClauseID: "17.6", ClauseName: "责任限制", Priority: "critical", Description: "核查赔偿上限"}

	t.Run("decisions per diff", func(t *testing.T) {
		t.Parallel()
		b := setup(t, false)
		res := b.run(t, contract("Contractor", capContract, item))
		if res.Done() || len(res.Interrupts) != 1 || res.Interrupts[0].Node != "human_approval" || res.Interrupts[0].When != graph.InterruptBefore {
			t.Fatalf("did not pause before human_approval: next %v, interrupts %+v", res.Next, res.Interrupts)
		}
		snap := b.snapshot(t)
		if !slices.Equal(snap.Next, []string{"human_approval"}) {
			t.Fatalf("snapshot next = %v", snap.Next)
		}
		if clause, ok := cr.Paused(snap); !ok || clause != "17.6" {
			t.Fatalf("Paused = %q, %v", clause, ok)
		}
		pending := cr.PendingDiffs(snap.Values)
		if len(pending) != 2 {
			t.Fatalf("pending diffs = %+v, want the cap and the claim notice", pending)
		}
		keep, reject := pending[0], pending[1]
		if keep.Original != "10% of the Contract Price" || keep.Suggested != "100% of the Contract Price" || reject.Original != "within 14 days" {
			t.Fatalf("pending = %q→%q, %q→%q", keep.Original, keep.Suggested, reject.Original, reject.Suggested)
		}
		res = b.decide(t, cr.Decisions{ClauseID: "17.6", Reviewer: "Li Na", Items: map[string]cr.Decision{
			keep.DiffID: {Verdict: cr.Approve}, reject.DiffID: {Verdict: cr.Reject}}})
		s := res.State
		if !res.Done() || !s.IsComplete {
			t.Fatalf("continue did not complete: next %v", res.Next)
		}
		if got := diffIDs(s.AllDiffs); !slices.Equal(got, []string{keep.DiffID}) {
			t.Errorf("all_diffs = %v, want only the approved %s", got, keep.DiffID)
		}
		if d := s.AllDiffs[0]; d.DecidedBy != "Li Na" || !d.DecidedAt.Equal(decidedAt) || d.Status != cr.StatusApproved {
			t.Errorf("approved diff = %+v", d)
		}
		if f := s.Findings["17.6"]; len(f.Rejected) != 1 || f.Rejected[0].DiffID != reject.DiffID || len(f.Risks) != 2 {
			t.Errorf("findings[17.6] = %+v", f)
		}
		if s.UserDecisions[reject.DiffID] != cr.Reject {
			t.Errorf("user_decisions = %v", s.UserDecisions)
		}
		want := append(append([]string{"init", "parse_document"}, clauseSteps(true)...), "summarize")
		if got := b.visited(t); !slices.Equal(got, want) {
			t.Errorf("path = %v, want %v", got, want)
		}
		if !strings.Contains(s.SummaryNotes, "2 changes proposed, 1 approved, 1 rejected") {
			t.Errorf("summary_notes = %q", s.SummaryNotes)
		}
	})

	t.Run("the seed's update: empty decisions approve", func(t *testing.T) {
		t.Parallel()
		b := setup(t, false)
		b.run(t, contract("Contractor", capContract, item))
		if _, err := b.g.UpdateState(ctx, b.cfg, []graph.Write{graph.Set("user_decisions", map[string]string{}),
			graph.Set("user_feedback", map[string]string{})}, ""); err != nil {
			t.Fatalf("update_state: %v", err)
		}
		res, err := b.g.Invoke(ctx, b.cfg, graph.Command{})
		if err != nil {
			t.Fatal(err)
		}
		if s := res.State; !s.IsComplete || len(s.AllDiffs) != 2 || s.AllDiffs[0].DecidedAt != decidedAt || s.AllDiffs[0].DecidedBy != "reviewer" {
			t.Errorf("is_complete %v, all_diffs %+v", s.IsComplete, s.AllDiffs)
		}
	})
}

const threeClauses = `4.1 Contractor's General Obligations
The Contractor shall design, execute and complete the Works. The Contractor shall indemnify the Employer against any and all claims arising from the Works.
14.2 Advance Payment
The Employer shall make an advance payment of 10% of the Contract Price.
20.1 Contractor's Claims
The Contractor shall give notice of a claim within 14 days after becoming aware of the event.
`

// test_multiple_clauses: the loop over three clauses.
func TestMultipleClauses(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	res := b.run(t, contract("承包商", threeClauses,
		cr.ChecklistItem{ClauseID: "4.1", ClauseName: "一般义务", Priority: "critical"},
		cr.ChecklistItem{ClauseID: "14.2", ClauseName: "预付款", Priority: "high"},
		cr.ChecklistItem{ClauseID: "20.1", ClauseName: "索赔", Priority: "critical"}))
	s := res.State
	if !res.Done() || !s.IsComplete {
		t.Fatalf("did not complete")
	}
	if s.CurrentClauseIndex != 3 || len(s.Findings) != 3 {
		t.Fatalf("current_clause_index %d, findings %d; want 3 and 3", s.CurrentClauseIndex, len(s.Findings))
	}
	wantRisks := map[string][]string{"4.1": {cr.RuleUnlimitedIndemnity}, "14.2": {}, "20.1": {cr.RuleClaimNotice}}
	for id, want := range wantRisks {
		if got := rulesOf(s.Findings[id].Risks); !slices.Equal(got, want) {
			t.Errorf("%s risks = %v, want %v (our party is the Contractor: an advance without guarantee is the Employer's risk)", id, got, want)
		}
	}
	// 14.2 has no diffs, so it does not go through human_approval.
	want := []string{"init", "parse_document"}
	want = append(append(append(want, clauseSteps(true)...), clauseSteps(false)...), clauseSteps(true)...)
	if got := b.visited(t); !slices.Equal(got, append(want, "summarize")) {
		t.Errorf("path = %v", got)
	}
}

// A clause with no diffs does not pause; the one with diffs does.
func TestNoDiffsNoPause(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	res := b.run(t, contract("Contractor", threeClauses,
		cr.ChecklistItem{ClauseID: "14.2", ClauseName: "预付款"}, cr.ChecklistItem{ClauseID: "20.1", ClauseName: "索赔"}))
	if res.Done() {
		t.Fatal("did not pause on 20.1")
	}
	snap := b.snapshot(t)
	if clause, _ := cr.Paused(snap); clause != "20.1" || snap.Values.Findings["14.2"].Completed != true {
		t.Fatalf("paused on %q; 14.2 findings %+v", clause, snap.Values.Findings["14.2"])
	}
	res, pauses := b.approveAll(t, res)
	if pauses != 1 || !res.State.IsComplete {
		t.Errorf("pauses %d, complete %v", pauses, res.State.IsComplete)
	}
}

// §8 item 5: a validation failure loops back to clause_generate_diffs; the
// test contract is built so that the first proposal fails ("within 14 days"
// occurs twice) and the redraft, widened to its sentence, passes.
func TestValidationRetryThenPass(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	text := `20.1 Contractor's Claims
The Contractor shall give notice of any claim within 14 days after the event. The Engineer shall answer within 14 days after receiving the notice.
`
	res := b.run(t, contract("Contractor", text, cr.ChecklistItem{ClauseID: "20.1", ClauseName: "索赔"}))
	s := res.State
	path := b.visited(t)
	if n := count(path, cr.NodeGenerateDiffs); n != 2 {
		t.Errorf("clause_generate_diffs ran %d times, want 2 (fail, then pass): %v", n, path)
	}
	if n := count(path, cr.NodeHumanApproval); n != 1 {
		t.Errorf("human_approval ran %d times, want 1", n)
	}
	f := s.Findings["20.1"]
	if f.Retries != 1 || f.SkippedAfterRetries || len(f.Diffs) != 1 {
		t.Fatalf("findings = %+v", f)
	}
	if d := f.Diffs[0]; d.Original != "The Contractor shall give notice of any claim within 14 days after the event." ||
		d.Suggested != "The Contractor shall give notice of any claim within 28 days after the event." {
		t.Errorf("the retry's diff = %q → %q", d.Original, d.Suggested)
	}
}

// Over max_retries, the clause is saved with its risks and no diffs, and
// the summary says so; the next clause starts afresh.
func TestValidationRetriesExhausted(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	text := `20.1 Contractor's Claims
The Contractor shall give notice of any claim within 14 days. The Contractor shall give notice of any claim within 14 days.
20.2 Payment of Claims
The Employer shall pay the Contractor within 90 days after the amount is agreed.
`
	st := contract("Contractor", text, cr.ChecklistItem{ClauseID: "20.1"}, cr.ChecklistItem{ClauseID: "20.2"})
	st.MaxRetries = 3
	res := b.run(t, st)
	if clause, _ := cr.Paused(b.snapshot(t)); clause != "20.2" {
		t.Fatalf("paused on %q, want 20.2 (20.1 skipped without a pause)", clause)
	}
	res, _ = b.approveAll(t, res)
	s := res.State
	path := b.visited(t)
	wantLoop := []string{"init", "parse_document", cr.NodeClauseAnalyze}
	for range st.MaxRetries + 1 {
		wantLoop = append(wantLoop, cr.NodeGenerateDiffs, cr.NodeClauseValidate)
	}
	wantLoop = append(wantLoop, cr.NodeSaveClause)
	if !slices.Equal(path[:len(wantLoop)], wantLoop) {
		t.Errorf("20.1's path = %v, want %v", path[:min(len(path), len(wantLoop))], wantLoop)
	}
	f := s.Findings["20.1"]
	if !f.SkippedAfterRetries || f.Retries != st.MaxRetries || len(f.Diffs) != 0 || len(f.Risks) != 2 {
		t.Errorf("findings[20.1] = %+v, want skipped after %d retries, 2 risks, no diffs", f, st.MaxRetries)
	}
	if g := s.Findings["20.2"]; g.Retries != 0 || len(g.Diffs) != 1 {
		t.Errorf("findings[20.2] = %+v", g)
	}
	if !strings.Contains(s.SummaryNotes, "1 clauses (20.1) were skipped after their changes failed validation 4 times") ||
		!slices.Equal(s.Summary.ClausesSkipped, []string{"20.1"}) {
		t.Errorf("summary = %q, %+v", s.SummaryNotes, s.Summary)
	}
	if len(s.AllActions) != 2 || s.AllActions[0].ClauseID != "20.1" {
		t.Errorf("all_actions = %+v, want the two unanswered 20.1 risks", s.AllActions)
	}
}

// The scratchpad: a later clause uses what an earlier one stated.
func TestScratchpad(t *testing.T) {
	t.Parallel()
	def := cr.ChecklistItem{ClauseID: "1.1", ClauseName: "定义"}
	lim := cr.ChecklistItem{ClauseID: "17.6", ClauseName: "责任限制"}
	text := `1.1 Definitions
"Contractor" means Meridian Engineering Ltd, and its legal successors.
"Contract Price" means USD 20,000,000, subject to adjustment under the Contract.
17.6 Limitation of Liability
The total liability of the Employer shall not exceed 10% of the Contract Price. The liability of the Employer for delay shall not exceed USD 1,000,000.
`
	cases := []struct {
		name      string
		ourParty  string
		checklist []cr.ChecklistItem
		want      []string // in 17.6's risk descriptions
		severity  string   // of the fixed-sum cap
		uses      bool
	}{
		{"1.1 reviewed first", "Contractor", []cr.ChecklistItem{def, lim},
			[]string{"= USD 2,000,000, with the Contract Price of USD 20,000,000 stated in 1.1", "USD 1,000,000, 5% of the Contract Price of USD 20,000,000"}, cr.SeverityHigh, true},
		{"our party by its name in 1.1", "Meridian Engineering Ltd", []cr.ChecklistItem{def, lim},
			[]string{"= USD 2,000,000"}, cr.SeverityHigh, true},
		{"without 1.1", "Contractor", []cr.ChecklistItem{lim},
			[]string{"capped at 10% of the Contract Price: below", "the Contract Price is not known"}, cr.SeverityMedium, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, true)
			res := b.run(t, contract(tc.ourParty, text, tc.checklist...))
			f := res.State.Findings["17.6"]
			if len(f.Risks) != 2 {
				t.Fatalf("17.6 risks = %+v", f.Risks)
			}
			all := f.Risks[0].Description + " | " + f.Risks[1].Description
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("17.6 risks %q lack %q", all, w)
				}
			}
			if f.Risks[1].Severity != tc.severity {
				t.Errorf("fixed-sum cap severity = %s, want %s", f.Risks[1].Severity, tc.severity)
			}
			if got := slices.Equal(f.Risks[0].Uses, []string{"1.1:contract_price"}); got != tc.uses {
				t.Errorf("uses = %v", f.Risks[0].Uses)
			}
		})
	}
	// Reviewed for the Employer, the Employer's own cap is no risk.
	b := setup(t, true)
	res := b.run(t, contract("Employer", text, def, lim))
	if rs := res.State.Findings["17.6"].Risks; len(rs) != 0 {
		t.Errorf("for the Employer, 17.6 risks = %+v, want none", rs)
	}
}

// A diff rejected with feedback goes back once to clause_generate_diffs,
// which re-proposes it from the feedback; the clause pauses again for that
// diff only.
func TestRejectedWithFeedbackReproposed(t *testing.T) {
	t.Parallel()
	text := `20.1 Contractor's Claims
The Contractor shall give notice of a claim within 14 days after the event. The Employer shall pay the Contractor within 90 days after the Statement.
`
	item := cr.ChecklistItem{ClauseID: "20.1", ClauseName: "索赔"}
	cases := []struct {
		name, feedback, want string
		retries              int
	}{
		{"feedback with a number", "Ask for 42 days, as in our standard terms.", "within 42 days", 0},
		{"feedback quoting the wording", `Use "within 35 days of awareness" here.`, "within 35 days of awareness", 0},
		{"feedback that would weaken us", "21 days is enough", "within 42 days", 1}, // 21 < 28 fails validation; the redraft passes
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, false)
			b.run(t, contract("Contractor", text, item))
			first := cr.PendingDiffs(b.snapshot(t).Values)
			if len(first) != 2 || first[0].Original != "within 14 days" {
				t.Fatalf("first pause: %+v", first)
			}
			claim, pay := first[0], first[1]
			res := b.decide(t, cr.Decisions{Items: map[string]cr.Decision{
				claim.DiffID: {Verdict: cr.Reject, Feedback: tc.feedback}, pay.DiffID: {Verdict: cr.Approve}}})
			if res.Done() {
				t.Fatal("no second pause for the re-proposal")
			}
			snap := b.snapshot(t)
			second := cr.PendingDiffs(snap.Values)
			if len(second) != 1 {
				t.Fatalf("second pause pends %d diffs, want only the re-proposal: %+v", len(second), second)
			}
			re := second[0]
			if re.Suggested != tc.want || re.Revises != claim.DiffID || re.Round != 1 || re.Original != "within 14 days" || re.DiffID == claim.DiffID {
				t.Fatalf("re-proposal = %+v", re)
			}
			if snap.Values.ClauseRetryCount != tc.retries {
				t.Errorf("retries in the re-proposal round = %d, want %d", snap.Values.ClauseRetryCount, tc.retries)
			}
			res = b.decide(t, cr.Decisions{Items: map[string]cr.Decision{re.DiffID: {Verdict: cr.Approve}}})
			s := res.State
			if !res.Done() || !slices.Equal(diffIDs(s.AllDiffs), []string{pay.DiffID, re.DiffID}) {
				t.Fatalf("all_diffs = %v, want the payment diff and the re-proposal", diffIDs(s.AllDiffs))
			}
			f := s.Findings["20.1"]
			if len(f.Rejected) != 1 || f.Rejected[0].RevisedBy != re.DiffID || f.Proposed != 3 {
				t.Errorf("findings = %+v", f)
			}
			if n := count(b.visited(t), cr.NodeHumanApproval); n != 2 {
				t.Errorf("human_approval ran %d times, want 2", n)
			}
		})
	}

	t.Run("rejected without feedback: no re-proposal", func(t *testing.T) {
		t.Parallel()
		b := setup(t, false)
		b.run(t, contract("Contractor", text, item))
		first := cr.PendingDiffs(b.snapshot(t).Values)
		res := b.decide(t, cr.Decisions{Items: map[string]cr.Decision{first[0].DiffID: {Verdict: cr.Reject}, first[1].DiffID: {Verdict: cr.Reject}}})
		if !res.Done() || len(res.State.AllDiffs) != 0 || len(res.State.AllActions) != 2 {
			t.Errorf("done %v, all_diffs %d, actions %d", res.Done(), len(res.State.AllDiffs), len(res.State.AllActions))
		}
	})

	t.Run("a re-proposal rejected with feedback is not re-proposed again", func(t *testing.T) {
		t.Parallel()
		b := setup(t, false)
		b.run(t, contract("Contractor", text, item))
		first := cr.PendingDiffs(b.snapshot(t).Values)
		b.decide(t, cr.Decisions{ApproveAll: true, Items: map[string]cr.Decision{first[0].DiffID: {Verdict: cr.Reject, Feedback: "42 days"}}})
		re := cr.PendingDiffs(b.snapshot(t).Values)[0]
		res := b.decide(t, cr.Decisions{Items: map[string]cr.Decision{re.DiffID: {Verdict: cr.Reject, Feedback: "still no"}}})
		if !res.Done() || len(res.State.AllDiffs) != 1 {
			t.Errorf("done %v, all_diffs %+v", res.Done(), res.State.AllDiffs)
		}
	})
}

// Decisions that do not fit the paused clause are refused and change nothing.
func TestDecisionsRefused(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	b.run(t, contract("Contractor", capContract, cr.ChecklistItem{ClauseID: "17.6"}))
	snap := b.snapshot(t)
	pending := cr.PendingDiffs(snap.Values)
	ok := map[string]cr.Decision{pending[0].DiffID: {Verdict: cr.Approve}, pending[1].DiffID: {Verdict: cr.Approve}}
	withExtra := map[string]cr.Decision{"d000000000000": {Verdict: cr.Approve}}
	for k, v := range ok {
		withExtra[k] = v
	}
	cases := []struct {
		name string
		d    cr.Decisions
		want error
	}{
		{"a diff id that does not exist", cr.Decisions{Reviewer: "Li Na", Items: withExtra}, cr.ErrUnknownDiff},
		{"a clause that is not paused", cr.Decisions{Reviewer: "Li Na", ClauseID: "20.1", Items: ok}, cr.ErrNotPaused},
		{"a verdict that is not approve or reject", cr.Decisions{Reviewer: "Li Na", Items: map[string]cr.Decision{pending[0].DiffID: {Verdict: "maybe"}}}, cr.ErrBadDecision},
		{"a pending diff left undecided", cr.Decisions{Reviewer: "Li Na", Items: map[string]cr.Decision{pending[0].DiffID: {Verdict: cr.Approve}}}, cr.ErrBadDecision},
		{"no reviewer", cr.Decisions{Items: ok}, cr.ErrBadDecision},
	}
	for _, tc := range cases {
		_, err := cr.ApplyDecisions(context.Background(), b.g, b.cfg, tc.d)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.want)
		}
		if c, _ := fault.Classify(err); c != fault.Validation {
			t.Errorf("%s: class %s, want validation", tc.name, c)
		}
	}
	if after := b.snapshot(t); after.Checkpoint.ID != snap.Checkpoint.ID {
		t.Errorf("a refused decision moved the thread from %s to %s", snap.Checkpoint.ID, after.Checkpoint.ID)
	}
	// A finished review is not paused either.
	res := b.decide(t, cr.Decisions{Items: ok})
	if !res.Done() {
		t.Fatal("not done")
	}
	if _, err := cr.ApplyDecisions(context.Background(), b.g, b.cfg, cr.Decisions{Reviewer: "Li Na", Items: ok}); !errors.Is(err, cr.ErrNotPaused) {
		t.Errorf("decision on a finished review: err = %v", err)
	}
}

// A start with bad fields is refused field by field.
func TestStartRefused(t *testing.T) {
	t.Parallel()
	st := cr.Start{OurParty: " ", Language: "fr", DomainID: "nec", MaxRetries: 9}
	_, err := st.Writes()
	var fe cr.FieldErrors
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v, want FieldErrors", err)
	}
	for _, f := range []string{"our_party", "language", "domain_id", "max_retries", "documents"} {
		if fe[f] == "" {
			t.Errorf("no error for %s: %v", f, fe)
		}
	}
	if c, _ := fault.Classify(err); c != fault.Validation {
		t.Errorf("class %s", c)
	}
}
