package bidevalhttp_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"weft/internal/app"
	"weft/internal/app/servertest"
	"weft/internal/postgres"
	"weft/internal/runner"
	"weft/internal/workflow/bideval"
)

// A dead letter an operator can act on: Harbor Systems' bid has no documents. The PM uploads
// one on the tender page, the admin retries the dead letter, and the evaluation completes.
func TestDLQRetryAfterTheCauseIsFixed(t *testing.T) {
	t.Parallel()
	k := servertest.New(t)
	k.Work()
	job := waitJob(k, "ev_demo-harbor", runner.Failed)
	entries, _, err := k.App.Jobs.ListDLQ(context.Background(), app.DemoTenant, "recorded", postgres.Cursor{}, 10)
	if err != nil || len(entries) != 1 {
		t.Fatalf("dead letters: %+v %v", entries, err)
	}
	entry := entries[0]
	if entry.Code != bideval.CodeBidNoDocuments || !strings.Contains(entry.Message, "upload the bid on the tender page, then retry") {
		t.Fatalf("the dead letter does not say what to do: %+v", entry)
	}

	pm := k.Login("pm@demo.weft")
	pm.Get("/projects/demo-dc-network-2026")
	if res, _ := pm.Upload("/projects/demo-dc-network-2026/documents", map[string]string{"evaluation_id": "ev_demo-harbor", "title": "Bid"},
		"harbor-bid.md", bideval.DemoHarborBid); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("upload Harbor's bid: %d", res.StatusCode)
	}

	admin := k.Login("admin@demo.weft")
	admin.Get("/dlq")
	if res, _ := admin.Post("/dlq/"+entry.ID+"/retry", nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("retry: %d", res.StatusCode)
	}
	j := k.WaitJobID(job.ID, runner.Succeeded)
	if j.RetryCount != 1 {
		t.Errorf("the retried job's retry count is %d, want 1", j.RetryCount)
	}
	ev, err := app.Bid(k.App).Store.Evaluation(context.Background(), app.DemoTenant, "ev_demo-harbor")
	if err != nil || ev.Status != "completed" || ev.Outcome != bideval.OutcomePassed || ev.TotalScore == nil {
		t.Fatalf("Harbor's evaluation after the retry: %+v %v", ev, err)
	}
	t.Logf("Harbor's total after the retry: %.1f", *ev.TotalScore)
	_, body := pm.Get("/projects/demo-dc-network-2026")
	if !regexp.MustCompile(`Harbor Systems ev_demo-harbor Completed \d+\.\d #\d Passed`).MatchString(servertest.Text(body)) {
		t.Errorf("the tender page does not rank Harbor after the retry: %s", servertest.Text(body))
	}
}
