package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"weft/internal/app"
	"weft/internal/auth"
	"weft/internal/graph"
	"weft/internal/runner"
)

type apiClient struct {
	t     *testing.T
	base  string
	token string
}

func (k *kit) api(tenant string, role auth.Role) *apiClient {
	k.t.Helper()
	tok, err := k.Auth.IssueAPIToken(context.Background(), tenant, "test-"+string(role), role, "test")
	if err != nil {
		k.t.Fatal(err)
	}
	return &apiClient{t: k.t, base: k.Srv.URL, token: tok}
}

func (a *apiClient) call(method, path, body string) (int, map[string]any) {
	a.t.Helper()
	req, _ := http.NewRequest(method, a.base+path, strings.NewReader(body))
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		a.t.Fatalf("%s %s: not JSON (%d): %s", method, path, res.StatusCode, b)
	}
	return res.StatusCode, out
}

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func errMessage(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}

func TestAPI(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	stopWork := k.work()
	k.waitJob("ev_demo-northwind", runner.Succeeded)
	k.waitJob("ev_demo-bluewater", runner.WaitingReview)
	pm := k.api(app.DemoTenant, auth.PM)
	reviewer := k.api(app.DemoTenant, auth.Reviewer)
	other := k.api(app.OtherTenant, auth.Admin)
	// Issuing (weft token create): an unknown tenant or role is refused by name.
	if _, err := k.Auth.IssueAPIToken(context.Background(), "no-such-tenant", "x", auth.PM, "test"); !errors.Is(err, auth.ErrUnknownTenant) ||
		!strings.Contains(err.Error(), `"no-such-tenant"`) {
		t.Fatalf("token for an unknown tenant: %v", err)
	}
	if _, err := k.Auth.IssueAPIToken(context.Background(), app.DemoTenant, "x", "owner", "test"); err == nil ||
		!strings.Contains(err.Error(), `the role "owner" is not pm, reviewer or admin`) {
		t.Fatalf("token with an unknown role: %v", err)
	}

	if code, body := (&apiClient{t: t, base: k.Srv.URL}).call("GET", "/api/v1/workflows", ""); code != 401 || errCode(body) != "UNAUTHENTICATED" {
		t.Fatalf("no token: %d %v", code, body)
	}
	// A wrong method is a 405 that names the right ones; an unknown address stays a 404.
	if code, body := pm.call("DELETE", "/api/v1/workflows", ""); code != 405 || errCode(body) != "METHOD_NOT_ALLOWED" ||
		errMessage(body) != "This address does not take DELETE; it takes GET or HEAD." {
		t.Fatalf("DELETE /api/v1/workflows: %d %v", code, body)
	}
	if code, body := pm.call("GET", "/api/v1/threads/ev_demo-northwind/resume", ""); code != 405 || !strings.Contains(errMessage(body), "it takes POST") {
		t.Fatalf("GET resume: %d %v", code, body)
	}
	if code, body := pm.call("POST", "/api/v1/nothing", ""); code != 404 || errCode(body) != "NOT_FOUND" {
		t.Fatalf("unknown address: %d %v", code, body)
	}
	code, body := pm.call("GET", "/api/v1/workflows", "")
	if code != 200 || !strings.Contains(mustJSON(body), `"bid_evaluation"`) || !strings.Contains(mustJSON(body), "flowchart TD") {
		t.Fatalf("workflows: %d %v", code, body)
	}

	// get_workflow_state: the seed 004 shape.
	code, body = pm.call("GET", "/api/v1/evaluations/ev_demo-northwind/state", "")
	if code != 200 {
		t.Fatalf("state: %d %v", code, body)
	}
	for _, g := range []string{"identity", "trace", "inputs", "retrieval", "scoring", "review", "output", "runtime"} {
		if _, ok := body[g]; !ok {
			t.Errorf("state lacks group %s", g)
		}
	}
	if code, body = other.call("GET", "/api/v1/evaluations/ev_demo-northwind/state", ""); code != 404 || errCode(body) != "NOT_FOUND" {
		t.Fatalf("another tenant's evaluation: %d %v", code, body)
	}

	code, body = pm.call("GET", "/api/v1/threads/ev_demo-northwind/history?limit=3", "")
	cps, _ := body["checkpoints"].([]any)
	if code != 200 || len(cps) != 3 || body["next_before"] == "" {
		t.Fatalf("history page: %d %v", code, body)
	}
	// Paging to the end: the pages hold every checkpoint once, and the last has no next_before.
	paged := map[string]bool{}
	for before, pages := "", 0; ; pages++ {
		code, body = pm.call("GET", "/api/v1/threads/ev_demo-northwind/history?limit=3&before="+before, "")
		page, _ := body["checkpoints"].([]any)
		if code != 200 || len(page) == 0 || pages > 50 {
			t.Fatalf("history page %d: %d %v (an empty page means a next_before led nowhere)", pages, code, body)
		}
		for _, cp := range page {
			paged[cp.(map[string]any)["id"].(string)] = true
		}
		if before, _ = body["next_before"].(string); before == "" {
			break
		}
	}
	ev, _ := k.App.Registry.Get("bid_evaluation")
	if all, err := ev.Graph.History(context.Background(), graph.Config{ThreadID: "ev_demo-northwind"}, graph.ListOptions{}); err != nil || len(paged) != len(all) {
		t.Fatalf("paged through %d checkpoints, the thread has %d (%v)", len(paged), len(all), err)
	}
	// A page that ends exactly at the oldest checkpoint has no next_before either.
	if code, body = pm.call("GET", fmt.Sprintf("/api/v1/threads/ev_demo-northwind/history?limit=%d", len(paged)), ""); code != 200 || body["next_before"] != "" {
		t.Fatalf("a page holding the whole history: %d, next_before %v", code, body["next_before"])
	}
	if code, _ = pm.call("GET", "/api/v1/threads/ev_demo-northwind/history?limit=0", ""); code != 400 {
		t.Fatalf("bad limit: %d", code)
	}
	_, bw := pm.call("GET", "/api/v1/threads/ev_demo-bluewater/history?limit=1", "")
	otherCP := bw["checkpoints"].([]any)[0].(map[string]any)["id"].(string)
	for _, before := range []string{"garbage", otherCP} {
		if code, body = pm.call("GET", "/api/v1/threads/ev_demo-northwind/history?before="+before, ""); code != 400 || errCode(body) != "VALIDATION_FAILED" ||
			!strings.Contains(errMessage(body), "names no checkpoint of this thread") {
			t.Fatalf("before cursor %s: %d %v", before, code, body)
		}
	}

	// Start runs: a running evaluation is refused with a code; bad input is a 400.
	if code, body = pm.call("POST", "/api/v1/runs", `{"workflow":"bid_evaluation","input":{"evaluation_id":"ev_demo-bluewater"}}`); code != 409 || errCode(body) != "EVALUATION_RUNNING" ||
		!strings.Contains(errMessage(body), "has a run that has not finished") {
		t.Fatalf("start a waiting evaluation: %d %v", code, body)
	}
	// A bid evaluation's input is its evaluation_id alone: another field is refused, not
	// ignored (the evaluation named is not started).
	for in, want := range map[string]string{
		`{"evaluation_id":"ev_demo-crestline","priority":"high"}`: "priority: is not a start field of this workflow",
		`{"evaluation_id":5}`: "evaluation_id: must be a string",
		`{}`:                  "evaluation_id: is required",
		`null`:                "evaluation_id: is required",
		`"ev_demo-crestline"`: "input: must be a JSON object of the start fields",
	} {
		if code, body = pm.call("POST", "/api/v1/runs", `{"workflow":"bid_evaluation","input":`+in+`}`); code != 400 ||
			errCode(body) != "VALIDATION_FAILED" || !strings.Contains(errMessage(body), want) {
			t.Fatalf("bid evaluation input %s: %d %v, want a 400 saying %s", in, code, body, want)
		}
	}
	if code, body = pm.call("POST", "/api/v1/runs", `{"workflow":"bid_evaluation"}`); code != 400 || !strings.Contains(errMessage(body), "evaluation_id: is required") {
		t.Fatalf("bid evaluation without input: %d %v", code, body)
	}
	for _, in := range []string{`null`, `{"input":{"evaluation_id":"ev_demo-crestline"}}`, `{"workflow":""}`} {
		if code, body = pm.call("POST", "/api/v1/runs", in); code != 400 || !strings.Contains(errMessage(body), "workflow is missing") {
			t.Fatalf("a run without a workflow (%s): %d %v", in, code, body)
		}
	}
	if code, body = pm.call("POST", "/api/v1/runs", `{"workflow":"tour","input":{"question":"price \u202e0001 CNY"}}`); code != 400 ||
		!strings.Contains(errMessage(body), "the input's question holds the invisible direction control U+202E") {
		t.Fatalf("a run input with a direction override: %d %v", code, body)
	}
	if code, body = pm.call("POST", "/api/v1/runs", `{"workflow":"tour","input":{"nope":1}}`); code != 400 {
		t.Fatalf("unknown channel in input: %d %v", code, body)
	}
	// One JSON object, sent as JSON: anything after it, or another content type, is refused
	// (and nothing is started).
	if code, body = pm.call("POST", "/api/v1/runs", `{"workflow":"tour","input":{"question":"Which durable workflows?"}} {"x":1}`); code != 400 ||
		!strings.Contains(errMessage(body), "holds more after its JSON value") {
		t.Fatalf("trailing data: %d %v", code, body)
	}
	// A start's body may carry a workflow's files (a contract review's, base64): at most
	// those and 1 MB more.
	if code, body = pm.call("POST", "/api/v1/runs", `{"workflow":"tour","input":{"question":"Which durable workflows?"}}`+strings.Repeat(" ", 32<<20)); code != http.StatusRequestEntityTooLarge ||
		!strings.Contains(errMessage(body), "the most a start takes") {
		t.Fatalf("a body over the start limit after its JSON: %d %v, want 413", code, body)
	}
	// The scheme's name is read in any case (RFC 9110); a header naming another is a 401.
	for scheme, want := range map[string]int{"bearer": 200, "BEARER": 200, "Basic": 401, "Bearer  ": 401} {
		req, _ := http.NewRequest("GET", k.Srv.URL+"/api/v1/workflows", nil)
		req.Header.Set("Authorization", scheme+" "+pm.token)
		if scheme == "Bearer  " {
			req.Header.Set("Authorization", scheme)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("Authorization: %s <token>: %d, want %d", scheme, res.StatusCode, want)
		}
	}
	for _, ct := range []string{"text/plain", "application/x-www-form-urlencoded"} {
		req, _ := http.NewRequest("POST", k.Srv.URL+"/api/v1/runs", strings.NewReader(`{"workflow":"tour","input":{"question":"Which durable workflows?"}}`))
		req.Header.Set("Authorization", "Bearer "+pm.token)
		req.Header.Set("Content-Type", ct)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnsupportedMediaType {
			t.Fatalf("a body sent as %s: %d, want 415", ct, res.StatusCode)
		}
	}
	// A run that could only fail is refused before it is queued, saying what the input needs.
	for _, in := range []string{`{"workflow":"tour"}`, `{"workflow":"tour","input":{}}`, `{"workflow":"tour","input":{"question":"  "}}`} {
		if code, body = pm.call("POST", "/api/v1/runs", in); code != 400 || errCode(body) != "VALIDATION_FAILED" ||
			!strings.Contains(errMessage(body), "a tour run needs a question") {
			t.Fatalf("%s: %d %v", in, code, body)
		}
	}
	if code, body = pm.call("POST", "/api/v1/runs", `{"workflow":"tour","input":{"question":"Half a pair \ud800?"}}`); code != 400 ||
		errCode(body) != "VALIDATION_FAILED" || !strings.Contains(errMessage(body), "cannot be stored") {
		t.Fatalf("input jsonb refuses: %d %v", code, body)
	}
	// A channel of the wrong JSON type is named, in JSON's words, before the workflow's checks.
	if code, body = pm.call("POST", "/api/v1/runs", `{"workflow":"tour","input":{"question":5}}`); code != 400 ||
		errMessage(body) != `input channel "question" must be a string, not a JSON number` {
		t.Fatalf("a number for the question: %d %v", code, body)
	}
	for in, want := range map[string]string{
		`[1]`: "input must be a JSON object of channel values, not a JSON array",
		`"x"`: "input must be a JSON object of channel values, not a JSON string",
		`{"question":"durable?","scores":{"a":"b"}}`: `input channel "scores" must be an object of numbers; one of its values is a JSON string`,
		`{"question":"durable?","scores":"b"}`:       `input channel "scores" must be an object, not a JSON string`,
	} {
		if code, body = pm.call("POST", "/api/v1/runs", `{"workflow":"tour","input":`+in+`}`); code != 400 || errMessage(body) != want {
			t.Errorf("input %s: %d %q, want %q", in, code, errMessage(body), want)
		}
	}
	// A raw input (a workflow without a start form's fields) is bounded as the console's
	// raw-JSON form bounds it.
	if code, body = pm.call("POST", "/api/v1/runs", `{"workflow":"tour","input":{"question":"`+strings.Repeat("x", 1<<20)+`"}}`); code != 400 ||
		!strings.Contains(errMessage(body), "input is too large") {
		t.Fatalf("a raw input of 1 MB: %d %v", code, body)
	}
	if code, body = pm.call("POST", "/api/v1/runs", `{not json`); code != 400 || errCode(body) != "VALIDATION_FAILED" {
		t.Fatalf("bad JSON: %d %v", code, body)
	}
	// Body errors speak JSON, not Go.
	for in, want := range map[string]string{
		`[1,2]`:                  "the body must be a JSON object, not a JSON array",
		`{"workflow":7}`:         "workflow must be a string, not a JSON number",
		`{"workflow":"tour",`:    "the body ends in the middle of a value",
		`{"workflow":"t","x":1}`: `unknown field "x"`,
	} {
		code, body = pm.call("POST", "/api/v1/runs", in)
		e, _ := body["error"].(map[string]any)
		msg, _ := e["message"].(string)
		if code != 400 || !strings.Contains(msg, want) || strings.Contains(msg, "Go ") || strings.Contains(msg, "server.") {
			t.Errorf("body %s: %d %q, want %q", in, code, msg, want)
		}
	}
	if code, body = reviewer.call("POST", "/api/v1/runs", `{"workflow":"tour","input":{"question":"What makes workflows durable?"}}`); code != 403 ||
		errMessage(body) != "This endpoint needs the pm or admin role; the API token has the reviewer role." {
		t.Fatalf("a reviewer token started a run: %d %v", code, body)
	}
	code, body = pm.call("POST", "/api/v1/runs", `{"workflow":"tour","input":{"question":"What makes durable workflows survive crashes?"}}`)
	if code != 202 || body["thread_id"] == "" {
		t.Fatalf("start tour: %d %v", code, body)
	}
	// A rejection says why, in every workflow: the tour's resume refuses one without a comment.
	tourJob := body["job_id"].(string)
	var paused runner.Job
	for deadline := time.Now().Add(60 * time.Second); paused.Status != runner.WaitingReview; time.Sleep(25 * time.Millisecond) {
		if paused, _ = k.App.Jobs.Job(context.Background(), app.DemoTenant, tourJob); time.Now().After(deadline) {
			t.Fatalf("the tour never paused: %+v", paused)
		}
	}
	// A program gets the pause's resume token as a reviewer (the tour's state carries none).
	tokenPath := "/api/v1/threads/" + url.PathEscape(paused.ThreadID) + "/resume-token"
	if code, _ = pm.call("POST", tokenPath, ""); code != 403 {
		t.Fatalf("a pm asks for a resume token: %d", code)
	}
	if code, _ = other.call("POST", tokenPath, ""); code != 404 {
		t.Fatalf("another tenant asks for a resume token: %d", code)
	}
	if code, body = reviewer.call("POST", tokenPath+"?interrupt_id=nope", ""); code != 404 || !strings.Contains(errMessage(body), `no pending interrupt "nope"`) {
		t.Fatalf("an unknown interrupt's token: %d %v", code, body)
	}
	code, body = reviewer.call("POST", tokenPath, "")
	tourToken, _ := body["resume_token"].(string)
	if code != 201 || tourToken == "" || body["interrupt_id"] != paused.Interrupts[0].ID || body["expires_at"] == nil {
		t.Fatalf("resume token: %d %v", code, body)
	}
	if code, body = reviewer.call("POST", "/api/v1/threads/"+paused.ThreadID+"/resume", `{"resume_token":"`+tourToken+`","decision":"reject","comment":" ","editor":{"reviewer_id":"u_reviewer"}}`); code != 400 ||
		!strings.Contains(errMessage(body), "a rejection needs a comment") {
		t.Fatalf("a tour rejection without a comment: %d %v", code, body)
	}
	// A tour's review is approve or reject, as in the console's form: nothing else is recorded.
	for _, bad := range []string{`"decision":"banana"`, `"decision":""`, `"decision":"edit_scores","scores":{"a":1}`, `"decision":"approve","scores":{"a":1}`} {
		if code, body = reviewer.call("POST", "/api/v1/threads/"+paused.ThreadID+"/resume", `{"resume_token":"`+tourToken+`",`+bad+`,"editor":{"reviewer_id":"u_reviewer"}}`); code != 400 ||
			!strings.Contains(errMessage(body), "approve or reject") {
			t.Fatalf("a tour decision {%s}: %d %v", bad, code, body)
		}
	}
	// An admin has the tour's review form open in the console meanwhile; it asks every 10 s
	// whether its pause still waits.
	admC := k.login("admin@demo.weft")
	formToken, _, _ := reviewForm(t, admC, tourJob)
	watch := "/reviews/" + tourJob + "/status?interrupt=" + url.QueryEscape(paused.Interrupts[0].ID)
	if res, _ := admC.get(watch); res.StatusCode != http.StatusNoContent {
		t.Fatalf("the form's watch while the pause waits: %d, want 204", res.StatusCode)
	}
	// A pause older than the time to answer is reported as such (then put back). The workers
	// stop meanwhile: their rescue loop would dead-letter the pause.
	stopWork()
	if _, err := k.App.DB.Pool().Exec(context.Background(), `UPDATE jobs SET paused_at = paused_at - interval '25 hours' WHERE id = $1`, tourJob); err != nil {
		t.Fatal(err)
	}
	if res, body := admC.get(watch); res.StatusCode != http.StatusOK || !strings.Contains(text(body), "The time to answer this pause ran out") {
		t.Errorf("the form's watch after the time to answer: %d %s", res.StatusCode, text(body))
	}
	if _, err := k.App.DB.Pool().Exec(context.Background(), `UPDATE jobs SET paused_at = paused_at + interval '25 hours' WHERE id = $1`, tourJob); err != nil {
		t.Fatal(err)
	}
	k.work()
	// A token answers its own thread only: the tour's token sent with a decision checked
	// against the bid evaluation's rules is refused, and nothing is used up.
	if code, body = reviewer.call("POST", "/api/v1/threads/ev_demo-bluewater/resume", `{"resume_token":"`+tourToken+`","decision":"approve","comment":"ok","editor":{"reviewer_id":"u_reviewer"}}`); code != 409 ||
		!strings.Contains(errMessage(body), "belongs to another thread") {
		t.Fatalf("the tour's token on the evaluation's thread: %d %v", code, body)
	}
	if j := k.waitJob("ev_demo-bluewater", runner.WaitingReview); len(j.Interrupts) == 0 {
		t.Fatal("the evaluation no longer waits")
	}
	for bad, want := range map[string]string{
		`["x"]`:                           "value must be a JSON object",
		`{"comment":"sneaky"}`:            `value cannot set "comment"`,
		`{"note":"price \u202e0021 CNY"}`: "value's note holds the invisible direction control U+202E",
		`{"big":"` + strings.Repeat("a", 17<<10) + `"}`: "value is too long",
	} {
		if code, body = reviewer.call("POST", "/api/v1/threads/"+paused.ThreadID+"/resume", `{"resume_token":"`+tourToken+`","decision":"approve","comment":"fine","value":`+bad+`,"editor":{"reviewer_id":"u_reviewer"}}`); code != 400 ||
			!strings.HasPrefix(errMessage(body), want) {
			t.Fatalf("a tour resume with value %.40s: %d %v", bad, code, body)
		}
	}
	if code, body = reviewer.call("POST", "/api/v1/threads/"+paused.ThreadID+"/resume", `{"resume_token":"`+tourToken+`","decision":"approve","comment":"fine \u2066x\u2069","editor":{"reviewer_id":"u_reviewer"}}`); code != 400 ||
		errMessage(body) != "comment holds the invisible direction control U+2066 at character 6, which makes text show in another order than it reads" {
		t.Fatalf("a comment with a direction isolate: %d %v", code, body)
	}
	if code, body = reviewer.call("POST", "/api/v1/threads/"+paused.ThreadID+"/resume", `{"resume_token":"`+tourToken+`","decision":"approve","comment":"fine","value":{"note":"via api"},"editor":{"reviewer_id":"u_reviewer"}}`); code != 202 {
		t.Fatalf("approve the tour through the API: %d %v", code, body)
	}
	k.waitJobID(tourJob, runner.Succeeded)
	if code, body = reviewer.call("GET", "/api/v1/threads/"+paused.ThreadID+"/state", ""); code != 200 || !strings.Contains(fmt.Sprint(body), "via api") {
		t.Fatalf("the tour's state after an API resume with a value: %d %v", code, body)
	}
	// The admin's open form learns who decided, and sending it says so and keeps the comment.
	if res, body := admC.get(watch); res.StatusCode != http.StatusOK || !strings.Contains(text(body), `Ravi Rao via API token test-reviewer decided at`) ||
		!strings.Contains(text(body), `(Approved): this form can no longer be sent`) ||
		!strings.Contains(body, `data-closes="review-form"`) || // (once.js then disables the form's buttons)
		!strings.Contains(body, `<span id="review-head-state" hx-swap-oob="true">answered: Approved by Ravi Rao via API token test-reviewer</span>`) {
		t.Fatalf("the form's watch after the API decision: %d %s", res.StatusCode, text(body))
	}
	res, sent := admC.post("/reviews/"+tourJob, url.Values{"resume_token": {formToken}, "interrupt": {paused.Interrupts[0].ID}, "decision": {"approve"}, "comment": {"my words, not sent"}})
	if res.StatusCode < 400 || !strings.Contains(text(sent), "Another reviewer decided first") ||
		!strings.Contains(text(sent), "Ravi Rao via API token test-reviewer recorded a decision") || !strings.Contains(text(sent), "my words, not sent") {
		t.Fatalf("sending the form after someone else decided: %d %s", res.StatusCode, text(sent))
	}
	if code, body = reviewer.call("POST", tokenPath, ""); code != 409 || !strings.Contains(errMessage(body), "does not wait for a review") {
		t.Fatalf("a token for a finished thread: %d %v", code, body)
	}

	// Resume with the §7.2 body.
	// The token is a reviewer's to use: a pm's token reads the state with it hidden.
	_, st := pm.call("GET", "/api/v1/evaluations/ev_demo-bluewater/state", "")
	if hidden := st["review"].(map[string]any)["resume_token"]; hidden != "(hidden)" {
		t.Fatalf("a pm reads the evaluation's resume token: %v", hidden)
	}
	_, st = reviewer.call("GET", "/api/v1/evaluations/ev_demo-bluewater/state", "")
	token := st["review"].(map[string]any)["resume_token"].(string)
	for _, path := range []string{"/api/v1/threads/ev_demo-bluewater/state", "/api/v1/threads/ev_demo-bluewater/history"} {
		code, asPM := pm.call("GET", path, "")
		_, asReviewer := reviewer.call("GET", path, "")
		if b, _ := json.Marshal(asPM); code != 200 || strings.Contains(string(b), token) {
			t.Fatalf("a pm reads %s with the resume token in it: %d %s", path, code, b)
		}
		b, _ := json.Marshal(asReviewer)
		if path == "/api/v1/threads/ev_demo-bluewater/state" && !strings.Contains(string(b), token) {
			t.Fatalf("a reviewer reads %s without the resume token: %s", path, b)
		}
		// Only the token differs: other values under a resume_token key (the channel's
		// version) are not secrets.
		if p, _ := json.Marshal(asPM); string(p) != strings.ReplaceAll(string(b), token, "(hidden)") {
			t.Errorf("%s: a pm reads more than the token hidden (%d hidden, the reviewer's has the token %d times)", path,
				strings.Count(string(p), "(hidden)"), strings.Count(string(b), token))
		}
	}
	if code, body = reviewer.call("POST", "/api/v1/threads/ev_demo-bluewater/resume", `{"resume_token":"`+token+`","decision":"approve","comment":"ok"}`); code != 400 || errCode(body) != "WF_INTERRUPT_RESUME_INVALID" {
		t.Fatalf("resume without reviewer identity: %d %v", code, body)
	}
	// The reviewer named must be a reviewer (or admin) of the token's tenant: not a pm, not
	// another tenant's user, not a made-up id. Nothing is consumed.
	for _, who := range []string{"u_pm", "u_acme_admin", "nobody"} {
		if code, body = reviewer.call("POST", "/api/v1/threads/ev_demo-bluewater/resume", `{"resume_token":"`+token+`","decision":"approve","editor":{"reviewer_id":"`+who+`"}}`); code != 403 || errCode(body) != "WF_INTERRUPT_RESUME_INVALID" {
			t.Fatalf("resume in the name of %s: %d %v", who, code, body)
		}
	}
	if code, _ = pm.call("POST", "/api/v1/threads/ev_demo-bluewater/resume", `{"resume_token":"`+token+`","decision":"approve","editor":{"reviewer_id":"u_reviewer"}}`); code != 403 {
		t.Fatalf("a pm token resumed: %d", code)
	}
	if code, body = reviewer.call("POST", "/api/v1/threads/ev_demo-bluewater/resume", `{"resume_token":"`+token+`","decision":"maybe","editor":{"reviewer_id":"u_reviewer"}}`); code != 400 || errCode(body) != "REVIEW_DECISION_INVALID" {
		t.Fatalf("bad decision: %d %v", code, body)
	}
	// Scores go with edit_scores only (out of range, or naming no criterion, too): with approve
	// or reject they would be kept in the decision's state and audit row without counting.
	if code, body = reviewer.call("POST", "/api/v1/threads/ev_demo-bluewater/resume", `{"resume_token":"`+token+`","decision":"edit_scores","scores":{"C1":1e400},"editor":{"reviewer_id":"u_reviewer"}}`); code != 400 ||
		errMessage(body) != `scores.C1: "1e400" is not a decimal number such as 7 or 7.5` {
		t.Fatalf("a score that fits no number: %d %v", code, body)
	}
	// A null score is no score (it was saved as 0), and scores that are all the model's own
	// edit nothing (the report said "scores edited"): both refused, as the console's form does.
	if code, body = reviewer.call("POST", "/api/v1/threads/ev_demo-bluewater/resume", `{"resume_token":"`+token+`","decision":"edit_scores","scores":{"C1":null},"editor":{"reviewer_id":"u_reviewer"}}`); code != 400 ||
		errCode(body) != "REVIEW_DECISION_INVALID" || errMessage(body) != "scores.C1 must be a number, not null" {
		t.Fatalf("a null score: %d %v", code, body)
	}
	own := map[string]float64{}
	for _, cs := range st["scoring"].(map[string]any)["criteria_scores"].([]any) {
		cs := cs.(map[string]any)
		own[cs["criterion_id"].(string)] = math.Round(cs["score"].(float64)*10) / 10
	}
	ownJSON, _ := json.Marshal(own)
	if code, body = reviewer.call("POST", "/api/v1/threads/ev_demo-bluewater/resume", `{"resume_token":"`+token+`","decision":"edit_scores","scores":`+string(ownJSON)+`,"editor":{"reviewer_id":"u_reviewer"}}`); code != 400 ||
		errCode(body) != "REVIEW_DECISION_INVALID" || !strings.Contains(errMessage(body), "edit_scores changes no score") {
		t.Fatalf("edit_scores with the model's own scores %s: %d %v", ownJSON, code, body)
	}
	for _, bad := range []string{`"decision":"approve","scores":{"C1":3}`, `"decision":"reject","comment":"no","scores":{"C1":99,"ZZ":-5}`, `"decision":"approve","scores":{"C1":null}`} {
		if code, body = reviewer.call("POST", "/api/v1/threads/ev_demo-bluewater/resume", `{"resume_token":"`+token+`",`+bad+`,"editor":{"reviewer_id":"u_reviewer"}}`); code != 400 ||
			errCode(body) != "REVIEW_DECISION_INVALID" || !strings.Contains(errMessage(body), "send scores with edit_scores only") {
			t.Fatalf("a bid resume {%s}: %d %v", bad, code, body)
		}
	}
	if code, body = reviewer.call("POST", "/api/v1/threads/ev_demo-bluewater/resume", `{"resume_token":"`+token+`","decision":"approve","value":{"note":"x"},"editor":{"reviewer_id":"u_reviewer"}}`); code != 400 ||
		!strings.Contains(errMessage(body), "value is for other workflows' reviews") {
		t.Fatalf("a bid resume with a value: %d %v", code, body)
	}
	if code, body = reviewer.call("POST", "/api/v1/threads/ev_demo-bluewater/resume", `{"resume_token":"`+token+`","decision":"approve","comment":"证据充分，允许继续","value":null,"editor":{"reviewer_id":"u_reviewer"}}`); code != 202 {
		t.Fatalf("resume: %d %v", code, body)
	}
	k.waitJob("ev_demo-bluewater", runner.Succeeded)
	// The audit log finds the two decisions (the tour's, this one) by the reviewer, however an
	// auditor names them, and by the token they came through ("u_reviewer via token:test-reviewer").
	adm := k.login("admin@demo.weft")
	for _, who := range []string{"u_reviewer", "u_rev", "reviewer", "ravi", "Ravi Rao", "REVIEWER@demo.weft", "reviewer@demo", "test-reviewer", "token:test-reviewer", "u_reviewer via token:test-reviewer"} {
		if _, page := adm.get("/audit?action=thread.resume&actor=" + url.QueryEscape(who)); len(adminAuditRows(page)) != 2 {
			t.Errorf("audit actor=%q: %d resumes, want the two made through the API", who, len(adminAuditRows(page)))
		}
	}
	// It names the actor as the thread page's runs table does.
	if _, page := adm.get("/audit?action=thread.resume"); !strings.Contains(text(page), "Ravi Rao via API token test-reviewer") {
		t.Errorf("the audit log does not name the API resume's actor as the runs table does:\n%s", text(page))
	}
	// The report names who decided as the runs table does, token and all.
	if _, page := adm.get("/threads/ev_demo-bluewater"); !strings.Contains(text(between(page, `id="report"`, `</section>`)), "Ravi Rao via API token test-reviewer") {
		t.Errorf("the report does not say the decision came through the API token")
	}
	if _, page := adm.get("/audit?action=thread.resume&actor=Paula"); len(adminAuditRows(page)) != 0 {
		t.Errorf("audit actor=Paula finds the reviewer's resume")
	}
	if code, body = reviewer.call("POST", "/api/v1/threads/ev_demo-bluewater/resume", `{"resume_token":"`+token+`","decision":"approve","editor":{"reviewer_id":"u_reviewer"}}`); code != 409 || errCode(body) != "WF_INTERRUPT_RESUME_INVALID" ||
		!strings.HasPrefix(errMessage(body), "The resume token cannot be used: ") || strings.Contains(errMessage(body), "inbox") {
		t.Fatalf("reused token: %d %v", code, body)
	}

	// A Last-Event-ID that is not an event id is refused, not read as "from the start".
	for _, bad := range []string{"abc", "-1", "1.5"} {
		req, _ := http.NewRequest("GET", k.Srv.URL+"/api/v1/threads/ev_demo-bluewater/events", nil)
		req.Header.Set("Authorization", "Bearer "+pm.token)
		req.Header.Set("Last-Event-ID", bad)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var e map[string]any
		_ = json.NewDecoder(res.Body).Decode(&e)
		res.Body.Close()
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(errMessage(e), "is not an event id") {
			t.Errorf("Last-Event-ID %q: %d %v, want a 400 saying it is not an event id", bad, res.StatusCode, e)
		}
	}

	// The thread's events as SSE, replayed from the start.
	req, _ := http.NewRequest("GET", k.Srv.URL+"/api/v1/threads/ev_demo-bluewater/events", nil)
	req.Header.Set("Authorization", "Bearer "+pm.token)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("events content type %q", res.Header.Get("Content-Type"))
	}
	// Each run ends with a job event saying where it left the job: the first paused for
	// review, the second (after the approval) succeeded.
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	var kind string
	var kinds, ends []string
	hidden := false
	for sc.Scan() && !slices.Contains(ends, string(runner.Succeeded)) {
		line := sc.Text()
		if strings.Contains(line, token) {
			t.Fatalf("a pm's event stream carries the resume token: %s", line)
		}
		hidden = hidden || strings.Contains(line, `"resume_token":"(hidden)"`)
		if k, ok := strings.CutPrefix(line, "event: "); ok {
			kind = k
			kinds = append(kinds, k)
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok && kind == runner.KindJob {
			var ev struct {
				Data runner.JobEvent `json:"data"`
			}
			if err := json.Unmarshal([]byte(d), &ev); err != nil || ev.Data.JobID == "" {
				t.Fatalf("a job event's data %s: %v", d, err)
			}
			ends = append(ends, string(ev.Data.Status))
		}
	}
	if !slices.Equal(ends, []string{string(runner.WaitingReview), string(runner.Succeeded)}) || !slices.Contains(kinds, graph.KindCheckpoint) {
		t.Fatalf("the event stream's kinds %v; its job events %v, want a pause then success", kinds, ends)
	}
	if !hidden {
		t.Errorf("the pause's interrupt in a pm's stream does not show its resume token as hidden")
	}

	// weft token list / revoke: a live token's name is its own; a revoked one gets 401.
	bg := context.Background()
	if _, err := k.Auth.IssueAPIToken(bg, app.DemoTenant, "test-pm", auth.Admin, "test"); !errors.Is(err, auth.ErrTokenNameTaken) {
		t.Fatalf("a second live token named test-pm: %v", err)
	}
	toks, err := k.Auth.APITokens(bg, app.DemoTenant)
	if err != nil || len(toks) != 2 || toks[0].RevokedAt != nil || toks[0].LastUsedAt == nil {
		t.Fatalf("the demo tenant's tokens: %+v %v", toks, err)
	}
	if _, err := k.Auth.RevokeAPIToken(bg, app.OtherTenant, "test-pm"); !errors.Is(err, auth.ErrNoSuchToken) {
		t.Fatalf("another tenant revokes test-pm: %v", err)
	}
	if code, _ := pm.call("GET", "/api/v1/workflows", ""); code != 200 {
		t.Fatalf("test-pm after another tenant's revoke: %d", code)
	}
	if _, err := k.Auth.RevokeAPIToken(bg, app.DemoTenant, "test-pm"); err != nil {
		t.Fatal(err)
	}
	if code, body := pm.call("GET", "/api/v1/workflows", ""); code != 401 || errCode(body) != "UNAUTHENTICATED" {
		t.Fatalf("a revoked token: %d %v", code, body)
	}
	if _, err := k.Auth.RevokeAPIToken(bg, app.DemoTenant, "test-pm"); !errors.Is(err, auth.ErrNoSuchToken) {
		t.Fatalf("revoking it twice: %v", err)
	}
	if _, err := k.Auth.IssueAPIToken(bg, app.DemoTenant, "test-pm", auth.PM, "test"); err != nil {
		t.Fatalf("the name is free again after the revoke: %v", err)
	}
	if toks, _ = k.Auth.APITokens(bg, app.DemoTenant); len(toks) != 3 || toks[len(toks)-1].RevokedAt == nil {
		t.Fatalf("the revoked token is listed last: %+v", toks)
	}
	// An actor filter that stands for too many ways of acting (part of many names, times
	// every token) is refused with a hint rather than probing hundreds of actors.
	for i := range 70 {
		if _, err := k.Auth.IssueAPIToken(bg, app.DemoTenant, fmt.Sprintf("bulk-%02d", i), auth.PM, "test"); err != nil {
			t.Fatal(err)
		}
	}
	if res, page := adm.get("/audit?actor=a"); res.StatusCode != http.StatusBadRequest || !strings.Contains(text(page), "matches more than") {
		t.Fatalf("actor=a with 3 users and 72 tokens: %d %s", res.StatusCode, text(page))
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
