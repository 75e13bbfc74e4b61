package server_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"weft/internal/app"
	"weft/internal/postgres"
	"weft/internal/runner"
)

// A pm starts a run of a workflow from the dashboard: a form filled in with the workflow's
// example input; input the workflow refuses comes back with the message and as typed, and
// nothing is queued; a good one opens the new thread, and the start is audited.
func TestStartRunFromTheConsole(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	pm := k.login("pm@demo.weft")
	_, dash := pm.get("/dashboard")
	if !strings.Contains(dash, `href="/workflows/tour/start"`) || strings.Contains(dash, "/workflows/bid_evaluation/start") {
		t.Fatalf("the dashboard's start links: %s", text(dash))
	}
	res, body := pm.get("/workflows/tour/start")
	if res.StatusCode != http.StatusOK || !strings.Contains(html.UnescapeString(body), `{"question": "What makes durable workflows`) {
		t.Fatalf("the start form: %d %s", res.StatusCode, text(body))
	}
	for _, p := range []string{"/workflows/bid_evaluation/start", "/workflows/nope/start"} {
		if res, _ := pm.get(p); res.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d, want 404", p, res.StatusCode)
		}
	}
	jobs := func() int {
		var n int
		if err := k.App.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM jobs WHERE workflow = 'tour'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := jobs()
	for in, want := range map[string]string{
		`{"question": "unfinished`:                                  "The input is not valid JSON: unexpected end of JSON input",
		"{\n  \"question\": \"Why?\",\n}":                           "invalid character '}' looking for beginning of object key string at line 3, column 1",
		`["a list"]`:                                                "The input must be a JSON object",
		"   ":                                                       "Type the run's input",
		`{"question": "  "}`:                                        "A tour run needs a question",
		`{"question": "Why retries?", "nope":1}`:                    `The input sets "nope", which is not a channel of this workflow's state`,
		`{"question": "What does a join wait for?"}`:                "has no topic",
		`{"question": "Half a pair \ud800?"}`:                       "cannot be stored",
		"{\"question\": \"price \\u202e0001 CNY\"}":                 "The input's question holds the invisible direction control U+202E",
		"{\"question\": \"Q?\", \"topics\": [\"a\", \"b\u2067c\"]}": "The input's topics[1] holds the invisible direction control U+2067",
	} {
		res, body := pm.post("/workflows/tour/start", url.Values{"input": {in}})
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(html.UnescapeString(text(body)), want) ||
			!strings.Contains(html.UnescapeString(body), ">"+in+"</textarea>") {
			t.Errorf("input %q: %d %s; want 400 saying %q with the input kept", in, res.StatusCode, text(body), want)
		}
	}
	if res, _ := pm.postRaw("/workflows/tour/start", url.Values{"input": {`{"question": "Q?"}`}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("without the CSRF token: %d, want 403", res.StatusCode)
	}
	if n := jobs(); n != before {
		t.Fatalf("refused inputs queued %d runs", n-before)
	}

	res, _ = pm.post("/workflows/tour/start", url.Values{"input": {`{"question": "What makes workflows durable?"}`}})
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/threads/") || !strings.Contains(loc, "?started=") {
		t.Fatalf("start: %d → %q", res.StatusCode, loc)
	}
	res, body = pm.get(loc)
	if res.StatusCode != http.StatusOK || !strings.Contains(text(body), "Run started: job") || !strings.Contains(text(body), "Engine tour") ||
		!strings.Contains(body, "<h1>What makes workflows durable?</h1>") {
		t.Fatalf("the new thread's page: %d %s", res.StatusCode, text(body))
	}
	thread, _ := url.PathUnescape(strings.TrimPrefix(loc[:strings.Index(loc, "?")], "/threads/"))
	entries, _, err := k.App.Audit.List(context.Background(), postgres.AuditFilter{TenantID: app.DemoTenant, Action: "run.start", Subject: thread}, 0, 10)
	if err != nil || len(entries) != 1 || entries[0].Actor != "u_pm" || entries[0].Workflow != "tour" ||
		!strings.Contains(strings.ReplaceAll(string(entries[0].Payload), " ", ""), `"subject":"Whatmakesworkflowsdurable?"`) {
		t.Fatalf("the audit of the start: %+v %v", entries, err)
	}
	// The run is named by its question wherever it is listed.
	j, err := k.App.Jobs.LatestForThread(context.Background(), app.DemoTenant, thread)
	if err != nil || j.Subject != "What makes workflows durable?" {
		t.Fatalf("the run's subject: %q %v", j.Subject, err)
	}
}

// A run's subject is free text for workflows other than bid evaluations: a tour asking
// "ev_demo-bluewater" is not listed in the inbox as Bluewater's evaluation. A page's form
// body is bounded.
func TestStartRunSubjectAndLimits(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	k.work()
	j, err := k.App.StartRun(context.Background(), app.DemoTenant, "tour", []byte(`{"question": "ev_demo-bluewater"}`), "u_pm")
	if err != nil {
		t.Fatal(err)
	}
	k.waitJobID(j.ID, runner.WaitingReview)
	k.waitJob("ev_demo-bluewater", runner.WaitingReview) // the real one is listed too
	_, body := k.login("reviewer@demo.weft").get("/reviews")
	i := strings.Index(body, `href="/reviews/`+j.ID+`"`)
	if i < 0 {
		t.Fatalf("the tour's review is not in the inbox: %s", text(body))
	}
	row := body[strings.LastIndex(body[:i], "<tr"):]
	row = row[:strings.Index(row, "</tr>")]
	if strings.Contains(row, "Bluewater Systems") || !strings.Contains(row, "ev_demo-bluewater") {
		t.Fatalf("the tour's inbox row: %s", text(row))
	}

	pm := k.login("pm@demo.weft")
	// A 9 MB form is refused from its declared length. The client waits for the server's go
	// ahead before sending the body (as large uploads do), so the refusal never races it.
	form := url.Values{"_csrf": {pm.csrf()}, "input": {strings.Repeat("x", 9<<20)}}
	req, _ := http.NewRequest(http.MethodPost, pm.base+"/workflows/tour/start", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Expect", "100-continue")
	if res, body := pm.do(req); res.StatusCode != http.StatusRequestEntityTooLarge ||
		!strings.Contains(text(body), "What was sent is larger than the console takes (8MB at most; a document at most 2 MB)") {
		t.Errorf("a 9 MB form: %d %s, want 413 saying the limit", res.StatusCode, text(body))
	}
	if res, body := pm.post("/workflows/tour/start", url.Values{"input": {`{"question": "` + strings.Repeat("x", 70<<10) + `"}`}}); res.StatusCode != http.StatusBadRequest ||
		!strings.Contains(text(body), "The input is too long") {
		t.Errorf("a 70 KB input: %d %s", res.StatusCode, text(body)[:200])
	}
}
