package e2e_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"weft/internal/app"
	"weft/internal/auth"
	"weft/internal/fault"
	"weft/internal/llm"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
	"weft/internal/workflow/pagegen"
)

// pageConsole is the console and its workers on a fresh database, the demo tenants and
// users, no demo runs, page generation on provider p.
func pageConsole(t *testing.T, p llm.Provider) (*app.App, *auth.Service, string) {
	t.Helper()
	a, err := app.Open(context.Background(), app.Config{DatabaseURL: pgtest.URL(t), LLM: p, Runner: runner.Config{
		Lease: 5 * time.Second, PollInterval: 50 * time.Millisecond, Backoff: func(int) time.Duration { return 0 }}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	authSvc, url := serveTenants(t, a)
	return a, authSvc, url
}

// sseNames follows a thread's API event stream and collects its event names.
type sseNames struct {
	mu    sync.Mutex
	names []string
}

func followEvents(t *testing.T, ctx context.Context, base, token, thread string) *sseNames {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/api/v1/threads/"+thread+"/events", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		t.Fatalf("events: %d", res.StatusCode)
	}
	s := &sseNames{}
	go func() {
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(make([]byte, 1<<20), 4<<20)
		for sc.Scan() {
			if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				s.mu.Lock()
				s.names = append(s.names, name)
				s.mu.Unlock()
			}
		}
	}()
	return s
}

// waitFor waits until every name has been seen.
func (s *sseNames) waitFor(t *testing.T, names ...string) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		s.mu.Lock()
		seen := slices.Clone(s.names)
		s.mu.Unlock()
		missing := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return slices.Contains(seen, n) })
		if len(missing) == 0 {
			return seen
		}
		if time.Now().After(deadline) {
			t.Fatalf("the stream sent %v, without %v", seen, missing)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// TestPageGenerationThroughTheAPI: a session started through the API streams seed 001's
// §7.2 events, pauses at refine_gate (refine_waiting), takes the reviewer's feedback through
// the resume call and rebuilds the pages; another round on the same thread rebuilds them
// again. Bad input is refused with a 4xx and a message, and stores nothing.
func TestPageGenerationThroughTheAPI(t *testing.T) {
	a, authSvc, base := pageConsole(t, llm.NewOffline())
	ctx := context.Background()
	pm, rev, other := apiClients(t, authSvc, base)

	// Bad starts: each a 4xx naming what is wrong, and no run queued.
	b64 := func(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
	for _, tc := range []struct {
		name, input, field, says string
	}{
		{"an empty request", `{"request": "  "}`, "request", "is required"},
		{"a non-image logo", `{"request": "A site for Crumb bakery.", "logo": {"name": "logo.png", "content_base64": "` + b64([]byte("not an image at all")) + `"}}`,
			"logo", "not a PNG, JPEG or GIF"},
		{"a 10 MB logo", `{"request": "A site for Crumb bakery.", "logo": {"name": "logo.png", "content_base64": "` + b64(make([]byte, 10<<20)) + `"}}`,
			"logo", "over the 5.0 MB limit"},
		{"a PDF logo", `{"request": "A site for Crumb bakery.", "logo": {"name": "logo.pdf", "content_base64": "` + b64(pagegen.DemoLogo()) + `"}}`,
			"logo", `".pdf" file is not accepted`},
	} {
		code, body, _ := pm.call("POST", "/api/v1/runs", `{"workflow": "page_generation", "input": `+tc.input+`}`)
		e, _ := body["error"].(map[string]any)
		fields, _ := e["fields"].(map[string]any)
		msg, _ := fields[tc.field].(string)
		if code != 400 || !strings.Contains(msg, tc.says) || e["message"] == "" {
			t.Errorf("%s: %d %v; want 400 with %s %q", tc.name, code, e, tc.field, tc.says)
		}
	}
	if jobs, _, err := a.Jobs.ListJobs(ctx, postgres.JobFilter{TenantID: app.DemoTenant, Workflow: pagegen.Name}, postgres.Cursor{}, 10); err != nil || len(jobs) != 0 {
		t.Fatalf("refused starts queued %d runs (%v)", len(jobs), err)
	}

	code, body, _ := pm.call("POST", "/api/v1/runs", `{"workflow": "page_generation", "input": {"request": "`+brewlyRequest+`", "aesthetic": true}}`)
	if code != 202 {
		t.Fatalf("start: %d %v", code, body)
	}
	thread := body["thread_id"].(string)
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events := followEvents(t, sctx, base, pm.token, thread)
	seen := events.waitFor(t, "brief_start", "brief_complete", "style_extracted", "registry_complete", "generate_progress",
		"generate_complete", "refine_waiting")
	if i, j := slices.Index(seen, "brief_complete"), slices.Index(seen, "refine_waiting"); i > j {
		t.Errorf("refine_waiting came before brief_complete: %v", seen)
	}
	waitJobStatus(t, a, thread, runner.WaitingReview)

	code, body, _ = rev.call("POST", "/api/v1/threads/"+thread+"/resume-token", "")
	if code != 201 {
		t.Fatalf("resume token: %d %v", code, body)
	}
	tok := body["resume_token"].(string)
	resume := func(decision, feedback string) (int, map[string]any) {
		b, _ := json.Marshal(map[string]any{"resume_token": tok, "decision": decision, "feedback": feedback, "editor": map[string]string{"reviewer_id": "u_reviewer"}})
		code, body, _ := rev.call("POST", "/api/v1/threads/"+thread+"/resume", string(b))
		return code, body
	}
	code, body = resume(pagegen.DecisionRefine, strings.Repeat("bigger headings ", 50<<10/16))
	if e, _ := body["error"].(map[string]any); code != 400 || e["code"] != pagegen.CodeFeedbackTooLarge || !strings.Contains(e["message"].(string), "at most 10240 bytes") {
		t.Fatalf("50 KB of feedback: %d %v", code, body)
	}
	code, body = resume(pagegen.DecisionRefine, "add a FAQ page, make the primary colour darker")
	if code != 202 {
		t.Fatalf("feedback: %d %v", code, body)
	}
	events.waitFor(t, "refine_start", "refine_complete", "build_start", "build_progress", "build_complete")
	waitJobStatus(t, a, thread, runner.Succeeded)
	files := artifactKeys(t, pm, thread)
	for _, k := range []string{"pages/index.html", "pages/pricing.html", "pages/faq.html", "pages/contact.html", "site.zip"} {
		if !slices.Contains(files, k) {
			t.Errorf("the build lacks %s: %v", k, files)
		}
	}
	req, _ := http.NewRequest("GET", base+"/api/v1/threads/"+thread+"/artifacts/pages/faq.html", nil)
	req.Header.Set("Authorization", "Bearer "+pm.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	faq, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.Contains(res.Header.Get("Content-Security-Policy"), "sandbox") || !strings.Contains(string(faq), "Brewly") {
		t.Fatalf("faq.html: %d, CSP %q", res.StatusCode, res.Header.Get("Content-Security-Policy"))
	}

	// Feedback when the session is not waiting: no token to issue, and a resume is refused.
	if code, body, _ := rev.call("POST", "/api/v1/threads/"+thread+"/resume-token", ""); code != 409 {
		t.Errorf("a resume token of a built session: %d %v", code, body)
	}
	if code, body = resume(pagegen.DecisionRefine, "use blue"); code != 409 || !strings.Contains(fmt.Sprint(body), "not waiting") {
		t.Errorf("feedback to a built session: %d %v", code, body)
	}

	// Another round on the same thread: new feedback → refine → render, after the build.
	if code, body, _ := pm.call("POST", "/api/v1/threads/"+thread+"/runs", `{"input": {"feedback": "`+strings.Repeat("x", 11<<10)+`"}}`); code != 400 {
		t.Errorf("a follow-up of 11 KB: %d %v", code, body)
	}
	if code, _, _ := rev.call("POST", "/api/v1/threads/"+thread+"/runs", `{"input": {"feedback": "use blue"}}`); code != 403 {
		t.Errorf("a reviewer's follow-up: %d, want 403 (runs are started by a pm or an admin)", code)
	}
	if code, _, _ := other.call("POST", "/api/v1/threads/"+thread+"/runs", `{"input": {"feedback": "use blue"}}`); code != 404 {
		t.Errorf("another tenant's follow-up: %d, want 404", code)
	}
	code, body, _ = pm.call("POST", "/api/v1/threads/"+thread+"/runs", `{"input": {"feedback": "remove the FAQ page, use blue"}}`)
	if code != 202 || body["thread_id"] != thread {
		t.Fatalf("follow-up: %d %v", code, body)
	}
	waitJobStatus(t, a, thread, runner.Succeeded)
	code, body, _ = pm.call("GET", "/api/v1/threads/"+thread+"/state", "")
	st, _ := json.Marshal(body)
	var s struct {
		State struct {
			Values pagegen.GraphState `json:"values"`
		} `json:"state"`
	}
	if err := json.Unmarshal(st, &s); err != nil || code != 200 {
		t.Fatalf("state: %d %v", code, err)
	}
	if len(s.State.Values.Refinements) != 2 || s.State.Values.BuildArtifacts.Round != 2 || s.State.Values.Refinements[1].Feedback != "remove the FAQ page, use blue" {
		t.Fatalf("after the second round: %d rounds, build %d", len(s.State.Values.Refinements), s.State.Values.BuildArtifacts.Round)
	}
	for _, p := range s.State.Values.BuildArtifacts.Pages {
		if p.Slug == "faq" {
			t.Errorf("the FAQ page is still built after its removal")
		}
	}
}

const brewlyRequest = "A landing page for Brewly, a coffee subscription service for busy professionals. Include pricing plans, an about page and a contact form. Use green."

func artifactKeys(t *testing.T, c apiClient, thread string) []string {
	t.Helper()
	req, _ := http.NewRequest("GET", c.base+"/api/v1/threads/"+thread+"/artifacts", nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out struct {
		Artifacts []struct {
			Key string `json:"key"`
		} `json:"artifacts"`
	}
	b, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		var list []struct {
			Key string `json:"key"`
		}
		if json.Unmarshal(b, &list) != nil {
			t.Fatalf("artifacts: %s", b)
		}
		out.Artifacts = list
	}
	var keys []string
	for _, a := range out.Artifacts {
		keys = append(keys, a.Key)
	}
	return keys
}

// briefDown is the offline provider whose brief call always fails with a transient error.
type briefDown struct{ llm.Provider }

func (b briefDown) Chat(ctx context.Context, req llm.ChatRequest) (llm.ChatResponse, error) {
	if req.Task == "pagegen.brief" {
		return llm.ChatResponse{}, fault.New(fault.Transient, fault.CodeLLMTransient, "model server overloaded (503)")
	}
	return b.Provider.Chat(ctx, req)
}

// TestPageGenerationBriefToDLQ: brief fails twice in each run (its RetryPolicy's two
// attempts); the platform retries the job, then dead-letters it with the error's class.
func TestPageGenerationBriefToDLQ(t *testing.T) {
	a, _, _ := pageConsole(t, briefDown{llm.NewOffline()})
	ctx := context.Background()
	j, err := a.StartRun(ctx, app.DemoTenant, pagegen.Name, json.RawMessage(`{"request": "A site for Crumb bakery."}`), "u_pm")
	if err != nil {
		t.Fatal(err)
	}
	j = waitJobStatus(t, a, j.ThreadID, runner.Failed)
	dlq, err := a.Jobs.DLQOfJobs(ctx, app.DemoTenant, []string{j.ID})
	if err != nil || len(dlq[j.ID]) != 1 {
		t.Fatalf("dead letters of the job: %v (%v)", dlq, err)
	}
	d := dlq[j.ID][0]
	if d.Class != fault.Transient || d.Code != fault.CodeLLMTransient || d.Node != pagegen.NodeBrief || d.RetryCount != 3 {
		t.Fatalf("dead letter: class %s, code %s, node %s, retries %d", d.Class, d.Code, d.Node, d.RetryCount)
	}
	execs, err := a.DB.ListNodeExecutions(ctx, app.DemoTenant, j.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	briefs := 0
	for _, e := range execs {
		if e.Node == pagegen.NodeBrief {
			briefs++
		}
	}
	t.Logf("brief ran %d times over %d runs of the job", briefs, d.RetryCount+1)
}
