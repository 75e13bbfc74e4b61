package server_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"weft/internal/app"
	"weft/internal/runner"
)

// dashboardCount reads the count a dashboard shows for a workflow and
// status (-1 when it shows none).
func dashboardCount(t *testing.T, html, workflow, status string) int {
	t.Helper()
	re := regexp.MustCompile(`id="count-` + regexp.QuoteMeta(workflow+"-"+status) + `"[^>]*>\s*<div class="n">(\d+)</div>`)
	m := re.FindStringSubmatch(html)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

func TestDashboardShowsEveryWorkflowsJobs(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	k.work()
	k.waitJob("ev_demo-northwind", runner.Succeeded)
	k.waitJob("ev_demo-crestline", runner.Succeeded) // disqualified: an outcome, not a failure
	waiting := k.waitJob("ev_demo-bluewater", runner.WaitingReview)
	k.waitJob("ev_demo-harbor", runner.Failed)

	pm := k.login("pm@demo.weft")
	res, body := pm.get("/dashboard")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("dashboard: %d", res.StatusCode)
	}
	for status, want := range map[string]int{"succeeded": 2, "waiting_review": 1, "failed": 1, "queued": 0, "running": 0, "retry_scheduled": 0} {
		if got := dashboardCount(t, body, "bid_evaluation", status); got != want {
			t.Errorf("bid_evaluation %s: the dashboard shows %d, want %d", status, got, want)
		}
	}
	// A count leads to the runs it counts (a zero leads nowhere).
	if !strings.Contains(body, `id="count-bid_evaluation-failed" href="/runs?status=failed&amp;workflow=bid_evaluation"`) ||
		strings.Contains(body, `id="count-bid_evaluation-running" href=`) {
		t.Errorf("the counts do not link to their runs (or a zero count does): %s", regexp.MustCompile(`<a [^>]*count-bid_evaluation-failed[^>]*>`).FindString(body))
	}
	// The failed count counts runs, not threads: its tooltip says that a thread started again
	// counts each of its failed runs (the panels list only a thread's latest).
	if !strings.Contains(body, `title="List these runs: Failed (every run, those whose thread was started again since too)"`) {
		t.Error("the failed count does not say it counts every failed run")
	}
	if _, runs := pm.get("/runs?workflow=bid_evaluation&status=failed"); !strings.Contains(text(runs), "Harbor Systems") {
		t.Error("the failed count's list does not show the failed run")
	}
	// Registry-driven: the tour workflow has its panel too, with zero jobs.
	if got := dashboardCount(t, body, "tour", "succeeded"); got != 0 || !strings.Contains(body, `id="wf-tour"`) {
		t.Errorf("the tour workflow's panel is missing (succeeded count %d)", got)
	}
	page := text(body)
	if !regexp.MustCompile(`Bluewater Systems Waiting \d+(s|m)`).MatchString(page) {
		t.Errorf("the waiting review is not shown with its age: %s", page)
	}
	if !strings.Contains(body, `href="/threads/ev_demo-bluewater"`) {
		t.Error("the waiting review does not link to its thread")
	}
	if strings.Contains(body, "/reviews/"+waiting.ID) {
		t.Error("a PM is offered the review form, which is for reviewers")
	}
	if !strings.Contains(page, "Harbor Systems") || !strings.Contains(page, "BID_NO_DOCUMENTS") ||
		!strings.Contains(body, `href="/threads/ev_demo-harbor"`) || !strings.Contains(page, "has no bid documents") {
		t.Errorf("the failure is not shown with its code, message and thread: %s", page)
	}
	if !strings.Contains(body, `href="/projects/demo-dc-network-2026"`) || !strings.Contains(page, "2 of 4 1 disqualified 1 failed") {
		t.Errorf("the tender is not listed with its completed evaluations, the disqualified one and the failed one: %s", page)
	}
	if !regexp.MustCompile(`sse-connect="/dashboard/events\?last_event_id=[1-9]\d*"`).MatchString(body) {
		t.Error("the live region does not stream from the newest event")
	}

	// The periodic refresh gets the live region alone.
	res, part := pm.htmx("/dashboard")
	if res.StatusCode != http.StatusOK || strings.Contains(part, "<html") || dashboardCount(t, part, "bid_evaluation", "failed") != 1 {
		t.Fatalf("the live region partial: %d %q", res.StatusCode, part)
	}

	// An admin may review: the waiting job links to its review form.
	_, body = k.login("admin@demo.weft").get("/dashboard")
	if !strings.Contains(body, `href="/reviews/`+waiting.ID+`"`) {
		t.Error("the admin's dashboard does not link the waiting review")
	}

	reviewer := k.login("reviewer@demo.weft")
	for _, path := range []string{"/dashboard", "/dashboard/events"} {
		if res, _ := reviewer.get(path); res.StatusCode != http.StatusForbidden {
			t.Errorf("reviewer GET %s: %d, want 403", path, res.StatusCode)
		}
	}

	// Another tenant sees none of it.
	acme := k.login("admin@acme.weft")
	res, body = acme.get("/dashboard")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("acme dashboard: %d", res.StatusCode)
	}
	for _, status := range []string{"succeeded", "waiting_review", "failed"} {
		if got := dashboardCount(t, body, "bid_evaluation", status); got != 0 {
			t.Errorf("acme sees %d bid_evaluation jobs %s", got, status)
		}
	}
	if strings.Contains(body, "demo-dc-network-2026") || strings.Contains(body, "BID_NO_DOCUMENTS") || strings.Contains(body, "ev_demo-") {
		t.Error("acme's dashboard shows the demo tenant's data")
	}
	if !strings.Contains(body, `href="/projects/acme-dc-network-2026"`) {
		t.Error("acme's own tender is not listed")
	}
	if res, _ := acme.get("/projects/demo-dc-network-2026"); res.StatusCode != http.StatusNotFound {
		t.Errorf("acme GET the demo tender: %d, want 404", res.StatusCode)
	}

	// Started again, Crestline fails again: two failed jobs are counted, but the thread is
	// listed once among the failures, by its latest run.
	first := k.waitJob("ev_demo-harbor", runner.Failed)
	if _, err := app.Bid(k.App).StartEvaluation(context.Background(), "demo", "ev_demo-harbor", "test"); err != nil {
		t.Fatal(err)
	}
	if again := k.waitJob("ev_demo-harbor", runner.Failed); again.ID == first.ID {
		t.Fatal("the evaluation did not run again")
	}
	_, body = pm.get("/dashboard")
	if got := dashboardCount(t, body, "bid_evaluation", "failed"); got != 2 {
		t.Errorf("failed count after a second failure: %d, want 2", got)
	}
	if n := strings.Count(body, `href="/threads/ev_demo-harbor"`); n != 1 {
		t.Errorf("the failed thread is listed %d times, want once", n)
	}
	if strings.Contains(text(body), "and 1 more") {
		t.Error("the dashboard says a failure is not listed, but every current failure is")
	}
}

func TestDashboardStreamsLiveUpdates(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	pm := k.login("pm@demo.weft")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, k.Srv.URL+"/dashboard/events", nil)
	res, err := pm.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	k.work() // the demo's evaluations run and publish events
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	event, data := "", ""
	for sc.Scan() {
		line := sc.Text()
		if e, ok := strings.CutPrefix(line, "event: "); ok {
			event = e
		}
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			data += d + "\n"
		}
		if line == "" && data != "" { // the end of an event with data
			if event != "dashboard" || !strings.Contains(data, `id="count-bid_evaluation-`) {
				t.Fatalf("event %q: unexpected data %q", event, data)
			}
			// The runs' last changes come in a burst: the stream still ends on the settled
			// counts (nothing queued or running), not on the burst's first render.
			if settled.MatchString(data) && strings.Contains(data, `class="count running zero" id="count-bid_evaluation-running"`) {
				// The tenders' completed evaluations are live too.
				if !strings.Contains(data, `href="/projects/demo-dc-network-2026"`) || !strings.Contains(data, "2 of 4") {
					t.Fatalf("the settled live region lacks the tender's completed evaluations: %q", data)
				}
				return
			}
			data = ""
		}
	}
	t.Fatalf("no event with the settled counts arrived within the deadline (%v)", sc.Err())
}

var settled = regexp.MustCompile(`class="count queued zero" id="count-bid_evaluation-queued"`)

// The dashboard lists waiting reviews as the inbox does, the longest waiting first, and the
// reviews beyond the list are a link to all of them: the inbox's tab for those who review,
// the runs page for a PM.
func TestDashboardWaitingOldestFirst(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	k.work()
	ctx := context.Background()
	var ids []string
	for i := range 10 {
		in := fmt.Sprintf(`{"question": "Why do durable workflows retry, case %02d?"}`, i)
		j, err := k.App.StartRun(ctx, app.DemoTenant, "tour", json.RawMessage(in), "u_pm")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	for _, id := range ids {
		k.waitJobID(id, runner.WaitingReview)
	}
	// Four workers pause the jobs in no fixed order: give them pause times a minute apart, in
	// the order made, except the newest, which has waited longest (say it paused an hour ago).
	// The list goes by the pause, not by when the job was made.
	for i, id := range ids {
		ago := time.Duration(10-i) * time.Minute
		if i == 9 {
			ago = time.Hour
		}
		if _, err := k.App.DB.Pool().Exec(ctx, `UPDATE jobs SET paused_at = now() - make_interval(secs => $2) WHERE id = $1`, id, ago.Seconds()); err != nil {
			t.Fatal(err)
		}
	}
	_, body := k.login("pm@demo.weft").get("/dashboard")
	panel := body[strings.Index(body, `id="wf-tour"`):]
	panel = panel[:strings.Index(panel, "Recent failures")]
	var at []int
	for _, i := range []int{9, 0, 1, 2, 3, 4, 5, 6} {
		at = append(at, strings.Index(panel, fmt.Sprintf("case %02d?", i)))
	}
	if !slices.IsSorted(at) || at[0] < 0 || strings.Contains(panel, "case 07?") || strings.Contains(panel, "case 08?") {
		t.Errorf("waiting list positions of cases 09, 00…06: %v (07, 08 unlisted); want that order", at)
	}
	if !strings.Contains(panel, `<a href="/runs?status=waiting_review&amp;workflow=tour">and 2 more</a>`) {
		i := strings.Index(panel, "and 2 more")
		t.Errorf("the PM's dashboard does not link the 2 reviews beyond the list to the runs page: %s", panel[max(0, i-200):i+20])
	}
	_, body = k.login("admin@demo.weft").get("/dashboard")
	if !strings.Contains(body, `<a href="/reviews?workflow=tour">and 2 more</a>`) {
		t.Error("the admin's dashboard does not link the reviews beyond the list to the inbox's tab")
	}
}
