package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"weft/internal/app"
	"weft/internal/auth"
	"weft/internal/e2e/memo"
	"weft/internal/llm"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
)

// memoConsole is a console whose registry also holds the memo example workflow, registered
// through the plug-in contract alone: no platform code knows it.
func memoConsole(t *testing.T) (*app.App, *auth.Service, string) {
	t.Helper()
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{DatabaseURL: pgtest.URL(t), LLM: llm.NewOffline(), Runner: runner.Config{
		Lease: 5 * time.Second, PollInterval: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	def, err := memo.Definition(a.Checkpoints, a.RunArtifacts())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Registry.Register(def); err != nil {
		t.Fatal(err)
	}
	authSvc, url := serveTenants(t, a)
	return a, authSvc, url
}

type apiClient struct {
	t     *testing.T
	base  string
	token string
}

// apiClients are API clients of the demo tenant's pm and reviewer and of the other tenant's
// admin, each with a token of its own.
func apiClients(t *testing.T, authSvc *auth.Service, base string) (pm, rev, other apiClient) {
	t.Helper()
	token := func(tenant string, role auth.Role) string {
		secret, err := authSvc.IssueAPIToken(context.Background(), tenant, "test-"+string(role)+"-"+tenant, role, "test")
		if err != nil {
			t.Fatal(err)
		}
		return secret
	}
	return apiClient{t, base, token(app.DemoTenant, auth.PM)}, apiClient{t, base, token(app.DemoTenant, auth.Reviewer)},
		apiClient{t, base, token(app.OtherTenant, auth.Admin)}
}

// eventNames follows a thread's API event stream in the given modes until the test ends: the
// name of each event, as it arrives (buf of them are held unread).
func (c apiClient) eventNames(thread, modes string, buf int) <-chan string {
	c.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c.t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", c.base+"/api/v1/threads/"+thread+"/events?modes="+modes, nil)
	req.Header.Set("Authorization", "Bearer "+c.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	events := make(chan string, buf)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if name, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				events <- name
			}
		}
	}()
	return events
}

func (c apiClient) call(method, path, body string) (int, map[string]any, http.Header) {
	c.t.Helper()
	req, _ := http.NewRequest(method, c.base+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	if out == nil {
		out = map[string]any{"raw": string(b)}
	}
	return res.StatusCode, out, res.Header
}

func waitJobStatus(t *testing.T, a *app.App, thread string, want runner.Status) runner.Job {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		j, err := a.Jobs.LatestForThread(context.Background(), app.DemoTenant, thread)
		if err == nil && j.Status == want {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread %s is %s (%v), want %s", thread, j.Status, err, want)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// TestExampleWorkflowThroughTheAPI: a workflow registered through the contract alone is
// started from its start fields, reviewed per item through the same Decide as the console's
// form, streams its named events, and its artifact downloads, sandboxed, for its tenant only.
func TestExampleWorkflowThroughTheAPI(t *testing.T) {
	a, authSvc, base := memoConsole(t)
	pm, rev, other := apiClients(t, authSvc, base)

	// The start fields are checked one by one, each refusal naming its field.
	code, body, _ := pm.call("POST", "/api/v1/runs", `{"workflow": "memo", "input": {"title": "", "tone": "loud", "strict": "yes", "colour": 1}}`)
	fields, _ := body["error"].(map[string]any)["fields"].(map[string]any)
	if code != 400 || fields["title"] != "is required" || !strings.Contains(fields["tone"].(string), "not one of the choices") ||
		fields["strict"] != "must be true or false" || !strings.Contains(fields["colour"].(string), "not a start field") {
		t.Fatalf("bad start fields: %d %v", code, body)
	}
	memoText := "The team must reply ASAP. This is very important."
	code, body, _ = pm.call("POST", "/api/v1/runs", `{"workflow": "memo", "input": {"title": "Replies", "text": "`+memoText+`", "strict": true}}`)
	if code != 202 {
		t.Fatalf("start: %d %v", code, body)
	}
	thread := body["thread_id"].(string)

	// Its events stream under the workflow's own names.
	events := pm.eventNames(thread, "custom,values", 64)
	j := waitJobStatus(t, a, thread, runner.WaitingReview)
	seen := map[string]bool{}
	for deadline := time.After(20 * time.Second); !(seen["memo_progress"] && seen["values"]); {
		select {
		case name := <-events:
			seen[name] = true
		case <-deadline:
			t.Fatalf("events seen: %v, want memo_progress and values", seen)
		}
	}
	if seen["custom"] {
		t.Error("a custom event went out under its kind, not the workflow's name")
	}

	// Its review: a per-item decision, through Decide, as the console's form.
	code, body, _ = rev.call("POST", "/api/v1/threads/"+thread+"/resume-token", "")
	if code != 201 {
		t.Fatalf("resume token: %d %v", code, body)
	}
	rt := body["resume_token"].(string)
	var st struct {
		Values memo.State `json:"values"`
	}
	if code, body, _ = rev.call("GET", "/api/v1/threads/"+thread+"/state", ""); code != 200 {
		t.Fatalf("state: %d %v", code, body)
	}
	b, _ := json.Marshal(body["state"])
	_ = json.Unmarshal(b, &st)
	if len(st.Values.Changes) != 3 {
		t.Fatalf("changes proposed: %+v", st.Values.Changes)
	}
	items := map[string]memo.Verdict{}
	for _, c := range st.Values.Changes {
		items[c.ID] = memo.Verdict{Decision: "approve"}
		if c.Before == "must" {
			items[c.ID] = memo.Verdict{Decision: "reject", Feedback: "keep must"}
		}
	}
	partial, _ := json.Marshal(map[string]any{"resume_token": rt, "decision": "submit", "editor": map[string]string{"reviewer_id": "u_reviewer"},
		"items": map[string]memo.Verdict{st.Values.Changes[0].ID: {Decision: "approve"}}})
	if code, body, _ = rev.call("POST", "/api/v1/threads/"+thread+"/resume", string(partial)); code != 400 ||
		!strings.Contains(body["error"].(map[string]any)["message"].(string), "Decide every change") {
		t.Fatalf("a partial decision: %d %v", code, body)
	}
	full, _ := json.Marshal(map[string]any{"resume_token": rt, "decision": "submit", "editor": map[string]string{"reviewer_id": "u_reviewer"}, "items": items})
	if code, body, _ = rev.call("POST", "/api/v1/threads/"+thread+"/resume", string(full)); code != 202 {
		t.Fatalf("resume: %d %v", code, body)
	}
	waitJobStatus(t, a, thread, runner.Succeeded)
	_ = j

	// Its artifact: listed, downloaded sandboxed; another tenant gets a 404.
	code, body, _ = pm.call("GET", "/api/v1/threads/"+thread+"/artifacts", "")
	arts, _ := body["artifacts"].([]any)
	if code != 200 || len(arts) != 2 {
		t.Fatalf("artifacts: %d %v", code, body)
	}
	code, body, h := pm.call("GET", "/api/v1/threads/"+thread+"/artifacts/memo.txt", "")
	if want := "The team must reply promptly. This is important."; code != 200 || body["raw"] != want ||
		!strings.HasPrefix(h.Get("Content-Security-Policy"), "sandbox") || !strings.HasPrefix(h.Get("Content-Type"), "text/plain") {
		t.Fatalf("memo.txt: %d %q %v", code, body["raw"], h)
	}
	if code, _, _ = other.call("GET", "/api/v1/threads/"+thread+"/artifacts/memo.txt", ""); code != 404 {
		t.Fatalf("another tenant's download: %d, want 404", code)
	}
	if code, _, _ = other.call("GET", "/api/v1/threads/"+thread+"/artifacts", ""); code != 404 {
		t.Fatalf("another tenant's list: %d, want 404", code)
	}
}

// TestExampleWorkflowInTheBrowser: the memo is started from its typed start form with a file,
// reviewed item by item over redlines in the console, and its page is previewed sandboxed.
func TestExampleWorkflowInTheBrowser(t *testing.T) {
	path := chromium(t)
	a, _, base := memoConsole(t)
	file := filepath.Join(t.TempDir(), "memo.txt")
	if err := os.WriteFile(file, []byte("Staff must file reports ASAP. The deadline is very near."), 0o600); err != nil {
		t.Fatal(err)
	}
	pm := browser(t, path)
	run(t, pm, "the pm starts a memo from its typed form",
		login(base, "pm@demo.weft"),
		chromedp.Navigate(base+"/workflows/memo/start"),
		chromedp.WaitVisible(css(`form.start-fields input[name=title]`)),
		// Sent without a title first: the field says so, and what was chosen stays.
		chromedp.SetUploadFiles(css(`input[type=file][name=file]`), []string{file}),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('input[name=title]').removeAttribute('required')`),
		chromedp.Click(css(`form.start-fields button[type=submit]`)),
		chromedp.WaitVisible(css(`.field-error`)),
		contains(`form.start-fields`, "is required"),
		shot(t, "memo-1-start-refused"),
		chromedp.SendKeys(css(`input[name=title]`), "Reports"),
		chromedp.SetUploadFiles(css(`input[type=file][name=file]`), []string{file}),
		chromedp.Click(css(`input[name=strict]`)),
		chromedp.Click(css(`form.start-fields button[type=submit]`)),
		// The start page has an h1 too: wait for the thread's page before reading it.
		chromedp.WaitVisible(css(`#thread-status`)),
		contains(`.thread h1`, "Reports"),
	)
	loc := read(t, pm, "the thread's address", chromedp.Location())
	thread := strings.TrimPrefix(strings.SplitN(loc, "?", 2)[0], base+"/threads/")
	j := waitJobStatus(t, a, thread, runner.WaitingReview)

	rev := browser(t, path)
	run(t, rev, "the reviewer decides each change over its redline",
		login(base, "reviewer@demo.weft"),
		chromedp.Navigate(base+"/reviews/"+j.ID),
		chromedp.WaitVisible(css(`fieldset.item-decision`)),
		present(`.redline del`), present(`.redline ins`),
		shot(t, "memo-2-review"),
		chromedp.Click(css(`button[data-approve-all]`)),
		// Reject the first change, with why.
		chromedp.Click(css(`fieldset.item-decision input[value=reject]`)),
		chromedp.SendKeys(css(`fieldset.item-decision textarea`), "keep as written"),
		chromedp.Click(css(`.review-buttons button[value=submit]`)),
		contains(`#review`, "Decision recorded"),
		shot(t, "memo-3-decided"),
	)
	waitJobStatus(t, a, thread, runner.Succeeded)
	run(t, pm, "the memo's page shows its file and a sandboxed preview",
		chromedp.Navigate(base+"/threads/"+thread),
		chromedp.WaitVisible(css(`#artifacts table`)),
		contains(`#artifacts`, "memo.txt"),
		present(`.block-preview iframe[sandbox=""]`),
		shot(t, "memo-4-thread"),
	)
	// The frame's page runs sandboxed: its own opaque origin, no way into the console.
	origin := read(t, pm, "the preview's origin", chromedp.Evaluate[string](`(() => { try { return document.querySelector('.block-preview iframe').contentWindow.document.domain || 'reachable'; } catch (e) { return 'blocked'; } })()`))
	if origin != "blocked" {
		t.Errorf("the console reads into the preview frame (%s): it is not sandboxed", origin)
	}
}
