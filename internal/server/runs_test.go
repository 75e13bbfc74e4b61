package server_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"weft/internal/app"
	"weft/internal/runner"
)

// The runs page lists the tenant's runs newest first, an evaluation named by its supplier
// and tender, each linked to its thread; it filters by workflow and status, pages with
// keyset links, refuses unknown filters with a message, and shows another tenant nothing.
func TestRunsPage(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	stopWork := k.work()
	northwind := k.waitJob("ev_demo-northwind", runner.Succeeded)
	k.waitJob("ev_demo-bluewater", runner.WaitingReview)
	crestline := k.waitJob("ev_demo-harbor", runner.Failed)
	pm := k.login("pm@demo.weft")

	res, body := pm.get("/runs")
	txt := text(body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/runs: %d", res.StatusCode)
	}
	for _, want := range []string{"Northwind Networks", "Bluewater Systems", "Harbor Systems", "Data centre network upgrade 2026",
		"Completed", "Waiting for review", "Failed"} {
		if !strings.Contains(strings.ToLower(txt), strings.ToLower(want)) {
			t.Fatalf("/runs lacks %q: %s", want, txt)
		}
	}
	if !strings.Contains(body, `href="/threads/ev_demo-harbor"`) {
		t.Fatal("/runs does not link a run to its thread")
	}
	if r := runsRow(t, body, northwind.ID); !strings.Contains(text(r), "completed") {
		t.Errorf("Northwind's finished run does not read completed: %s", text(r))
	}
	// The status filter offers the statuses a run stays in, not the two a failing job passes
	// through within one transaction (the dead-lettered Crestline run is "failed").
	if !strings.Contains(body, `<option value="failed"`) || strings.Contains(body, `value="dlq_pending"`) ||
		strings.Contains(body, `value="dlq_recorded"`) {
		t.Fatal("/runs' status filter: want failed offered, and neither dead-lettering status")
	}
	if _, body := pm.get("/runs?status=dlq_recorded"); !strings.Contains(text(body), "Harbor Systems") ||
		!strings.Contains(body, `<option value="failed" selected`) {
		t.Fatalf("an older link's status=dlq_recorded: want the failed runs, the filter on failed: %s", text(body))
	}

	// A status as the list words it is that status.
	if res, body := pm.get("/runs?status=completed"); res.StatusCode != http.StatusOK || !strings.Contains(body, `<option value="succeeded" selected`) {
		t.Fatalf("status=completed: %d, want the succeeded runs: %s", res.StatusCode, text(body))
	}
	_, body = pm.get("/runs?status=failed")
	if txt := text(body); !strings.Contains(txt, "Harbor Systems") || strings.Contains(txt, "Northwind Networks") ||
		!strings.Contains(body, `id="run-`+crestline.ID+`"`) {
		t.Fatalf("status=failed: %s", txt)
	}
	if _, body := pm.get("/runs?workflow=tour"); !strings.Contains(text(body), "No run matches these filters.") {
		t.Fatalf("workflow=tour before any tour: %s", text(body))
	}
	if _, all := pm.get("/runs"); strings.Contains(text(all), "started again since") {
		t.Fatalf("a run is marked started again before any thread was: %s", text(all))
	}

	// Northwind evaluated again: its first run is history, marked so; the new run is not.
	again, err := app.Bid(k.App).StartEvaluation(context.Background(), app.DemoTenant, "ev_demo-northwind", "u_pm")
	if err != nil {
		t.Fatal(err)
	}
	_, body = pm.get("/runs")
	if r := runsRow(t, body, northwind.ID); !strings.Contains(text(r), "started again since") {
		t.Errorf("the earlier run is not marked started again: %s", text(r))
	}
	if r := runsRow(t, body, again.ID); strings.Contains(text(r), "started again since") {
		t.Errorf("the thread's newest run is marked started again: %s", text(r))
	}

	// Pages of 25, newest first: 30 tour runs make two pages under the tour filter.
	stopWork() // the tour runs stay queued
	var ids []string
	for i := range 30 {
		j, err := k.App.Runner.Enqueue(context.Background(), runner.NewJob{TenantID: app.DemoTenant, Workflow: "tour",
			Subject: fmt.Sprintf("page run %02d", i), Input: json.RawMessage(`{"question":"How do retries and checkpoints work together?"}`)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
	}
	_, body = pm.get("/runs?workflow=tour")
	first := strings.Count(body, `<tr id="run-`)
	if first != 25 || !strings.Contains(body, `id="run-`+ids[29]+`"`) || strings.Contains(body, `id="run-`+ids[4]+`"`) {
		t.Fatalf("the first page lists %d runs (newest %v, oldest five left for the next)", first, strings.Contains(body, ids[29]))
	}
	i := strings.Index(body, `aria-label="Pages"`)
	older := body[i:]
	older = older[strings.Index(older, `href="`)+len(`href="`):]
	older = strings.ReplaceAll(older[:strings.Index(older, `"`)], "&amp;", "&")
	if !strings.Contains(older, "workflow=tour") || !strings.Contains(older, "after=") {
		t.Fatalf("the older page's link %q loses the filter or the cursor", older)
	}
	_, body = pm.get(older)
	if n := strings.Count(body, `<tr id="run-`); n != 5 || !strings.Contains(body, `id="run-`+ids[0]+`"`) || !strings.Contains(text(body), "← Newest") {
		t.Fatalf("the second page lists %d runs, want the oldest 5", n)
	}
	if strings.Contains(body, `hx-trigger="every 5s"`) {
		t.Fatal("an older page refreshes itself (its rows would move under the reader)")
	}
	// Newer steps back one page, with the filter: here the 25 runs just newer than this page's
	// newest reach the newest run, so it is the newest page (Older, no Newer, refreshing).
	newer := pagerHref(body, "prev")
	if !strings.Contains(newer, "workflow=tour") || !strings.Contains(newer, "before=") {
		t.Fatalf("the newer page's link %q loses the filter or the cursor", newer)
	}
	_, body = pm.get(newer)
	if n := strings.Count(body, `<tr id="run-`); n != 25 || !strings.Contains(body, `id="run-`+ids[29]+`"`) || !strings.Contains(body, `id="run-`+ids[5]+`"`) ||
		strings.Contains(body, `id="run-`+ids[4]+`"`) {
		t.Fatalf("the page newer than the last lists %d runs, want the newest 25", n)
	}
	if pagerHref(body, "prev") != "" || !strings.Contains(pagerHref(body, "next"), "after=") {
		t.Fatalf("the page back at the newest run: newer %q, older %q", pagerHref(body, "prev"), pagerHref(body, "next"))
	}
	if strings.Index(body, `id="run-`+ids[29]+`"`) > strings.Index(body, `id="run-`+ids[5]+`"`) {
		t.Fatal("the newer page is not newest first")
	}
	if !strings.Contains(body, `hx-trigger="every 5s"`) || strings.Contains(text(body), "← Newest") {
		t.Fatal("Newer back at the newest run is not the newest page (refreshing, no link to itself)")
	}

	// The newest page's list refreshes itself, with its filters: htmx gets the list alone,
	// with the runs' statuses as they are now.
	if _, body := pm.get("/runs?workflow=tour"); !strings.Contains(body, `hx-get="/runs?workflow=tour" hx-trigger="every 5s"`) {
		t.Fatal("the newest page's list does not refresh itself with its filter")
	}
	if err := k.App.Jobs.Requeue(context.Background(), app.DemoTenant, crestline.ID, "u_admin"); err != nil {
		t.Fatal(err)
	}
	res, body = pm.htmx("/runs?workflow=bid_evaluation&status=queued")
	if res.StatusCode != http.StatusOK || strings.Contains(body, "<html") || !strings.HasPrefix(strings.TrimSpace(body), `<div id="runs-list"`) ||
		!strings.Contains(body, `id="run-`+crestline.ID+`"`) {
		t.Fatalf("the list's refresh after Crestline's retry: %d %s", res.StatusCode, text(body))
	}

	for _, bad := range []string{"/runs?status=lost", "/runs?workflow=payroll", "/runs?after=!!", "/runs?before=!!"} {
		if res, body := pm.get(bad); res.StatusCode != http.StatusBadRequest || !strings.Contains(text(body), "choose") && !strings.Contains(text(body), "not valid") {
			t.Errorf("%s: %d %s", bad, res.StatusCode, text(body))
		} else if !strings.Contains(body, `<form method="get" action="/runs"`) || !strings.Contains(body, `class="alert error"`) {
			// The Runs page again, its filter form to choose again, the message where the list goes.
			t.Errorf("%s: the message is not on the Runs page with its filters: %s", bad, text(body))
		}
	}
	if _, body := k.login("admin@acme.weft").get("/runs"); strings.Contains(body, "ev_demo") || strings.Contains(body, "page run") {
		t.Fatal("acme's admin sees demo's runs")
	}
}

// runsRow is the /runs table row of job id.
func runsRow(t *testing.T, body, id string) string {
	t.Helper()
	i := strings.Index(body, `<tr id="run-`+id+`"`)
	if i < 0 {
		t.Fatalf("/runs does not list job %s", id)
	}
	return body[i : i+strings.Index(body[i:], "</tr>")]
}

// pagerHref is the address of the pager's link with rel ("prev": Newer, "next": Older) in
// body, "" when it has none.
func pagerHref(body, rel string) string {
	m := regexp.MustCompile(`<a class="button small" rel="` + rel + `" href="([^"]*)"`).FindStringSubmatch(body)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}
