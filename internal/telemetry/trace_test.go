package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/crypto/bcrypt"

	"weft/internal/app"
	"weft/internal/auth"
	"weft/internal/fault"
	"weft/internal/llm"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
	"weft/internal/server"
	"weft/internal/telemetry"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// firstAttemptFails is the offline provider, except that a job's first attempt gets a
// transient failure from every scoring call: the node retries in the graph, then the job is
// retried, and its second attempt succeeds.
type firstAttemptFails struct{ llm.Provider }

func (f firstAttemptFails) ScoreCriteria(ctx context.Context, req llm.ScoreRequest) (llm.ScoreResult, error) {
	if j, ok := runner.JobFromContext(ctx); ok && j.RetryCount == 0 {
		return llm.ScoreResult{}, fault.New(fault.Transient, fault.CodeLLMTransient, "the model server is overloaded (test)")
	}
	return f.Provider.ScoreCriteria(ctx, req)
}

// console is a real console (App, workers, HTTP server) on a fresh database with the demo
// loaded, whose spans go to an in-memory exporter.
type console struct {
	t   *testing.T
	app *app.App
	srv *httptest.Server
	exp *tracetest.InMemoryExporter
	// tokens are API tokens of the demo tenant by role.
	tokens map[auth.Role]string
}

func newConsole(t *testing.T) *console {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := telemetry.NewProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	a, err := app.Open(context.Background(), app.Config{DatabaseURL: pgtest.URL(t), LLM: firstAttemptFails{llm.NewOffline()}, Tracer: tp,
		Runner: runner.Config{Lease: 5 * time.Second, PollInterval: 50 * time.Millisecond, Backoff: func(int) time.Duration { return 0 }}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	authSvc := auth.New(a.DB, auth.Options{HashCost: bcrypt.MinCost})
	if _, err := a.SeedDemoAll(context.Background(), authSvc); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.New(server.Config{App: a, Auth: authSvc, LoginRate: 10000}).Handler())
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = a.RunWorkers(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	c := &console{t: t, app: a, srv: srv, exp: exp}
	c.tokens = map[auth.Role]string{}
	for _, r := range []auth.Role{auth.PM, auth.Reviewer} {
		tok, err := authSvc.IssueAPIToken(context.Background(), app.DemoTenant, "otel-"+string(r), r, "test")
		if err != nil {
			t.Fatal(err)
		}
		c.tokens[r] = tok
	}
	return c
}

// call sends an API request as role with the W3C traceparent tp ("" for none).
func (c *console) call(role auth.Role, method, path, body, tp string) (int, map[string]any) {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.srv.URL+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.tokens[role])
	req.Header.Set("Content-Type", "application/json")
	if tp != "" {
		req.Header.Set("traceparent", tp)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return res.StatusCode, out
}

// waitThread polls until the newest job of the demo tenant's thread is want.
func (c *console) waitThread(thread string, want runner.Status) runner.Job {
	c.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		jobs, err := c.app.Jobs.ThreadJobs(context.Background(), app.DemoTenant, thread, 1)
		if err == nil && len(jobs) > 0 && jobs[0].Status == want {
			return jobs[0]
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("thread %s never reached %s (%+v, %v)", thread, want, jobs, err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// waitSpans polls until the exported spans satisfy ok (spans end just after what the test
// waits for), and returns them.
func (c *console) waitSpans(ok func(spans) bool) spans {
	c.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ss := spans(c.exp.GetSpans())
		if ok(ss) {
			return ss
		}
		if time.Now().After(deadline) {
			c.t.Fatal("the spans never showed what the test waits for")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// spans is the exporter's spans, and helpers to walk them.
type spans []tracetest.SpanStub

func (ss spans) where(keep func(tracetest.SpanStub) bool) spans {
	var out spans
	for _, s := range ss {
		if keep(s) {
			out = append(out, s)
		}
	}
	return out
}

func (ss spans) children(parent tracetest.SpanStub) spans {
	return ss.where(func(s tracetest.SpanStub) bool { return s.Parent.SpanID() == parent.SpanContext.SpanID() })
}

// descends reports whether s has an ancestor for which is holds.
func (ss spans) descends(s tracetest.SpanStub, is func(tracetest.SpanStub) bool) bool {
	byID := map[trace.SpanID]tracetest.SpanStub{}
	for _, x := range ss {
		byID[x.SpanContext.SpanID()] = x
	}
	for p, ok := byID[s.Parent.SpanID()]; ok; p, ok = byID[p.Parent.SpanID()] {
		if is(p) {
			return true
		}
	}
	return false
}

func attr(s tracetest.SpanStub, key string) attribute.Value {
	for _, kv := range s.Attributes {
		if string(kv.Key) == key {
			return kv.Value
		}
	}
	return attribute.Value{}
}

func hasEvent(s tracetest.SpanStub, name string) bool {
	for _, e := range s.Events {
		if e.Name == name {
			return true
		}
	}
	return false
}

// TestTraceOfABidEvaluation starts a bid evaluation through the API with a caller's
// traceparent and follows its trace: the HTTP request's span → each job attempt (the first
// fails transiently and is retried, the second is linked to it) → a span per node with seed
// 000 §10's fields → its LLM and database spans; the node records carry the trace's id. A
// resume through the API with another caller's traceparent links the resumed run to it.
func TestTraceOfABidEvaluation(t *testing.T) {
	t.Parallel()
	c := newConsole(t)
	ctx := context.Background()
	// The demo's runs: each fails its first attempt and is retried; northwind ends, and
	// bluewater pauses for review.
	c.waitThread("ev_demo-northwind", runner.Succeeded)
	c.waitThread("ev_demo-bluewater", runner.WaitingReview)

	caller := "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	code, body := c.call(auth.PM, "POST", "/api/v1/runs", `{"workflow":"bid_evaluation","input":{"evaluation_id":"ev_demo-northwind"}}`, caller)
	if code != http.StatusAccepted && code != http.StatusOK && code != http.StatusCreated {
		t.Fatalf("start: %d %v", code, body)
	}
	jobID, _ := body["job_id"].(string)
	if body["trace_id"] != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("the run's trace id is %v, want the caller's", body["trace_id"])
	}
	j := c.waitThread("ev_demo-northwind", runner.Succeeded)
	if j.ID != jobID || j.RetryCount != 1 {
		t.Fatalf("the run's job %s ended with retry count %d, want job %s retried once", j.ID, j.RetryCount, jobID)
	}

	// (The attempt's span ends just after its job comes to rest.)
	all := c.waitSpans(func(ss spans) bool {
		return len(ss.where(func(s tracetest.SpanStub) bool {
			return s.Name == "run bid_evaluation" && attr(s, "weft.job_id").AsString() == jobID && attr(s, "weft.status").AsString() == string(runner.Succeeded)
		})) == 1
	})
	trace4bf := all.where(func(s tracetest.SpanStub) bool {
		return s.SpanContext.TraceID().String() == "4bf92f3577b34da6a3ce929d0e0e4736"
	})
	// The HTTP request: a server span, the caller's child.
	https := trace4bf.where(func(s tracetest.SpanStub) bool { return s.SpanKind == trace.SpanKindServer })
	if len(https) != 1 || https[0].Parent.SpanID().String() != "00f067aa0ba902b7" || !strings.Contains(https[0].Name, "/api/v1/runs") {
		t.Fatalf("HTTP spans of the trace: %+v", https)
	}
	// The job's two attempts: children of the request, the second linked to the first.
	runs := all.children(https[0]).where(func(s tracetest.SpanStub) bool { return s.Name == "run bid_evaluation" })
	if len(runs) != 2 {
		t.Fatalf("%d run spans under the request, want 2 (an attempt that failed, its retry)", len(runs))
	}
	first, second := runs[0], runs[1]
	if attr(first, "weft.attempt").AsInt64() != 1 {
		first, second = second, first
	}
	for i, r := range []tracetest.SpanStub{first, second} {
		if attr(r, "weft.attempt").AsInt64() != int64(i+1) || attr(r, "weft.job_id").AsString() != jobID ||
			attr(r, "weft.thread_id").AsString() != "ev_demo-northwind" || attr(r, "weft.workflow").AsString() != "bid_evaluation" ||
			attr(r, "weft.tenant_id").AsString() != app.DemoTenant {
			t.Errorf("attempt %d's attributes: %v", i+1, r.Attributes)
		}
	}
	if first.Status.Code != codes.Error || attr(first, "weft.error_class").AsString() != "transient" || attr(first, "weft.error_code").AsString() == "" ||
		attr(first, "weft.status").AsString() != string(runner.RetryScheduled) {
		t.Errorf("the failed attempt: status %+v, attributes %v", first.Status, first.Attributes)
	}
	if second.Status.Code == codes.Error || attr(second, "weft.status").AsString() != string(runner.Succeeded) {
		t.Errorf("the second attempt: status %+v, attributes %v", second.Status, second.Attributes)
	}
	if len(second.Links) != 1 || second.Links[0].SpanContext.SpanID() != first.SpanContext.SpanID() {
		t.Errorf("the second attempt's links %+v, want the first attempt %s", second.Links, first.SpanContext.SpanID())
	}

	// Each node execution recorded for the job is a node span of its attempt, with the
	// record's fields; the records carry the trace's id.
	recs, err := c.app.DB.ListNodeExecutions(ctx, app.DemoTenant, "ev_demo-northwind")
	if err != nil {
		t.Fatal(err)
	}
	nodes := trace4bf.where(func(s tracetest.SpanStub) bool { return strings.HasPrefix(s.Name, "node ") })
	// A retry runs the failed task again under the same task id: a record's span is the one
	// of its task that ended as it did.
	byTask := map[string]tracetest.SpanStub{}
	for _, n := range nodes {
		byTask[attr(n, "weft.task_id").AsString()+"/"+attr(n, "weft.error_code").AsString()] = n
	}
	seen := map[string]bool{}
	for _, r := range recs {
		if r.JobID != jobID {
			continue
		}
		if r.TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" {
			t.Errorf("node record %s has trace id %s", r.Node, r.TraceID)
		}
		n, ok := byTask[r.TaskID+"/"+r.ErrorCode]
		if !ok {
			t.Errorf("node record %s (task %s) has no span", r.Node, r.TaskID)
			continue
		}
		seen[r.Node] = true
		if n.Parent.SpanID() != first.SpanContext.SpanID() && n.Parent.SpanID() != second.SpanContext.SpanID() {
			t.Errorf("node span %s is not a child of an attempt", n.Name)
		}
		if attr(n, "weft.node_name").AsString() != r.Node || attr(n, "weft.thread_id").AsString() != "ev_demo-northwind" ||
			attr(n, "weft.trace_id").AsString() != r.TraceID || attr(n, "weft.input_size").AsInt64() != int64(r.InputSize) ||
			attr(n, "weft.output_size").AsInt64() != int64(r.OutputSize) || attr(n, "weft.error_code").AsString() != r.ErrorCode ||
			attr(n, "weft.started_at").AsString() == "" || attr(n, "weft.ended_at").AsString() == "" || attr(n, "weft.latency_ms").Type() != attribute.FLOAT64 {
			t.Errorf("node span %s's attributes %v, record %+v", n.Name, n.Attributes, r)
		}
	}
	for _, want := range []string{"load_context", "retrieve_evidence", "evaluate_rules", "score_with_llm", "quality_gate", "finalize_report", "persist_result"} {
		if !seen[want] {
			t.Errorf("no node record with a span for %s (saw %v)", want, seen)
		}
	}
	// The failed scoring: retried in the graph (events), an error with its class and code.
	failed := nodes.where(func(s tracetest.SpanStub) bool {
		return attr(s, "weft.node_name").AsString() == "score_with_llm" && s.Parent.SpanID() == first.SpanContext.SpanID()
	})
	if len(failed) != 1 || !hasEvent(failed[0], "retry") || failed[0].Status.Code != codes.Error ||
		attr(failed[0], "weft.error_code").AsString() != fault.CodeLLMTransient || attr(failed[0], "weft.error_class").AsString() != "transient" {
		t.Fatalf("the first attempt's scoring span: %+v", failed)
	}
	// LLM calls: children of the scoring node, with the provider and model.
	llms := trace4bf.where(func(s tracetest.SpanStub) bool {
		return s.SpanKind == trace.SpanKindClient && strings.HasPrefix(s.Name, "score_criteria ")
	})
	if len(llms) < 2 {
		t.Fatalf("%d LLM spans, want the failing calls and the one that answered", len(llms))
	}
	for _, l := range llms {
		if p, ok := byTaskOf(nodes, l); !ok || attr(p, "weft.node_name").AsString() != "score_with_llm" ||
			attr(l, "gen_ai.provider.name").AsString() != "offline" || attr(l, "gen_ai.request.model").AsString() != "offline" ||
			attr(l, "weft.latency_ms").Type() != attribute.FLOAT64 {
			t.Errorf("LLM span %s: parent %v, attributes %v", l.Name, l.Parent.SpanID(), l.Attributes)
		}
	}
	// Database spans (otelpgx) under the nodes that read and write the evaluation.
	dbUnderNode := trace4bf.where(func(s tracetest.SpanStub) bool {
		return attr(s, "db.query.text").AsString() != "" && trace4bf.descends(s, func(p tracetest.SpanStub) bool { return strings.HasPrefix(p.Name, "node ") })
	})
	if len(dbUnderNode) == 0 {
		t.Fatal("no database span under a node span")
	}

	// A resume through the API with another caller's traceparent: the resumed run, in the
	// job's own trace, links to the caller's span.
	code, body = c.call(auth.Reviewer, "POST", "/api/v1/threads/ev_demo-bluewater/resume-token", "", "")
	token, _ := body["resume_token"].(string)
	if code != http.StatusCreated || token == "" {
		t.Fatalf("resume token: %d %v", code, body)
	}
	resumer := "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	if code, body = c.call(auth.Reviewer, "POST", "/api/v1/threads/ev_demo-bluewater/resume",
		`{"resume_token":"`+token+`","decision":"approve","comment":"ok","editor":{"reviewer_id":"u_reviewer"}}`, resumer); code != http.StatusAccepted {
		t.Fatalf("resume: %d %v", code, body)
	}
	bw := c.waitThread("ev_demo-bluewater", runner.Succeeded)
	var resumed spans
	all = c.waitSpans(func(ss spans) bool {
		resumed = ss.where(func(s tracetest.SpanStub) bool {
			return s.Name == "run bid_evaluation" && attr(s, "weft.job_id").AsString() == bw.ID && attr(s, "weft.status").AsString() == string(runner.Succeeded)
		})
		return len(resumed) == 1
	})
	// The link is to the resume request's server span, the caller's child.
	req := all.where(func(s tracetest.SpanStub) bool {
		return s.SpanKind == trace.SpanKindServer && s.Parent.SpanID().String() == "b7ad6b7169203331"
	})
	if len(req) != 1 || !strings.Contains(req[0].Name, "/resume") || req[0].SpanContext.TraceID().String() != "0af7651916cd43dd8448eb211c80319c" {
		t.Fatalf("the resume request's span: %+v", req)
	}
	linked := false
	for _, l := range resumed[0].Links {
		linked = linked || l.SpanContext.SpanID() == req[0].SpanContext.SpanID() && l.Attributes[0].Value.AsString() == "caller"
	}
	if l := resumed[0].Links; resumed[0].SpanContext.TraceID().String() != bw.TraceID || !linked {
		t.Fatalf("the resumed run (trace %s, job trace %s) links to %+v, want the resume request's span", resumed[0].SpanContext.TraceID(), bw.TraceID, l)
	}
}

// byTaskOf is the node span that is s's parent.
func byTaskOf(nodes spans, s tracetest.SpanStub) (tracetest.SpanStub, bool) {
	for _, n := range nodes {
		if n.SpanContext.SpanID() == s.Parent.SpanID() {
			return n, true
		}
	}
	return tracetest.SpanStub{}, false
}

// metric is the value of the series named series (with its labels, as /metrics prints
// them) in a scrape, -1 when absent.
func metric(scrape, series string) float64 {
	for _, line := range strings.Split(scrape, "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}

// TestRunMetricsAtMetrics scrapes /metrics after the demo's runs (each retried once after
// a transient failure; one dead-lettered; one paused, then resumed): the queue wait, run
// duration, retries, dead letters, review wait and interrupts are there, per workflow.
func TestRunMetricsAtMetrics(t *testing.T) {
	t.Parallel()
	c := newConsole(t)
	c.waitThread("ev_demo-northwind", runner.Succeeded)
	c.waitThread("ev_demo-harbor", runner.Failed)
	paused := c.waitThread("ev_demo-bluewater", runner.WaitingReview)
	_, body := c.call(auth.Reviewer, "POST", "/api/v1/threads/ev_demo-bluewater/resume-token", "", "")
	token, _ := body["resume_token"].(string)
	if code, body := c.call(auth.Reviewer, "POST", "/api/v1/threads/ev_demo-bluewater/resume",
		`{"resume_token":"`+token+`","decision":"approve","comment":"ok","editor":{"reviewer_id":"u_reviewer"}}`, ""); code != http.StatusAccepted {
		t.Fatalf("resume: %d %v", code, body)
	}
	c.waitThread("ev_demo-bluewater", runner.Succeeded)
	harbor, err := c.app.Jobs.ThreadJobs(context.Background(), app.DemoTenant, "ev_demo-harbor", 1)
	if err != nil || len(harbor) != 1 || len(harbor[0].Errors) == 0 {
		t.Fatalf("harbor's job: %+v %v", harbor, err)
	}
	dlqClass := string(harbor[0].Errors[len(harbor[0].Errors)-1].Class)

	wf := `workflow="bid_evaluation"`
	want := map[string]float64{
		`weft_queue_wait_seconds_count{` + wf + `}`:                             4, // the demo's runs and their retries
		`weft_run_duration_seconds_count{outcome="retry_scheduled",` + wf + `}`: 2, // the first attempts that scored
		`weft_run_duration_seconds_count{outcome="succeeded",` + wf + `}`:       3,
		`weft_run_duration_seconds_count{outcome="waiting_review",` + wf + `}`:  1,
		`weft_job_retries_total{class="transient",` + wf + `}`:                  2,
		`weft_dlq_entries_total{class="` + dlqClass + `",` + wf + `}`:           1,
		`weft_review_wait_seconds_count{` + wf + `}`:                            1,
		`weft_interrupts_total{` + wf + `}`:                                     1,
	}
	// (A job's metrics are counted just after it comes to rest: scrape until they are.)
	var scrape string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		res, err := http.Get(c.srv.URL + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		scrape = string(b)
		var short []string
		for series, atLeast := range want {
			if got := metric(scrape, series); got < atLeast {
				short = append(short, fmt.Sprintf("%s = %v, want at least %v", series, got, atLeast))
			}
		}
		if len(short) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics short:\n%s", strings.Join(short, "\n"))
		}
	}
	// Every metric the shipped Grafana dashboard queries is served.
	dash, err := os.ReadFile("grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var board struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(dash, &board); err != nil || len(board.Panels) == 0 {
		t.Fatalf("the dashboard: %v", err)
	}
	for _, p := range board.Panels {
		for _, tg := range p.Targets {
			for _, name := range regexp.MustCompile(`weft_[a-z_]+`).FindAllString(tg.Expr, -1) {
				base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_count"), "_sum")
				if !strings.Contains(scrape, "# TYPE "+base+" ") {
					t.Errorf("panel %q queries %s, which /metrics does not serve", p.Title, name)
				}
			}
		}
	}
	if wait := metric(scrape, `weft_review_wait_seconds_sum{`+wf+`}`); wait <= 0 || wait > time.Since(paused.UpdatedAt).Seconds()+60 {
		t.Errorf("review wait sum %v s", wait)
	}
}
