package e2e_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"weft/internal/app"
	"weft/internal/fault"
	"weft/internal/llm"
	"weft/internal/runner"
	"weft/internal/server"
)

// firstAttemptFails is the offline provider, except that a job's first attempt gets a
// transient failure from every scoring call (the node retries, then the job is retried).
type firstAttemptFails struct{ llm.Provider }

func (f firstAttemptFails) ScoreCriteria(ctx context.Context, req llm.ScoreRequest) (llm.ScoreResult, error) {
	if j, ok := runner.JobFromContext(ctx); ok && j.RetryCount == 0 {
		return llm.ScoreResult{}, fault.New(fault.Transient, fault.CodeLLMTransient, "the model server is overloaded (test)")
	}
	return f.Provider.ScoreCriteria(ctx, req)
}

// TestRunWaterfall opens the thread page of a bid evaluation whose run failed its first
// attempt (the scoring node retried, then the job), ran again and paused for review: the
// waterfall, drawn from the node records alone (no collector), shows both attempts, the
// failed scoring, the wait before the retry, the paused node and the review still open at
// the right edge of the axis.
func TestRunWaterfall(t *testing.T) {
	t.Parallel()
	path := chromium(t)
	ctx := context.Background()
	a, base := consoleWith(t, server.Config{}, firstAttemptFails{llm.NewOffline()}, 300*time.Millisecond)
	if _, err := a.StartRun(ctx, app.DemoTenant, "bid_evaluation", json.RawMessage(`{"evaluation_id":"ev_demo-bluewater"}`), "u_pm"); err != nil {
		t.Fatal(err)
	}
	var j runner.Job
	for deadline := time.Now().Add(60 * time.Second); j.Status != runner.WaitingReview; time.Sleep(25 * time.Millisecond) {
		if jobs, err := a.Jobs.ThreadJobs(ctx, app.DemoTenant, "ev_demo-bluewater", 1); err == nil && len(jobs) == 1 {
			j = jobs[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run never paused: %+v", j)
		}
	}
	if j.RetryCount != 1 {
		t.Fatalf("the run paused after %d retries, want 1", j.RetryCount)
	}

	b := browser(t, path)
	run(t, b, "open the thread page",
		login(base, "pm@demo.weft"),
		chromedp.Navigate(base+"/threads/ev_demo-bluewater"),
		present(`.waterfall .wf-review`),
	)
	// The rows, top to bottom: kind, label and note.
	rows := read(t, b, "read the waterfall", chromedp.Evaluate[[]string](`[...document.querySelectorAll('.waterfall .wf-rows > li')].map(li =>
		li.dataset.kind + '|' + li.querySelector('.wf-label').textContent.replace(/\s+/g, ' ').trim())`))
	joined := strings.Join(rows, "\n")
	order := []string{
		"attempt|Attempt 1",
		"done|load_context",
		"failed|score_with_llm LLM_TRANSIENT 3 tries",
		"attempt|Attempt 2 retry after LLM_TRANSIENT (transient)",
		"backoff|waiting to retry",
		"done|score_with_llm",
		"interrupted|human_review_interrupt paused for review",
		"review|waiting for review still open",
	}
	at := 0
	for _, want := range order {
		i := strings.Index(joined[at:], want)
		if i < 0 {
			t.Fatalf("the waterfall lacks %q after row text %q; rows:\n%s", want, joined[:at], joined)
		}
		at += i + len(want)
	}
	// Bars sit on one time axis: the second attempt starts after the first ends, the open
	// review reaches the axis' end, and every bar is visible.
	bars := read(t, b, "read the bars", chromedp.Evaluate[[]map[string]any](`[...document.querySelectorAll('.waterfall .wf-rows > li')].filter(li => li.querySelector('rect')).map(li => {
		const r = li.querySelector('rect'); return {kind: li.dataset.kind, x: +r.getAttribute('x'), w: +r.getAttribute('width'),
		shown: r.getBoundingClientRect().width > 0}})`))
	var firstFailEnd, retryStart, reviewEnd float64
	for _, bar := range bars {
		x, w := bar["x"].(float64), bar["w"].(float64)
		if bar["shown"] != true || w <= 0 || x < 0 || x+w > 1000.01 {
			t.Errorf("bar %v is not drawn within the axis", bar)
		}
		switch bar["kind"] {
		case "failed":
			firstFailEnd = x + w
		case "backoff":
			retryStart = x + w
		case "review":
			reviewEnd = x + w
		}
	}
	if firstFailEnd <= 0 || retryStart < firstFailEnd || reviewEnd < 990 {
		t.Errorf("the failed scoring ends at %v‰, the retry starts at %v‰, the open review ends at %v‰ of the axis", firstFailEnd, retryStart, reviewEnd)
	}
	run(t, b, "screenshot", chromedp.ScrollIntoView(css(`.waterfall`)), shot(t, "waterfall"))
}
