package bideval_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/llm"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
	"weft/internal/workflow/bideval"
	"weft/internal/workflow/bideval/bidevalpg"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// flakyLLM fails its first calls with the given error, then delegates.
type flakyLLM struct {
	llm.Provider
	fails int32
	err   error
	calls atomic.Int32
}

func (f *flakyLLM) ScoreCriteria(ctx context.Context, req llm.ScoreRequest) (llm.ScoreResult, error) {
	if f.calls.Add(1) <= f.fails {
		return llm.ScoreResult{}, f.err
	}
	return f.Provider.ScoreCriteria(ctx, req)
}

type fixture struct {
	g        *graph.Graph[bideval.State]
	ev       *bidevalpg.Store
	demo     bideval.DemoTenant
	mu       sync.Mutex
	failures []bideval.Failure
}

func setup(t *testing.T, provider llm.Provider) *fixture {
	t.Helper()
	d := pgtest.DB(t)
	fx := &fixture{ev: bidevalpg.New(d), demo: bideval.Demo("demo", "Demo Procurement")}
	if _, err := fx.ev.SeedDemo(context.Background(), fx.demo); err != nil {
		t.Fatal(err)
	}
	g, err := bideval.New(bideval.Deps{
		Data: fx.ev, LLM: provider, Checkpointer: postgres.NewCheckpointer(d),
		IssueToken: func(_ context.Context, interruptID string) (string, error) { return "rt_for_" + interruptID[:8], nil },
		RecordFailure: func(_ context.Context, f bideval.Failure) (string, error) {
			fx.mu.Lock()
			defer fx.mu.Unlock()
			fx.failures = append(fx.failures, f)
			if f.Class.Retryable() {
				return "retry", nil
			}
			return "dlq", nil
		},
		ScoreRetry: &graph.RetryPolicy{InitialInterval: time.Millisecond, MaxAttempts: 3,
			RetryOn: func(err error) bool { c, _ := fault.Classify(err); return c == fault.Transient }},
	})
	if err != nil {
		t.Fatal(err)
	}
	fx.g = g
	return fx
}

func (fx *fixture) run(t *testing.T, supplier string, in graph.Command) graph.Result[bideval.State] {
	t.Helper()
	id := "ev_demo-" + supplier
	if len(in.Update) == 0 && in.Resume == nil {
		in = graph.Update(graph.Set("tenant_id", "demo"), graph.Set("evaluation_id", id), graph.Set("thread_id", id), graph.Set("trace_id", "tr-"+supplier))
	}
	res, err := fx.g.Invoke(context.Background(), graph.Config{ThreadID: id}, in)
	if err != nil {
		t.Fatalf("run %s: %v", supplier, err)
	}
	return res
}

func TestDemoSuppliersPassReviewDisqualifyAndFail(t *testing.T) {
	t.Parallel()
	fx := setup(t, llm.NewOffline())

	strong := fx.run(t, "northwind", graph.Command{})
	if !strong.Done() || strong.State.Status != bideval.StatusCompleted || strong.State.RequiresHumanReview {
		t.Fatalf("Northwind: status %q, review %v %v, next %v", strong.State.Status, strong.State.RequiresHumanReview, strong.State.ReviewReasons, strong.Next)
	}
	rep := strong.State.ReportPayload
	if rep == nil || rep.Outcome != "passed" || rep.TotalScore < 80 || !rep.ScoredOffline || rep.RulePackVersion != "dc-net-2026.1" {
		t.Fatalf("Northwind report = %+v", rep)
	}
	for _, r := range rep.RuleResults {
		if !r.Passed || len(r.ChunkIDs) == 0 {
			t.Errorf("Northwind rule %s: %+v", r.RuleID, r)
		}
	}
	for _, c := range rep.Criteria {
		if len(c.Citations) == 0 || !strings.Contains(c.Explanation, "[") {
			t.Errorf("criterion %s has no cited evidence: %+v", c.CriterionID, c)
		}
	}
	saved, err := fx.ev.Evaluation(context.Background(), "demo", "ev_demo-northwind")
	if err != nil || saved.Status != "completed" || saved.ReportVersion != 1 || saved.TotalScore == nil {
		t.Fatalf("evaluation row after persist_result: %+v %v", saved, err)
	}

	review := fx.run(t, "bluewater", graph.Command{})
	if len(review.Interrupts) != 1 || review.Interrupts[0].Node != bideval.NodeHumanReview {
		t.Fatalf("Bluewater: interrupts %+v, state reasons %v", review.Interrupts, review.State.ReviewReasons)
	}
	var payload map[string]any
	if err := json.Unmarshal(review.Interrupts[0].Value, &payload); err != nil {
		t.Fatal(err)
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range payload {
			if !yield(k) {
				return
			}
		}
	})
	if !slices.Equal(keys, []string{"evaluation_id", "reasons", "resume_token", "suggested_actions", "type"}) || payload["type"] != "human_review" ||
		!strings.HasPrefix(payload["resume_token"].(string), "rt_") {
		t.Fatalf("interrupt payload is not seed §7.1: %v", payload)
	}
	t.Logf("Northwind total %.2f confidence %.3f coverage %.3f; Bluewater total %.2f confidence %.3f coverage %.3f reasons %v",
		strong.State.TotalScore, strong.State.Confidence, strong.State.CitationCoverage,
		review.State.TotalScore, review.State.Confidence, review.State.CitationCoverage, review.State.ReviewReasons)
	if !slices.Contains(review.State.ReviewReasons, "low_confidence") {
		t.Fatalf("Bluewater reasons = %v, want low_confidence", review.State.ReviewReasons)
	}

	// Crestline's price is over budget, a disqualifying hard rule: the evaluation completes
	// with outcome disqualified, its report naming the rule, what was found and the evidence,
	// not scored and not ranked; nothing goes to the dead-letter queue.
	dq := fx.run(t, "crestline", graph.Command{})
	if !dq.Done() || dq.State.Status != bideval.StatusDisqualified || len(dq.State.Errors) != 0 || len(dq.State.CriteriaScores) != 0 {
		t.Fatalf("Crestline: status %q, errors %+v, scores %+v", dq.State.Status, dq.State.Errors, dq.State.CriteriaScores)
	}
	rep = dq.State.ReportPayload
	if rep == nil || rep.Outcome != bideval.OutcomeDisqualified || !slices.Equal(rep.DisqualifiedBy, []string{"R2"}) || rep.Rank != 0 {
		t.Fatalf("Crestline report = %+v", rep)
	}
	for _, e := range rep.Ranking {
		if e.EvaluationID == "ev_demo-crestline" {
			t.Fatalf("a disqualified bid is ranked: %+v", rep.Ranking)
		}
	}
	r2 := bideval.Disqualifying(rep.RuleResults)
	if len(r2) != 1 || r2[0].Value != "1,350,000" || len(r2[0].ChunkIDs) == 0 || len(rep.Citations) == 0 {
		t.Fatalf("Crestline's failing rule (the Chinese bid price 135 万元 must be read as 1,350,000, with its evidence): %+v, citations %d", r2, len(rep.Citations))
	}
	if saved, err := fx.ev.Evaluation(context.Background(), "demo", "ev_demo-crestline"); err != nil || saved.Status != "completed" || saved.Outcome != bideval.OutcomeDisqualified {
		t.Fatalf("Crestline's evaluation row: %+v %v", saved, err)
	}
	if len(fx.failures) != 0 {
		t.Fatalf("a disqualification reached retry_or_dlq: %+v", fx.failures)
	}

	// Harbor Systems has no bid documents: a failure an operator acts on, to the DLQ.
	failed := fx.run(t, "harbor", graph.Command{})
	if !failed.Done() || failed.State.Status != bideval.StatusFailed || len(failed.State.Errors) != 1 {
		t.Fatalf("Harbor: %+v", failed.State)
	}
	e := failed.State.Errors[0]
	if e.Node != bideval.NodeRetrieveEvidence || e.Class != "validation" || e.Code != bideval.CodeBidNoDocuments || !strings.Contains(e.Message, "Harbor Systems has no bid documents") {
		t.Fatalf("Harbor error = %+v", e)
	}
	if len(fx.failures) != 1 || fx.failures[0].Class != fault.Validation || fx.failures[0].CheckpointID == "" {
		t.Fatalf("retry_or_dlq recorded %+v", fx.failures)
	}

	// The reviewer approves; the report records the decision. This approval also carries
	// scores, as the API accepted before ValidateDecision refused them: the node drops them
	// (they never counted) rather than failing a resume recorded then.
	approved := fx.run(t, "bluewater", graph.Resume(bideval.Decision{Decision: "approve", Comment: "证据充分，允许继续", Editor: bideval.Editor{ReviewerID: "u_rev"},
		Scores: map[string]float64{"C1": 99}}))
	if !approved.Done() || approved.State.ReportPayload.Outcome != "approved" || approved.State.ReportPayload.ReviewerID != "u_rev" ||
		approved.State.ReportPayload.Comment != "证据充分，允许继续" || approved.State.ReportPayload.Rank != 2 {
		t.Fatalf("after approval: %+v", approved.State.ReportPayload)
	}
	if d := approved.State.HumanDecision; d == nil || len(d.Scores) != 0 {
		t.Fatalf("the recorded approval: %+v", d)
	}
}

func TestEditScoresChangesRanking(t *testing.T) {
	t.Parallel()
	fx := setup(t, llm.NewOffline())
	fx.run(t, "northwind", graph.Command{})
	paused := fx.run(t, "bluewater", graph.Command{})
	if len(paused.Interrupts) != 1 {
		t.Fatalf("bluewater did not pause: %+v", paused)
	}
	// An invalid edit is refused before anything is written.
	if err := bideval.ValidateDecision(bideval.Decision{Decision: "edit_scores", Scores: map[string]float64{"C1": 11}, Editor: bideval.Editor{ReviewerID: "u"}},
		fx.demo.RulePack.Criteria); err == nil {
		t.Fatal("a score above the criterion's maximum was accepted")
	}
	if err := bideval.ValidateDecision(bideval.Decision{Decision: "edit_scores", Scores: map[string]float64{"C1": 5.55}, Editor: bideval.Editor{ReviewerID: "u"}},
		fx.demo.RulePack.Criteria); err == nil || !strings.Contains(err.Error(), "steps of 0.1") {
		t.Fatalf("a score off the 0.1 step: %v", err)
	}
	if err := bideval.ValidateDecision(bideval.Decision{Decision: "reject", Comment: "  ", Editor: bideval.Editor{ReviewerID: "u"}},
		fx.demo.RulePack.Criteria); err == nil || !strings.Contains(err.Error(), "reject needs a comment") {
		t.Fatalf("a reject without a comment: %v", err)
	}
	// Scores go with edit_scores only: with approve or reject they would be recorded in the
	// decision without counting.
	for kind, want := range map[string]string{"approve": "approve keeps the model's scores", "reject": "reject records no scores"} {
		if err := bideval.ValidateDecision(bideval.Decision{Decision: kind, Comment: "why", Scores: map[string]float64{"C1": 3},
			Editor: bideval.Editor{ReviewerID: "u"}}, fx.demo.RulePack.Criteria); err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s with scores: %v", kind, err)
		}
	}
	edited := fx.run(t, "bluewater", graph.Resume(bideval.Decision{Decision: "edit_scores", Comment: "site visit confirmed the design",
		Editor: bideval.Editor{ReviewerID: "u_rev"}, Scores: map[string]float64{"C1": 10, "C2": 10, "C3": 10, "C4": 10}}))
	rep := edited.State.ReportPayload
	if rep.Outcome != "scores_edited" || rep.TotalScore != 100 || rep.Rank != 1 || rep.Ranking[0].Supplier != "Bluewater Systems" || rep.Ranking[1].Supplier != "Northwind Networks" {
		t.Fatalf("edited report: outcome %s total %v rank %d ranking %+v", rep.Outcome, rep.TotalScore, rep.Rank, rep.Ranking)
	}
	for _, c := range rep.Criteria {
		if !c.Edited {
			t.Errorf("criterion %s not marked edited", c.CriterionID)
		}
	}
}

func TestTransientLLMErrorIsRetriedThenSucceeds(t *testing.T) {
	t.Parallel()
	p := &flakyLLM{Provider: llm.NewOffline(), fails: 2, err: fault.New(fault.Transient, fault.CodeLLMTransient, "503 from the model server")}
	fx := setup(t, p)
	var attempts int
	for ev, err := range fx.g.Stream(context.Background(), graph.Config{ThreadID: "ev_demo-northwind"},
		graph.Update(graph.Set("tenant_id", "demo"), graph.Set("evaluation_id", "ev_demo-northwind"), graph.Set("thread_id", "ev_demo-northwind")), graph.ModeTasks) {
		if err != nil {
			t.Fatal(err)
		}
		if r, ok := ev.Data.(graph.TaskResult); ok && r.Node == bideval.NodeScoreWithLLM {
			attempts = r.Attempts
		}
		if ev.Kind == graph.KindDone && !ev.Data.(graph.Result[bideval.State]).Done() {
			t.Fatal("run did not finish")
		}
	}
	if p.calls.Load() != 3 || attempts != 3 || len(fx.failures) != 0 {
		t.Fatalf("provider called %d times, task attempts %d, failures %v; want 3, 3 and none", p.calls.Load(), attempts, fx.failures)
	}
}

func TestPermanentLLMErrorGoesToDLQ(t *testing.T) {
	t.Parallel()
	p := &flakyLLM{Provider: llm.NewOffline(), fails: 100, err: fault.New(fault.Permanent, fault.CodeLLMPermanent, "401: invalid API key")}
	fx := setup(t, p)
	res := fx.run(t, "northwind", graph.Command{})
	if p.calls.Load() != 1 {
		t.Fatalf("a permanent error was retried: %d calls", p.calls.Load())
	}
	if res.State.Status != bideval.StatusFailed || len(fx.failures) != 1 || fx.failures[0].Code != fault.CodeLLMPermanent || fx.failures[0].Node != bideval.NodeScoreWithLLM {
		t.Fatalf("state %q, failures %+v", res.State.Status, fx.failures)
	}
}

func TestWorkflowStateShape(t *testing.T) {
	t.Parallel()
	fx := setup(t, llm.NewOffline())
	res := fx.run(t, "northwind", graph.Command{})
	snap, err := fx.g.GetState(context.Background(), graph.Config{ThreadID: "ev_demo-northwind"})
	if err != nil {
		t.Fatal(err)
	}
	v := bideval.View(snap.Values, snap.Checkpoint.ID, bideval.JobView{Status: "succeeded", Errors: []bideval.ViewError{
		{At: time.Now(), Class: "transient", Code: "LLM_TRANSIENT", Message: "first attempt failed"}}})
	b, _ := json.Marshal(v)
	var m map[string]map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"identity":  {"tenant_id", "project_id", "evaluation_id", "supplier_id"},
		"trace":     {"trace_id", "thread_id", "checkpoint_id"},
		"inputs":    {"query_bundle", "rule_pack_version"},
		"retrieval": {"retrieved_chunks", "evidence_bundle"},
		"scoring":   {"criteria_scores", "total_score", "confidence", "citation_coverage"},
		"review":    {"requires_human_review", "human_review_payload", "human_decision", "resume_token"},
		"output":    {"report_payload", "status"},
		"runtime":   {"retry_count", "errors"},
	}
	for group, keys := range want {
		for _, k := range keys {
			if _, ok := m[group][k]; !ok {
				t.Errorf("get_workflow_state lacks %s.%s", group, k)
			}
		}
	}
	if v.Trace.CheckpointID != snap.Checkpoint.ID || v.Identity.SupplierID != "demo-northwind" || len(v.Retrieval.RetrievedChunks) == 0 ||
		len(v.Inputs.QueryBundle.Criteria) != 4 || v.Output.Status != "succeeded" || len(v.Runtime.Errors) != 1 || v.Scoring.TotalScore != res.State.TotalScore {
		t.Fatalf("view = %s", b)
	}
}

// A thread run again after each failure holds every failure in its errors[]: the view lists
// each once, the current run's with its job's trace (its job records the same failure), the
// earlier ones with no trace rather than the current run's.
func TestViewListsEveryFailure(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)
	var s bideval.State
	s.TraceID = "trace-3"
	for i := range 3 {
		s.Errors = append(s.Errors, bideval.ErrorEntry{At: at.Add(time.Duration(i) * time.Minute), Node: "apply_rules",
			Class: "business", Code: bideval.CodeBidDisqualified, Message: "disqualified"})
	}
	job := bideval.JobView{Status: "failed", Errors: []bideval.ViewError{{At: at.Add(2*time.Minute + time.Second), Node: "apply_rules",
		Class: "business", Code: bideval.CodeBidDisqualified, Message: "disqualified", TraceID: "trace-3"}}}
	v := bideval.View(s, "", job)
	var got []string
	for _, e := range v.Runtime.Errors {
		got = append(got, e.At.Format("15:04")+" "+e.Source+" "+e.TraceID)
	}
	if want := []string{"03:00 graph ", "03:01 graph ", "03:02 graph trace-3"}; !slices.Equal(got, want) {
		t.Errorf("runtime.errors = %q, want %q", got, want)
	}
	// A job whose failure never reached the state (a crash before its checkpoint) does not
	// take over an earlier run's entry.
	job.Errors[0].At = at.Add(10 * time.Minute)
	got = nil
	for _, e := range bideval.View(s, "", job).Runtime.Errors {
		got = append(got, e.At.Format("15:04")+" "+e.Source+" "+e.TraceID)
	}
	if want := []string{"03:00 graph ", "03:01 graph ", "03:02 graph ", "03:10 job trace-3"}; !slices.Equal(got, want) {
		t.Errorf("runtime.errors with the job's failure only in the job = %q, want %q", got, want)
	}
}

func TestIdentityIsImmutable(t *testing.T) {
	t.Parallel()
	fx := setup(t, llm.NewOffline())
	fx.run(t, "northwind", graph.Command{})
	cfg := graph.Config{ThreadID: "ev_demo-northwind"}
	for _, w := range []graph.Write{graph.Set("tenant_id", "other"), graph.Set("evaluation_id", "ev_x"), graph.Set("thread_id", "t")} {
		_, err := fx.g.UpdateState(context.Background(), cfg, []graph.Write{w}, bideval.NodePersistResult)
		var ie *bideval.ImmutableError
		if !errors.As(err, &ie) {
			t.Fatalf("update of %s: %v, want an ImmutableError", w.Channel, err)
		}
		if class, code := fault.Classify(err); class != fault.Validation || code != fault.CodeImmutableField {
			t.Fatalf("classified %s/%s", class, code)
		}
	}
}

func TestRetrievalFindsChineseAndEnglish(t *testing.T) {
	t.Parallel()
	fx := setup(t, llm.NewOffline())
	ctx := context.Background()
	zh, err := fx.ev.Retrieve(ctx, "demo", "demo-crestline", "投标总价 报价", 3)
	if err != nil || len(zh) == 0 || !strings.Contains(zh[0].Text, "投标总价") {
		t.Fatalf("Chinese query: %+v %v", zh, err)
	}
	en, err := fx.ev.Retrieve(ctx, "demo", "demo-northwind", "disaster recovery site", 3)
	if err != nil || len(en) == 0 || !strings.Contains(strings.ToLower(en[0].Text), "disaster recovery") || en[0].Score <= 0 {
		t.Fatalf("English query: %+v %v", en, err)
	}
	other, err := fx.ev.Retrieve(ctx, "someone-else", "demo-northwind", "disaster recovery", 3)
	if err != nil || len(other) != 0 {
		t.Fatalf("another tenant retrieved %d chunks (%v)", len(other), err)
	}
}

// Equal totals share a rank, in the reports as on the tender page: 1, 2, 2, 4.
func TestSharedRanks(t *testing.T) {
	for _, c := range []struct {
		totals []float64
		want   []int
	}{
		{nil, []int{}},
		{[]float64{90}, []int{1}},
		{[]float64{100, 100}, []int{1, 1}},
		{[]float64{95, 80, 80, 70}, []int{1, 2, 2, 4}},
		{[]float64{60, 60, 60}, []int{1, 1, 1}},
	} {
		if got := bideval.SharedRanks(c.totals); !slices.Equal(got, c.want) {
			t.Errorf("SharedRanks(%v) = %v, want %v", c.totals, got, c.want)
		}
	}
}
