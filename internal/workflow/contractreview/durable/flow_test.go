package durable_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"weft/internal/app"
	"weft/internal/auth"
	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
	cr "weft/internal/workflow/contractreview"
)

// apiState is a thread's state as GET /api/v1/threads/{id}/state answers it.
func (c api) state(thread string) (runner.Status, cr.ReviewGraphState) {
	c.t.Helper()
	code, body := c.call(http.MethodGet, "/api/v1/threads/"+thread+"/state", nil)
	if code != http.StatusOK {
		c.t.Fatalf("state of %s: %d %v", thread, code, body)
	}
	var out struct {
		Job struct {
			Status runner.Status `json:"status"`
		} `json:"job"`
		State struct {
			Values cr.ReviewGraphState `json:"values"`
		} `json:"state"`
	}
	b, _ := json.Marshal(body)
	if err := json.Unmarshal(b, &out); err != nil {
		c.t.Fatal(err)
	}
	return out.Job.Status, out.State.Values
}

// TestReviewThroughTheAPI is seed §7 and §9 on the durable runner, driven through the API as
// a program would: the contract uploaded as a start field, the pause before human_approval
// recorded as the job's waiting_review, per-change decisions injected with update_state
// (user_decisions, user_feedback), a change rejected with feedback re-proposed, the next
// clause, and the summary with its tracked-changes DOCX.
func TestReviewThroughTheAPI(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	pm, rev := k.client(app.DemoTenant, auth.PM), k.client(app.DemoTenant, auth.Reviewer)

	// The workflow is listed with the seed's nodes.
	code, body := pm.call(http.MethodGet, "/api/v1/workflows", nil)
	var nodes []any
	for _, w := range body["workflows"].([]any) {
		if w := w.(map[string]any); w["name"] == cr.Name {
			nodes = w["nodes"].([]any)
		}
	}
	if code != http.StatusOK || len(nodes) != 8 || nodes[0] != "init" || nodes[5] != "human_approval" {
		t.Fatalf("workflows: %d, contract review's nodes %v", code, nodes)
	}

	thread := pm.start("supply_contract.txt", supplyContract(t), map[string]any{cr.FieldOurParty: "Contractor", cr.FieldLanguage: "en",
		cr.FieldDomain: cr.DomainNone, cr.FieldMaxRetries: 2})
	j := k.waitThread(thread, runner.WaitingReview)
	if len(j.Interrupts) != 1 || j.Interrupts[0].Node != cr.NodeHumanApproval || j.Interrupts[0].When != graph.InterruptBefore {
		t.Fatalf("the job waits on %+v, want the pause before human_approval", j.Interrupts)
	}
	status, s := rev.state(thread)
	if status != runner.WaitingReview || s.CurrentClauseID != "14.7" || s.CurrentClauseIndex != 1 || len(s.Findings) != 1 || len(s.ReviewChecklist) != 4 {
		t.Fatalf("first pause: job %s, clause %s (index %d), findings %d, checklist %d", status, s.CurrentClauseID, s.CurrentClauseIndex,
			len(s.Findings), len(s.ReviewChecklist))
	}
	if len(s.PendingDiffs) != 2 || s.PendingDiffs[0].Original != "within 90 days" || s.PendingDiffs[1].Original != "within 14 days" {
		t.Fatalf("pending diffs of 14.7: %+v", s.PendingDiffs)
	}
	pay, claim := s.PendingDiffs[0], s.PendingDiffs[1]

	// Approve one change, reject the other with feedback: written with update_state, the run
	// continues and re-proposes the rejected change from the feedback.
	feedback := "Ask for 42 days, as in our standard terms."
	code, body = rev.decide(thread, reviewerID, map[string]any{"decision": cr.DecisionSubmit, "clause_id": "14.7", "items": map[string]any{
		pay.DiffID: map[string]string{"decision": "approve"}, claim.DiffID: map[string]string{"decision": "reject", "feedback": feedback}}})
	if code != http.StatusAccepted {
		t.Fatalf("decide 14.7: %d %v", code, body)
	}
	k.waitLeft(thread, j.ID)
	k.waitThread(thread, runner.WaitingReview)
	_, s = rev.state(thread)
	if s.UserDecisions[pay.DiffID] != "approve" || s.UserDecisions[claim.DiffID] != "reject" || s.UserFeedback[claim.DiffID] != feedback {
		t.Errorf("injected decisions: user_decisions %v, user_feedback %v", s.UserDecisions, s.UserFeedback)
	}
	if s.CurrentClauseID != "14.7" || len(s.PendingDiffs) != 1 {
		t.Fatalf("after the rejection: clause %s, pending %+v; want the re-proposal on 14.7", s.CurrentClauseID, s.PendingDiffs)
	}
	re := s.PendingDiffs[0]
	if re.Round != 1 || re.Revises != claim.DiffID || re.Suggested != "within 42 days" || re.Feedback != feedback || re.DiffID == claim.DiffID {
		t.Fatalf("re-proposal = %+v", re)
	}
	if code, body = rev.decide(thread, reviewerID, map[string]any{"items": map[string]any{re.DiffID: map[string]string{"decision": "approve"}}}); code != http.StatusAccepted {
		t.Fatalf("approve the re-proposal: %d %v", code, body)
	}

	// The next clause: 17.6's cap, sized with the Contract Price of 1.1 (the scratchpad).
	k.waitLeft(thread, j.ID)
	k.waitThread(thread, runner.WaitingReview)
	_, s = rev.state(thread)
	if s.CurrentClauseID != "17.6" || s.CurrentClauseIndex != 2 || len(s.PendingDiffs) != 1 || len(s.CurrentRisks) != 1 ||
		!slices.Equal(s.CurrentRisks[0].Uses, []string{"1.1:contract_price"}) {
		t.Fatalf("second clause: %s (index %d), pending %+v, risks %+v", s.CurrentClauseID, s.CurrentClauseIndex, s.PendingDiffs, s.CurrentRisks)
	}
	capDiff := s.PendingDiffs[0]
	if n := k.approveRest(rev, thread); n != 1 {
		t.Errorf("approved %d more pauses, want 1 (17.6)", n)
	}

	// The summary.
	status, s = rev.state(thread)
	if status != runner.Succeeded || !s.IsComplete || s.CurrentClauseIndex != 4 || len(s.Findings) != 4 {
		t.Fatalf("end: job %s, complete %v, index %d, findings %d", status, s.IsComplete, s.CurrentClauseIndex, len(s.Findings))
	}
	if got, want := diffIDs(s.AllDiffs), []string{pay.DiffID, re.DiffID, capDiff.DiffID}; !slices.Equal(got, want) {
		t.Errorf("all_diffs = %v, want %v (approved only, each once)", got, want)
	}
	for _, d := range s.AllDiffs {
		if d.DecidedBy != reviewerName || d.DecidedAt.IsZero() {
			t.Errorf("diff %s decided by %q at %v, want %s", d.DiffID, d.DecidedBy, d.DecidedAt, reviewerName)
		}
	}
	if !has(s.SummaryNotes, "Review complete. 4 clauses reviewed") || !has(s.SummaryNotes, "4 changes proposed, 3 approved, 1 rejected") {
		t.Errorf("summary_notes = %q", s.SummaryNotes)
	}
	path := k.visited(thread)
	if count(path, cr.NodeClauseAnalyze) != 4 || count(path, cr.NodeHumanApproval) != 3 || count(path, cr.NodeSummarize) != 1 {
		t.Errorf("path = %v: want each clause analysed once, three approvals, one summary", path)
	}
	ds, err := k.app.Jobs.ReviewDecisions(context.Background(), app.DemoTenant, j.ID)
	if err != nil || len(ds) != 3 {
		t.Errorf("recorded decisions: %d (%v), want 3", len(ds), err)
	}

	// Its files: the DOCX with real tracked changes by the reviewer, and the HTML redline.
	code, body = pm.call(http.MethodGet, "/api/v1/threads/"+thread+"/artifacts", nil)
	var keys []string
	for _, a := range body["artifacts"].([]any) {
		keys = append(keys, a.(map[string]any)["key"].(string))
	}
	slices.Sort(keys)
	if code != http.StatusOK || !slices.Equal(keys, []string{"redline.docx", "redline.html"}) {
		t.Fatalf("artifacts: %d %v", code, keys)
	}
	docx := download(t, pm, thread, "redline.docx")
	for _, want := range []string{`<w:ins w:id=`, `w:author="Ravi Rao"`, `<w:delText xml:space="preserve">90</w:delText>`,
		`<w:t xml:space="preserve">42</w:t>`} {
		if !strings.Contains(docx, want) {
			t.Errorf("word/document.xml lacks %s", want)
		}
	}
	if page := download(t, pm, thread, "redline.html"); !has(page, "<del") || !has(page, "<ins") {
		t.Errorf("the HTML redline marks no change")
	}
}

// download reads an artifact; a .docx is unzipped to its word/document.xml.
func download(t *testing.T, c api, thread, key string) string {
	t.Helper()
	code, body, h := c.do(http.MethodGet, "/api/v1/threads/"+thread+"/artifacts/"+key, nil)
	raw, _ := body["raw"].(string)
	if code != http.StatusOK || !strings.HasPrefix(h.Get("Content-Security-Policy"), "sandbox") {
		t.Fatalf("download %s: %d, CSP %q", key, code, h.Get("Content-Security-Policy"))
	}
	if !strings.HasSuffix(key, ".docx") {
		return raw
	}
	zr, err := zip.NewReader(bytes.NewReader([]byte(raw)), int64(len(raw)))
	if err != nil {
		t.Fatalf("%s is not a zip: %v", key, err)
	}
	for _, f := range zr.File {
		if f.Name == "word/document.xml" {
			rc, _ := f.Open()
			b, _ := io.ReadAll(rc)
			rc.Close()
			return string(b)
		}
	}
	t.Fatalf("%s has no word/document.xml", key)
	return ""
}

// The seed's §9 tests, each a review started through the API and run by the durable runner
// on PostgreSQL (the seed's checklists become contracts with those clauses: its nodes were
// stubs, ours read the contract).
func TestSeedTestsOnTheDurableRunner(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	pm, rev := k.client(app.DemoTenant, auth.PM), k.client(app.DemoTenant, auth.Reviewer)
	start := func(t *testing.T, text, party string, retries int) string {
		return pm.start("contract.txt", []byte(text), map[string]any{cr.FieldOurParty: party, cr.FieldMaxRetries: retries})
	}
	clauseSteps := func(approval bool) []string {
		s := []string{cr.NodeClauseAnalyze, cr.NodeGenerateDiffs, cr.NodeClauseValidate}
		if approval {
			s = append(s, cr.NodeHumanApproval)
		}
		return append(s, cr.NodeSaveClause)
	}

	t.Run("test_empty_checklist", func(t *testing.T) {
		t.Parallel()
		thread := start(t, "This letter confirms our order of ten pumps.\nPayment on delivery.\n", "Contractor", 2)
		k.waitThread(thread, runner.Succeeded)
		s := k.snapshot(thread).Values
		if !s.IsComplete || !strings.HasPrefix(s.SummaryNotes, "Review complete. 0 clauses reviewed") {
			t.Errorf("is_complete %v, summary_notes %q", s.IsComplete, s.SummaryNotes)
		}
		if got, want := k.visited(thread), []string{"init", "parse_document", "summarize"}; !slices.Equal(got, want) {
			t.Errorf("path = %v, want %v", got, want)
		}
	})

	t.Run("test_single_clause", func(t *testing.T) {
		t.Parallel()
		thread := start(t, "14.2 Advance Payment\nThe Employer shall make an advance payment of 10% of the Contract Price within 14 days. "+
			"The Contractor shall not be required to provide an advance payment guarantee.\n", "Employer", 2)
		if n := k.approveRest(rev, thread); n != 1 {
			t.Errorf("pauses = %d, want 1", n)
		}
		s := k.snapshot(thread).Values
		if s.CurrentClauseIndex != 1 || !s.Findings["14.2"].Completed || len(s.AllDiffs) != 1 {
			t.Errorf("current_clause_index %d, findings %v, all_diffs %d", s.CurrentClauseIndex, s.Findings, len(s.AllDiffs))
		}
	})

	t.Run("test_interrupt_and_resume", func(t *testing.T) {
		t.Parallel()
		thread := start(t, `1.1 Definitions
"Contract Price" means USD 20,000,000, subject to adjustment under the Contract.
17.6 Limitation of Liability
The total liability of the Employer to the Contractor shall not exceed 10% of the Contract Price. The Contractor shall give notice of any claim within 14 days.
`, "Contractor", 2)
		j := k.waitThread(thread, runner.WaitingReview)
		snap := k.snapshot(thread)
		if !slices.Equal(snap.Next, []string{cr.NodeHumanApproval}) || len(snap.Interrupts) != 1 || snap.Interrupts[0].When != graph.InterruptBefore ||
			j.Interrupts[0].ID != snap.Interrupts[0].ID {
			t.Fatalf("next %v, interrupts %+v (job's %+v)", snap.Next, snap.Interrupts, j.Interrupts)
		}
		pending := snap.Values.PendingDiffs
		if len(pending) != 2 {
			t.Fatalf("pending = %+v", pending)
		}
		code, body := rev.decide(thread, reviewerID, map[string]any{"items": map[string]any{
			pending[0].DiffID: map[string]string{"decision": "approve"}, pending[1].DiffID: map[string]string{"decision": "reject"}}})
		if code != http.StatusAccepted {
			t.Fatalf("decide: %d %v", code, body)
		}
		k.waitThread(thread, runner.Succeeded)
		s := k.snapshot(thread).Values
		if !s.IsComplete || !slices.Equal(diffIDs(s.AllDiffs), []string{pending[0].DiffID}) || len(s.Findings["17.6"].Rejected) != 1 {
			t.Errorf("complete %v, all_diffs %v, 17.6 %+v", s.IsComplete, diffIDs(s.AllDiffs), s.Findings["17.6"])
		}
		want := append(append([]string{"init", "parse_document"}, append(clauseSteps(false), clauseSteps(true)...)...), "summarize")
		if got := k.visited(thread); !slices.Equal(got, want) {
			t.Errorf("path = %v, want %v", got, want)
		}
	})

	t.Run("test_multiple_clauses", func(t *testing.T) {
		t.Parallel()
		thread := start(t, `4.1 Contractor's General Obligations
The Contractor shall design, execute and complete the Works. The Contractor shall indemnify the Employer against any and all claims arising from the Works.
14.2 Advance Payment
The Employer shall make an advance payment of 10% of the Contract Price.
20.1 Contractor's Claims
The Contractor shall give notice of a claim within 14 days after becoming aware of the event.
`, "承包商", 2)
		if n := k.approveRest(rev, thread); n != 2 {
			t.Errorf("pauses = %d, want 2 (4.1 and 20.1; 14.2 has nothing to change)", n)
		}
		s := k.snapshot(thread).Values
		if s.CurrentClauseIndex != 3 || len(s.Findings) != 3 {
			t.Errorf("current_clause_index %d, findings %d; want 3 and 3", s.CurrentClauseIndex, len(s.Findings))
		}
	})

	// route_validation: a failing validation loops to clause_generate_diffs up to max_retries,
	// then goes to save_clause (the clause kept with its risks and no diffs, without a pause).
	retried := `20.1 Contractor's Claims
The Contractor shall give notice of any claim within 14 days. The Contractor shall give notice of any claim within 14 days.
20.2 Payment of Claims
The Employer shall pay the Contractor within 90 days after the amount is agreed.
`
	for _, tc := range []struct{ retries, pairs int }{{3, 4}, {0, 1}} {
		t.Run(fmt.Sprintf("test_validation_retries_%d", tc.retries), func(t *testing.T) {
			t.Parallel()
			thread := start(t, retried, "Contractor", tc.retries)
			k.waitThread(thread, runner.WaitingReview)
			if s := k.snapshot(thread).Values; s.CurrentClauseID != "20.2" || !s.Findings["20.1"].SkippedAfterRetries || s.MaxRetries != tc.retries {
				t.Fatalf("paused on %s, 20.1 %+v, max_retries %d", s.CurrentClauseID, s.Findings["20.1"], s.MaxRetries)
			}
			k.approveRest(rev, thread)
			s := k.snapshot(thread).Values
			path := k.visited(thread)
			if got := count(path, cr.NodeGenerateDiffs); got != tc.pairs+1 { // 20.1's attempts, and 20.2's one
				t.Errorf("clause_generate_diffs ran %d times, want %d: %v", got, tc.pairs+1, path)
			}
			if !slices.Equal(s.Summary.ClausesSkipped, []string{"20.1"}) || !has(s.SummaryNotes, "(20.1) were skipped") {
				t.Errorf("summary %+v, notes %q", s.Summary, s.SummaryNotes)
			}
		})
	}
}

// TestDemoStartsAReview: weft demo starts one review of the English sample contract, which
// waits for approval, with both sample contracts as files of its thread.
func TestDemoStartsAReview(t *testing.T) {
	t.Parallel()
	k := open(t, pgtest.URL(t), nil, true)
	ctx := context.Background()
	if _, err := k.app.SeedDemoAll(ctx, k.auth); err != nil {
		t.Fatal(err)
	}
	jobs, _, err := k.app.Jobs.ListJobs(ctx, postgres.JobFilter{TenantID: app.DemoTenant, Workflow: cr.Name}, postgres.Cursor{}, 10)
	if err != nil || len(jobs) != 1 {
		t.Fatalf("contract review jobs: %d (%v), want 1", len(jobs), err)
	}
	thread := jobs[0].ThreadID
	k.waitThread(thread, runner.WaitingReview)
	s := k.snapshot(thread).Values
	if s.Language != "en" || s.DomainID != cr.DomainFIDIC || s.CurrentClauseID != "4.1" || len(s.PendingDiffs) != 1 {
		t.Errorf("the demo review: language %s, domain %s, paused on %s with %d changes", s.Language, s.DomainID, s.CurrentClauseID, len(s.PendingDiffs))
	}
	arts, err := k.app.Artifacts.List(ctx, app.DemoTenant, thread)
	var keys []string
	for _, a := range arts {
		keys = append(keys, a.Key)
	}
	if err != nil || !slices.Equal(keys, []string{"samples/construction_zh.txt", "samples/epc_silver_book_en.txt"}) {
		t.Errorf("sample files: %v (%v)", keys, err)
	}
}
