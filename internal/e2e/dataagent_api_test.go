package e2e_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"weft/internal/app"
	"weft/internal/auth"
	"weft/internal/llm"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
	"weft/internal/workflow/dataagent"
	"weft/internal/workflow/dataagent/dataagentpg"
)

// dataConsole is the console with its workers on a fresh database holding the demo analytics
// data set (orders up to the end of last month), the demo tenants and users, no demo runs.
func dataConsole(t *testing.T) (*app.App, *auth.Service, string) {
	t.Helper()
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{DatabaseURL: pgtest.URL(t), LLM: llm.NewOffline(), Runner: runner.Config{
		Lease: 5 * time.Second, PollInterval: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	if err := dataagentpg.InstallDemo(ctx, a.DB.Pool(), dataagentpg.Demo{Schema: dataagent.DefaultSchema}); err != nil {
		t.Fatal(err)
	}
	authSvc, url := serveTenants(t, a)
	return a, authSvc, url
}

// dataState is the part of a data agent thread's state the tests read.
type dataState struct {
	Values dataagent.State `json:"values"`
}

func (c apiClient) dataState(thread string) dataagent.State {
	c.t.Helper()
	code, body, _ := c.call("GET", "/api/v1/threads/"+thread+"/state", "")
	if code != 200 {
		c.t.Fatalf("state: %d %v", code, body)
	}
	var st dataState
	b, _ := json.Marshal(body["state"])
	if err := json.Unmarshal(b, &st); err != nil {
		c.t.Fatal(err)
	}
	return st.Values
}

// handQuery runs a hand-written query on the demo data set, as text cells.
func handQuery(t *testing.T, pool *pgxpool.Pool, sql string) [][]string {
	t.Helper()
	rows, err := pool.Query(context.Background(), sql)
	if err != nil {
		t.Fatalf("%v\n%s", err, sql)
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			t.Fatal(err)
		}
		var row []string
		for _, v := range vals {
			b, _ := json.Marshal(v)
			row = append(row, strings.Trim(string(b), `"`))
		}
		out = append(out, row)
	}
	return out
}

// lastResult is the result of the turn's last sql step.
func lastResult(s dataagent.State) *dataagent.ResultSet {
	for i := len(s.Steps) - 1; i >= 0; i-- {
		if s.Steps[i].Tool == dataagent.ToolSQL && s.Steps[i].Result != nil {
			return s.Steps[i].Result
		}
	}
	return nil
}

// TestDataAgentThroughTheAPI: a question started from the API's start fields pauses with its
// plan for review; a rejection without feedback is refused, one with feedback has the plan
// rebuilt, an approval runs it; the report streams as report_chunk events, and the answer's
// numbers are those of a hand-written query; the report and the result download; a follow-up
// on the same thread builds on the question (and waits while a run is in progress); another
// tenant sees none of it.
func TestDataAgentThroughTheAPI(t *testing.T) {
	a, authSvc, base := dataConsole(t)
	pm, rev, other := apiClients(t, authSvc, base)

	code, body, _ := pm.call("POST", "/api/v1/runs", `{"workflow": "data_agent", "input": {"question": " ", "human_review": "yes"}}`)
	fields, _ := body["error"].(map[string]any)["fields"].(map[string]any)
	if code != 400 || fields["question"] == nil || fields["human_review"] != "must be true or false" {
		t.Fatalf("bad start: %d %v", code, body)
	}
	code, body, _ = pm.call("POST", "/api/v1/runs", `{"workflow": "data_agent", "input": {"question": "GMV by region last month", "human_review": true}}`)
	if code != 202 {
		t.Fatalf("start: %d %v", code, body)
	}
	thread := body["thread_id"].(string)

	events := pm.eventNames(thread, "custom", 256)

	// The plan waits for a reviewer; its SQL has not run.
	waitJobStatus(t, a, thread, runner.WaitingReview)
	s := rev.dataState(thread)
	if s.Status != dataagent.StatusWaitingReview || s.Plan == nil || !strings.Contains(s.Plan.Steps[0].SQLDraft, "GROUP BY") || lastResult(s) != nil {
		t.Fatalf("paused state: %s %+v", s.Status, s.Plan)
	}
	resume := func(decision, comment string) (int, map[string]any) {
		t.Helper()
		code, body, _ := rev.call("POST", "/api/v1/threads/"+thread+"/resume-token", "")
		if code != 201 {
			t.Fatalf("resume token: %d %v", code, body)
		}
		b, _ := json.Marshal(map[string]any{"resume_token": body["resume_token"], "decision": decision, "comment": comment,
			"editor": map[string]string{"reviewer_id": "u_reviewer"}})
		code, body, _ = rev.call("POST", "/api/v1/threads/"+thread+"/resume", string(b))
		return code, body
	}
	if code, body := resume("reject", ""); code != 400 {
		t.Fatalf("a rejection without feedback: %d %v", code, body)
	}
	if code, body := resume("reject", "only East China"); code != 202 {
		t.Fatalf("reject: %d %v", code, body)
	}
	waitJobStatus(t, a, thread, runner.WaitingReview)
	s = rev.dataState(thread)
	if s.PlanVersion != 2 || !strings.Contains(s.Plan.Steps[0].SQLDraft, "'Shanghai', 'Jiangsu', 'Zhejiang'") {
		t.Fatalf("the rebuilt plan: version %d %+v", s.PlanVersion, s.Plan)
	}
	if code, body := resume("approve", ""); code != 202 {
		t.Fatalf("approve: %d %v", code, body)
	}
	waitJobStatus(t, a, thread, runner.Succeeded)
	s = pm.dataState(thread)
	got := lastResult(s)
	want := handQuery(t, a.DB.Pool(), `SELECT r.name, sum(o.amount)::text FROM analytics.orders o JOIN analytics.customers c USING (customer_id)
		JOIN analytics.regions r USING (region_id) WHERE o.status = 'paid' AND r.name IN ('Shanghai', 'Jiangsu', 'Zhejiang')
		AND o.ordered_at >= date_trunc('month', now()) - interval '1 month' AND o.ordered_at < date_trunc('month', now()) GROUP BY 1 ORDER BY sum(o.amount) DESC`)
	if s.Status != dataagent.StatusAnswered || got == nil || !sameCells(got.Rows, want) {
		t.Fatalf("answer: %s %+v, want %v", s.Status, got, want)
	}
	chunks := 0
	for deadline := time.After(10 * time.Second); chunks < 3; {
		select {
		case name := <-events:
			if name == dataagent.EventReportChunk {
				chunks++
			}
		case <-deadline:
			t.Fatalf("report_chunk events: %d", chunks)
		}
	}

	// The report and the result table download; another tenant gets a 404.
	code, body, h := pm.call("GET", "/api/v1/threads/"+thread+"/artifacts/turns/1/step-1.csv", "")
	if csv, _ := body["raw"].(string); code != 200 || !strings.HasPrefix(csv, "region,gmv\n") || !strings.Contains(csv, "Shanghai") ||
		!strings.HasPrefix(h.Get("Content-Type"), "text/csv") {
		t.Fatalf("the result as CSV: %d %v", code, body)
	}
	code, body, _ = pm.call("GET", "/api/v1/threads/"+thread+"/artifacts/turns/1/report.md", "")
	if md, _ := body["raw"].(string); code != 200 || !strings.Contains(md, "## Plan") || !strings.Contains(md, "```sql") {
		t.Fatalf("the report as Markdown: %d %v", code, body)
	}
	for _, p := range []string{"/api/v1/threads/" + thread + "/state", "/api/v1/threads/" + thread + "/artifacts/turns/1/report.md"} {
		if code, _, _ := other.call("GET", p, ""); code != 404 {
			t.Fatalf("another tenant's %s: %d", p, code)
		}
	}
	if code, _, _ := other.call("POST", "/api/v1/threads/"+thread+"/runs", `{"input": {"question": "and for last quarter?"}}`); code != 404 {
		t.Fatalf("another tenant's follow-up: %d", code)
	}
	if code, _, _ := rev.call("POST", "/api/v1/threads/"+thread+"/runs", `{"input": {"question": "and for last quarter?"}}`); code != 403 {
		t.Fatalf("a reviewer's follow-up: %d", code)
	}

	// A follow-up continues the thread with the question before it; a second one waits.
	code, body, _ = pm.call("POST", "/api/v1/threads/"+thread+"/runs", `{"input": {"question": "and for last quarter?"}}`)
	if code != 202 || body["thread_id"] != thread {
		t.Fatalf("follow-up: %d %v", code, body)
	}
	if code, body, _ := pm.call("POST", "/api/v1/threads/"+thread+"/runs", `{"input": {"question": "只看华东"}}`); code != 409 {
		t.Fatalf("a follow-up while one runs: %d %v", code, body)
	}
	waitJobStatus(t, a, thread, runner.Succeeded)
	s = pm.dataState(thread)
	if len(s.Context.Turns) != 2 || s.Turn != 2 || !s.Query.FollowUp || s.Status != dataagent.StatusAnswered ||
		s.Query.Standalone != "GMV by region last quarter (only East China)" {
		t.Fatalf("after the follow-up: turn %d, turns %d, follow-up %v, status %s, read as %q", s.Turn, len(s.Context.Turns), s.Query.FollowUp, s.Status, s.Query.Standalone)
	}
	// It keeps what the reviewer's feedback changed: East China, for last quarter now.
	want = handQuery(t, a.DB.Pool(), `SELECT r.name, sum(o.amount)::text FROM analytics.orders o JOIN analytics.customers c USING (customer_id)
		JOIN analytics.regions r USING (region_id) WHERE o.status = 'paid' AND r.name IN ('Shanghai', 'Jiangsu', 'Zhejiang')
		AND o.ordered_at >= date_trunc('quarter', now()) - interval '3 months' AND o.ordered_at < date_trunc('quarter', now()) GROUP BY 1 ORDER BY sum(o.amount) DESC`)
	if got := lastResult(s); got == nil || !sameCells(got.Rows, want) {
		t.Fatalf("last quarter by region: %+v, want %v\n%s", got, want, s.Steps[0].SQL)
	}
	if rec := s.Context.Turns[0].Record; rec == nil || rec.Report == nil || len(rec.Steps) == 0 || rec.Steps[0].Result == nil {
		t.Fatalf("turn 1's record: %+v", rec)
	}

	// A follow-up's refusals: bad fields, an unknown thread, a workflow that takes none.
	code, body, _ = pm.call("POST", "/api/v1/threads/"+thread+"/runs", `{"input": {"question": "", "colour": 1}}`)
	fields, _ = body["error"].(map[string]any)["fields"].(map[string]any)
	if code != 400 || fields["question"] == nil || fields["colour"] == nil {
		t.Fatalf("a bad follow-up: %d %v", code, body)
	}
	if code, _, _ := pm.call("POST", "/api/v1/threads/no-such-thread/runs", `{"input": {"question": "and?"}}`); code != 404 {
		t.Fatalf("a follow-up on no thread: %d", code)
	}
	code, body, _ = pm.call("POST", "/api/v1/runs", `{"workflow": "tour", "input": {"question": "Why checkpoints?"}}`)
	if code != 202 {
		t.Fatalf("start a tour: %d %v", code, body)
	}
	tour := body["thread_id"].(string)
	waitJobStatus(t, a, tour, runner.WaitingReview)
	code, body, _ = pm.call("POST", "/api/v1/threads/"+tour+"/runs", `{"input": {"question": "and?"}}`)
	if e, _ := body["error"].(map[string]any); code != 400 || !strings.Contains(e["message"].(string), "takes no follow-up") {
		t.Fatalf("a follow-up on a tour: %d %v", code, body)
	}
}

// sameCells compares result cells, numbers to 4 decimals.
func sameCells(got, want [][]string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if len(got[i]) != len(want[i]) {
			return false
		}
		for j := range got[i] {
			if trimNum(got[i][j]) != trimNum(want[i][j]) {
				return false
			}
		}
	}
	return true
}

func trimNum(s string) string {
	if strings.Contains(s, ".") && strings.Trim(s, "0123456789.-") == "" {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// TestDataAgentFeedbackLimitThroughTheAPI: a plan rejected with feedback is rebuilt each time
// (a new plan version in the review); the 4th rejection, over the limit of 3, ends the turn
// without running any SQL, and the report says it was stopped.
func TestDataAgentFeedbackLimitThroughTheAPI(t *testing.T) {
	a, authSvc, base := dataConsole(t)
	ctx := context.Background()
	pmTok, err := authSvc.IssueAPIToken(ctx, app.DemoTenant, "pm", auth.PM, "test")
	if err != nil {
		t.Fatal(err)
	}
	revTok, err := authSvc.IssueAPIToken(ctx, app.DemoTenant, "rev", auth.Reviewer, "test")
	if err != nil {
		t.Fatal(err)
	}
	pm, rev := apiClient{t, base, pmTok}, apiClient{t, base, revTok}
	code, body, _ := pm.call("POST", "/api/v1/runs", `{"workflow": "data_agent", "input": {"question": "What was the GMV last month?", "human_review": true}}`)
	if code != 202 {
		t.Fatalf("start: %d %v", code, body)
	}
	thread := body["thread_id"].(string)
	for i := 1; i <= dataagent.MaxFeedbackRounds+1; i++ {
		waitJobStatus(t, a, thread, runner.WaitingReview)
		if v := rev.dataState(thread).PlanVersion; v != i {
			t.Fatalf("review %d shows plan version %d", i, v)
		}
		code, body, _ := rev.call("POST", "/api/v1/threads/"+thread+"/resume-token", "")
		if code != 201 {
			t.Fatalf("resume token: %d %v", code, body)
		}
		b, _ := json.Marshal(map[string]any{"resume_token": body["resume_token"], "decision": "reject", "comment": "by month instead",
			"editor": map[string]string{"reviewer_id": "u_reviewer"}})
		if code, body, _ = rev.call("POST", "/api/v1/threads/"+thread+"/resume", string(b)); code != 202 {
			t.Fatalf("rejection %d: %d %v", i, code, body)
		}
	}
	waitJobStatus(t, a, thread, runner.Succeeded)
	s := pm.dataState(thread)
	if s.Status != dataagent.StatusStopped || s.Report == nil || !strings.Contains(s.Report.Summary, "rejected 4 times, over the limit of 3") {
		t.Fatalf("after 4 rejections: %s %+v", s.Status, s.Report)
	}
	if r := lastResult(s); r != nil {
		t.Errorf("SQL ran although no plan was approved: %+v", r)
	}
}
