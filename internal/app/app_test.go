package app_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"weft/internal/app"
	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/llm"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
	"weft/internal/workflow/bideval"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type clock struct {
	mu  sync.Mutex
	off time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.off)
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.off += d
}

func open(t *testing.T, url string, c *clock, provider llm.Provider) *app.App {
	t.Helper()
	if provider == nil {
		provider = llm.NewOffline()
	}
	a, err := app.Open(context.Background(), app.Config{DatabaseURL: url, LLM: provider, Runner: runner.Config{
		Lease: 3 * time.Second, PollInterval: 50 * time.Millisecond, Now: c.Now, Concurrency: 3,
		Backoff: func(int) time.Duration { return 0 },
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	return a
}

func work(t *testing.T, a *app.App) context.CancelFunc {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = a.RunWorkers(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return func() { cancel(); <-done }
}

// waitStatus polls until the evaluation's job reaches want (the run is
// asynchronous; the deadline only guards against a hang).
func waitStatus(t *testing.T, a *app.App, evaluationID string, want runner.Status) runner.Job {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last runner.Status
	var lastErrs []runner.JobError
	for time.Now().Before(deadline) {
		ev, err := app.Bid(a).Store.Evaluation(context.Background(), app.DemoTenant, evaluationID)
		if err == nil && ev.JobID != "" {
			j, err := a.Jobs.Job(context.Background(), app.DemoTenant, ev.JobID)
			// A failed job's run has also ended: the graph's error route fails the job from
			// inside the run, whose last checkpoint lands a few milliseconds later.
			if err == nil && j.Status == want {
				if ended, _ := a.Events.RunEnded(context.Background(), j); want != runner.Failed || ended {
					return j
				}
			}
			last, lastErrs = j.Status, j.Errors
			if j.Status.Terminal() && j.Status != want {
				break
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("evaluation %s: job is %q, want %q; errors %+v", evaluationID, last, want, lastErrs)
	return runner.Job{}
}

func decision(kind, reviewer string) json.RawMessage {
	b, _ := json.Marshal(bideval.Decision{Decision: kind, Comment: "checked the evidence", Editor: bideval.Editor{ReviewerID: reviewer}})
	return b
}

// Seed 000 §11: a pass, a review resumed with its token (single use), a
// failure linked to its DLQ row; tenant isolation of the state view.
func TestDemoEvaluationsEndToEnd(t *testing.T) {
	t.Parallel()
	c := &clock{}
	a := open(t, pgtest.URL(t), c, nil)
	ctx := context.Background()
	if loaded, err := a.SeedDemo(ctx); err != nil || !loaded {
		t.Fatalf("seed demo: %v %v", loaded, err)
	}
	if loaded, err := a.SeedDemo(ctx); err != nil || loaded {
		t.Fatalf("seeding twice loaded again: %v %v", loaded, err)
	}
	work(t, a)
	waitStatus(t, a, "ev_demo-northwind", runner.Succeeded)
	paused := waitStatus(t, a, "ev_demo-bluewater", runner.WaitingReview)
	failed := waitStatus(t, a, "ev_demo-harbor", runner.Failed)

	// Every failed evaluation links to a DLQ row.
	entries, _, err := a.Jobs.ListDLQ(ctx, app.DemoTenant, "", postgres.Cursor{}, 10)
	if err != nil || len(entries) != 1 || entries[0].JobID != failed.ID || entries[0].Code != bideval.CodeBidNoDocuments || entries[0].Class != fault.Validation {
		t.Fatalf("DLQ = %+v (%v), want one validation entry for the failed job", entries, err)
	}
	st, err := app.Bid(a).EvaluationState(ctx, app.DemoTenant, "ev_demo-harbor")
	if err != nil || st.Output.Status != "failed" || len(st.Runtime.Errors) == 0 || st.Runtime.Errors[0].Code != bideval.CodeBidNoDocuments {
		t.Fatalf("crestline state: %+v %v", st.Runtime, err)
	}

	// The reviewer resumes with the token from the interrupt payload.
	st, err = app.Bid(a).EvaluationState(ctx, app.DemoTenant, "ev_demo-bluewater")
	if err != nil || st.Review.HumanReviewPayload == nil || st.Review.ResumeToken == "" {
		t.Fatalf("bluewater waits without a §7.1 payload: %+v %v", st.Review, err)
	}
	token := st.Review.ResumeToken
	if _, err := a.Runner.Resume(ctx, runner.ResumeRequest{TenantID: app.DemoTenant, Token: token, Decision: decision("approve", "u_rev")}); err == nil {
		t.Fatal("a resume without the actor's identity was accepted")
	}
	if _, err := a.Runner.Resume(ctx, runner.ResumeRequest{TenantID: app.OtherTenant, Token: token, Actor: "u_rev", Decision: decision("approve", "u_rev")}); !isResumeInvalid(err) {
		t.Fatalf("another tenant's resume: %v", err)
	}
	if _, err := a.Runner.Resume(ctx, runner.ResumeRequest{TenantID: app.DemoTenant, Token: token, Actor: "u_rev", Decision: decision("approve", "u_rev")}); err != nil {
		t.Fatal(err)
	}
	done := waitStatus(t, a, "ev_demo-bluewater", runner.Succeeded)
	if done.ID != paused.ID {
		t.Fatal("the resume ran another job")
	}
	if _, err := a.Runner.Resume(ctx, runner.ResumeRequest{TenantID: app.DemoTenant, Token: token, Actor: "u_rev", Decision: decision("approve", "u_rev")}); !isResumeInvalid(err) {
		t.Fatalf("a used token: %v, want %s", err, fault.CodeInterruptResumeInvalid)
	}
	st, _ = app.Bid(a).EvaluationState(ctx, app.DemoTenant, "ev_demo-bluewater")
	if r := st.Output.ReportPayload; r == nil || r.Outcome != "approved" || r.ReviewerID != "u_rev" || r.Comment != "checked the evidence" {
		t.Fatalf("report after approval: %+v", r)
	}
	entriesAudit, _, err := a.Audit.List(ctx, postgres.AuditFilter{TenantID: app.DemoTenant, Action: "thread.resume"}, 0, 10)
	if err != nil || len(entriesAudit) != 1 || entriesAudit[0].Actor != "u_rev" {
		t.Fatalf("resume audit rows = %+v (%v)", entriesAudit, err)
	}

	// Another tenant's id is not found.
	if _, err := app.Bid(a).EvaluationState(ctx, app.OtherTenant, "ev_demo-northwind"); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("another tenant's evaluation: %v, want not found", err)
	}
}

func isResumeInvalid(err error) bool {
	_, code := fault.Classify(err)
	return err != nil && code == fault.CodeInterruptResumeInvalid
}

// Seed 000 §11.1: resumable within 24 h of the interrupt; after that (on a
// fake clock) the token is rejected and the thread stays paused.
func TestResumeWindowIs24Hours(t *testing.T) {
	t.Parallel()
	c := &clock{}
	a := open(t, pgtest.URL(t), c, nil)
	ctx := context.Background()
	if _, err := a.SeedDemo(ctx); err != nil {
		t.Fatal(err)
	}
	work(t, a)
	waitStatus(t, a, "ev_demo-bluewater", runner.WaitingReview)
	st, _ := app.Bid(a).EvaluationState(ctx, app.DemoTenant, "ev_demo-bluewater")
	c.Advance(24*time.Hour + time.Minute)
	_, err := a.Runner.Resume(ctx, runner.ResumeRequest{TenantID: app.DemoTenant, Token: st.Review.ResumeToken, Actor: "u_rev", Decision: decision("approve", "u_rev")})
	if !isResumeInvalid(err) {
		t.Fatalf("resume after 24 h: %v, want %s", err, fault.CodeInterruptResumeInvalid)
	}
	waitStatus(t, a, "ev_demo-bluewater", runner.WaitingReview)

	c.Advance(-2 * time.Hour) // back inside the window: 23 h after the interrupt
	if _, err := a.Runner.Resume(ctx, runner.ResumeRequest{TenantID: app.DemoTenant, Token: st.Review.ResumeToken, Actor: "u_rev", Decision: decision("reject", "u_rev")}); err != nil {
		t.Fatalf("resume within 24 h: %v", err)
	}
	waitStatus(t, a, "ev_demo-bluewater", runner.Succeeded)
	// A rejected bid is not ranked: its report lists the others only.
	st, _ = app.Bid(a).EvaluationState(ctx, app.DemoTenant, "ev_demo-bluewater")
	r := st.Output.ReportPayload
	if r == nil || r.Outcome != "rejected" || r.Rank != 0 {
		t.Fatalf("the rejected bid's report: %+v", r)
	}
	for _, e := range r.Ranking {
		if e.EvaluationID == "ev_demo-bluewater" {
			t.Fatalf("the rejected bid is in its own ranking: %+v", r.Ranking)
		}
	}
}

// blockingLLM holds the first scoring call until released.
type blockingLLM struct {
	llm.Provider
	once    sync.Once
	entered chan struct{}
}

func (b *blockingLLM) ScoreCriteria(ctx context.Context, req llm.ScoreRequest) (llm.ScoreResult, error) {
	first := false
	b.once.Do(func() { first = true })
	if first {
		close(b.entered)
		<-ctx.Done() // the worker dies while this node runs
		return llm.ScoreResult{}, ctx.Err()
	}
	return b.Provider.ScoreCriteria(ctx, req)
}

// Seed 000 §11.2: after a worker dies mid-run and another process recovers
// the thread from its checkpoint, no completed node runs again.
func TestRecoveryDoesNotRerunCompletedNodes(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	c := &clock{}
	slow := &blockingLLM{Provider: llm.NewOffline(), entered: make(chan struct{})}
	first := open(t, url, c, slow)
	ctx := context.Background()
	if _, err := app.Bid(first).Store.SeedDemo(ctx, bideval.Demo(app.DemoTenant, "Demo")); err != nil {
		t.Fatal(err)
	}
	if _, err := app.Bid(first).StartEvaluation(ctx, app.DemoTenant, "ev_demo-northwind", "u_pm"); err != nil {
		t.Fatal(err)
	}
	stop := work(t, first)
	<-slow.entered
	stop() // the first process goes away while score_with_llm runs
	first.Close()

	second := open(t, url, c, llm.NewOffline()) // another process on the same database
	work(t, second)
	j := waitStatus(t, second, "ev_demo-northwind", runner.Succeeded)
	second.Close()

	check, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	recs, err := check.ListNodeExecutions(ctx, app.DemoTenant, j.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	completed := map[string]int{}
	for _, r := range recs {
		if r.ErrorCode == "" {
			completed[r.Node]++
		}
	}
	for _, n := range []string{bideval.NodeLoadContext, bideval.NodeRetrieveEvidence, bideval.NodeEvaluateRules, bideval.NodeScoreWithLLM,
		bideval.NodeQualityGate, bideval.NodeFinalizeReport, bideval.NodePersistResult} {
		if completed[n] != 1 {
			t.Errorf("node %s completed %d times, want exactly once (executions: %v)", n, completed[n], completed)
		}
	}
}

// weft prune: the finished threads (succeeded, failed) keep their newest checkpoints and lose
// the rest; a thread still waiting for review keeps its whole history. One thread per page,
// so the walk over the finished threads crosses pages.
func TestPruneFinishedThreads(t *testing.T) {
	t.Parallel()
	a := open(t, pgtest.URL(t), &clock{}, nil)
	ctx := context.Background()
	if _, err := a.SeedDemo(ctx); err != nil {
		t.Fatal(err)
	}
	stop := work(t, a)
	jobs := map[string]runner.Job{
		"ev_demo-northwind": waitStatus(t, a, "ev_demo-northwind", runner.Succeeded),
		"ev_demo-crestline": waitStatus(t, a, "ev_demo-crestline", runner.Succeeded),
		"ev_demo-bluewater": waitStatus(t, a, "ev_demo-bluewater", runner.WaitingReview),
		"ev_demo-harbor":    waitStatus(t, a, "ev_demo-harbor", runner.Failed),
	}
	stop()
	history := func(ev string) int {
		t.Helper()
		cps, err := a.Checkpoints.List(ctx, jobs[ev].ThreadID, "", graph.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(cps)
	}
	before := map[string]int{}
	for ev := range jobs {
		if before[ev] = history(ev); before[ev] < 3 {
			t.Fatalf("%s has %d checkpoints; the test needs a longer history", ev, before[ev])
		}
	}
	a.PrunePage = 1
	removed, err := a.Prune(ctx, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Harbor failed and its dead letter waits for an admin, whose retry goes on from its
	// last checkpoint: it is left whole until the entry is resolved. Crestline, disqualified,
	// finished.
	if want := (graph.PruneResult{Checkpoints: before["ev_demo-northwind"] - 2 + before["ev_demo-crestline"] - 2}); removed != want {
		t.Errorf("prune removed %+v, want %+v", removed, want)
	}
	for ev, n := range map[string]int{"ev_demo-northwind": 2, "ev_demo-crestline": 2, "ev_demo-harbor": before["ev_demo-harbor"], "ev_demo-bluewater": before["ev_demo-bluewater"]} {
		if got := history(ev); got != n {
			t.Errorf("%s: %d checkpoints after prune, want %d", ev, got, n)
		}
	}
	entries, _, err := a.Jobs.ListDLQ(ctx, app.DemoTenant, "recorded", postgres.Cursor{}, 10)
	if err != nil || len(entries) != 1 {
		t.Fatalf("recorded entries: %d %v", len(entries), err)
	}
	if err := a.Jobs.Discard(ctx, app.DemoTenant, entries[0].ID, "u_admin"); err != nil {
		t.Fatal(err)
	}
	if removed, err = a.Prune(ctx, 2, 0); err != nil || removed.Checkpoints != before["ev_demo-harbor"]-2 {
		t.Errorf("prune after the discard removed %+v (%v), want %d checkpoints", removed, err, before["ev_demo-harbor"]-2)
	}
	if got := history("ev_demo-harbor"); got != 2 {
		t.Errorf("harbor after the discard and prune: %d checkpoints, want 2", got)
	}
	// The trimmed threads still read: the state view shows the finished evaluation.
	if st, err := app.Bid(a).EvaluationState(ctx, app.DemoTenant, "ev_demo-northwind"); err != nil || st.Output.Status == "" {
		t.Fatalf("northwind after prune: %+v %v", st.Output, err)
	}
}

// An admin's fork from a checkpoint whose tasks had already saved their writes (the tour's
// parallel draft and stamp) runs those tasks again, as LangGraph's time travel does (only a
// failed job's retry keeps its finished tasks' writes), and the node timeline records each
// execution with its times.
func TestForkRunsParallelTasksAgain(t *testing.T) {
	t.Parallel()
	a := open(t, pgtest.URL(t), &clock{}, nil)
	work(t, a)
	ctx := context.Background()
	j, err := a.StartRun(ctx, app.DemoTenant, "tour", json.RawMessage(`{"question": "How do retries and checkpoints work?"}`), "u_pm")
	if err != nil {
		t.Fatal(err)
	}
	waitJob := func(id string, want runner.Status) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			if got, err := a.Jobs.Job(ctx, app.DemoTenant, id); err == nil && got.Status == want {
				return
			}
			time.Sleep(25 * time.Millisecond)
		}
		t.Fatalf("job %s never reached %s", id, want)
	}
	waitJob(j.ID, runner.WaitingReview)
	paused, err := a.Jobs.Job(ctx, app.DemoTenant, j.ID)
	if err != nil || len(paused.Interrupts) == 0 {
		t.Fatalf("the paused tour: %+v %v", paused, err)
	}
	tok, err := a.Runner.IssueToken(ctx, paused, paused.Interrupts[0].ID, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Runner.Resume(ctx, runner.ResumeRequest{TenantID: app.DemoTenant, Token: tok.Secret, Actor: "u_rev",
		Decision: json.RawMessage(`{"decision": "approve", "comment": "fine"}`)}); err != nil {
		t.Fatal(err)
	}
	waitJob(j.ID, runner.Succeeded)
	e, _ := a.Registry.Get("tour")
	cps, err := e.Graph.History(ctx, graph.Config{ThreadID: j.ThreadID}, graph.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var from graph.Checkpoint
	for _, cp := range cps {
		if len(cp.Next) == 2 && cp.Next[0].Node != "research" { // draft and stamp, side by side
			from = cp
		}
	}
	if from.ID == "" {
		t.Fatalf("no checkpoint before draft and stamp among %d", len(cps))
	}
	fork, err := a.Fork(ctx, app.DemoTenant, j.ThreadID, from.ID, "u_admin")
	if err != nil {
		t.Fatal(err)
	}
	waitJob(fork.ID, runner.WaitingReview)
	// Node records are written in the background, in order: once review's is in, so is any
	// record of the tasks before it.
	var nodes []string
	var zero int
	for deadline := time.Now().Add(10 * time.Second); ; {
		if err := a.DB.Pool().QueryRow(ctx, `SELECT coalesce(array_agg(node ORDER BY node), '{}'), count(*) FILTER (WHERE started_at < '2000-01-01')
			FROM node_executions WHERE job_id = $1`, fork.ID).Scan(&nodes, &zero); err != nil {
			t.Fatal(err)
		}
		if slices.Contains(nodes, "review") || time.Now().After(deadline) {
			break
		}
		time.Sleep(25 * time.Millisecond)
	}
	if zero != 0 || !slices.Equal(nodes, []string{"draft", "review", "stamp"}) {
		t.Fatalf("the fork's node records: %v (%d without a start time); want draft, review and stamp", nodes, zero)
	}
}

// Pointing an evaluation at its new job marks it queued only while that job is: a worker can
// run a fork or a start to its end (persisting the report, which marks the evaluation
// completed) before the evaluation is pointed at it, and that must not read "queued" ever
// after. (A fresh-clone CI run caught a fork whose evaluation stayed queued.)
func TestEvaluationPointsAtItsJobWithoutUndoingItsEnd(t *testing.T) {
	t.Parallel()
	url := pgtest.URL(t)
	a := open(t, url, &clock{}, llm.NewOffline())
	ctx := context.Background()
	if _, err := app.Bid(a).Store.SeedDemo(ctx, bideval.Demo(app.DemoTenant, "Demo")); err != nil {
		t.Fatal(err)
	}
	status := func() string {
		t.Helper()
		ev, err := app.Bid(a).Store.Evaluation(ctx, app.DemoTenant, "ev_demo-northwind")
		if err != nil {
			t.Fatal(err)
		}
		return ev.Status
	}
	first, err := app.Bid(a).StartEvaluation(ctx, app.DemoTenant, "ev_demo-northwind", "u_pm")
	if err != nil || status() != "queued" {
		t.Fatalf("a started evaluation is %q (%v), want queued", status(), err)
	}
	stop := work(t, a)
	waitEvaluation(t, a, "ev_demo-northwind", "completed")
	// A job that already ran (as a quick worker leaves it) does not make it queued again.
	if err := app.Bid(a).Store.SetJob(ctx, app.DemoTenant, "ev_demo-northwind", first.ID); err != nil {
		t.Fatal(err)
	}
	if got := status(); got != "completed" {
		t.Fatalf("pointed at a job that has ended, the evaluation is %q, want completed", got)
	}
	// Started again, and a worker claims the new job before the evaluation is pointed at it:
	// the old result must not stand as the current one while the new run goes on (the tender
	// page read "Running · 100.0 · Passed").
	waitStatus(t, a, "ev_demo-northwind", runner.Succeeded)
	stop()
	ev, err := app.Bid(a).Store.Evaluation(ctx, app.DemoTenant, "ev_demo-northwind")
	if err != nil {
		t.Fatal(err)
	}
	second, err := a.Runner.Enqueue(ctx, runner.NewJob{TenantID: app.DemoTenant, Workflow: bideval.Name, ThreadID: ev.ThreadID,
		TraceID: "t-second", Subject: ev.ID, Input: bideval.Input(app.DemoTenant, ev.ID, ev.ThreadID, "t-second")})
	if err != nil {
		t.Fatal(err)
	}
	if claimed, err := a.Jobs.Claim(ctx, "quick-worker", 1, time.Minute); err != nil || len(claimed) != 1 || claimed[0].ID != second.ID {
		t.Fatalf("claim the second job: %v, %v", claimed, err)
	}
	if err := app.Bid(a).Store.SetJob(ctx, app.DemoTenant, ev.ID, second.ID); err != nil {
		t.Fatal(err)
	}
	if got := status(); got != "queued" {
		t.Fatalf("pointed at a running new job, the evaluation is %q, want queued", got)
	}
	// A new job whose run reaches the result before the evaluation is pointed at it leaves it
	// completed, even when its run only replayed the report already persisted (a fork from a
	// checkpoint after persist_result) and found it completed still.
	rp, ok, err := app.Bid(a).Store.LatestReport(ctx, app.DemoTenant, ev.ID)
	if err != nil || !ok {
		t.Fatalf("latest report: %v, %v", ok, err)
	}
	if _, err := app.Bid(a).Store.PersistResult(ctx, app.DemoTenant, rp); err != nil { // the second run's replay
		t.Fatal(err)
	}
	if err := a.Jobs.Succeed(ctx, second.ID, "quick-worker"); err != nil {
		t.Fatal(err)
	}
	third, err := a.Runner.Enqueue(ctx, runner.NewJob{TenantID: app.DemoTenant, Workflow: bideval.Name, ThreadID: ev.ThreadID,
		TraceID: "t-third", Subject: ev.ID, Input: bideval.Input(app.DemoTenant, ev.ID, ev.ThreadID, "t-third")})
	if err != nil {
		t.Fatal(err)
	}
	if got := status(); got != "completed" {
		t.Fatalf("after the second run's replay, the evaluation is %q, want completed", got)
	}
	if _, err := app.Bid(a).Store.PersistResult(ctx, app.DemoTenant, rp); err != nil { // the third run's replay
		t.Fatal(err)
	}
	if err := app.Bid(a).Store.SetJob(ctx, app.DemoTenant, ev.ID, third.ID); err != nil {
		t.Fatal(err)
	}
	if got := status(); got != "completed" {
		t.Fatalf("pointed at a job whose run replayed the report, the evaluation is %q, want completed", got)
	}
	// A start whose request stalled after enqueueing lands after a newer start's: the
	// evaluation keeps pointing at the newer job.
	if err := app.Bid(a).Store.SetJob(ctx, app.DemoTenant, ev.ID, second.ID); err != nil {
		t.Fatal(err)
	}
	if ev, err := app.Bid(a).Store.Evaluation(ctx, app.DemoTenant, ev.ID); err != nil || ev.JobID != third.ID {
		t.Fatalf("after an older job's late SetJob the evaluation points at %s (%v), want the newer %s", ev.JobID, err, third.ID)
	}
}

func waitEvaluation(t *testing.T, a *app.App, id, want string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if ev, err := app.Bid(a).Store.Evaluation(context.Background(), app.DemoTenant, id); err == nil && ev.Status == want {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("evaluation %s never became %s", id, want)
}
