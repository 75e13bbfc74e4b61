package e2e_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"weft/internal/llm"
	"weft/internal/runner"
	"weft/internal/workflow/pagegen"
)

// slowPages makes each model call of page generation take a moment, so the session page
// is open before the session pauses and sees its stages arrive live.
type slowPages struct{ llm.Provider }

func (s slowPages) Chat(ctx context.Context, req llm.ChatRequest) (llm.ChatResponse, error) {
	select {
	case <-time.After(600 * time.Millisecond):
	case <-ctx.Done():
		return llm.ChatResponse{}, ctx.Err()
	}
	return s.Provider.Chat(ctx, req)
}

// axeSHA256 is the vendored axe-core 4.10.3 (internal/workflow/pagegen/testdata/axe).
const axeSHA256 = "880970c081707360e64f34cea25ff91892f5bc95675b0776925b9709dd8a68bb"

// watchEvents records the named events the page's live list gains after it loads
// (window.liveEvents).
const watchEvents = `(() => {
	window.liveEvents = [];
	new MutationObserver(ms => ms.forEach(m => m.addedNodes.forEach(n => n.dataset && window.liveEvents.push(n.dataset.event))))
		.observe(document.getElementById('wf-events'), {childList: true});
	return true;
})()`

type axeViolation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// TestPageGenerationInTheBrowser: an admin starts a session from the start form (with a
// logo), watches its stages arrive live until refine_waiting brings up the review, types
// feedback in the review's feedback box, and sees the rebuilt site in the thread page's
// sandboxed previews (a FAQ page that did not exist before); the rebuilt page passes
// axe-core with no serious or critical violation at both widths, where screenshots of it are
// saved; another round from the follow-up form rebuilds it again.
func TestPageGenerationInTheBrowser(t *testing.T) {
	path := chromium(t)
	a, _, base := pageConsole(t, slowPages{llm.NewOffline()})
	axe, err := os.ReadFile("../workflow/pagegen/testdata/axe/axe.min.js")
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(axe); hex.EncodeToString(sum[:]) != axeSHA256 {
		t.Fatalf("the vendored axe.min.js is not axe-core 4.10.3 (sha256 %x)", sum)
	}
	logo := filepath.Join(t.TempDir(), "brewly.png")
	if err := os.WriteFile(logo, pagegen.DemoLogo(), 0o600); err != nil {
		t.Fatal(err)
	}

	b := browser(t, path)
	run(t, b, "the admin starts a session from the start form",
		login(base, "admin@demo.weft"),
		chromedp.Navigate(base+"/workflows/"+pagegen.Name+"/start"),
		chromedp.WaitVisible(css(`form.start-fields textarea[name=request]`)),
		chromedp.SendKeys(css(`textarea[name=request]`), brewlyRequest),
		chromedp.SetUploadFiles(css(`input[type=file][name=logo]`), []string{logo}),
		present(`input[type=checkbox][name=aesthetic]:checked`),
		shot(t, "pagegen-1-start"),
		chromedp.Click(css(`form.start-fields button[type=submit]`)),
		chromedp.WaitVisible(css(`#wf-events`)),
		holds(watchEvents),
	)
	loc := read(t, b, "the thread's address", chromedp.Location())
	thread := strings.TrimPrefix(strings.SplitN(loc, "?", 2)[0], base+"/threads/")
	run(t, b, "the stages arrive live; refine_waiting brings up the feedback box",
		present(`#wf-events li[data-event=refine_waiting]`),
		contains(`#review-waiting`, "Review waiting"),
		present(`#review-waiting a[href^="/reviews/"]`),
		present(`#review-waiting textarea[name=feedback]`),
		contains(`#review-waiting`, "The aesthetic check suggests"),
		contains(`#panel .block-progress`, "Waiting for your feedback (round 1)"),
		contains(`#panel #score-card`, "Contrast (WCAG AA)"),
		contains(`#panel`, "from the logo"),
		shot(t, "pagegen-2-waiting"),
	)
	live := read(t, b, "the events seen live", chromedp.Evaluate[[]string](`window.liveEvents`))
	if !strings.Contains(strings.Join(live, " "), "refine_waiting") {
		t.Fatalf("refine_waiting did not arrive live (the page saw %v after it loaded)", live)
	}
	t.Logf("events that arrived live: %v", live)

	feedback := "add a FAQ page, make the primary colour darker"
	run(t, b, "feedback typed in the box rebuilds the site, live",
		chromedp.SendKeys(css(`#review-waiting textarea[name=feedback]`), feedback),
		shot(t, "pagegen-3-feedback"),
		chromedp.Click(css(`#review-waiting .review-buttons button[value=refine]`)),
		present(`#wf-events li[data-event=refine_start]`),
		present(`#wf-events li[data-event=build_complete]`),
		present(`#report .block-preview iframe[src$="/pages/faq.html"]`),
		contains(`#panel #rounds`, feedback),
	)
	waitJobStatus(t, a, thread, runner.Succeeded)
	run(t, b, "the rebuilt site in the previews",
		chromedp.Navigate(base+"/threads/"+thread),
		chromedp.WaitVisible(css(`#report .block-preview`)),
		present(`#report .block-preview iframe[sandbox=""][src="/files/`+thread+`/pages/faq.html"]`),
		present(`#report .preview-frame.desktop iframe[width="1280"]`),
		present(`#report .preview-frame.phone iframe[width="390"]`),
		present(`#report .block-downloads a[href*="site.zip"]`),
		contains(`#panel #rounds`, feedback),
		contains(`#report .counts`, "1Rounds of feedback"),
		shot(t, "pagegen-4-built"),
	)
	// The previews load lazily: scroll the FAQ page's into view and wait for both its frames.
	faq := `#report .block-preview:has(iframe[src$="/pages/faq.html"])`
	run(t, b, "the FAQ page's previews load",
		holds(`(document.querySelectorAll('`+faq+` iframe').forEach(f => f.addEventListener('load', () => f.dataset.loaded = '1')), true)`),
		chromedp.ScrollIntoView(css(faq)),
		holds(`document.querySelectorAll('`+faq+` iframe[data-loaded]').length === 2`),
	)
	for _, w := range []string{"desktop", "phone"} {
		sel := faq + ` .preview-frame.` + w
		png := read(t, b, "a screenshot of the "+w+" preview", chromedp.Screenshot(css(sel)))
		savePNG(t, "pagegen-5-preview-"+w, png)
	}

	// The rebuilt page, as the preview loads it, audited with axe-core at both widths.
	audit := `axe.run(document, {resultTypes: ['violations']}).then(r => r.violations.map(v => ({id: v.id, impact: v.impact,
		help: v.help, nodes: v.nodes.map(n => n.target.join(' ') + ': ' + (n.failureSummary || ''))})))`
	for _, width := range []int64{1280, 390} {
		run(t, b, fmt.Sprintf("faq.html at %dpx, axe-core injected", width),
			chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
				// The artifact's CSP forbids scripts: the test lets its own (axe) in.
				_, err := chromedp.Call(ctx, cdppage.SetBypassCSP, cdppage.SetBypassCSPParams{Enabled: true})
				return err
			}),
			chromedp.EmulateViewport(width, 900),
			chromedp.Navigate(base+"/files/"+thread+"/pages/faq.html"),
			chromedp.WaitVisible(css(`h1`)),
			shot(t, fmt.Sprintf("pagegen-6-faq-%dpx", width)),
			chromedp.Evaluate[chromedp.Void](string(axe)),
		)
		vs := read(t, b, fmt.Sprintf("axe-core on faq.html at %dpx", width), chromedp.Evaluate[[]axeViolation](audit, chromedp.EvalAwaitPromise))
		for _, v := range vs {
			msg := fmt.Sprintf("faq.html at %dpx: axe %s (%s): %s\n  %s", width, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n  "))
			if v.Impact == "serious" || v.Impact == "critical" {
				t.Error(msg)
			} else {
				t.Log(msg)
			}
		}
	}

	run(t, b, "another round from the follow-up form",
		chromedp.EmulateViewport(1400, 1000),
		chromedp.Navigate(base+"/threads/"+thread),
		chromedp.WaitVisible(css(`#follow-up textarea[name=feedback]`)),
		chromedp.SendKeys(css(`#follow-up textarea[name=feedback]`), "remove testimonials"),
		chromedp.Click(css(`#follow-up button[type=submit]`)),
		chromedp.WaitVisible(css(`main .alert.ok`)),
		contains(`main .alert.ok`, "Run started"),
		contains(`#panel #rounds`, "remove testimonials"),
		contains(`#report .counts`, "2Rounds of feedback"),
		shot(t, "pagegen-7-round-2"),
	)
}

// savePNG writes a screenshot where the other browser tests write theirs.
func savePNG(t *testing.T, name string, png []byte) {
	t.Helper()
	dir := filepath.Join("testdata", "output")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s", p)
}
