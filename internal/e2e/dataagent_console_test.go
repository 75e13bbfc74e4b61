package e2e_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"weft/internal/app"
	"weft/internal/app/servertest"
	"weft/internal/postgres"
	"weft/internal/runner"
	"weft/internal/workflow/dataagent"
)

// TestDataAgentFollowUpForm: the demo's data agent thread (make run's) offers its follow-up
// form on the thread page to a pm; a follow-up with no question is refused beside its field
// (400, nothing queued), one by a reviewer is forbidden, one on another tenant's thread is a
// 404; a good one continues the thread (303 to its page, which says so), and another sent
// while it runs is refused with why.
func TestDataAgentFollowUpForm(t *testing.T) {
	k := servertest.New(t)
	k.Work()
	ctx := context.Background()
	jobs, _, err := k.App.Jobs.ListJobs(ctx, postgres.JobFilter{TenantID: app.DemoTenant, Workflow: dataagent.Name}, postgres.Cursor{}, 5)
	if err != nil || len(jobs) != 1 || jobs[0].Subject != dataagent.DemoQuestion {
		t.Fatalf("the demo's question: %+v (%v)", jobs, err)
	}
	thread := jobs[0].ThreadID
	k.WaitThread(thread, runner.Succeeded)

	pm := k.Login("pm@demo.weft")
	res, body := pm.Get("/threads/" + thread)
	if res.StatusCode != 200 || !strings.Contains(body, `action="/threads/`+thread+`/follow-up"`) || !strings.Contains(servertest.Text(body), "Turn 1 · GMV by region last month") {
		t.Fatalf("the thread page: %d, follow-up form %v", res.StatusCode, strings.Contains(body, "follow-up"))
	}
	if _, body := k.Login("reviewer@demo.weft").Get("/threads/" + thread); strings.Contains(body, `/follow-up"`) {
		t.Error("a reviewer is offered the follow-up form")
	}

	res, body = pm.Post("/threads/"+thread+"/follow-up", url.Values{"question": {"  "}})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(servertest.Text(body), "Check the fields marked below.") ||
		!strings.Contains(body, `class="field-error small"`) {
		t.Fatalf("an empty follow-up: %d %s", res.StatusCode, servertest.Between(servertest.Text(body), "Follow up", "Continue"))
	}
	if res, _ := k.Login("reviewer@demo.weft").Post("/threads/"+thread+"/follow-up", url.Values{"question": {"and?"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a reviewer's follow-up: %d", res.StatusCode)
	}
	if res, _ := k.Login("admin@acme.weft").Post("/threads/"+thread+"/follow-up", url.Values{"question": {"and?"}}); res.StatusCode != http.StatusNotFound {
		t.Fatalf("another tenant's follow-up: %d", res.StatusCode)
	}
	if n, _ := k.App.Jobs.ThreadJobs(ctx, app.DemoTenant, thread, 10); len(n) != 1 {
		t.Fatalf("refused follow-ups queued jobs: %d", len(n))
	}

	res, _ = pm.Post("/threads/"+thread+"/follow-up", url.Values{"question": {"只看华东"}})
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/threads/"+thread+"?followed=") {
		t.Fatalf("a follow-up: %d %s", res.StatusCode, loc)
	}
	res, body = pm.Post("/threads/"+thread+"/follow-up", url.Values{"question": {"and for last quarter?"}})
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(servertest.Text(body), "The thread has a run in progress") {
		t.Fatalf("a follow-up while one runs: %d", res.StatusCode)
	}
	j := k.WaitThread(thread, runner.Succeeded)
	if _, body := pm.Get(loc); !strings.Contains(servertest.Text(body), "on this thread") || !strings.Contains(servertest.Text(body), "Turn 2 · 只看华东") {
		t.Errorf("the thread after the follow-up (job %s) does not show turn 2", j.ID)
	}
}
