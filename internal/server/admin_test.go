package server_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"weft/internal/app"
	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/runner"
	"weft/web/page"
)

// harborDLQ is the DLQ entry of the Crestline evaluation's job at its
// retry count.

// when is page.When, which tests whose page body is a variable named page can call.
var when = page.When

func harborDLQ(t *testing.T, k *kit, j runner.Job) postgres.DLQEntry {
	t.Helper()
	entries, _, err := k.App.Jobs.ListDLQ(context.Background(), app.DemoTenant, "", postgres.Cursor{}, 50)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.JobID == j.ID && e.RetryCount == j.RetryCount {
			return e
		}
	}
	t.Fatalf("no DLQ entry for job %s at retry %d", j.ID, j.RetryCount)
	return postgres.DLQEntry{}
}

// The dead letters page in pages of 25, newest first: Older and back with Newer, each page
// keeping the status filter.
func TestDLQPaging(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	stop := k.work()
	job := k.waitJob("ev_demo-harbor", runner.Failed)
	stop()
	// 30 more entries of Crestline's job, PAGE_01 (a minute old) to PAGE_30 (half an hour):
	// with its own (newest), two pages.
	if _, err := k.App.DB.Pool().Exec(context.Background(), `INSERT INTO dlq (id, tenant_id, job_id, workflow, class, code,
		message, trace_id, retry_count, created_at)
		SELECT gen_random_uuid(), tenant_id, id, workflow, 'permanent', 'PAGE_' || lpad(g::text, 2, '0'), 'boom', trace_id,
			100 + g, now() - make_interval(mins => g)
		FROM jobs, generate_series(1, 30) AS g WHERE id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}
	admin := k.login("admin@demo.weft")
	_, body := admin.get("/dlq?status=recorded")
	if !strings.Contains(body, "PAGE_24") || strings.Contains(body, "PAGE_25") || pagerHref(body, "prev") != "" {
		t.Fatalf("the newest page: PAGE_24 %v, PAGE_25 %v, a Newer link %q", strings.Contains(body, "PAGE_24"),
			strings.Contains(body, "PAGE_25"), pagerHref(body, "prev"))
	}
	older := pagerHref(body, "next")
	_, body = admin.get(older)
	if !strings.Contains(older, "status=recorded") || !strings.Contains(body, "PAGE_25") || !strings.Contains(body, "PAGE_30") ||
		strings.Contains(body, "PAGE_24") {
		t.Fatalf("the older page (%s) does not hold PAGE_25 to PAGE_30 alone", older)
	}
	newer := pagerHref(body, "prev")
	if !strings.Contains(newer, "status=recorded") || !strings.Contains(newer, "before=") {
		t.Fatalf("the older page's Newer link %q loses the filter or the cursor", newer)
	}
	_, body = admin.get(newer)
	if !strings.Contains(body, "PAGE_01") || !strings.Contains(body, "PAGE_24") || strings.Contains(body, "PAGE_25") ||
		pagerHref(body, "prev") != "" || pagerHref(body, "next") == "" {
		t.Fatalf("Newer from the last page: PAGE_01 %v, PAGE_24 %v, PAGE_25 %v, links newer %q older %q", strings.Contains(body, "PAGE_01"),
			strings.Contains(body, "PAGE_24"), strings.Contains(body, "PAGE_25"), pagerHref(body, "prev"), pagerHref(body, "next"))
	}
	if strings.Index(body, "PAGE_01") > strings.Index(body, "PAGE_24") {
		t.Fatal("the newer page is not newest first")
	}
	olderURL, _ := url.Parse(older)
	newerURL, _ := url.Parse(newer)
	if res, _ := admin.get("/dlq?after=" + url.QueryEscape(olderURL.Query().Get("after")) + "&before=" +
		url.QueryEscape(newerURL.Query().Get("before"))); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("a link with both cursors (each valid): %d, want 400", res.StatusCode)
	}
	// Entries leave the filter meanwhile: every one newer than the last page's is discarded.
	// Its Newer link then finds none; it gives the newest recorded entries, with their links.
	if _, err := k.App.DB.Pool().Exec(context.Background(), `UPDATE dlq SET status = 'discarded', resolved_at = now(),
		resolved_by = 'u_admin' WHERE job_id = $1 AND (code < 'PAGE_25' OR code NOT LIKE 'PAGE_%')`, job.ID); err != nil {
		t.Fatal(err)
	}
	_, body = admin.get(newer)
	if !strings.Contains(body, "PAGE_25") || !strings.Contains(body, "PAGE_30") || strings.Contains(body, "PAGE_24") ||
		pagerHref(body, "prev") != "" || strings.Contains(text(body), "← Newest") {
		t.Fatalf("Newer with none newer left: PAGE_25 %v, links newer %q", strings.Contains(body, "PAGE_25"), pagerHref(body, "prev"))
	}
}

// The dead letters' status tabs say how many entries each holds, as the review inbox's tabs
// do; the list's own refresh (a retried job failed again) brings the tabs with new counts; a
// count stops at the server's limit, 1000 ("1000+").
func TestDLQTabCounts(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	ctx := context.Background()
	var jobID string
	if err := k.App.DB.Pool().QueryRow(ctx, `SELECT id FROM jobs WHERE thread_id = 'ev_demo-northwind'`).Scan(&jobID); err != nil {
		t.Fatal(err)
	}
	// add records n entries of that job in a status (their retry_count after the ones before).
	add := func(n int, status string) {
		t.Helper()
		if _, err := k.App.DB.Pool().Exec(ctx, `INSERT INTO dlq (id, tenant_id, job_id, workflow, class, code, message, trace_id,
			retry_count, status, resolved_at, resolved_by)
			SELECT gen_random_uuid(), tenant_id, id, workflow, 'permanent', 'E', 'boom', trace_id,
				(SELECT coalesce(max(retry_count), 0) FROM dlq WHERE job_id = $1) + g, $3,
				CASE WHEN $3 = 'recorded' THEN NULL ELSE now() END, CASE WHEN $3 = 'recorded' THEN NULL ELSE 'u_admin' END
			FROM jobs, generate_series(1, $2::integer) AS g WHERE id = $1`, jobID, n, status); err != nil {
			t.Fatal(err)
		}
	}
	tabs := func(body string) string {
		t.Helper()
		nav := between(body, `<nav id="dlq-tabs"`, "</nav>")
		if nav == "" {
			t.Fatalf("no status tabs in %.300s", body)
		}
		return text(nav)
	}
	admin := k.login("admin@demo.weft")
	if _, body := admin.get("/dlq"); tabs(body) != "All 0 Recorded 0 Retried 0 Discarded 0" {
		t.Fatalf("the tabs with no entries: %q", tabs(body))
	}
	add(3, "recorded")
	add(2, "retried")
	add(1, "discarded")
	for _, c := range []struct{ path, active string }{{"/dlq", "all"}, {"/dlq?status=retried", "retried"}} {
		_, body := admin.get(c.path)
		if got := tabs(body); got != "All 6 Recorded 3 Retried 2 Discarded 1" {
			t.Errorf("%s: the tabs read %q", c.path, got)
		}
		if !strings.Contains(body, `id="dlq-tabs-`+c.active+`" href="`) || !regexp.MustCompile(`id="dlq-tabs-`+c.active+`"[^>]*class="active" aria-current="page"`).MatchString(body) {
			t.Errorf("%s: the %s tab is not the active one: %s", c.path, c.active, between(body, `<nav id="dlq-tabs"`, "</nav>"))
		}
		if !strings.Contains(body, `<span class="tab-count" title="3 entries">3</span>`) {
			t.Errorf("%s: the recorded count does not say what it counts", c.path)
		}
	}
	// A retried job failed again: the list reloads itself, and its answer carries the tabs,
	// swapped out of band, with the new entry counted.
	add(1, "recorded")
	res, part := admin.htmx("/dlq?part=list&status=recorded")
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(strings.TrimSpace(part), `<div id="dlq-list"`) ||
		!strings.Contains(part, `<nav id="dlq-tabs" class="tabs" aria-label="Entry status" hx-swap-oob="true">`) {
		t.Fatalf("the list's refresh: %d %.300s", res.StatusCode, part)
	}
	if got := tabs(part); got != "All 7 Recorded 4 Retried 2 Discarded 1" {
		t.Fatalf("the refreshed tabs read %q", got)
	}
	// Past the limit, a count says so.
	add(1000, "discarded") // the server's dlqCountLimit
	_, body := admin.get("/dlq")
	if got := tabs(body); got != "All 1006+ Recorded 4 Retried 2 Discarded 1000+" { // All: at least the sum
		t.Fatalf("the tabs past the limit read %q", got)
	}
	if !strings.Contains(body, `title="at least 1000 entries">1000+</span>`) {
		t.Fatal("a count that stopped does not say it is a floor")
	}
	// Another tenant's admin counts none of them.
	if _, body := k.login("admin@acme.weft").get("/dlq"); tabs(body) != "All 0 Recorded 0 Retried 0 Discarded 0" {
		t.Fatalf("another tenant's tabs: %q", tabs(body))
	}
}

func TestDLQRetryDiscardAndAudit(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	stop := k.work()
	job := k.waitJob("ev_demo-harbor", runner.Failed)
	stop() // the retried job must wait in the queue until the workers run again
	entry := harborDLQ(t, k, job)

	admin := k.login("admin@demo.weft")
	res, body := admin.get("/dlq")
	page := text(body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("/dlq: %d", res.StatusCode)
	}
	// The entry names the evaluation as people do: the supplier, and the tender it belongs to.
	row := adminRow(t, body, "dlq-"+entry.ID)
	for _, want := range []string{"Harbor Systems", "Data centre network upgrade 2026", "validation", "BID_NO_DOCUMENTS", entry.TraceID, "Retry…", "Discard…",
		"job …" + job.ID[len(job.ID)-8:],
		"A validation error: the same input fails the same way"} {
		if !strings.Contains(text(row), want) {
			t.Fatalf("/dlq's entry does not show %q:\n%s", want, text(row))
		}
	}
	if !strings.Contains(row, `href="/projects/demo-dc-network-2026"`) {
		t.Fatal("/dlq does not link the entry to its tender")
	}
	// Its buttons swap the table in (htmx) and keep the status filter.
	if !strings.Contains(row, `hx-post="/dlq/`+entry.ID+`/retry" hx-target="#dlq-table"`) || !strings.Contains(row, `name="status"`) {
		t.Fatalf("/dlq's entry forms do not swap the table in:\n%s", row)
	}
	if !strings.Contains(row, `href="/threads/`+url.PathEscape(job.ThreadID)+`"`) {
		t.Fatal("/dlq does not link the entry to its thread")
	}
	// The message does not repeat the code and class the row shows beside it; nor does the thread's page.
	if strings.Contains(page, "BID_NO_DOCUMENTS (validation)") {
		t.Fatalf("/dlq repeats the code in the message:\n%s", page)
	}
	if _, th := admin.get("/threads/" + url.PathEscape(job.ThreadID)); !strings.Contains(text(th), "the run failed at retrieve_evidence (BID_NO_DOCUMENTS): Harbor Systems has no bid documents") ||
		!strings.Contains(text(th), "BID_NO_DOCUMENTS at retrieve_evidence · "+when(job.Errors[0].At)+" Harbor Systems has no bid documents") {
		t.Fatalf("the thread page's failure text: %s", text(th))
	}
	if !regexp.MustCompile(`<td class="num"[^>]*>1</td>`).MatchString(body) {
		t.Fatal("/dlq does not show 1 attempt")
	}

	// Roles and tenants.
	for _, email := range []string{"pm@demo.weft", "reviewer@demo.weft"} {
		c := k.login(email)
		for _, p := range []string{"/dlq", "/dlq/" + entry.ID + "/status", "/audit", "/audit.csv"} {
			if res, _ := c.get(p); res.StatusCode != http.StatusForbidden {
				t.Fatalf("%s GET %s: %d, want 403", email, p, res.StatusCode)
			}
		}
		if res, _ := c.post("/dlq/"+entry.ID+"/retry", nil); res.StatusCode != http.StatusForbidden {
			t.Fatalf("%s retry: %d, want 403", email, res.StatusCode)
		}
	}
	acme := k.login("admin@acme.weft")
	if _, body := acme.get("/dlq"); strings.Contains(body, "crestline") || !strings.Contains(text(body), "No job has been dead-lettered") {
		t.Fatal("acme's admin sees demo's dead letters")
	}
	if res, _ := acme.get("/dlq/" + entry.ID + "/status"); res.StatusCode != http.StatusNotFound {
		t.Fatalf("acme's admin, demo's entry status: %d, want 404", res.StatusCode)
	}
	for _, action := range []string{"retry", "discard"} {
		if res, _ := acme.post("/dlq/"+entry.ID+"/"+action, nil); res.StatusCode != http.StatusNotFound {
			t.Fatalf("acme's admin, %s demo's entry: %d, want 404", action, res.StatusCode)
		}
	}
	if res, _ := admin.get("/dlq/not-an-id/status"); res.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown entry: %d, want 404", res.StatusCode)
	}
	// A bad filter or page link: the dead letters page with every entry, the message above.
	for _, bad := range []string{"/dlq?status=bogus", "/dlq?after=!!"} {
		if res, body := admin.get(bad); res.StatusCode != http.StatusBadRequest || !strings.Contains(text(body), "Unknown entry status") && !strings.Contains(text(body), "not valid") ||
			!strings.Contains(body, `id="dlq-`) {
			t.Fatalf("%s: %d %s", bad, res.StatusCode, text(body))
		}
	}

	// Retry: CSRF first, then the plain form post.
	if res, _ := admin.postRaw("/dlq/"+entry.ID+"/retry", url.Values{}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("retry without the CSRF token: %d, want 403", res.StatusCode)
	}
	res, _ = admin.post("/dlq/"+entry.ID+"/retry", nil)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dlq?done=retried" {
		t.Fatalf("retry: %d → %s", res.StatusCode, res.Header.Get("Location"))
	}
	j, err := k.App.Jobs.Job(context.Background(), app.DemoTenant, job.ID)
	if err != nil || j.Status != runner.Queued || j.RetryCount != 1 {
		t.Fatalf("after retry the job is %s (retry %d), want queued (retry 1): %v", j.Status, j.RetryCount, err)
	}
	_, body = admin.get("/dlq?done=retried")
	if !strings.Contains(text(body), "The job went back to the queue. Its row below follows it until the run ends") {
		t.Fatal("no notice after the retry")
	}
	row = adminRow(t, body, "dlq-"+entry.ID)
	if !strings.Contains(row, `class="badge retried"`) || !strings.Contains(row, `class="badge queued"`) ||
		!strings.Contains(row, `hx-trigger="every 1s"`) || strings.Contains(row, "Retry…") {
		t.Fatalf("the retried entry's row does not show retried + a live queued job:\n%s", row)
	}
	res, body = admin.htmx("/dlq/" + entry.ID + "/status")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "queued") || !strings.Contains(body, `hx-trigger="every 1s"`) {
		t.Fatalf("status region while queued: %d %s", res.StatusCode, body)
	}
	// Without JavaScript the refusal is the list again, with the message on top (not an error page).
	if res, body := admin.post("/dlq/"+entry.ID+"/retry", nil); res.StatusCode != http.StatusConflict ||
		!strings.Contains(text(body), "already retried") || !strings.Contains(body, `id="dlq-`+entry.ID+`"`) {
		t.Fatalf("retrying a retried entry: %d, want 409 with a message above the list: %s", res.StatusCode, text(body))
	}

	// The job runs again and fails again with the same business error; the
	// status region follows it until it is failed, then stops polling.
	k.work()
	seen := map[string]bool{}
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, body = admin.htmx("/dlq/" + entry.ID + "/status")
		for _, s := range []string{"queued", "running", "failed"} {
			if strings.Contains(body, `class="badge `+s+`"`) {
				seen[s] = true
			}
		}
		if seen["failed"] || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !seen["failed"] || strings.Contains(body, "hx-trigger") || !strings.Contains(body, "failed again") {
		t.Fatalf("status region after the rerun: %s", body)
	}
	// ... and has the table reload itself to show the new entry.
	if res.Header.Get("HX-Trigger") != "dlq-refresh" {
		t.Fatalf("the failed-again status does not refresh the table: HX-Trigger %q", res.Header.Get("HX-Trigger"))
	}
	if _, page := admin.get("/dlq"); !strings.Contains(page, `hx-trigger="dlq-refresh from:body"`) {
		t.Fatal("the DLQ table does not reload on dlq-refresh")
	}
	j, _ = k.App.Jobs.Job(context.Background(), app.DemoTenant, job.ID)
	if j.Status != runner.Failed || j.RetryCount != 1 || len(j.Errors) != 2 || j.Errors[1].Code != "BID_NO_DOCUMENTS" {
		t.Fatalf("after the rerun: %s retry %d errors %+v", j.Status, j.RetryCount, j.Errors)
	}
	// The thread's history shows the rerun as the job's retry, from where the failure was recorded.
	_, page = admin.get("/threads/" + job.ThreadID)
	// Its runs list both failures, numbered and timed: their codes and messages are the same.
	// The first says how its dead letter was resolved (the run's own entry is the new one).
	for i, e := range j.Errors {
		if want := fmt.Sprintf("failure %d of 2, %s", i+1, when(e.At)); !strings.Contains(text(page), want) {
			t.Errorf("the thread's runs do not tell the failures apart: no %q", want)
		}
	}
	if first := between(text(page), "failure 1 of 2", "failure 2 of 2"); !strings.Contains(first, "dead letter retried by Ada Admin") {
		t.Errorf("the first failure does not say its dead letter was retried: %q", first)
	}
	forks := historyRows(t, page, graph.SourceRetry)
	if len(forks) != 1 || !strings.Contains(text(forks[0]), "retry of job …"+job.ID[len(job.ID)-8:]+" from …"+j.Errors[0].CheckpointID[len(j.Errors[0].CheckpointID)-8:]) {
		t.Errorf("the history's fork rows after the retry: %q", forks)
	}
	second := harborDLQ(t, k, j)
	if second.ID == entry.ID || second.Status != postgres.DLQStatusRecorded {
		t.Fatalf("the rerun's DLQ entry: %+v", second)
	}
	_, body = admin.get("/dlq")
	if r := adminRow(t, body, "dlq-"+entry.ID); !strings.Contains(r, `class="badge retried"`) || !strings.Contains(r, "by Ada Admin") {
		t.Fatalf("the first entry is not shown retried by the admin:\n%s", r)
	}
	if r := adminRow(t, body, "dlq-"+second.ID); !strings.Contains(r, `class="badge recorded"`) || !strings.Contains(r, "BID_NO_DOCUMENTS") ||
		!regexp.MustCompile(`<td class="num"[^>]*>2</td>`).MatchString(r) {
		t.Fatalf("the new entry is not recorded with 2 attempts:\n%s", r)
	}
	_, body = admin.get("/dlq?status=recorded")
	if strings.Contains(body, "dlq-"+entry.ID) || !strings.Contains(body, "dlq-"+second.ID) {
		t.Fatal("the recorded filter does not show just the recorded entry")
	}

	// Discard the new entry.
	if res, _ := admin.postRaw("/dlq/"+second.ID+"/discard", url.Values{}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("discard without the CSRF token: %d, want 403", res.StatusCode)
	}
	res, _ = admin.post("/dlq/"+second.ID+"/discard", url.Values{"status": {"recorded"}})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dlq?done=discarded&status=recorded" {
		t.Fatalf("discard: %d → %s", res.StatusCode, res.Header.Get("Location"))
	}
	if e, _ := k.App.Jobs.DLQ(context.Background(), app.DemoTenant, second.ID); e.Status != postgres.DLQStatusDiscarded {
		t.Fatalf("after discard the entry is %s", e.Status)
	}
	_, body = admin.get("/dlq?status=discarded")
	if r := adminRow(t, body, "dlq-"+second.ID); !strings.Contains(r, `class="badge discarded"`) || strings.Contains(r, "Retry…") {
		t.Fatalf("the discarded entry:\n%s", r)
	}
	// A discarded entry cannot be retried: 409 for a form, the table with the
	// message for htmx.
	if res, body := admin.post("/dlq/"+second.ID+"/retry", nil); res.StatusCode != http.StatusConflict || !strings.Contains(text(body), "already discarded") {
		t.Fatalf("retrying a discarded entry: %d", res.StatusCode)
	}
	req, _ := http.NewRequest(http.MethodPost, admin.base+"/dlq/"+second.ID+"/retry", strings.NewReader(url.Values{"_csrf": {admin.csrf()}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	if res, body := admin.do(req); res.StatusCode != http.StatusOK || !strings.Contains(body, `id="dlq-table"`) ||
		!strings.Contains(text(body), "already discarded") {
		t.Fatalf("htmx retry of a discarded entry: %d %s", res.StatusCode, text(body))
	}

	// The audit log shows what happened, and filters. Northwind's report is written when its
	// run finishes, which the workers stopped above may have left for after the restart.
	k.waitJob("ev_demo-northwind", runner.Succeeded)
	_, body = admin.get("/audit")
	page = text(body)
	for _, want := range []string{"job.retry", "dlq.discard", "evaluation.start", "evaluation.report", "Ada Admin"} {
		if !strings.Contains(page, want) {
			t.Fatalf("/audit does not show %q", want)
		}
	}
	if !strings.Contains(body, `href="/threads/`+url.PathEscape(job.ThreadID)+`"`) {
		t.Fatal("/audit does not link the job's subject to its thread")
	}
	for _, typed := range []string{"job.retry", "JOB.Retry"} { // in any case
		res, body = admin.get("/audit?action=" + url.QueryEscape(typed))
		rows := adminAuditRows(body)
		if res.StatusCode != http.StatusOK || len(rows) != 1 || !strings.Contains(rows[0], "job.retry") || !strings.Contains(rows[0], job.ID) {
			t.Fatalf("action=%s: %d, %d rows", typed, res.StatusCode, len(rows))
		}
	}
	_, body = admin.htmx("/audit?action=dlq.discard&actor=u_admin")
	if rows := adminAuditRows(body); len(rows) != 1 || !strings.Contains(rows[0], second.ID) || strings.Contains(body, "<html") {
		t.Fatalf("htmx action=dlq.discard: %d rows", len(rows))
	}
	// People filter by what they know: a name or an email finds the user's entries ...
	for _, who := range []string{"ada admin", "admin@demo.weft", "u_admin"} {
		_, body = admin.get("/audit?action=dlq.discard&actor=" + url.QueryEscape(who))
		if rows := adminAuditRows(body); len(rows) != 1 || !strings.Contains(rows[0], second.ID) {
			t.Fatalf("actor=%s: %d rows", who, len(rows))
		}
	}
	// ... and a thread's entries include those about its jobs and their dead letters.
	_, body = admin.get("/audit?subject=" + url.QueryEscape(job.ThreadID))
	got := map[string]bool{}
	for _, r := range adminAuditRows(body) {
		for _, a := range []string{"evaluation.start", "job.retry", "dlq.discard"} {
			if strings.Contains(r, ">"+a+"<") {
				got[a] = true
			}
		}
	}
	if !got["evaluation.start"] || !got["job.retry"] || !got["dlq.discard"] {
		t.Fatalf("subject=%s finds %v, want the start, the retry and the discard", job.ThreadID, got)
	}
	_, body = admin.get("/audit?workflow=tour")
	if rows := adminAuditRows(body); len(rows) != 0 || !strings.Contains(text(body), "No audit entries match this filter") {
		t.Fatalf("workflow=tour: %d rows", len(rows))
	}
	for _, path := range []string{"/audit?workflow=nope", "/audit.csv?workflow=nope"} {
		if res, body := admin.get(path); res.StatusCode != http.StatusBadRequest || !strings.Contains(text(body), "There is no workflow named nope") {
			t.Errorf("%s: %d %s, want a 400 naming the workflow", path, res.StatusCode, text(body))
		}
	}
}

// adminRow is the <tr> with the id.
func adminRow(t *testing.T, body, id string) string {
	t.Helper()
	i := strings.Index(body, `<tr id="`+id+`"`)
	if i < 0 {
		t.Fatalf("no row %s", id)
	}
	j := strings.Index(body[i:], "</tr>")
	return body[i : i+j]
}

var adminAuditRowRe = regexp.MustCompile(`(?s)<tr id="audit-(\d+)">.*?</tr>`)

func adminAuditRows(body string) []string {
	return adminAuditRowRe.FindAllString(body, -1)
}

// adminAuditIDs lists the ids of the audit page's rows, in order.
func adminAuditIDs(body string) []string {
	var ids []string
	for _, m := range adminAuditRowRe.FindAllStringSubmatch(body, -1) {
		ids = append(ids, m[1])
	}
	return ids
}

var (
	adminOlderRe = regexp.MustCompile(`<a class="button small" rel="next" href="([^"]+)"`)
	adminNewerRe = regexp.MustCompile(`<a class="button small" rel="prev" href="([^"]+)"`)
)

func TestAuditPagingCSVAndFilters(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	ctx := context.Background()
	for i := range 60 {
		p, _ := json.Marshal(map[string]any{"n": i, "note": "<b>bold</b>"})
		if _, err := k.App.Audit.Append(ctx, postgres.Entry{TenantID: app.DemoTenant, Actor: "u_tester", Action: "test.page",
			Subject: fmt.Sprintf("subject-%02d", i), Workflow: "tour", Payload: p}); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Date(2020, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, e := range []postgres.Entry{
		{Actor: "@evil", Action: "test.inject", Subject: "=HYPERLINK(\"http://x\")", Payload: json.RawMessage(`{"x": "-1"}`), At: old},
		{Actor: "u_tester", Action: "test.inject", Subject: "+1", Workflow: "-w", At: old.Add(time.Hour)},
	} {
		e.TenantID = app.DemoTenant
		if _, err := k.App.Audit.Append(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	admin := k.login("admin@demo.weft")

	// Page through with the Older link: 50 + 10, newest first, no duplicates.
	next := "/audit?action=test.page"
	var pages []int
	seen := map[string]bool{}
	var order []string
	for next != "" {
		res, body := admin.get(next)
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d", next, res.StatusCode)
		}
		rows := adminAuditRows(body)
		pages = append(pages, len(rows))
		for _, r := range rows {
			id := adminAuditRowRe.FindStringSubmatch(r)[1]
			if seen[id] {
				t.Fatalf("entry %s on two pages", id)
			}
			seen[id] = true
			order = append(order, regexp.MustCompile(`subject-\d\d`).FindString(r))
		}
		if strings.Contains(body, "<b>bold</b>") || !strings.Contains(body, "&lt;b&gt;bold&lt;/b&gt;") {
			t.Fatal("the payload is not escaped")
		}
		next = ""
		if m := adminOlderRe.FindStringSubmatch(body); m != nil {
			next = html.UnescapeString(m[1])
			if !strings.Contains(next, "action=test.page") || !strings.Contains(next, "before=") {
				t.Fatalf("the Older link loses the filter: %s", next)
			}
		}
	}
	if fmt.Sprint(pages) != "[50 10]" || len(seen) != 60 || order[0] != "subject-59" || order[59] != "subject-00" {
		t.Fatalf("pages %v, %d distinct, first %s last %s", pages, len(seen), order[0], order[len(order)-1])
	}
	// And back with the Newer link: from the last page, the entries just newer than it (here
	// the newest page's; the newest page has no Newer link).
	_, first := admin.get("/audit?action=test.page")
	_, last := admin.get(html.UnescapeString(adminOlderRe.FindStringSubmatch(first)[1]))
	m := adminNewerRe.FindStringSubmatch(last)
	if strings.Contains(first, `rel="prev"`) || m == nil {
		t.Fatalf("the newest page has a Newer link, or the last page has none")
	}
	if newer := html.UnescapeString(m[1]); !strings.Contains(newer, "action=test.page") || !strings.Contains(newer, "after=") {
		t.Fatalf("the Newer link loses the filter: %s", newer)
	} else if _, back := admin.get(newer); fmt.Sprint(adminAuditIDs(back)) != fmt.Sprint(adminAuditIDs(first)) {
		// (by id: a row's "… ago" title moves on between the two requests)
		t.Fatalf("Newer from the last page does not lead back to the entries of the first")
	}
	if _, body := admin.get("/audit?action=test.page&after=999999999"); len(adminAuditRows(body)) != 0 || !strings.Contains(text(body), "No entries newer than this page's link") {
		t.Fatalf("a Newer link naming no entry: %s", text(body))
	}
	if res, _ := admin.get("/audit?action=test.page&after=5&before=9"); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("a link with both cursors: %d, want 400", res.StatusCode)
	}
	_, body := admin.htmx("/audit?action=test.page&before=999999999")
	if rows := adminAuditRows(body); len(rows) != 0 || strings.Contains(body, "<html") || !strings.Contains(text(body), "Start again from the newest") {
		t.Fatalf("a cursor of no entry: %d rows: %s", len(rows), text(body))
	}

	// Filters: subject, time range (UTC), workflow.
	_, body = admin.get("/audit?subject=subject-07")
	if rows := adminAuditRows(body); len(rows) != 1 || !strings.Contains(rows[0], "subject-07") {
		t.Fatalf("subject filter: %d rows", len(rows))
	}
	_, body = admin.get("/audit?from=2020-01-01T12:00&to=2020-01-01T12:30")
	if rows := adminAuditRows(body); len(rows) != 1 || !strings.Contains(rows[0], "@evil") || !strings.Contains(rows[0], "2020-01-01 12:00:00") {
		t.Fatalf("time filter: %d rows", len(rows))
	}
	// From and To the same minute is that minute (To takes in its whole minute).
	_, body = admin.get("/audit?from=2020-01-01T13:00&to=2020-01-01T13:00")
	if rows := adminAuditRows(body); len(rows) != 1 || !strings.Contains(rows[0], "test.inject") || !strings.Contains(rows[0], "2020-01-01 13:00:00") {
		t.Fatalf("a one-minute range: %d rows", len(rows))
	}
	_, body = admin.get("/audit?from=2020-01-01&to=2020-01-01")
	if rows := adminAuditRows(body); len(rows) != 2 {
		t.Fatalf("a one-day range: %d rows", len(rows))
	}
	// The form shows a hand-made link's times as its inputs write them, with the same
	// meaning (a browser blanks a datetime-local value it cannot read, and the next Apply
	// would drop the range): a day runs through its last minute.
	if !strings.Contains(body, `name="from" value="2020-01-01T00:00"`) || !strings.Contains(body, `name="to" value="2020-01-01T23:59"`) {
		t.Fatalf("a one-day range in the form: %s", body[strings.Index(body, `name="from"`)-20:][:300])
	}
	// A From within the To minute is a range, not From after To; a zone's "+" sent unescaped
	// (a space) is read as a "+".
	_, body = admin.get("/audit?from=2020-01-01T13:00:30&to=2020-01-01T13:00")
	if rows := adminAuditRows(body); len(rows) != 0 || strings.Contains(text(body), "is after the To time") {
		t.Fatalf("From inside the To minute: %d rows %s", len(rows), text(body))
	}
	_, body = admin.get("/audit?from=2020-01-01T13:00:00+00:00&to=2020-01-01T14:30:00%2B01:00")
	if rows := adminAuditRows(body); len(rows) != 1 || !strings.Contains(rows[0], "test.inject") {
		t.Fatalf("zoned times, one with its + unescaped: %d rows %s", len(rows), text(body))
	}
	// A fraction of a second is the second it falls in, in the filter and the form alike.
	_, body = admin.get("/audit?from=2020-01-01T13:00:00.250%2B00:00&to=2020-01-01T13:00:00.9")
	if rows := adminAuditRows(body); len(rows) != 1 || !strings.Contains(body, `name="from" value="2020-01-01T13:00:00" step="1"`) ||
		!strings.Contains(body, `name="to" value="2020-01-01T13:00:00" step="1"`) {
		t.Fatalf("times with fractions: %d rows, form %s", len(rows), body[strings.Index(body, `name="from"`)-20:][:300])
	}
	_, body = admin.get("/audit?from=2020-01-01T13:00:00%2B00:00&to=2020-01-01T14:30:00%2B01:00")
	// Times to the second go back as seconds (in UTC), with the inputs taking seconds.
	if !strings.Contains(body, `name="from" value="2020-01-01T13:00:00" step="1"`) || !strings.Contains(body, `name="to" value="2020-01-01T13:30:00" step="1"`) {
		t.Fatalf("zoned times in the form: %s", body[strings.Index(body, `name="from"`)-20:][:300])
	}
	_, body = admin.get("/audit?to=2020-01-02T00:00")
	if rows := adminAuditRows(body); len(rows) != 2 {
		t.Fatalf("to filter: %d rows", len(rows))
	}
	_, body = admin.get("/audit?workflow=tour")
	if rows := adminAuditRows(body); len(rows) != 50 || !strings.Contains(body, `<option value="tour" selected>`) {
		t.Fatalf("workflow filter: %d rows", len(rows))
	}

	// Bad filters: 400 with the message, the form keeps the input.
	res, body := admin.get("/audit?from=yesterday&actor=u_tester")
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(html.UnescapeString(text(body)), `The From time "yesterday" is not a date and time`) ||
		!strings.Contains(body, `value="u_tester"`) {
		t.Fatalf("bad time: %d %s", res.StatusCode, text(body))
	}
	res, body = admin.get("/audit?from=2026-02-01T00:00&to=2026-01-01T00:00")
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(text(body), "The From time (2026-02-01T00:00) is after the To time (2026-01-01T00:00)") {
		t.Fatalf("from after to: %d %s", res.StatusCode, text(body))
	}
	res, body = admin.htmx("/audit?to=31/12/2025")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `id="audit-table"`) || !strings.Contains(text(body), "is not a date and time") {
		t.Fatalf("htmx bad time: %d %s", res.StatusCode, body)
	}
	if res, _ := admin.get("/audit.csv?to=soon"); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("csv with a bad time: %d", res.StatusCode)
	}

	// CSV: the same filtered rows, a header, formulas defused.
	res, body = admin.get("/audit.csv?action=test.page")
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/csv") ||
		!strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment;") {
		t.Fatalf("csv: %d %s %s", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Content-Disposition"))
	}
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 61 || strings.Join(recs[0], ",") != "id,time_utc,actor,action,subject,workflow,payload,actor_name" ||
		recs[1][4] != "subject-59" || recs[60][4] != "subject-00" || recs[1][6] != `{"n":59,"note":"<b>bold</b>"}` {
		t.Fatalf("csv: %d records, first %v", len(recs), recs[:min(2, len(recs))])
	}
	_, body = admin.get("/audit.csv?action=test.inject")
	recs, err = csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(recs) != 3 {
		t.Fatalf("csv of the injection rows: %d %v", len(recs), err)
	}
	if got := recs[1][2:6]; strings.Join(got, "|") != "u_tester|test.inject|'+1|'-w" {
		t.Fatalf("csv cells not defused: %q", got)
	}
	if got := recs[2][2:5]; strings.Join(got, "|") != `'@evil|test.inject|'=HYPERLINK("http://x")` {
		t.Fatalf("csv cells not defused: %q", got)
	}

	// Other tenants see nothing of it.
	acme := k.login("admin@acme.weft")
	if _, body := acme.get("/audit"); len(adminAuditRows(body)) != 0 || strings.Contains(body, "test.page") {
		t.Fatal("acme's admin sees demo's audit log")
	}
	if _, body := acme.get("/audit.csv"); strings.Count(body, "\n") != 1 {
		t.Fatalf("acme's export is not just the header: %q", body)
	}
}

// An entry whose thread was started again since cannot be retried: that would take the
// thread back to where the older run failed, over the newer run's work.
func TestDLQSupersededEntry(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	k.work()
	first := k.waitJob("ev_demo-harbor", runner.Failed)
	old := harborDLQ(t, k, first)
	if _, err := app.Bid(k.App).StartEvaluation(context.Background(), app.DemoTenant, "ev_demo-harbor", "test"); err != nil {
		t.Fatal(err)
	}
	second := k.waitJob("ev_demo-harbor", runner.Failed)
	if second.ID == first.ID {
		t.Fatal("the evaluation did not run again")
	}
	latest := harborDLQ(t, k, second)

	admin := k.login("admin@demo.weft")
	_, body := admin.get("/dlq")
	if r := adminRow(t, body, "dlq-"+old.ID); !strings.Contains(text(r), "superseded: the thread was started again since") ||
		strings.Contains(r, "Retry…") || !strings.Contains(r, "Discard…") {
		t.Fatalf("the older run's entry is not shown superseded with Discard alone:\n%s", r)
	}
	if r := adminRow(t, body, "dlq-"+latest.ID); strings.Contains(r, "superseded") || !strings.Contains(r, "Retry…") {
		t.Fatalf("the latest run's entry:\n%s", r)
	}
	res, body := admin.post("/dlq/"+old.ID+"/retry", nil)
	if res.StatusCode != http.StatusConflict || !strings.Contains(text(body), "The thread was started again since this job failed") {
		t.Fatalf("retrying the superseded entry: %d %s", res.StatusCode, text(body))
	}
	if j, _ := k.App.Jobs.Job(context.Background(), app.DemoTenant, first.ID); j.Status != runner.Failed || j.RetryCount != 0 {
		t.Fatalf("after the refused retry the older job is %s (retry %d)", j.Status, j.RetryCount)
	}
	if e, _ := k.App.Jobs.DLQ(context.Background(), app.DemoTenant, old.ID); e.Status != postgres.DLQStatusRecorded {
		t.Fatalf("after the refused retry the entry is %s", e.Status)
	}
	if res, _ := admin.post("/dlq/"+old.ID+"/discard", nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("discarding the superseded entry: %d", res.StatusCode)
	}
}

// Dead letters in bulk: an admin ticks entries and retries or discards them together. Each
// action is its own audit row; an entry that changed since the list was shown is left as it
// is and named; another tenant's entry is a 404 and nothing is done.
func TestDLQBulkActions(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	stop := k.work()
	ctx := context.Background()
	var jobs []runner.Job
	for i := range 3 {
		// A question with no topic word fails for good at the tour's first node.
		j, err := k.App.Runner.Enqueue(ctx, runner.NewJob{TenantID: app.DemoTenant, Workflow: "tour", Subject: fmt.Sprintf("bulk %d", i),
			Input: json.RawMessage(`{"question":"why?"}`)})
		if err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	var entries []postgres.DLQEntry
	for _, j := range jobs {
		entries = append(entries, harborDLQ(t, k, k.waitJobID(j.ID, runner.Failed)))
	}
	stop() // retried jobs wait in the queue

	admin := k.login("admin@demo.weft")
	_, body := admin.get("/dlq")
	for _, e := range entries {
		if row := adminRow(t, body, "dlq-"+e.ID); !strings.Contains(row, `name="id" value="`+e.ID+`" form="dlq-bulk"`) {
			t.Fatalf("the entry's row has no box to tick:\n%s", row)
		}
	}
	if !strings.Contains(text(body), "Retry selected…") || !strings.Contains(text(body), "Discard selected…") {
		t.Fatal("the list offers no bulk actions")
	}

	// Another tenant's admin cannot act on them; and an id of another tenant among this
	// tenant's own is a 404 with nothing done, not even to the own entry.
	if res, _ := k.login("admin@acme.weft").post("/dlq/bulk", url.Values{"action": {"retry"}, "id": {entries[0].ID}}); res.StatusCode != http.StatusNotFound {
		t.Fatalf("acme's admin retrying demo's entry: %d, want 404", res.StatusCode)
	}
	acmeEntry := "01a20000-0000-7000-8000-000000000000" // no entry of demo's
	if res, _ := admin.post("/dlq/bulk", url.Values{"action": {"retry"}, "id": {entries[0].ID, acmeEntry}}); res.StatusCode != http.StatusNotFound {
		t.Fatalf("a bulk retry with an unknown id: %d, want 404", res.StatusCode)
	}
	if j, _ := k.App.Jobs.Job(ctx, app.DemoTenant, jobs[0].ID); j.Status != runner.Failed || j.RetryCount != 0 {
		t.Fatalf("after the refused bulk retries the job is %s (retry %d)", j.Status, j.RetryCount)
	}

	// Retry two (one ticked twice), as a plain form post: back to the list with the count.
	res, _ := admin.post("/dlq/bulk", url.Values{"action": {"retry"}, "id": {entries[0].ID, entries[1].ID, entries[0].ID}})
	if loc := res.Header.Get("Location"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(loc, "/dlq?") {
		t.Fatalf("bulk retry: %d → %q", res.StatusCode, loc)
	}
	_, body = admin.get(res.Header.Get("Location"))
	if !strings.Contains(text(body), "Retried 2 selected entries.") {
		t.Fatalf("no count after the bulk retry: %s", text(body))
	}
	for i, want := range []runner.Status{runner.Queued, runner.Queued, runner.Failed} {
		if j, _ := k.App.Jobs.Job(ctx, app.DemoTenant, jobs[i].ID); j.Status != want {
			t.Errorf("job %d is %s after the bulk retry, want %s", i, j.Status, want)
		}
	}
	_, body = admin.get("/audit?action=job.retry")
	if rows := adminAuditRows(body); len(rows) != 2 || !strings.Contains(body, jobs[0].ID) || !strings.Contains(body, jobs[1].ID) {
		t.Fatalf("the bulk retry wrote %d job.retry rows, want one per job", len(rows))
	}
	// A forged count in the address shows nothing it cannot have done.
	if _, body := admin.get("/dlq?done=retried&count=9999"); strings.Contains(text(body), "selected entr") {
		t.Fatalf("a forged count is shown: %s", text(body))
	}

	// Discard a retried entry and a recorded one, as htmx: the list comes back with what was
	// done and what was left, and why.
	// An entry is named as the list shows it: by its job, and when it was recorded.
	named := func(e postgres.DLQEntry) string {
		return fmt.Sprintf("job %s (recorded %s)", page.ShortID(e.JobID), e.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	res, body = admin.postHTMX("/dlq/bulk", url.Values{"action": {"discard"}, "id": {entries[1].ID, entries[2].ID}})
	txt := text(body)
	if res.StatusCode != http.StatusOK || strings.Contains(body, "<html") || !strings.Contains(txt, "Discarded 1 selected entry.") ||
		!strings.Contains(txt, "The entry of "+named(entries[1])+": this entry was already retried by Ada Admin") {
		t.Fatalf("bulk discard: %d %s", res.StatusCode, txt)
	}
	// Entries left for one reason are named together, once, one reason per line.
	e0, _ := k.App.Jobs.DLQ(ctx, app.DemoTenant, entries[0].ID)
	e1, _ := k.App.Jobs.DLQ(ctx, app.DemoTenant, entries[1].ID)
	if page.When(e0.ResolvedAt) == page.When(e1.ResolvedAt) { // retried in the same moment, as shown
		_, body = admin.postHTMX("/dlq/bulk", url.Values{"action": {"discard"}, "id": {entries[0].ID, entries[1].ID}})
		want := "<li>The entries of " + named(entries[0]) + " and " + named(entries[1]) + ": this entry was already retried by Ada Admin"
		if !strings.Contains(body, want) || strings.Count(body, "<li>The entr") != 1 {
			t.Fatalf("two entries refused for one reason: %s", body[strings.Index(body, "Left as they were"):][:400])
		}
	}
	// Without JavaScript the refusals show too: the list, not a redirect that would drop them.
	res, body = admin.post("/dlq/bulk", url.Values{"action": {"discard"}, "id": {entries[2].ID}})
	if txt := text(body); res.StatusCode != http.StatusOK || !strings.Contains(txt, "The entry of "+named(entries[2])+": this entry was already discarded by Ada Admin") {
		t.Fatalf("a plain bulk discard of a discarded entry: %d %s", res.StatusCode, txt)
	}
	// The subject filter finds a job's entries by the DLQ entry's id and the other way
	// round: a retry is recorded on the job, a discard on the entry.
	_, body = admin.get("/audit?subject=" + entries[0].ID)
	if rows := adminAuditRows(body); len(rows) != 1 || !strings.Contains(rows[0], "job.retry") {
		t.Errorf("audit by the retried entry's id: %d rows, want its job's retry", len(rows))
	}
	_, body = admin.get("/audit?subject=" + jobs[2].ID)
	if rows := adminAuditRows(body); len(rows) != 1 || !strings.Contains(rows[0], "dlq.discard") {
		t.Errorf("audit by the discarded entry's job id: %d rows, want the entry's discard", len(rows))
	}
	for i, want := range []string{postgres.DLQStatusRetried, postgres.DLQStatusRetried, postgres.DLQStatusDiscarded} {
		if e, _ := k.App.Jobs.DLQ(ctx, app.DemoTenant, entries[i].ID); e.Status != want {
			t.Errorf("entry %d is %s, want %s", i, e.Status, want)
		}
	}

	// Nothing ticked, or no action: the list with the message, nothing done.
	if res, body := admin.post("/dlq/bulk", url.Values{"action": {"retry"}}); res.StatusCode != http.StatusBadRequest ||
		!strings.Contains(text(body), "Select the entries first") {
		t.Fatalf("bulk retry of nothing: %d %s", res.StatusCode, text(body))
	}
	// The list's own refresh (when an entry's job changes) is the list alone: the notices
	// above it stay.
	if res, part := admin.htmx("/dlq?part=list"); res.StatusCode != http.StatusOK || !strings.HasPrefix(strings.TrimSpace(part), `<div id="dlq-list"`) ||
		strings.Contains(part, `id="dlq-table"`) {
		t.Errorf("the list's refresh: %d %.120s", res.StatusCode, part)
	}
	// Reloading that answer (a GET of its address) leads back to the list, not to a 404.
	for _, path := range []string{"/dlq/bulk", "/dlq/" + entries[0].ID + "/retry", "/dlq/" + entries[0].ID + "/discard"} {
		if res, _ := admin.get(path); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dlq" {
			t.Errorf("GET %s: %d → %q, want the list", path, res.StatusCode, res.Header.Get("Location"))
		}
	}
	if res, _ := admin.post("/dlq/bulk", url.Values{"action": {"delete"}, "id": {entries[0].ID}}); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("an unknown bulk action: %d, want 400", res.StatusCode)
	}
}

// runsRegion is the thread page's runs table (the live region "runs").
func runsRegion(t *testing.T, body string) string {
	t.Helper()
	i := strings.Index(body, `<div id="runs"`)
	if i < 0 {
		t.Fatal("the thread page has no runs region")
	}
	j := strings.Index(body[i:], "</table>")
	if j < 0 {
		t.Fatal("the runs region has no table")
	}
	return body[i : i+j]
}

// A failed run's thread page says where its dead letter stands; an admin retries or discards
// it there, with the dead-letter page's rules, and comes back to the thread.
func TestDLQFromThreadPage(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	stop := k.work()
	job := k.waitJob("ev_demo-harbor", runner.Failed)
	stop() // the retried job waits in the queue until the workers run again
	entry := harborDLQ(t, k, job)
	threadPath := "/threads/" + url.PathEscape(job.ThreadID)

	admin := k.login("admin@demo.weft")
	_, body := admin.get(threadPath)
	runs := runsRegion(t, body)
	if !strings.Contains(text(runs), "in the dead letters since") || !strings.Contains(runs, "Retry…") || !strings.Contains(runs, "Discard…") ||
		!strings.Contains(runs, `action="/dlq/`+entry.ID+`/retry"`) || !strings.Contains(text(runs), "A validation error: the same input fails the same way") ||
		strings.Contains(runs, "hx-post") || !strings.Contains(runs, `name="from" value="thread"`) {
		t.Fatalf("the admin's runs table does not offer the dead letter's actions:\n%s", text(runs))
	}
	pm := k.login("pm@demo.weft")
	_, body = pm.get(threadPath)
	if runs := runsRegion(t, body); !strings.Contains(text(runs), "an admin can retry or discard it") || strings.Contains(runs, "Retry…") || strings.Contains(runs, "<form") {
		t.Fatalf("the pm's runs table:\n%s", text(runs))
	}
	if res, _ := pm.post("/dlq/"+entry.ID+"/retry", url.Values{"from": {"thread"}}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a pm retrying from the thread page: %d, want 403", res.StatusCode)
	}
	if res, _ := k.login("admin@acme.weft").post("/dlq/"+entry.ID+"/retry", url.Values{"from": {"thread"}}); res.StatusCode != http.StatusNotFound {
		t.Fatalf("another tenant's admin retrying from the thread page: %d, want 404", res.StatusCode)
	}

	// Retry: back to the thread, whose runs table says who retried it.
	res, _ := admin.post("/dlq/"+entry.ID+"/retry", url.Values{"from": {"thread"}})
	if want := threadPath + "?retried=" + job.ID; res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
		t.Fatalf("retry from the thread: %d → %q, want 303 → %q", res.StatusCode, res.Header.Get("Location"), want)
	}
	if j, err := k.App.Jobs.Job(context.Background(), app.DemoTenant, job.ID); err != nil || j.Status != runner.Queued || j.RetryCount != 1 {
		t.Fatalf("after the retry the job is %s (retry %d): %v", j.Status, j.RetryCount, err)
	}
	_, body = admin.get(res.Header.Get("Location"))
	if !strings.Contains(text(body), "Retry queued: job "+page.ShortID(job.ID)) {
		t.Fatalf("no notice after the retry:\n%s", text(body))
	}
	if runs := runsRegion(t, body); !strings.Contains(text(runs), "dead letter retried by Ada Admin") || strings.Contains(runs, "<form") {
		t.Fatalf("the runs table after the retry:\n%s", text(runs))
	}
	// A second click (another tab): the thread page again, with why nothing was done.
	res, body = admin.post("/dlq/"+entry.ID+"/discard", url.Values{"from": {"thread"}})
	if res.StatusCode != http.StatusConflict || !strings.Contains(text(body), "This entry was already retried by Ada Admin") ||
		!strings.Contains(body, `<div id="runs"`) {
		t.Fatalf("discarding a retried entry from the thread: %d\n%s", res.StatusCode, text(body))
	}

	// The retry fails the same way: a new entry, which is discarded from the thread page.
	k.work()
	again := k.waitJobID(job.ID, runner.Failed)
	second := harborDLQ(t, k, again)
	if second.ID == entry.ID {
		t.Fatal("the retried job's failure recorded no new entry")
	}
	res, _ = admin.post("/dlq/"+second.ID+"/discard", url.Values{"from": {"thread"}})
	if want := threadPath + "?discarded=" + job.ID; res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
		t.Fatalf("discard from the thread: %d → %q, want %q", res.StatusCode, res.Header.Get("Location"), want)
	}
	_, body = admin.get(res.Header.Get("Location"))
	if !strings.Contains(text(body), "Dead letter discarded: job "+page.ShortID(job.ID)+" stays failed") ||
		!strings.Contains(text(runsRegion(t, body)), "dead letter discarded by Ada Admin") {
		t.Fatalf("after the discard:\n%s", text(body))
	}
	if j, _ := k.App.Jobs.Job(context.Background(), app.DemoTenant, job.ID); j.Status != runner.Failed {
		t.Fatalf("after the discard the job is %s, want failed", j.Status)
	}
}

// TestAuditActorKinds: the actor filter "system" finds what the system did under any of its
// names ("system:demo", "system:persist_result"), and "cli" what commands did ("cli",
// "cli:root"); an actor that only begins with the word is not of the kind.
func TestAuditActorKinds(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	ctx := context.Background()
	for _, actor := range []string{"system:worker-a", "system:persist_result", "cli", "cli:root", "u_tester", "systematic", "client:x", "u_pm via token:ci"} {
		if _, err := k.App.Audit.Append(ctx, postgres.Entry{TenantID: app.DemoTenant, Actor: actor, Action: "test.kind",
			Subject: "s-" + actor}); err != nil {
			t.Fatal(err)
		}
	}
	admin := k.login("admin@demo.weft")
	for who, want := range map[string][]string{
		"system":          {"s-system:worker-a", "s-system:persist_result"},
		" System:":        {"s-system:worker-a", "s-system:persist_result"},
		"cli":             {"s-cli", "s-cli:root"},
		"Cli:ROOT":        {"s-cli:root"},
		"SYSTEM:Worker-A": {"s-system:worker-a"},
	} {
		res, body := admin.get("/audit?action=test.kind&actor=" + url.QueryEscape(who))
		rows := adminAuditRows(body)
		if res.StatusCode != http.StatusOK || len(rows) != len(want) {
			t.Fatalf("actor=%q: %d, %d rows, want %d", who, res.StatusCode, len(rows), len(want))
		}
		for _, s := range want {
			if !strings.Contains(strings.Join(rows, "\n"), s) {
				t.Errorf("actor=%q: no row for %s", who, s)
			}
		}
	}
	// The export names people as the page does, beside the actor as recorded.
	_, body := admin.get("/audit.csv?action=test.kind&actor=" + url.QueryEscape("u_pm via token:ci"))
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(recs) != 2 || recs[1][2] != "u_pm via token:ci" || recs[1][7] != "Paula Meyer via API token ci" {
		t.Fatalf("csv actor and actor_name: %q %v", recs, err)
	}
	// The demo's seeding is the system's too, in any action.
	if _, body := admin.get("/audit?action=evaluation.start&actor=system"); len(adminAuditRows(body)) == 0 {
		t.Error("actor=system finds none of the demo's starts (system:demo)")
	}
}

// TestDLQRetryTwiceAtOnce: two retries of one entry at once (a double click, two admins):
// one retries it, and the other is told who did, never how the store refused the second.
func TestDLQRetryTwiceAtOnce(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	k.work()
	entry := harborDLQ(t, k, k.waitJob("ev_demo-harbor", runner.Failed))
	admin := k.login("admin@demo.weft")
	admin.get("/dlq") // the CSRF cookie
	form := url.Values{"_csrf": {admin.csrf()}}
	type answer struct {
		code int
		text string
	}
	answers := make([]answer, 4)
	var wg sync.WaitGroup
	for i := range answers {
		wg.Go(func() {
			res, body := admin.do(formRequest(admin.base+"/dlq/"+entry.ID+"/retry", form))
			answers[i] = answer{res.StatusCode, text(body)}
		})
	}
	wg.Wait()
	done := 0
	for _, a := range answers {
		switch {
		case a.code == http.StatusSeeOther:
			done++
		case a.code == http.StatusConflict && strings.Contains(a.text, "This entry was already retried by Ada Admin"):
		default:
			t.Errorf("a retry at once: %d %s", a.code, a.text)
		}
	}
	if done != 1 {
		t.Errorf("%d of %d retries at once went through, want 1", done, len(answers))
	}
}
