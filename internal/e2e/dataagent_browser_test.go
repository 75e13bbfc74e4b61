package e2e_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"weft/internal/runner"
	"weft/internal/workflow/dataagent"
)

// watchLive records what the panel's live region receives (window.liveSeen: the report's
// chunks as they stream in, before the next step draws the panel again).
const watchLive = `(() => {
	window.liveSeen = [];
	new MutationObserver(ms => {
		for (const m of ms) for (const n of m.addedNodes) {
			if (n.nodeType === 1 && n.closest && n.closest('.thread-live')) window.liveSeen.push(n.textContent.slice(0, 80));
		}
	}).observe(document.getElementById('thread-live'), {subtree: true, childList: true});
	return true;
})()`

// TestDataAgentInTheBrowser: a pm asks a question with human review on; a reviewer approves
// the plan in the review form (the plan block, its SQL draft highlighted); the pm's thread page
// shows, live, the report streaming in, then the result table, the chart image and the report
// with its downloads; a follow-up on the same thread ("只看华东") adds a second turn.
func TestDataAgentInTheBrowser(t *testing.T) {
	path := chromium(t)
	a, _, base := dataConsole(t)

	pm := browser(t, path)
	run(t, pm, "the pm asks a question with human review on",
		login(base, "pm@demo.weft"),
		chromedp.Navigate(base+"/workflows/"+dataagent.Name+"/start"),
		chromedp.WaitVisible(css(`form.start-fields textarea[name=question]`)),
		chromedp.SendKeys(css(`textarea[name=question]`), "GMV by region last month"),
		chromedp.Click(css(`input[type=checkbox][name=human_review]`)),
		shot(t, "dataagent-1-start"),
		chromedp.Click(css(`form.start-fields button[type=submit]`)),
		chromedp.WaitVisible(css(`#panel`)),
		holds(watchLive),
		contains(`#panel`, "waits for a reviewer"),
		present(`#panel .block-plan`),
		shot(t, "dataagent-2-waiting"),
	)
	loc := read(t, pm, "the thread's address", chromedp.Location())
	thread := strings.TrimPrefix(strings.SplitN(loc, "?", 2)[0], base+"/threads/")
	j := waitJobStatus(t, a, thread, runner.WaitingReview)

	rev := browser(t, path)
	run(t, rev, "the reviewer approves the plan",
		login(base, "reviewer@demo.weft"),
		chromedp.Navigate(base+"/reviews/"+j.ID),
		chromedp.WaitVisible(css(`.review-main .block-plan`)),
		contains(`.review-main .block-plan`, "sql"),
		contains(`.review-main .block-plan`, "python"),
		contains(`.review-main .block-code .tok-kw`, "SELECT"),
		contains(`.review-main .block-code .tok-str`, "'paid'"),
		contains(`.review-why`, "Plan review"),
		shot(t, "dataagent-3-review"),
		chromedp.Click(css(`.review-buttons button[value=approve]`)),
		contains(`#review`, "Decision recorded"),
	)

	run(t, pm, "the pm's page shows the report stream in, then the table, the chart and the report",
		present(`#panel #turn-1 table`),
		present(`#panel #turn-1 .block-image img`),
		holds(`(() => { const i = document.querySelector('#panel #turn-1 .block-image img'); return i && i.complete && i.naturalWidth > 0; })()`),
		contains(`#panel #turn-1`, "Step 1 · result: 8 rows"),
		contains(`#panel #turn-1 .block-section-head`, "answered"),
		contains(`#panel #turn-1`, "Report"),
		present(`#panel #turn-1 .block-downloads a[href$="turns/1/report.md?download=1"]`),
		present(`#panel #turn-1 .block-downloads a[href$="turns/1/step-1.csv?download=1"]`),
		present(`#follow-up textarea[name=question]`),
		holds(`document.getElementById('thread-live').children.length === 0`),
		shot(t, "dataagent-4-answer"),
	)
	seen := read(t, pm, "the live report chunks", chromedp.Evaluate[[]string](`window.liveSeen`))
	if len(seen) == 0 || !strings.Contains(strings.Join(seen, "\n"), "the report, as it is written") {
		t.Errorf("the report did not stream into the page: %q", seen)
	}

	run(t, pm, "a follow-up on the same thread", chromedp.SendKeys(css(`#follow-up textarea[name=question]`), "只看华东"))
	if _, err := chromedp.RunResponse(pm, chromedp.Click(css(`#follow-up button[type=submit]`))); err != nil {
		t.Fatalf("send the follow-up: %v", err)
	}
	run(t, pm, "the follow-up's turn",
		contains(`[data-clean-url] .alert`, "on this thread"),
		present(`#panel #turn-2`),
		contains(`#panel #turn-2 .block-section-head`, "answered"),
		contains(`#panel #turn-2`, "Shanghai"),
		present(`#panel #turn-1 table`),
		shot(t, "dataagent-5-follow-up"),
	)
	waitJobStatus(t, a, thread, runner.Succeeded)
}
