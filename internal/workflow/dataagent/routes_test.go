package dataagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/workflow/dataagent"
	"weft/internal/workflow/dataagent/nlsql"
)

// gmvDecember is the hand-written answer to "What was the GMV last month?".
const gmvDecember = `SELECT sum(amount) FROM analytics.orders WHERE status = 'paid' AND ordered_at >= '2025-12-01' AND ordered_at < '2026-01-01'`

// The seed's routes, each through the real graph over the demo data.
func TestRoutes(t *testing.T) {
	t.Parallel()
	runcases(t, demoPool(t), []poolCase{
		{"a message that is not an analysis ends early with a direct answer", routeNotAnalysis},
		{"an unanswerable question gets the feasibility report naming what is missing", routeCannotAnswer},
		{"a consistency failure regenerates the SQL with the reason", routeConsistencyFail},
		{"an SQL error regenerates the SQL with the error", routeSQLError},
		{"SQL attempts over the limit fail the step and the report says so", routeSQLLimit},
		{"an invalid plan goes back to the Planner with the validation error", routeInvalidPlan},
		{"invalid plans over the limit end the turn, reported", routePlanLimit},
		{"a follow-up uses the previous turn", routeFollowUp},
		{"a Chinese follow-up changes the period of a grouped question", routeFollowUpZH},
		{"a follow-up without a question before it is answered directly", routeOrphanFollowUp},
		{"a relation that is no foreign key is asked for again", routeBadRelation},
	})
}

func pickText(s dataagent.State, en, zh string) string {
	if s.Report != nil && s.Report.Language == "zh" {
		return zh
	}
	return en
}

// The human review loop: the plan pauses for a reviewer; approve runs it,
// reject with feedback rebuilds it, and rejections past the limit end the
// turn. Decisions go in as update_state writes or as the resume value.
func TestHumanFeedback(t *testing.T) {
	t.Parallel()
	runcases(t, demoPool(t), []poolCase{
		{"approve with the resume value runs the plan", reviewApprove},
		{"reject with feedback replans, applied with update_state", reviewReject},
		{"rejections over the limit end the turn, reported", reviewLimit},
		{"a rejection without feedback is refused", reviewNoFeedback},
	})
}

// poolCase is a subtest over a shared demo database.
type poolCase struct {
	name string
	run  func(*testing.T, *pgxpool.Pool)
}

// runcases runs the cases in parallel over pool (read-only: each case has
// its own threads).
func runcases(t *testing.T, pool *pgxpool.Pool, cases []poolCase) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, pool)
		})
	}
}

func stopped(s dataagent.State) bool { return s.Status == dataagent.StatusStopped && s.Report != nil }

// decide applies a review decision the way the review form does: the
// writes of DecisionWrites, as HumanFeedback.
func decide(t *testing.T, a agent, cfg graph.Config, d dataagent.Decision) {
	t.Helper()
	snap, err := a.g.GetState(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := dataagent.DecisionWrites(snap.Values, d)
	if err != nil {
		t.Fatalf("decision: %v", err)
	}
	if _, err := a.g.UpdateState(context.Background(), cfg, ws, dataagent.NodeHumanFeedback); err != nil {
		t.Fatalf("update state: %v", err)
	}
}

// mustAnswer fails the test unless the turn answered with the numbers of
// the hand-written query.
func mustAnswer(t *testing.T, pool *pgxpool.Pool, s dataagent.State, hand string) {
	t.Helper()
	got, sql := answer(t, s)
	if got == nil {
		t.Fatalf("no answer: status %s, steps %+v", s.Status, s.Steps)
	}
	if err := sameNumbers(got.Rows, handRows(t, pool, hand)); err != nil {
		t.Fatalf("%v\n%s\ngot %v", err, sql, got.Rows)
	}
}

// routeNotAnalysis: a message that is not an analysis ends early with a direct answer.
func routeNotAnalysis(t *testing.T, pool *pgxpool.Pool) {
	a := newAgent(t, pool, nil)
	for i, msg := range []string{"Hello!", "谢谢", "Tell me a joke"} {
		r := a.start(t, "chat-"+string(rune('a'+i)), msg, false)
		s := r.res.State
		if s.Status != dataagent.StatusNotAnalysis || s.Reply == "" || s.Report != nil {
			t.Errorf("%s: status %s, reply %q, report %v", msg, s.Status, s.Reply, s.Report != nil)
		}
		if len(r.nodes) != 1 || r.nodes[0] != dataagent.NodeIntentRecognition {
			t.Errorf("%s: nodes %v, want IntentRecognition only", msg, r.nodes)
		}
	}
}

// routeCannotAnswer: an unanswerable question gets the feasibility report naming what is missing.
func routeCannotAnswer(t *testing.T, pool *pgxpool.Pool) {
	a := newAgent(t, pool, nil)
	for i, c := range []struct{ q, missing string }{
		{"What was the average delivery time last month?", "delivery time"},
		{"What was the profit margin last year?", "profit margin"},
		{"上个月的库存周转率是多少？", "库存周转"},
		{"What was the AOV last month?", "divided"},
	} {
		r := a.start(t, "infeasible-"+string(rune('a'+i)), c.q, false)
		s := r.res.State
		if s.Status != dataagent.StatusCannotAnswer || s.Report == nil {
			t.Fatalf("%s: status %s", c.q, s.Status)
		}
		if !strings.Contains(s.Report.Summary, c.missing) || !strings.Contains(s.Report.Markdown, pickText(s, "Cannot answer, because", "无法回答，因为")) {
			t.Errorf("%s: report does not say why, naming %q:\n%s", c.q, c.missing, s.Report.Markdown)
		}
		if count(r.nodes, dataagent.NodePlanner) > 0 || count(r.nodes, dataagent.NodeSqlExecute) > 0 {
			t.Errorf("%s: ran %v; an unanswerable question runs no plan and no SQL", c.q, r.nodes)
		}
	}
}

// routeConsistencyFail: a consistency failure regenerates the SQL with the reason.
func routeConsistencyFail(t *testing.T, pool *pgxpool.Pool) {
	p := newScripted(map[string][]any{"dataagent.sql_generate": {
		map[string]string{"sql": "SELECT SUM(orders.amount) AS gmv FROM orders WHERE orders.ordered_at >= '2025-12-01' AND orders.ordered_at < '2026-01-01'"},
		map[string]string{"sql": "SELECT SUM(o.total) AS gmv FROM orders o WHERE o.status = 'paid' AND o.ordered_at >= '2025-12-01' AND o.ordered_at < '2026-01-01'"},
	}})
	a := newAgent(t, pool, func(d *dataagent.Deps) { d.LLM = p })
	r := a.start(t, "consistency", "What was the GMV last month?", false)
	s := r.res.State
	mustAnswer(t, pool, s, gmvDecember)
	errs := s.Steps[0].Errors
	if len(errs) != 2 || !strings.Contains(errs[0], "requires orders.status = 'paid' (business note gmv)") || !strings.Contains(errs[1], "has no column total") {
		t.Errorf("errors = %q, want the missing paid filter, then the unknown column", errs)
	}
	if n := count(r.nodes, dataagent.NodeSemanticConsistency); n != 3 || count(r.nodes, dataagent.NodeSqlExecute) != 1 {
		t.Errorf("nodes %v: want three consistency checks and one execution", r.nodes)
	}
	reqs := p.requests("dataagent.sql_generate")
	if len(reqs) != 3 || !strings.Contains(reqs[1], "orders.status = 'paid'") || !strings.Contains(reqs[2], "no column total") {
		t.Errorf("the regeneration requests did not carry the reasons: %q", reqs)
	}
}

// routeSQLError: an SQL error regenerates the SQL with the error.
func routeSQLError(t *testing.T, pool *pgxpool.Pool) {
	p := newScripted(map[string][]any{"dataagent.sql_generate": {
		map[string]string{"sql": "SELECT SUM(orders.amount) / 0 AS gmv FROM orders WHERE orders.status = 'paid' AND orders.ordered_at >= '2025-12-01' AND orders.ordered_at < '2026-01-01'"},
	}})
	a := newAgent(t, pool, func(d *dataagent.Deps) { d.LLM = p })
	r := a.start(t, "sql-error", "What was the GMV last month?", false)
	s := r.res.State
	mustAnswer(t, pool, s, gmvDecember)
	if errs := s.Steps[0].Errors; len(errs) != 1 || !strings.Contains(errs[0], "division by zero") {
		t.Errorf("errors = %q", errs)
	}
	if reqs := p.requests("dataagent.sql_generate"); len(reqs) != 2 || !strings.Contains(reqs[1], "division by zero") {
		t.Errorf("the second request did not carry the database's error: %q", reqs)
	}
	if count(r.nodes, dataagent.NodeSqlExecute) != 2 {
		t.Errorf("nodes %v", r.nodes)
	}
}

// routeSQLLimit: SQL attempts over the limit fail the step and the report says so.
func routeSQLLimit(t *testing.T, pool *pgxpool.Pool) {
	bad := map[string]string{"sql": "SELECT SUM(orders.amount) / 0 AS gmv FROM orders WHERE orders.status = 'paid' AND orders.ordered_at >= '2025-12-01' AND orders.ordered_at < '2026-01-01'"}
	p := newScripted(map[string][]any{"dataagent.sql_generate": {bad, bad, bad}})
	a := newAgent(t, pool, func(d *dataagent.Deps) { d.LLM = p })
	s := a.start(t, "sql-limit", "What was the GMV last month?", false).res.State
	if s.Status != dataagent.StatusFailed || s.Steps[0].Status != dataagent.StepFailed || !strings.Contains(s.Report.Summary, "failed after 3 attempts") {
		t.Errorf("status %s, step %s, summary %q", s.Status, s.Steps[0].Status, s.Report.Summary)
	}
}

// routeInvalidPlan: an invalid plan goes back to the Planner with the validation error.
func routeInvalidPlan(t *testing.T, pool *pgxpool.Pool) {
	bad := dataagent.Plan{Thought: "x", Steps: []dataagent.PlanStep{{Step: 1, Tool: "shell", Instruction: "rm -rf /"}, {Step: 2, Tool: "report", Instruction: "report"}}}
	p := newScripted(map[string][]any{"dataagent.plan": {bad}})
	a := newAgent(t, pool, func(d *dataagent.Deps) { d.LLM = p })
	r := a.start(t, "plan-invalid", "What was the GMV last month?", false)
	s := r.res.State
	if s.Status != dataagent.StatusAnswered || s.PlanVersion != 2 || count(r.nodes, dataagent.NodePlanner) != 2 {
		t.Fatalf("status %s, plan version %d, nodes %v", s.Status, s.PlanVersion, r.nodes)
	}
	if reqs := p.requests("dataagent.plan"); len(reqs) != 2 || !strings.Contains(reqs[1], `names the tool \"shell\"`) {
		t.Errorf("the second plan request did not carry the error: %q", reqs)
	}
}

// routePlanLimit: invalid plans over the limit end the turn, reported.
func routePlanLimit(t *testing.T, pool *pgxpool.Pool) {
	bad := dataagent.Plan{Steps: []dataagent.PlanStep{{Step: 1, Tool: "report", Instruction: "only a report"}}}
	p := newScripted(map[string][]any{"dataagent.plan": {bad, bad, bad}})
	a := newAgent(t, pool, func(d *dataagent.Deps) { d.LLM = p })
	s := a.start(t, "plan-limit", "What was the GMV last month?", false).res.State
	if s.Status != dataagent.StatusFailed || !strings.Contains(s.Report.Summary, "No valid plan after 3 attempts") {
		t.Errorf("status %s, summary %q", s.Status, s.Report.Summary)
	}
}

// routeFollowUp: a follow-up uses the previous turn.
func routeFollowUp(t *testing.T, pool *pgxpool.Pool) {
	a := newAgent(t, pool, nil)
	thread := "follow-up"
	first := a.start(t, thread, "What was the GMV last month?", false).res.State
	if got, _ := answer(t, first); got == nil || sameNumbers(got.Rows, handRows(t, pool, gmvDecember)) != nil {
		t.Fatalf("first turn: %s", first.Status)
	}
	second := a.start(t, thread, "and for last quarter?", false).res.State
	if second.Query.Standalone != "What was the GMV last quarter?" || !second.Query.FollowUp || second.Turn != 2 {
		t.Errorf("second turn read as %+v (turn %d)", second.Query, second.Turn)
	}
	got, _ := answer(t, second)
	want := handRows(t, pool, `SELECT sum(amount) FROM analytics.orders WHERE status = 'paid' AND ordered_at >= '2025-10-01' AND ordered_at < '2026-01-01'`)
	if got == nil || sameNumbers(got.Rows, want) != nil {
		t.Fatalf("second turn: %s, rows %v, want %v", second.Status, got, want)
	}
	third := a.start(t, thread, "只看华东", false).res.State
	got, _ = answer(t, third)
	want = handRows(t, pool, `SELECT sum(o.amount) FROM analytics.orders o JOIN analytics.customers c USING (customer_id) JOIN analytics.regions r USING (region_id)
		WHERE o.status = 'paid' AND r.name IN ('Shanghai', 'Jiangsu', 'Zhejiang') AND o.ordered_at >= '2025-10-01' AND o.ordered_at < '2026-01-01'`)
	if got == nil || sameNumbers(got.Rows, want) != nil {
		t.Fatalf("third turn: %s %+v, rows %v, want %v", third.Status, third.Feasibility, got, want)
	}
	if third.Report.Language != "zh" || !strings.Contains(third.Report.Markdown, "## 结论") {
		t.Errorf("a Chinese follow-up is reported in Chinese:\n%s", third.Report.Markdown)
	}
	turns := third.Context.Turns
	if len(turns) != 3 || !turns[2].Done || len(turns[2].Parts) != 3 || len(turns[1].Planner) != 1 {
		t.Errorf("context turns = %+v", turns)
	}
	// The follow-up's keys replaced the previous turn's: one plan, its own steps.
	if third.PlanVersion != 1 || len(third.Steps) != 2 || third.Report.Turn != 3 {
		t.Errorf("turn 3 state: plan version %d, %d steps, report turn %d", third.PlanVersion, len(third.Steps), third.Report.Turn)
	}
}

// routeFollowUpZH: a Chinese follow-up changes the period of a grouped question.
func routeFollowUpZH(t *testing.T, pool *pgxpool.Pool) {
	a := newAgent(t, pool, nil)
	a.start(t, "follow-up-zh", "2025年第三季度各地区的GMV", false)
	s := a.start(t, "follow-up-zh", "那第二季度呢？", false).res.State
	got, _ := answer(t, s)
	want := handRows(t, pool, `SELECT r.name_zh, sum(o.amount) FROM analytics.orders o JOIN analytics.customers c USING (customer_id)
		JOIN analytics.regions r USING (region_id) WHERE o.status = 'paid' AND o.ordered_at >= '2025-04-01' AND o.ordered_at < '2025-07-01' GROUP BY 1 ORDER BY 2 DESC`)
	if got == nil || sameNumbers(got.Rows, want) != nil {
		t.Fatalf("status %s, standalone %q, rows %v, want %v", s.Status, s.Query.Standalone, got, want)
	}
}

// routeOrphanFollowUp: a follow-up without a question before it is answered directly.
func routeOrphanFollowUp(t *testing.T, pool *pgxpool.Pool) {
	a := newAgent(t, pool, nil)
	s := a.start(t, "orphan", "只看华东", false).res.State
	if s.Status != dataagent.StatusNotAnalysis || !strings.Contains(s.Reply, "追问") {
		t.Errorf("status %s, reply %q", s.Status, s.Reply)
	}
}

// reviewApprove: approve with the resume value runs the plan.
func reviewApprove(t *testing.T, pool *pgxpool.Pool) {
	a := newAgent(t, pool, nil)
	res := a.start(t, "approve", "What was the GMV last month?", true).res
	if len(res.Interrupts) != 1 || res.Interrupts[0].Node != dataagent.NodeHumanFeedback || res.State.Status != dataagent.StatusWaitingReview {
		t.Fatalf("interrupts %+v, status %s", res.Interrupts, res.State.Status)
	}
	var review dataagent.PlanReview
	if err := json.Unmarshal(res.Interrupts[0].Value, &review); err != nil {
		t.Fatal(err)
	}
	if review.Type != "plan_review" || len(review.Steps) != 2 || !strings.Contains(review.Steps[0].SQLDraft, "orders.status = 'paid'") || review.Round != 1 || review.Limit != 3 {
		t.Errorf("review payload = %+v", review)
	}
	if len(res.State.Steps) == 0 || res.State.Steps[0].Status != dataagent.StepPending {
		t.Errorf("the plan ran before review: %+v", res.State.Steps)
	}
	s := a.stream(t, "approve", graph.Resume(dataagent.Decision{Decision: "approve", Reviewer: "ana"})).res.State
	if got, _ := answer(t, s); s.Status != dataagent.StatusAnswered || got == nil || sameNumbers(got.Rows, handRows(t, pool, gmvDecember)) != nil {
		t.Fatalf("after approval: %s", s.Status)
	}
	if !strings.Contains(s.Report.Markdown, "Plan 1 approved by ana") {
		t.Errorf("the report does not record the approval:\n%s", s.Report.Markdown)
	}
}

// reviewReject: reject with feedback replans, applied with update_state.
func reviewReject(t *testing.T, pool *pgxpool.Pool) {
	a := newAgent(t, pool, nil)
	cfg := graph.Config{ThreadID: "reject"}
	a.start(t, cfg.ThreadID, "GMV by region last month", true)
	decide(t, a, cfg, dataagent.Decision{Decision: "reject", Feedback: "only East China, and make it snappy", Reviewer: "ana"})
	res := a.stream(t, cfg.ThreadID, graph.Command{}).res
	if len(res.Interrupts) != 1 || res.State.PlanVersion != 2 {
		t.Fatalf("after the rejection: interrupts %v, plan version %d", res.Interrupts, res.State.PlanVersion)
	}
	plan := res.State.Plan
	if !strings.Contains(plan.Steps[0].SQLDraft, "regions.name IN ('Shanghai', 'Jiangsu', 'Zhejiang')") || !strings.Contains(plan.Thought, "only East China") {
		t.Errorf("plan 2 ignores the feedback: %+v", plan)
	}
	if !strings.Contains(plan.Thought, "so were not used: snappy") {
		t.Errorf("plan 2 does not say which words of the feedback it could not use: %s", plan.Thought)
	}
	decide(t, a, cfg, dataagent.Decision{Decision: "approve", Reviewer: "bo"})
	s := a.stream(t, cfg.ThreadID, graph.Command{}).res.State
	got, _ := answer(t, s)
	want := handRows(t, pool, `SELECT r.name, sum(o.amount) FROM analytics.orders o JOIN analytics.customers c USING (customer_id) JOIN analytics.regions r USING (region_id)
		WHERE o.status = 'paid' AND r.name IN ('Shanghai', 'Jiangsu', 'Zhejiang') AND o.ordered_at >= '2025-12-01' AND o.ordered_at < '2026-01-01' GROUP BY 1 ORDER BY 2 DESC`)
	if s.Status != dataagent.StatusAnswered || got == nil || sameNumbers(got.Rows, want) != nil {
		t.Fatalf("status %s, rows %v, want %v", s.Status, got, want)
	}
	if turns := s.Context.Turns; len(turns[0].Planner) != 2 {
		t.Errorf("planner chunks in the context: %q", turns[0].Planner)
	}

	// A follow-up keeps what the reviewer's feedback changed: East China, last quarter now.
	f := a.start(t, cfg.ThreadID, "and for last quarter?", false).res.State
	got, _ = answer(t, f)
	want = handRows(t, pool, `SELECT r.name, sum(o.amount) FROM analytics.orders o JOIN analytics.customers c USING (customer_id) JOIN analytics.regions r USING (region_id)
		WHERE o.status = 'paid' AND r.name IN ('Shanghai', 'Jiangsu', 'Zhejiang') AND o.ordered_at >= '2025-10-01' AND o.ordered_at < '2026-01-01' GROUP BY 1 ORDER BY 2 DESC`)
	if f.Status != dataagent.StatusAnswered || got == nil || sameNumbers(got.Rows, want) != nil {
		t.Fatalf("the follow-up: status %s, read as %q, rows %v, want %v", f.Status, f.Query.Standalone, got, want)
	}
	if f.Query.Standalone != "GMV by region last quarter (only East China, and make it snappy)" || len(f.Query.Lenient) != 1 {
		t.Errorf("the follow-up is read as %+v", f.Query)
	}
}

// reviewLimit: rejections over the limit end the turn, reported.
func reviewLimit(t *testing.T, pool *pgxpool.Pool) {
	a := newAgent(t, pool, nil)
	cfg := graph.Config{ThreadID: "limit"}
	a.start(t, cfg.ThreadID, "What was the GMV last month?", true)
	var s dataagent.State
	for i := 1; i <= dataagent.MaxFeedbackRounds+1; i++ {
		decide(t, a, cfg, dataagent.Decision{Decision: "reject", Feedback: "by month instead"})
		r := a.stream(t, cfg.ThreadID, graph.Command{})
		s = r.res.State
		if i <= dataagent.MaxFeedbackRounds && (len(r.res.Interrupts) != 1 || s.PlanVersion != i+1) {
			t.Fatalf("rejection %d: interrupts %v, plan version %d", i, r.res.Interrupts, s.PlanVersion)
		}
	}
	if !stopped(s) {
		t.Fatalf("the turn did not end: status %s", s.Status)
	}
	if !strings.Contains(s.Report.Summary, "rejected 4 times, over the limit of 3") {
		t.Errorf("summary %q", s.Report.Summary)
	}
	if got, _ := answer(t, s); got != nil {
		t.Errorf("SQL ran although no plan was approved")
	}
}

// reviewNoFeedback: a rejection without feedback is refused.
func reviewNoFeedback(t *testing.T, pool *pgxpool.Pool) {
	ctx := context.Background()
	a := newAgent(t, pool, nil)
	a.start(t, "no-feedback", "What was the GMV last month?", true)
	snap, err := a.g.GetState(ctx, graph.Config{ThreadID: "no-feedback"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = dataagent.DecisionWrites(snap.Values, dataagent.Decision{Decision: "reject"})
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Class != fault.Validation || fe.Code != dataagent.CodeDecisionInvalid {
		t.Errorf("err = %v, want a validation error", err)
	}
	if _, err := dataagent.DecisionWrites(snap.Values, dataagent.Decision{Decision: "maybe"}); err == nil {
		t.Errorf("an unknown decision was accepted")
	}
}

// routeBadRelation: TableRelation's answer joins on columns no foreign key
// has; TableRelationDispatcher sends it back, and the next answer is used.
func routeBadRelation(t *testing.T, pool *pgxpool.Pool) {
	bad := dataagent.Relation{Tables: []string{"orders", "regions"},
		Relations: []nlsql.Relation{{From: "orders", To: "regions", FromCol: []string{"order_id"}, ToCol: []string{"region_id"}}}}
	p := newScripted(map[string][]any{"dataagent.schema_recall": {map[string][]string{"tables": {"orders", "invoices"}}},
		"dataagent.table_relation": {bad}})
	a := newAgent(t, pool, func(d *dataagent.Deps) { d.LLM = p })
	r := a.start(t, "bad-relation", "What was the GMV last month?", false)
	mustAnswer(t, pool, r.res.State, gmvDecember)
	if n := count(r.nodes, dataagent.NodeTableRelation); n != 2 {
		t.Errorf("TableRelation ran %d times, want 2", n)
	}
	if got := r.res.State.Recalled; len(got) != 1 || got[0] != "orders" {
		t.Errorf("recalled %v: the unknown table must be dropped", got)
	}
}
