package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"html"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
	"weft/internal/auth"

	"weft/internal/app"
	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/runner"
	"weft/internal/server"
	"weft/web/page"
)

// nodeState finds the state class the drawn graph gives a node.
func nodeState(t *testing.T, html, node string) string {
	t.Helper()
	re := regexp.MustCompile(`<g class="node node ([a-z]+)" id="` + regexp.QuoteMeta(graph.MermaidID(node)) + `"`)
	m := re.FindStringSubmatch(html)
	if m == nil {
		t.Fatalf("the graph has no node %s", node)
	}
	return m[1]
}

func TestThreadPages(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	k.work()
	northwind := k.waitJob("ev_demo-northwind", runner.Succeeded)
	bluewater := k.waitJob("ev_demo-bluewater", runner.WaitingReview)
	k.waitJob("ev_demo-harbor", runner.Failed)
	admin, reviewer, pm := k.login("admin@demo.weft"), k.login("reviewer@demo.weft"), k.login("pm@demo.weft")

	t.Run("finished evaluation", func(t *testing.T) {
		t.Parallel()
		res, body := admin.get("/threads/ev_demo-northwind")
		if res.StatusCode != http.StatusOK {
			t.Fatalf("status %d", res.StatusCode)
		}
		e, _ := k.App.Registry.Get("bid_evaluation")
		for _, n := range e.Path {
			if got := nodeState(t, body, n); got != "done" {
				t.Errorf("%s is drawn %s, want done", n, got)
			}
		}
		if got := nodeState(t, body, "human_review_interrupt"); got != "skipped" {
			t.Errorf("the review node of a passed bid is drawn %s, want skipped (the run ended without it)", got)
		}
		if !strings.Contains(text(body), "not run") {
			t.Error("the drawing does not say which nodes were not run")
		}
		ws, err := app.Bid(k.App).EvaluationState(context.Background(), app.DemoTenant, "ev_demo-northwind")
		if err != nil || ws.Output.ReportPayload == nil {
			t.Fatalf("no report: %v", err)
		}
		txt := text(body)
		total := page.Score(ws.Output.ReportPayload.TotalScore)
		// The run's status badge and its job's row say "completed" (the state JSON keeps the
		// stored "succeeded").
		if !strings.Contains(txt, "human review. completed Job …") || !strings.Contains(txt, northwind.ID[len(northwind.ID)-8:]+" completed") {
			t.Errorf("the run's status and its job's row do not read completed: %s", txt)
		}
		for _, want := range []string{"Final report", total + " total score", "Scored by offline provider", "Technical solution",
			"Bid price within budget", "Node timeline", "persist_result", "Checkpoint history", "Fork from here", "Mermaid source",
			"Mermaid source", northwind.ID[len(northwind.ID)-8:]} {
			if !strings.Contains(txt, want) {
				t.Errorf("the page does not show %q", want)
			}
		}
		if !strings.Contains(body, `sse-connect="/threads/ev_demo-northwind/events?last_event_id=`) || strings.Contains(body, "last_event_id=0\"") {
			t.Error("the page does not stream from the last event it shows")
		}
		for _, ev := range []string{`sse-swap="graph"`, `sse-swap="timeline"`, `sse-swap="status"`, `sse-swap="review"`} {
			if !strings.Contains(body, ev) {
				t.Errorf("no live region %s", ev)
			}
		}
		if strings.Contains(body, "style=") {
			t.Error("the page uses inline styles, which the CSP forbids")
		}
	})

	t.Run("waiting for review", func(t *testing.T) {
		t.Parallel()
		res, body := reviewer.get("/threads/ev_demo-bluewater")
		if res.StatusCode != http.StatusOK {
			t.Fatalf("a reviewer cannot view the thread: %d", res.StatusCode)
		}
		if got := nodeState(t, body, "human_review_interrupt"); got != "interrupted" {
			t.Errorf("human_review_interrupt is drawn %s, want interrupted", got)
		}
		if got := nodeState(t, body, "quality_gate"); got != "done" {
			t.Errorf("quality_gate is drawn %s, want done", got)
		}
		if got := nodeState(t, body, "finalize_report"); got != "pending" {
			t.Errorf("finalize_report is drawn %s, want pending", got)
		}
		if !strings.Contains(body, `href="/reviews/`+bluewater.ID+`"`) || !strings.Contains(text(body), "Review waiting") {
			t.Error("no review-waiting link to the review form")
		}
		if strings.Contains(text(body), "Fork from here") {
			t.Error("a reviewer is offered the fork")
		}
		if !strings.Contains(text(body), "waits for a reviewer") {
			t.Error("the report section does not say the report waits for the review")
		}
		// Tender pages are for pms and admins: no link to one for a reviewer, here or under a
		// finished report.
		_, done := reviewer.get("/threads/ev_demo-northwind")
		if strings.Contains(body, `href="/projects/`) || strings.Contains(done, `href="/projects/`) || !strings.Contains(done, `id="report"`) {
			t.Error("a reviewer is offered a link to the tender's page, which refuses reviewers")
		}
	})

	t.Run("failed evaluation", func(t *testing.T) {
		t.Parallel()
		res, body := pm.get("/threads/ev_demo-harbor")
		if res.StatusCode != http.StatusOK {
			t.Fatalf("status %d", res.StatusCode)
		}
		want := map[string]string{"retrieve_evidence": "failed", "load_context": "done", "evaluate_rules": "skipped",
			"classify_error": "done", "retry_or_dlq": "done", "score_with_llm": "skipped"}
		for n, st := range want {
			if got := nodeState(t, body, n); got != st {
				t.Errorf("%s is drawn %s, want %s", n, got, st)
			}
		}
		txt := text(body)
		if !strings.Contains(body, `href="/projects/demo-dc-network-2026"`) || !strings.Contains(txt, "Tender Data centre network upgrade 2026") {
			t.Error("a failed evaluation's page does not link to its tender")
		}
		for _, w := range []string{"any error", "BID_NO_DOCUMENTS", "No report: the run failed at retrieve_evidence"} {
			if !strings.Contains(txt, w) {
				t.Errorf("the page does not show %q", w)
			}
		}
		if strings.Contains(txt, "Fork from here") {
			t.Error("a pm is offered the fork")
		}
	})

	t.Run("history pages", func(t *testing.T) {
		t.Parallel()
		e, _ := k.App.Registry.Get("bid_evaluation")
		cps, err := e.Graph.History(context.Background(), graph.Config{ThreadID: "ev_demo-northwind"}, graph.ListOptions{})
		if err != nil || len(cps) < 3 {
			t.Fatalf("history: %d, %v", len(cps), err)
		}
		res, body := admin.htmx("/threads/ev_demo-northwind?before=" + cps[1].ID)
		if res.StatusCode != http.StatusOK || strings.Contains(body, "<html") || !strings.Contains(body, `id="history"`) {
			t.Fatalf("the history partial: %d", res.StatusCode)
		}
		if strings.Contains(body, cps[0].ID) || strings.Contains(body, cps[1].ID+`"`) && !strings.Contains(body, cps[2].ID) {
			t.Error("the page after a checkpoint shows it or what is newer")
		}
		for _, before := range []string{"nonsense", "00000000-0000-0000-0000-000000000000"} {
			if res, body := admin.get("/threads/ev_demo-northwind?before=" + before); res.StatusCode != http.StatusBadRequest ||
				!strings.Contains(text(body), "names no checkpoint of this thread") {
				t.Errorf("history cursor %s: %d, want a 400 saying so", before, res.StatusCode)
			}
		}
	})

	t.Run("another tenant", func(t *testing.T) {
		t.Parallel()
		acme := k.login("admin@acme.weft")
		for _, p := range []string{"/threads/ev_demo-northwind", "/threads/ev_demo-northwind/events", "/threads/no-such-thread"} {
			if res, _ := acme.get(p); res.StatusCode != http.StatusNotFound {
				t.Errorf("acme's admin GET %s: %d, want 404", p, res.StatusCode)
			}
		}
		acme.get("/threads/ev_demo-northwind")
		if res, _ := acme.post("/threads/ev_demo-northwind/fork", url.Values{"checkpoint_id": {"01a20149-a8ae-7585-83e4-5cc284ace463"}}); res.StatusCode != http.StatusNotFound {
			t.Errorf("acme's admin forks demo's thread: %d, want 404", res.StatusCode)
		}
	})

	t.Run("fork refused", func(t *testing.T) {
		t.Parallel()
		a := admin
		e, _ := k.App.Registry.Get("bid_evaluation")
		cps, _ := e.Graph.History(context.Background(), graph.Config{ThreadID: "ev_demo-bluewater"}, graph.ListOptions{})
		res, body := a.post("/threads/ev_demo-bluewater/fork", url.Values{"checkpoint_id": {cps[len(cps)-1].ID}})
		if res.StatusCode != http.StatusConflict || !strings.Contains(text(body), "The thread has a job that has not finished") {
			t.Errorf("forking a thread that waits for review: %d %s", res.StatusCode, text(body))
		}
		res, _ = a.post("/threads/ev_demo-northwind/fork", url.Values{"checkpoint_id": {"not a checkpoint"}})
		if res.StatusCode != http.StatusBadRequest {
			t.Errorf("a malformed checkpoint id: %d, want 400", res.StatusCode)
		}
		res, body = a.post("/threads/ev_demo-northwind/fork", url.Values{"checkpoint_id": {cps[0].ID}})
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(text(body), "is not in this thread") {
			t.Errorf("another thread's checkpoint: %d %s", res.StatusCode, text(body))
		}
		if res, _ := pm.post("/threads/ev_demo-northwind/fork", url.Values{"checkpoint_id": {cps[0].ID}}); res.StatusCode != http.StatusForbidden {
			t.Errorf("a pm forks: %d, want 403", res.StatusCode)
		}
	})
}

func TestThreadFork(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	k.work()
	k.waitJob("ev_demo-northwind", runner.Succeeded)
	e, _ := k.App.Registry.Get("bid_evaluation")
	cps, err := e.Graph.History(context.Background(), graph.Config{ThreadID: "ev_demo-northwind"}, graph.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var from graph.Checkpoint
	for _, cp := range cps {
		if len(cp.Next) == 1 && cp.Next[0].Node == "finalize_report" {
			from = cp
		}
	}
	if from.ID == "" {
		t.Fatal("no checkpoint before finalize_report")
	}
	admin := k.login("admin@demo.weft")
	_, page := admin.get("/threads/ev_demo-northwind")
	if !strings.Contains(page, `name="checkpoint_id" value="`+from.ID+`"`) {
		t.Fatal("the admin is not offered a fork from the checkpoint")
	}
	res, _ := admin.postRaw("/threads/ev_demo-northwind/fork", url.Values{"checkpoint_id": {from.ID}})
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("a fork without the CSRF token: %d, want 403", res.StatusCode)
	}
	res, _ = admin.post("/threads/ev_demo-northwind/fork", url.Values{"checkpoint_id": {from.ID}})
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/threads/ev_demo-northwind?forked=") {
		t.Fatalf("fork: %d → %s", res.StatusCode, res.Header.Get("Location"))
	}
	// The evaluation now follows the fork's job; wait for it to finish.
	fork := waitForkJob(t, k, "ev_demo-northwind", 2)
	// The fork's run is a new report: the evaluation is completed again, on version 2, and
	// the tender page shows its result.
	ev, err := app.Bid(k.App).Store.Evaluation(context.Background(), app.DemoTenant, "ev_demo-northwind")
	if err != nil || ev.Status != "completed" || ev.ReportVersion != 2 || ev.TotalScore == nil || ev.JobID != fork.ID {
		t.Fatalf("the evaluation after the fork: %+v %v", ev, err)
	}
	reports, _, _ := k.App.Audit.List(context.Background(), postgres.AuditFilter{TenantID: app.DemoTenant, Action: "evaluation.report", Subject: "ev_demo-northwind"}, 0, 10)
	if len(reports) != 2 {
		t.Errorf("evaluation.report audit rows after the fork: %d, want 2", len(reports))
	}
	_, page = admin.get(res.Header.Get("Location"))
	txt := text(page)
	for _, want := range []string{"Fork queued", "forked from …" + from.ID[len(from.ID)-8:], "fork"} {
		if !strings.Contains(txt, want) {
			t.Errorf("after the fork the page does not show %q", want)
		}
	}
	if got := nodeState(t, page, "persist_result"); got != "done" {
		t.Errorf("persist_result after the fork: %s", got)
	}
	// A hand-made link naming the thread's first job (no fork) as forked shows no notice.
	if first := k.waitJob("ev_demo-bluewater", runner.WaitingReview); first.ID != "" {
		_, other := admin.get("/threads/ev_demo-bluewater?forked=" + first.ID)
		if strings.Contains(text(other), "Fork queued") {
			t.Error("a job that is no fork is announced as one")
		}
	}
	// The node timeline puts the newest run on top: the fork's job is its first row's.
	if tl := page[strings.Index(page, `table compact timeline`):]; !strings.HasPrefix(tl[strings.Index(tl, "job <code>"):], "job <code>…"+fork.ID[len(fork.ID)-8:]) {
		t.Errorf("the timeline's first row is not the fork's run")
	}
	// The history greys what the fork left behind: the first run's checkpoints after the one
	// forked from are an earlier branch; that one and its ancestors still lead to the head.
	rowOf := func(id string) string {
		i := strings.Index(page, `<code title="`+id+`"`)
		if i < 0 {
			t.Fatalf("checkpoint %s is not in the history", id)
		}
		return page[strings.LastIndex(page[:i], "<tr"):i]
	}
	if !strings.Contains(txt, "Greyed checkpoints are on an earlier branch") {
		t.Error("the history does not explain its earlier branch")
	}
	if forks := historyRows(t, page, graph.SourceFork); len(forks) != 1 || strings.Contains(text(forks[0]), "retry of job") {
		t.Errorf("the admin's fork is not shown as a fork: %q", forks)
	}
	for _, cp := range cps {
		earlier := strings.Contains(rowOf(cp.ID), "earlier-branch")
		if newer := cp.ID > from.ID; earlier != newer {
			t.Errorf("checkpoint %s (step %d) marked earlier branch: %v, want %v", cp.ID, cp.Step, earlier, newer)
		}
	}
	entries, _, err := k.App.Audit.List(context.Background(), postgres.AuditFilter{TenantID: app.DemoTenant, Action: app.ActionThreadFork}, 0, 10)
	if err != nil || len(entries) != 1 || entries[0].Subject != "ev_demo-northwind" || entries[0].Actor != "u_admin" {
		t.Errorf("the fork's audit row: %+v, %v", entries, err)
	}

	// A fork from the checkpoint before persist_result re-persists the report it holds:
	// nothing new is written, and the evaluation goes back to completed on that version.
	cps, err = e.Graph.History(context.Background(), graph.Config{ThreadID: "ev_demo-northwind"}, graph.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var persist graph.Checkpoint
	for _, cp := range cps {
		if len(cp.Next) == 1 && cp.Next[0].Node == "persist_result" && persist.ID == "" {
			persist = cp // the newest: the first fork's
		}
	}
	if res, _ = admin.post("/threads/ev_demo-northwind/fork", url.Values{"checkpoint_id": {persist.ID}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("fork before persist_result: %d", res.StatusCode)
	}
	again := waitForkJob(t, k, "ev_demo-northwind", 3)
	ev, err = app.Bid(k.App).Store.Evaluation(context.Background(), app.DemoTenant, "ev_demo-northwind")
	if again.Status != runner.Succeeded || err != nil || ev.Status != "completed" || ev.ReportVersion != 2 {
		t.Fatalf("the evaluation after a fork that re-persists: %+v %+v %v", again, ev, err)
	}
	reports, _, _ = k.App.Audit.List(context.Background(), postgres.AuditFilter{TenantID: app.DemoTenant, Action: "evaluation.report", Subject: "ev_demo-northwind"}, 0, 10)
	if len(reports) != 2 {
		t.Errorf("evaluation.report audit rows after a replayed persist: %d, want 2", len(reports))
	}

	// Two forks later the history spans pages; each page marks exactly the checkpoints that
	// do not lead to the head, the older one too (its link carries where the head's line goes).
	var all []graph.Checkpoint
	for n := 4; ; n++ {
		if all, err = e.Graph.History(context.Background(), graph.Config{ThreadID: "ev_demo-northwind"}, graph.ListOptions{}); err != nil {
			t.Fatal(err)
		}
		if len(all) > 20 || n > 10 {
			break
		}
		if res, _ = admin.post("/threads/ev_demo-northwind/fork", url.Values{"checkpoint_id": {from.ID}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("fork %d: %d", n, res.StatusCode)
		}
		waitForkJob(t, k, "ev_demo-northwind", n)
	}
	parent, onLine := map[string]string{}, map[string]bool{}
	for _, cp := range all {
		parent[cp.ID] = cp.ParentID
	}
	for id := all[0].ID; id != ""; id = parent[id] { // the newest is the head
		onLine[id] = true
	}
	_, page = admin.get("/threads/ev_demo-northwind")
	older := regexp.MustCompile(`href="(/threads/ev_demo-northwind\?before=[^"#]+)`).FindStringSubmatch(page)
	if len(all) <= 20 || older == nil || !strings.Contains(older[1], "line=") {
		t.Fatalf("%d checkpoints; the history's older page link %v does not carry the line", len(all), older)
	}
	_, page2 := admin.get(html.UnescapeString(older[1]))
	// An older page is marked so live updates leave it be (static/js/keepview.js); the
	// newest is not.
	if strings.Contains(page, "data-older") || !strings.Contains(page2, `id="history" aria-labelledby="history-h" data-older`) {
		t.Error("the history's older page is not marked data-older (or the newest is)")
	}
	seen := 0
	for _, pg := range []string{page, page2} {
		for _, cp := range all {
			i := strings.Index(pg, `<code title="`+cp.ID+`"`)
			if i < 0 {
				continue
			}
			seen++
			if earlier := strings.Contains(pg[strings.LastIndex(pg[:i], "<tr"):i], "earlier-branch"); earlier == onLine[cp.ID] {
				t.Errorf("checkpoint %s (step %d): earlier branch %v, on the head's line %v", cp.ID, cp.Step, earlier, onLine[cp.ID])
			}
		}
	}
	if seen < 21 {
		t.Errorf("the two pages show %d checkpoints", seen)
	}
}

// waitForkJob waits until the thread has n jobs and the newest has finished, and returns it.
func waitForkJob(t *testing.T, k *kit, thread string, n int) runner.Job {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		jobs, err := k.App.Jobs.ThreadJobs(context.Background(), app.DemoTenant, thread, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(jobs) == n && jobs[0].Status.Terminal() {
			if jobs[0].Status != runner.Succeeded {
				t.Fatalf("the fork's job did not succeed: %+v", jobs[0])
			}
			return jobs[0]
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("thread %s: no finished job number %d", thread, n)
	return runner.Job{}
}

// TestThreadEvents follows a thread live: the stream sends the graph drawn
// again as the run moves.
func TestThreadEvents(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	pm := k.login("pm@demo.weft")
	// Before any worker runs, the thread is queued and drawn all pending.
	res0, body := pm.get("/threads/ev_demo-northwind")
	if res0.StatusCode != http.StatusOK || !strings.Contains(text(body), "queued") || nodeState(t, body, "load_context") != "pending" {
		t.Fatalf("the queued thread's page: %d", res0.StatusCode)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, k.Srv.URL+"/threads/ev_demo-northwind/events", nil)
	res, err := pm.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("events: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	k.work()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	event, sawRunning, sawGraph := "", false, false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case event == "graph" && strings.HasPrefix(line, "data: "):
			if strings.Contains(line, "<svg") {
				sawGraph = true
			}
			if strings.Contains(line, `class="node node running"`) {
				sawRunning = true
			}
		case event == "status" && strings.Contains(line, "succeeded"):
			if !sawGraph {
				t.Fatal("the status changed before any graph was sent")
			}
			if !sawRunning {
				t.Log("no running node was caught in flight (the run is fast)")
			}
			return
		}
	}
	t.Fatalf("the stream ended without a graph and the final status (graph seen: %v): %v", sawGraph, sc.Err())
}

// Text PostgreSQL cannot store (a NUL byte, bytes that are not UTF-8) in an address or a
// form is the client's mistake, told as such, not a server error.
func TestUnstorableInput(t *testing.T) {
	t.Parallel()
	k, job := reviewKit(t)
	pm := k.login("pm@demo.weft")
	if res, _ := pm.get("/threads/%ff%fe"); res.StatusCode != http.StatusNotFound {
		t.Errorf("GET a thread id that is not UTF-8: %d, want 404", res.StatusCode)
	}
	for _, p := range []string{"/threads/%00", "/projects/a%00b", "/audit?actor=%00"} {
		c := pm
		if strings.HasPrefix(p, "/audit") {
			c = k.login("admin@demo.weft")
		}
		if res, body := c.get(p); res.StatusCode != http.StatusBadRequest || !strings.Contains(text(body), "cannot be stored") {
			t.Errorf("GET %s: %d %s", p, res.StatusCode, text(body))
		}
	}
	if code, body := k.api(app.DemoTenant, auth.PM).call("GET", "/api/v1/threads/%00/state", ""); code != http.StatusBadRequest ||
		errCode(body) != "VALIDATION_FAILED" {
		t.Errorf("API state of a NUL thread id: %d %v", code, body)
	}
	reviewer := k.login("reviewer@demo.weft")
	token, _, _ := reviewForm(t, reviewer, job.ID)
	res, body := reviewer.post("/reviews/"+job.ID, url.Values{"resume_token": {token}, "decision": {"approve"}, "comment": {"ok\x00"}})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(text(body), "The comment holds a control character (U+0000) at character 3") {
		t.Errorf("a comment with a NUL byte: %d %s", res.StatusCode, text(body))
	}
	// Nothing was used up: the same token approves with a clean comment.
	if res, _ := reviewer.post("/reviews/"+job.ID, url.Values{"resume_token": {token}, "decision": {"approve"}, "comment": {"ok"}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("approve after the refused comment: %d", res.StatusCode)
	}
}

// A run that failed for good without the graph's error route (a tour whose question has no
// topic word fails at plan) is drawn as it ended: plan failed, the nodes after it not run
// (not pending, as if they were still to come).
func TestFailedRunGraph(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	k.work()
	j, err := k.App.Runner.Enqueue(context.Background(), runner.NewJob{TenantID: app.DemoTenant, Workflow: "tour", Subject: "why?",
		Input: json.RawMessage(`{"question":"why?"}`)})
	if err != nil {
		t.Fatal(err)
	}
	k.waitJobID(j.ID, runner.Failed)
	_, body := k.login("pm@demo.weft").get("/threads/" + j.ThreadID)
	want := map[string]string{"plan": "failed", "research": "skipped", "draft": "skipped", "stamp": "skipped", "review": "skipped"}
	for n, st := range want {
		if got := nodeState(t, body, n); got != st {
			t.Errorf("%s is drawn %s, want %s", n, got, st)
		}
	}
}

// historyRows are the rows of the thread page's checkpoint history whose source is source.
func historyRows(t *testing.T, page, source string) []string {
	t.Helper()
	i := strings.Index(page, `table compact history`)
	if i < 0 {
		t.Fatal("the page has no checkpoint history")
	}
	table := page[i : i+strings.Index(page[i:], "</table>")]
	var out []string
	for _, row := range strings.Split(table, "<tr")[1:] {
		if strings.Contains(row, `source-`+source+`"`) {
			out = append(out, row)
		}
	}
	return out
}

// A finished evaluation whose thread was pruned (weft prune --older-than) still shows its
// persisted report, on its page and through the API, and says its checkpoints were pruned
// (it said the run finished without a report, and the API gave a total of 0).
func TestPrunedThreadKeepsItsReport(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	stop := k.work()
	job := k.waitJob("ev_demo-northwind", runner.Succeeded)
	k.waitJob("ev_demo-harbor", runner.Failed)
	stop()
	ctx := context.Background()
	st, err := app.Bid(k.App).EvaluationState(ctx, app.DemoTenant, "ev_demo-northwind")
	if err != nil || st.Output.ReportPayload == nil {
		t.Fatalf("before the prune: %v", err)
	}
	want := st.Output.ReportPayload
	if _, err := k.App.Prune(ctx, 50, time.Nanosecond); err != nil {
		t.Fatal(err)
	}
	if cps, err := k.App.Checkpoints.List(ctx, job.ThreadID, "", graph.ListOptions{}); err == nil && len(cps) != 0 {
		t.Fatalf("the thread still has %d checkpoints", len(cps))
	}
	pm := k.login("pm@demo.weft")
	_, body := pm.get("/threads/" + url.PathEscape(job.ThreadID))
	shown := text(body)
	for _, s := range []string{"Supplier " + want.Supplier + " Project " + want.Project, "The report as persisted (version 1)", "checkpoints were pruned.",
		"total score / 100", "checkpoints were pruned (weft prune)", "rank when reported",
		"As it stood when this report was written (version 1)", "shows the current results"} {
		if !strings.Contains(shown, s) {
			t.Fatalf("the pruned thread's page does not say %q:\n%s", s, shown)
		}
	}
	if strings.Contains(shown, "The run finished without a report") {
		t.Fatal("the pruned thread's page says it has no report")
	}
	// The graph is drawn from the node records of the last run.
	for node, want := range map[string]string{"persist_result": "done", "evaluate_rules": "done", "human_review_interrupt": "pending"} {
		if got := nodeState(t, body, node); got != want {
			t.Errorf("the pruned thread's graph: %s is %s, want %s", node, got, want)
		}
	}
	api := k.api(app.DemoTenant, "pm")
	code, res := api.call("GET", "/api/v1/evaluations/ev_demo-northwind/state", "")
	scoring, _ := res["scoring"].(map[string]any)
	output, _ := res["output"].(map[string]any)
	if code != http.StatusOK || scoring["total_score"] != want.TotalScore || output["report_payload"] == nil ||
		len(scoring["criteria_scores"].([]any)) != len(want.Criteria) {
		t.Fatalf("the API state of the pruned evaluation: %d %v", code, res)
	}
	// Its trace and its queries are still told (from its job and its rule pack), and its page
	// is titled by supplier and tender.
	trace, _ := res["trace"].(map[string]any)
	inputs, _ := res["inputs"].(map[string]any)
	queries, _ := inputs["query_bundle"].(map[string]any)
	if criteria, _ := queries["criteria"].([]any); trace["trace_id"] != job.TraceID || job.TraceID == "" || len(criteria) != len(want.Criteria) {
		t.Fatalf("the API state of the pruned evaluation lost its context: trace %v, inputs %v", trace, inputs)
	}
	if !strings.Contains(body, "<title>"+want.Supplier+" · "+want.Project) {
		t.Errorf("the pruned thread's page is not titled by its supplier and tender")
	}
	// A thread that failed and was pruned has no report; the failure is still the reason given.
	crest := k.waitJob("ev_demo-harbor", runner.Failed)
	if _, body := pm.get("/threads/" + url.PathEscape(crest.ThreadID)); !strings.Contains(text(body), "No report: the run failed") {
		t.Fatalf("the pruned failed thread:\n%s", text(body))
	}
}

// A server shutting down ends its live streams at once (their clients reconnect), rather than
// waiting out the shutdown's timeout and exiting with an error.
func TestShutdownEndsStreams(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	served := make(chan error, 1)
	go func() {
		served <- server.New(server.Config{App: k.App, Auth: k.Auth, LoginRate: 10000}).Serve(ctx, ln)
	}()
	c := k.anonymous()
	c.base = "http://" + ln.Addr().String()
	c.get("/login")
	if res, _ := c.post("/login", url.Values{"email": {"pm@demo.weft"}, "password": {auth.DemoPassword}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", res.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, c.base+"/dashboard/events", nil)
	res, err := c.http.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("the dashboard's stream: %v %v", res, err)
	}
	defer res.Body.Close()
	ended := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, res.Body); close(ended) }()
	start := time.Now()
	cancel()
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("the shutdown with a stream open: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the server did not shut down within 5 s with a stream open")
	}
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not end")
	}
	t.Logf("shut down in %v", time.Since(start).Round(time.Millisecond))
}

// A live stream ends soon after what let it in stops standing: its session signed out, or
// its API token revoked (they went on streaming the tenant's events for as long as the
// connection lasted).
func TestStreamsEndWithTheirCredentials(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	srv := httptest.NewServer(server.New(server.Config{App: k.App, Auth: k.Auth, LoginRate: 10000, StreamRecheck: 100 * time.Millisecond}).Handler())
	t.Cleanup(srv.Close)
	ends := func(res *http.Response) <-chan struct{} {
		ended := make(chan struct{})
		go func() { _, _ = io.Copy(io.Discard, res.Body); close(ended) }()
		return ended
	}
	// Still open after a while, while the credential stands; closed soon after it goes.
	check := func(what string, res *http.Response, revoke func()) {
		t.Helper()
		defer res.Body.Close()
		ended := ends(res)
		select {
		case <-ended:
			t.Fatalf("%s: the stream ended while its credential stood", what)
		case <-time.After(400 * time.Millisecond):
		}
		revoke()
		select {
		case <-ended:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: the stream goes on", what)
		}
	}

	c := k.anonymous()
	c.base = srv.URL
	c.get("/login")
	if res, _ := c.post("/login", url.Values{"email": {"pm@demo.weft"}, "password": {auth.DemoPassword}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", res.StatusCode)
	}
	// The console's stream was let in by its session: a Bearer header it also carries (here
	// another tenant's live token) does not keep it alive.
	other, err := k.Auth.IssueAPIToken(context.Background(), app.OtherTenant, "bystander", auth.PM, "test")
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/dashboard/events", nil)
	req.Header.Set("Authorization", "Bearer "+other)
	res, err := c.http.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("the dashboard's stream: %v %v", res, err)
	}
	check("signing out", res, func() {
		if res, _ := c.post("/logout", nil); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("sign-out: %d", res.StatusCode)
		}
	})

	secret, err := k.Auth.IssueAPIToken(context.Background(), app.DemoTenant, "streamer", auth.PM, "test")
	if err != nil {
		t.Fatal(err)
	}
	req, _ = http.NewRequest(http.MethodGet, srv.URL+"/api/v1/threads/ev_demo-northwind/events", nil)
	req.Header.Set("Authorization", "Bearer "+secret)
	res, err = http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("the API stream: %v %v", res, err)
	}
	check("revoking the token", res, func() {
		if _, err := k.Auth.RevokeAPIToken(context.Background(), app.DemoTenant, "streamer"); err != nil {
			t.Fatal(err)
		}
	})
}

// A console stream ends once its session has been idle past the idle timeout, as the next
// page would ask to sign in (the stream itself is no activity); it went on for the session's
// whole lifetime.
func TestStreamEndsWithAnIdleSession(t *testing.T) {
	t.Parallel()
	const idle = 3 * time.Second
	k := newKitWith(t, auth.Options{IdleTimeout: idle})
	srv := httptest.NewServer(server.New(server.Config{App: k.App, Auth: k.Auth, LoginRate: 10000, StreamRecheck: 100 * time.Millisecond}).Handler())
	t.Cleanup(srv.Close)
	c := k.anonymous()
	c.base = srv.URL
	c.get("/login")
	signedIn := time.Now() // the session's last use is at most this, less its rounding to the second
	if res, _ := c.post("/login", url.Values{"email": {"pm@demo.weft"}, "password": {auth.DemoPassword}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %d", res.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL+"/dashboard/events", nil)
	res, err := c.http.Do(req)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("the dashboard's stream: %v %v", res, err)
	}
	defer res.Body.Close()
	ended := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, res.Body); close(ended) }()
	select {
	case <-ended:
		if d := time.Since(signedIn); d < idle-time.Second {
			t.Fatalf("the stream ended %v after the sign-in, while the session was not yet idle", d)
		}
	case <-time.After(idle + 10*time.Second):
		t.Fatal("the stream of an idle session goes on")
	}
}
