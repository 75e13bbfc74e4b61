package bidevalhttp_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"

	"weft/internal/app"
	"weft/internal/app/servertest"
	"weft/internal/fault"
	"weft/internal/runner"
	"weft/internal/workflow/bideval"
)

const demoProject = "/projects/demo-dc-network-2026"

// projectsHTMXPost posts like an htmx form does: the CSRF token in the
// header, HX-Request set.
func projectsHTMXPost(c *servertest.Client, path string) (*http.Response, string) {
	c.T.Helper()
	req, _ := http.NewRequest(http.MethodPost, c.Base+path, strings.NewReader(""))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	req.Header.Set("X-CSRF-Token", c.CSRF())
	return c.Do(req)
}

func TestProjectPageStartsEvaluations(t *testing.T) {
	t.Parallel()
	k := servertest.New(t) // no workers: the demo's three evaluations stay queued
	ctx := context.Background()
	pm := k.Login("pm@demo.weft")

	res, body := pm.Get(demoProject)
	page := text(body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("project page: %d", res.StatusCode)
	}
	for _, want := range []string{"Data centre network upgrade 2026", "CNY 1,200,000", "dc-net-2026.1", "Replace the core and access switching",
		"Northwind Networks", "Bluewater Systems", "Crestline Technology", "Queued", "No evaluation has completed yet"} {
		if !strings.Contains(page, want) {
			t.Errorf("the project page does not show %q", want)
		}
	}
	if !strings.Contains(body, `href="/threads/ev_demo-northwind"`) {
		t.Error("an evaluation does not link to its thread")
	}
	// Queued evaluations: the results refresh themselves.
	if !strings.Contains(body, `hx-get="/projects/demo-dc-network-2026" hx-trigger="every 2s"`) {
		t.Error("the results do not refresh while evaluations are queued")
	}

	// A supplier added later: its evaluation has not started.
	evID, err := app.Bid(k.App).Store.AddSupplier(ctx, app.DemoTenant, "demo-dc-network-2026", "demo-quayside", "Quayside Telecom")
	if err != nil {
		t.Fatal(err)
	}
	start := demoProject + "/evaluations/" + evID + "/start"
	if _, body = pm.Get(demoProject); !strings.Contains(text(body), "Quayside Telecom ev_demo-quayside Not started") {
		t.Error("the new evaluation is not shown as not started")
	}
	// It has no thread yet to link to (the link led to a 404).
	if strings.Contains(body, `href="/threads/`+evID+`"`) || !strings.Contains(text(body), "— — — not started") {
		t.Error("the evaluation that has not started links to a thread")
	}
	if res, _ := pm.PostRaw(start, url.Values{}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("start without the CSRF token: %d, want 403", res.StatusCode)
	}
	if ev, _ := app.Bid(k.App).Store.Evaluation(ctx, app.DemoTenant, evID); ev.JobID != "" {
		t.Fatal("a refused start queued a job")
	}
	res, _ = pm.Post(start, nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != demoProject+"?evaluation="+evID+"&started=1" {
		t.Fatalf("start: %d → %s", res.StatusCode, res.Header.Get("Location"))
	}
	ev, err := app.Bid(k.App).Store.Evaluation(ctx, app.DemoTenant, evID)
	if err != nil || ev.JobID == "" {
		t.Fatalf("no job recorded for the started evaluation: %v", err)
	}
	if j, err := k.App.Jobs.Job(ctx, app.DemoTenant, ev.JobID); err != nil || j.Status != runner.Queued {
		t.Fatalf("the started evaluation's job: %v %v", j.Status, err)
	}
	// The page names whose evaluation started, and so does the region's refresh (it asks
	// for the notice again); the address bar drops the notice's query, so a reload does not.
	if _, body = pm.Get(res.Header.Get("Location")); !strings.Contains(text(body), "Started the evaluation of Quayside Telecom") ||
		!strings.Contains(body, `data-clean-url="`+demoProject+`"`) {
		t.Errorf("the page does not say whose evaluation started: %s", text(body))
	}
	if _, part := pm.HTMX(res.Header.Get("Location")); !strings.Contains(text(part), "Started the evaluation of Quayside Telecom") {
		t.Errorf("the region's refresh says less: %s", text(part))
	}

	// Starting it again while it is queued: a 409 with the reason, on the page.
	res, body = pm.Post(start, nil)
	if res.StatusCode != http.StatusConflict || !strings.Contains(text(body), "The evaluation of Quayside Telecom is already in progress (queued)") ||
		!strings.Contains(body, `id="project-results"`) {
		t.Fatalf("start a queued evaluation: %d %s", res.StatusCode, text(body))
	}
	// With htmx the message goes to the alert slot.
	res, body = projectsHTMXPost(pm, start)
	if res.StatusCode != http.StatusConflict || res.Header.Get("HX-Retarget") != "#alerts" || !strings.Contains(text(body), "already in progress") {
		t.Fatalf("htmx start of a queued evaluation: %d %s", res.StatusCode, body)
	}
	// Everything is queued: "Start all" has nothing to start.
	res, body = pm.Post(demoProject+"/start", nil)
	if res.StatusCode != http.StatusConflict || !strings.Contains(text(body), "Every evaluation of this tender is already in progress") {
		t.Fatalf("start all while all are queued: %d %s", res.StatusCode, text(body))
	}

	// With htmx, a start swaps the results region in place.
	evID2, err := app.Bid(k.App).Store.AddSupplier(ctx, app.DemoTenant, "demo-dc-network-2026", "demo-pier", "Pier Nine Systems")
	if err != nil {
		t.Fatal(err)
	}
	res, body = projectsHTMXPost(pm, demoProject+"/evaluations/"+evID2+"/start")
	if res.StatusCode != http.StatusOK || strings.Contains(body, "<html") || !strings.Contains(body, `id="project-results"`) ||
		!strings.Contains(text(body), "Started the evaluation of Pier Nine Systems") {
		t.Fatalf("htmx start: %d %s", res.StatusCode, body)
	}

	// Unknown ids and other tenants' ids are 404s; reviewers may not start.
	if res, _ := pm.Post(demoProject+"/evaluations/ev_acme-northwind/start", nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("start another tenant's evaluation: %d, want 404", res.StatusCode)
	}
	if res, _ := pm.Get("/projects/acme-dc-network-2026"); res.StatusCode != http.StatusNotFound {
		t.Errorf("another tenant's tender: %d, want 404", res.StatusCode)
	}
	acme := k.Login("admin@acme.weft")
	for _, path := range []string{demoProject + "/start", demoProject + "/evaluations/ev_demo-northwind/start"} {
		if res, _ := acme.Post(path, nil); res.StatusCode != http.StatusNotFound {
			t.Errorf("acme POST %s: %d, want 404", path, res.StatusCode)
		}
	}
	if res, _ := k.Login("reviewer@demo.weft").Get(demoProject); res.StatusCode != http.StatusForbidden {
		t.Errorf("reviewer GET the tender: %d, want 403", res.StatusCode)
	}
}

func TestProjectComparisonAndStartAll(t *testing.T) {
	t.Parallel()
	k := servertest.New(t)
	k.Work()
	first := waitJob(k, "ev_demo-northwind", runner.Succeeded)
	waitJob(k, "ev_demo-bluewater", runner.WaitingReview)
	waitJob(k, "ev_demo-crestline", runner.Succeeded)
	waitJob(k, "ev_demo-harbor", runner.Failed)
	pm := k.Login("pm@demo.weft")

	_, body := pm.Get(demoProject)
	page := text(body)
	// Only the completed evaluation is ranked, and it is the top one.
	top := regexp.MustCompile(`<tr class="highlight">\s*<td class="num rank">#1</td>\s*<td>\s*<strong>Northwind Networks</strong>`)
	if !top.MatchString(body) || !strings.Contains(page, "#1 Northwind Networks Top 100.0 100.0 Passed") {
		t.Errorf("the comparison does not put Northwind Networks first: %s", page)
	}
	if strings.Count(body, `class="num rank"`) != 1 {
		t.Error("evaluations that did not complete are ranked")
	}
	if !strings.Contains(page, "Crestline Technology ev_demo-crestline Completed — — Disqualified by a hard rule") {
		t.Errorf("the disqualified bid's outcome: %s", page)
	}
	if !strings.Contains(page, "Waiting for review") || !strings.Contains(page, "Harbor Systems ev_demo-harbor Failed BID_NO_DOCUMENTS") {
		t.Errorf("the statuses of unfinished evaluations are missing: %s", page)
	}

	// Start all would run the finished two again: it asks first, saying so.
	if !strings.Contains(text(body), "Start all… Start 3 evaluations? Each ran before: its result is replaced by the new run") {
		t.Errorf("Start all does not ask before running finished evaluations again: %s", text(body))
	}
	// Only a review waits: nothing moves, so the region does not refresh itself (a refresh
	// closed open confirmations and notices every 2 s).
	if strings.Contains(body, `hx-trigger="every 2s"`) {
		t.Error("the results refresh while nothing runs")
	}

	// Start all starts the three finished evaluations and leaves the waiting one.
	res, _ := pm.Post(demoProject+"/start", nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != demoProject+"?skipped=1&started=3" {
		t.Fatalf("start all: %d → %s", res.StatusCode, res.Header.Get("Location"))
	}
	if _, body := pm.Get(res.Header.Get("Location")); !strings.Contains(text(body),
		"Started 3 evaluations. They run as soon as a worker picks them up. 1 evaluation still in progress (running or waiting for a review) left as it was.") {
		t.Errorf("the notice does not say the waiting evaluation was left alone: %s", text(body))
	} else if strings.Contains(body, `hx-trigger="every 2s"`) && // still running (the workers are quick)
		!strings.Contains(body, `hx-get="/projects/demo-dc-network-2026?skipped=1&amp;started=3"`) {
		t.Error("the results' refresh does not keep the notice while the evaluations run")
	}
	ev, _ := app.Bid(k.App).Store.Evaluation(context.Background(), app.DemoTenant, "ev_demo-northwind")
	if ev.JobID == "" || ev.JobID == first.ID {
		t.Error("start all did not start the completed evaluation again")
	}
	if ev, _ := app.Bid(k.App).Store.Evaluation(context.Background(), app.DemoTenant, "ev_demo-bluewater"); ev.JobID == "" {
		t.Error("the waiting evaluation lost its job")
	}

	// Starts of one evaluation at once (two clicks, two pms) queue one run; the others are
	// told it is in progress.
	waitJob(k, "ev_demo-northwind", runner.Succeeded)
	errs := make(chan error, 4)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			_, err := app.Bid(k.App).StartEvaluation(context.Background(), app.DemoTenant, "ev_demo-northwind", "u_pm")
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	started := 0
	for err := range errs {
		var fe *fault.Error
		switch {
		case err == nil:
			started++
		case !errors.As(err, &fe) || fe.Code != bideval.CodeEvaluationRunning:
			t.Errorf("a concurrent start: %v, want %s", err, bideval.CodeEvaluationRunning)
		}
	}
	if started != 1 {
		t.Errorf("%d of 4 concurrent starts queued a run, want 1", started)
	}
}
