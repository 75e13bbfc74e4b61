package server_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"weft/internal/app"
	"weft/internal/runner"
)

// TestWithdrawnEvidenceIsMarked: once a pm withdraws a bid document, the evidence that cites
// it says so where people decide on it: in the review form of the bid waiting for a review
// (criteria and hard rules), and in the report of a completed evaluation (with who withdrew
// it and when); evidence of other documents stays unmarked. Started again, the evaluation
// no longer retrieves it.
func TestWithdrawnEvidenceIsMarked(t *testing.T) {
	t.Parallel()
	k, job := reviewKit(t)
	k.waitJob("ev_demo-northwind", runner.Succeeded)
	rev := k.login("reviewer@demo.weft")
	pm := k.login("pm@demo.weft")
	pm.get("/projects/demo-dc-network-2026")
	const mark = `<mark class="withdrawn">Withdrawn by Paula Meyer on `
	_, _, form := reviewForm(t, rev, job.ID)
	_, thread := pm.get("/threads/ev_demo-northwind")
	if strings.Contains(form, mark) || strings.Contains(thread, mark) {
		t.Fatal("evidence is marked withdrawn before anything was withdrawn")
	}
	cited := regexp.MustCompile(`id="cite-(demo-northwind-[a-z]+)#\d+"`).FindStringSubmatch(thread)
	if cited == nil || !strings.Contains(form, "demo-bluewater-proposal#") {
		t.Fatalf("no evidence to withdraw: the report cites %v; the form cites demo-bluewater-proposal: %v", cited, strings.Contains(form, "demo-bluewater-proposal#"))
	}
	for _, doc := range []string{"demo-bluewater-proposal", cited[1]} {
		if res, _ := pm.post("/projects/demo-dc-network-2026/documents/"+doc+"/withdraw", nil); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("withdraw %s: %d", doc, res.StatusCode)
		}
	}
	// lines counts the evidence chunks whose id line names from, by whether it is marked.
	lines := func(body, from string) (marked, plain int) {
		for _, part := range strings.Split(body, `<div class="chunk-id">`)[1:] {
			line := part[:strings.Index(part, "</div>")]
			if !strings.Contains(line, from) {
				continue
			}
			if strings.Contains(line, mark) {
				marked++
			} else {
				plain++
			}
		}
		return marked, plain
	}
	_, _, form = reviewForm(t, rev, job.ID)
	if marked, plain := lines(form, "demo-bluewater-proposal#"); marked == 0 || plain != 0 {
		t.Errorf("the review form marks %d of the withdrawn proposal's chunks, leaves %d unmarked", marked, plain)
	}
	// The hard rules' evidence, too.
	refs := regexp.MustCompile(`demo-bluewater-proposal#\d+( \(Withdrawn by Paula Meyer on )?`).FindAllStringSubmatch(between(form, "Hard rules", "Criteria and evidence"), -1)
	if len(refs) == 0 {
		t.Error("the review form's hard rules cite no chunk of the proposal")
	}
	for _, r := range refs {
		if r[1] == "" {
			t.Errorf("a hard rule's evidence is not marked withdrawn: %s", r[0])
		}
	}
	_, thread = pm.get("/threads/ev_demo-northwind")
	if marked, plain := lines(thread, cited[1]+"#"); marked == 0 || plain != 0 {
		t.Errorf("the report marks %d of the withdrawn document's citations, leaves %d unmarked", marked, plain)
	}
	// The other Northwind document's citations stay unmarked.
	other := map[string]string{"demo-northwind-technical": "demo-northwind-commercial", "demo-northwind-commercial": "demo-northwind-technical"}[cited[1]]
	if marked, plain := lines(thread, other+"#"); marked != 0 || plain == 0 {
		t.Errorf("the report marks %d of %d citations of a document that was not withdrawn", marked, marked+plain)
	}
	// Started again, the evaluation searches the bid without the withdrawn document (here it
	// then waits for a review, its evidence thinner).
	if res, _ := pm.post("/projects/demo-dc-network-2026/evaluations/ev_demo-northwind/start", nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("start Northwind's evaluation again: %d", res.StatusCode)
	}
	ev, err := app.Bid(k.App).Store.Evaluation(context.Background(), app.DemoTenant, "ev_demo-northwind")
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(25 * time.Millisecond) {
		j, err := k.App.Jobs.Job(context.Background(), app.DemoTenant, ev.JobID)
		if err == nil && j.Status != runner.Queued && j.Status != runner.Running && j.Status != runner.RetryScheduled && k.runEnded(j) {
			t.Logf("the evaluation started again came to rest as %s", j.Status)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the evaluation started again never came to rest: %s %v", j.Status, err)
		}
	}
	st, err := app.Bid(k.App).EvaluationState(context.Background(), app.DemoTenant, "ev_demo-northwind")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Retrieval.RetrievedChunks) == 0 {
		t.Error("the evaluation started again retrieved nothing, not even the document left")
	}
	for _, ch := range st.Retrieval.RetrievedChunks {
		if strings.HasPrefix(ch.ChunkID, cited[1]+"#") {
			t.Errorf("the evaluation started again retrieved %s from the withdrawn document", ch.ChunkID)
		}
	}
}
