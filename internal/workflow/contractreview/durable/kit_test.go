package durable_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"weft/internal/app"
	"weft/internal/auth"
	"weft/internal/graph"
	"weft/internal/llm"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
	"weft/internal/server"
	cr "weft/internal/workflow/contractreview"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// The demo tenant's reviewers: the demo's, and a second one for decisions made at once.
const (
	reviewerID, reviewerName   = "u_reviewer", "Ravi Rao"
	reviewer2ID, reviewer2Name = "u_reviewer2", "Li Na"
)

// kit is a console and API on a fresh database, the contract review registered as weft
// registers it (app.Open), the demo tenants and users, and (unless told not to) workers.
type kit struct {
	t    *testing.T
	app  *app.App
	auth *auth.Service
	base string
	g    *graph.Graph[cr.ReviewGraphState]
}

// open builds the kit on the database at url with provider (nil: offline).
func open(t *testing.T, url string, provider llm.Provider, work bool) *kit {
	t.Helper()
	ctx := context.Background()
	if provider == nil {
		provider = llm.NewOffline()
	}
	a, err := app.Open(ctx, app.Config{DatabaseURL: url, LLM: provider, Runner: runner.Config{
		Lease: 2 * time.Second, RescueEvery: 500 * time.Millisecond, PollInterval: 50 * time.Millisecond, Concurrency: 2,
		Backoff: func(int) time.Duration { return 0 }}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	authSvc := auth.New(a.DB, auth.Options{HashCost: bcrypt.MinCost})
	k := &kit{t: t, app: a, auth: authSvc}
	def, ok := a.Registry.Get(cr.Name)
	if !ok {
		t.Fatal("contract review is not registered")
	}
	k.g = def.Graph.(*graph.Graph[cr.ReviewGraphState])
	srv := httptest.NewServer(server.New(server.Config{App: a, Auth: authSvc, LoginRate: 10000, DemoLogins: server.DemoLogins()}).Handler())
	t.Cleanup(srv.Close)
	k.base = srv.URL
	if work {
		wctx, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = a.RunWorkers(wctx) }()
		t.Cleanup(func() { stop(); <-done })
	}
	return k
}

// seedUsers creates the demo tenants and users, and the second reviewer.
func seedUsers(t *testing.T, a *app.App, authSvc *auth.Service) {
	t.Helper()
	ctx := context.Background()
	for _, tenant := range []string{app.DemoTenant, app.OtherTenant} {
		if err := a.Tenants.Create(ctx, tenant, tenant); err != nil {
			t.Fatal(err)
		}
	}
	users := append(auth.DemoUsers(app.DemoTenant, app.OtherTenant),
		auth.User{ID: reviewer2ID, TenantID: app.DemoTenant, Email: "li.na@demo.weft", Name: reviewer2Name, Role: auth.Reviewer})
	for _, u := range users {
		if err := authSvc.CreateUser(ctx, u, auth.DemoPassword); err != nil {
			t.Fatal(err)
		}
	}
}

// newKit is a kit on a fresh database with its users, its workers running.
func newKit(t *testing.T) *kit {
	t.Helper()
	k := open(t, pgtest.URL(t), nil, true)
	seedUsers(t, k.app, k.auth)
	return k
}

// client is an API client with a new token of the role in the tenant.
func (k *kit) client(tenant string, role auth.Role) api {
	k.t.Helper()
	tok, err := k.auth.IssueAPIToken(context.Background(), tenant, "test-"+string(role)+"-"+time.Now().Format("150405.000000000"), role, "test")
	if err != nil {
		k.t.Fatal(err)
	}
	return api{t: k.t, base: k.base, token: tok}
}

// api is a program calling the API with a token.
type api struct {
	t     *testing.T
	base  string
	token string
}

// do sends body (as JSON) and returns the status, the answer decoded as an object (or
// {"raw": text}) and the headers.
func (c api) do(method, path string, body []byte) (int, map[string]any, http.Header) {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.token)
	if len(body) > 0 {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var out map[string]any
	if json.Unmarshal(b, &out) != nil || out == nil {
		out = map[string]any{"raw": string(b)}
	}
	return res.StatusCode, out, res.Header
}

func (c api) call(method, path string, body any) (int, map[string]any) {
	c.t.Helper()
	var b []byte
	if body != nil {
		var err error
		if b, err = json.Marshal(body); err != nil {
			c.t.Fatal(err)
		}
	}
	code, out, _ := c.do(method, path, b)
	return code, out
}

// startBody is POST /api/v1/runs' body for a review of the file name holding data.
func startBody(name string, data []byte, fields map[string]any) []byte {
	in := map[string]any{cr.FieldContract: map[string]string{"name": name, "content_base64": base64.StdEncoding.EncodeToString(data)}}
	for k, v := range fields {
		in[k] = v
	}
	b, _ := json.Marshal(map[string]any{"workflow": cr.Name, "input": in})
	return b
}

// start starts a review through the API; it returns the thread (the test fails unless 202).
func (c api) start(name string, data []byte, fields map[string]any) string {
	c.t.Helper()
	code, body, _ := c.do(http.MethodPost, "/api/v1/runs", startBody(name, data, fields))
	if code != http.StatusAccepted {
		c.t.Fatalf("start a review of %s: %d %v", name, code, body)
	}
	return body["thread_id"].(string)
}

// decide answers the thread's pause as the reviewer: a resume token, then the resume with
// the answer's keys (decision, items, approve_all, clause_id, …).
func (c api) decide(thread, reviewer string, answer map[string]any) (int, map[string]any) {
	c.t.Helper()
	code, body := c.call(http.MethodPost, "/api/v1/threads/"+thread+"/resume-token", nil)
	if code != http.StatusCreated {
		c.t.Fatalf("resume token of %s: %d %v", thread, code, body)
	}
	return c.resume(thread, body["resume_token"].(string), reviewer, answer)
}

// resume posts the answer with the token.
func (c api) resume(thread, token, reviewer string, answer map[string]any) (int, map[string]any) {
	c.t.Helper()
	b := map[string]any{"resume_token": token, "editor": map[string]string{"reviewer_id": reviewer}}
	for k, v := range answer {
		b[k] = v
	}
	return c.call(http.MethodPost, "/api/v1/threads/"+thread+"/resume", b)
}

// waitThread polls until the thread's latest job is want (the deadline only guards a hang).
func (k *kit) waitThread(thread string, want runner.Status) runner.Job {
	k.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	var j runner.Job
	var err error
	for time.Now().Before(deadline) {
		j, err = k.app.Jobs.LatestForThread(context.Background(), app.DemoTenant, thread)
		if err == nil && j.Status == want {
			if ended, eerr := k.app.Events.RunEnded(context.Background(), j); j.Status != runner.Failed || eerr == nil && ended {
				return j
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	k.t.Fatalf("thread %s: job %s is %s (%v, errors %+v), want %s", thread, j.ID, j.Status, err, j.Errors, want)
	return j
}

// snapshot is the thread's head.
func (k *kit) snapshot(thread string) graph.Snapshot[cr.ReviewGraphState] {
	k.t.Helper()
	snap, err := k.g.GetState(context.Background(), graph.Config{ThreadID: thread})
	if err != nil {
		k.t.Fatalf("state of %s: %v", thread, err)
	}
	return snap
}

// visited lists the nodes the thread ran, in its committed checkpoints, oldest first.
func (k *kit) visited(thread string) []string {
	k.t.Helper()
	hist, err := k.g.History(context.Background(), graph.Config{ThreadID: thread}, graph.ListOptions{Source: graph.SourceLoop})
	if err != nil {
		k.t.Fatal(err)
	}
	var out []string
	for i := len(hist) - 1; i >= 0; i-- {
		out = append(out, hist[i].Nodes...)
	}
	return out
}

// approveRest answers every pause of the thread with approve_all until its run succeeds,
// and returns how many pauses it answered.
func (k *kit) approveRest(c api, thread string) int {
	k.t.Helper()
	for n := 0; ; n++ {
		j := k.waitRest(thread)
		if j.Status == runner.Succeeded {
			return n
		}
		if code, body := c.decide(thread, reviewerID, map[string]any{"decision": cr.DecisionApproveAll}); code != http.StatusAccepted {
			k.t.Fatalf("approve all on %s: %d %v", thread, code, body)
		}
		k.waitLeft(thread, j.ID)
	}
}

// waitRest waits until the thread's job rests: waiting for a review, or succeeded.
func (k *kit) waitRest(thread string) runner.Job {
	k.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		j, err := k.app.Jobs.LatestForThread(context.Background(), app.DemoTenant, thread)
		if err == nil && (j.Status == runner.WaitingReview || j.Status == runner.Succeeded) {
			return j
		}
		if err == nil && j.Status == runner.Failed {
			k.t.Fatalf("thread %s failed: %+v", thread, j.Errors)
		}
		time.Sleep(25 * time.Millisecond)
	}
	k.t.Fatalf("thread %s does not rest", thread)
	return runner.Job{}
}

// waitLeft waits until the job has left the pause it was answered at (a new pause has
// another interrupt).
func (k *kit) waitLeft(thread, jobID string) {
	k.t.Helper()
	before := k.snapshot(thread).Checkpoint.ID
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		j, err := k.app.Jobs.LatestForThread(context.Background(), app.DemoTenant, thread)
		if err == nil && (j.Status == runner.Succeeded || j.Status == runner.WaitingReview && k.snapshot(thread).Checkpoint.ID != before) {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	k.t.Fatalf("thread %s (job %s) did not move on from its pause", thread, jobID)
}

// supplyContract is the test contract: 1.1 states the Contract Price; 14.7 pays in 90 days
// and bars late-payment claims after 14 days (two changes); 17.6 caps liability at 10% of
// the Contract Price (one change, sized with 1.1's price); 20.1 is fair.
func supplyContract(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../testdata/supply_contract.txt")
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func diffIDs(ds []cr.DocumentDiff) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.DiffID)
	}
	return out
}

func count(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}

// errorOf is an API error's code, message and fields.
func errorOf(body map[string]any) (code, msg string, fields map[string]any) {
	e, _ := body["error"].(map[string]any)
	code, _ = e["code"].(string)
	msg, _ = e["message"].(string)
	fields, _ = e["fields"].(map[string]any)
	return code, msg, fields
}

func has(s, sub string) bool { return strings.Contains(s, sub) }
