package e2e_test

import (
	"archive/zip"
	"context"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"

	"weft/internal/app"
	"weft/internal/auth"
	"weft/internal/llm"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
	"weft/internal/server"
	cr "weft/internal/workflow/contractreview"
)

// slowModel makes each model call take a moment, so the thread page shows the clauses
// progress one by one.
type slowModel struct{ llm.Provider }

func (s slowModel) Chat(ctx context.Context, req llm.ChatRequest) (llm.ChatResponse, error) {
	select {
	case <-time.After(1200 * time.Millisecond):
	case <-ctx.Done():
		return llm.ChatResponse{}, ctx.Err()
	}
	return s.Provider.Chat(ctx, req)
}

// contractConsole is the console with its workers on a fresh database: the demo tenants and
// users, no demo runs.
func contractConsole(t *testing.T) (*app.App, string) {
	t.Helper()
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{DatabaseURL: pgtest.URL(t), LLM: slowModel{llm.NewOffline()}, Runner: runner.Config{
		Lease: 5 * time.Second, PollInterval: 50 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	_, url := serveTenants(t, a)
	return a, url
}

// serveTenants gives a the demo tenants and users, serves its console and runs its workers
// until the test ends; it returns the users' service and the console's URL.
func serveTenants(t *testing.T, a *app.App) (*auth.Service, string) {
	t.Helper()
	ctx := context.Background()
	for _, tenant := range []string{app.DemoTenant, app.OtherTenant} {
		if err := a.Tenants.Create(ctx, tenant, tenant); err != nil {
			t.Fatal(err)
		}
	}
	authSvc := auth.New(a.DB, auth.Options{HashCost: bcrypt.MinCost})
	for _, u := range auth.DemoUsers(app.DemoTenant, app.OtherTenant) {
		if err := authSvc.CreateUser(ctx, u, auth.DemoPassword); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(server.New(server.Config{App: a, Auth: authSvc}).Handler())
	t.Cleanup(srv.Close)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = a.RunWorkers(wctx) }()
	t.Cleanup(func() { stop(); <-done })
	return authSvc, srv.URL
}

// supplyDOCX is the test supply contract as a Word document (pandoc writes it, each line a
// paragraph, as a contract's clauses are).
func supplyDOCX(t *testing.T) string {
	t.Helper()
	text, err := os.ReadFile("../workflow/contractreview/testdata/supply_contract.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("pandoc"); err != nil {
		t.Fatal("pandoc is not installed (Debian package pandoc): the contract is uploaded as a Word document")
	}
	dir := t.TempDir()
	md := filepath.Join(dir, "supply_contract.md")
	if err := os.WriteFile(md, []byte(strings.ReplaceAll(string(text), "\n", "\n\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "supply_contract.docx")
	if b, err := exec.Command("pandoc", "-f", "markdown", "-t", "docx", "-o", out, md).CombinedOutput(); err != nil {
		t.Fatalf("pandoc: %v: %s", err, b)
	}
	return out
}

// watchProgress records every label the panel's progress bar shows (window.progressSeen).
const watchProgress = `(() => {
	window.progressSeen = [];
	const note = () => {
		const l = document.querySelector('#panel .block-progress span');
		if (l && window.progressSeen[window.progressSeen.length - 1] !== l.textContent) window.progressSeen.push(l.textContent);
	};
	note();
	new MutationObserver(note).observe(document.getElementById('panel'), {subtree: true, childList: true, characterData: true});
	return true;
})()`

// TestContractReviewInTheBrowser: a pm uploads a contract (a Word document) from the start
// form and watches the clauses progress on the thread page; a reviewer sees the paused
// clause with its risks' words marked, approves one change and rejects the other with
// feedback, sees the re-proposal and approves it, approves the next clause; the report
// offers the DOCX with the tracked changes, which downloads.
func TestContractReviewInTheBrowser(t *testing.T) {
	path := chromium(t)
	a, base := contractConsole(t)
	docx := supplyDOCX(t)

	pm := browser(t, path)
	run(t, pm, "the pm uploads a contract from the start form",
		login(base, "pm@demo.weft"),
		chromedp.Navigate(base+"/workflows/"+cr.Name+"/start"),
		chromedp.WaitVisible(css(`form.start-fields input[type=file][name=contract]`)),
		chromedp.SetUploadFiles(css(`input[type=file][name=contract]`), []string{docx}),
		shot(t, "contract-1-start"),
		chromedp.Click(css(`form.start-fields button[type=submit]`)),
		chromedp.WaitVisible(css(`#panel`)),
		holds(watchProgress),
	)
	loc := read(t, pm, "the thread's address", chromedp.Location())
	thread := strings.TrimPrefix(strings.SplitN(loc, "?", 2)[0], base+"/threads/")
	run(t, pm, "the clauses progress live, to the first clause with changes",
		contains(`#panel .block-progress`, "Clause 2 of 4 · 14.7 Payment"),
		contains(`#panel`, "Clause 14.7 waits for a decision on 2 proposed changes"),
		present(`#panel tr#finding-1\.1`),
		shot(t, "contract-2-progress"),
	)
	seen := read(t, pm, "the progress seen", chromedp.Evaluate[[]string](`window.progressSeen`))
	if len(seen) < 2 || !strings.HasPrefix(seen[len(seen)-1], "Clause 2 of 4") {
		t.Errorf("the progress bar showed %q: want it to move on live to clause 2 of 4", seen)
	}
	j := waitJobStatus(t, a, thread, runner.WaitingReview)

	rev := browser(t, path)
	feedback := "Ask for 42 days, as in our standard terms."
	run(t, rev, "the reviewer approves one change and rejects the other with feedback",
		login(base, "reviewer@demo.weft"),
		chromedp.Navigate(base+"/reviews/"+j.ID),
		chromedp.WaitVisible(css(`fieldset.item-decision`)),
		shot(t, "contract-3-review"),
		contains(`.review-main .block-quote`, "after receiving the Statement"),
		present(`.review-main mark.quote-mark.high`),
		contains(`.review-main #risks`, "R2"),
		contains(`fieldset.item-decision:nth-of-type(1) .redline del`, "90"),
		contains(`fieldset.item-decision:nth-of-type(1) .redline ins`, "56"),
		contains(`fieldset.item-decision:nth-of-type(2) .redline ins`, "28"),
		chromedp.Click(css(`fieldset.item-decision:nth-of-type(1) input[value=approve]`)),
		chromedp.Click(css(`fieldset.item-decision:nth-of-type(2) input[value=reject]`)),
		chromedp.SendKeys(css(`fieldset.item-decision:nth-of-type(2) textarea`), feedback),
		chromedp.Click(css(`.review-buttons button[value=submit]`)),
		contains(`#review`, "Decision recorded"),
		contains(`#review`, "re-propose from the feedback"),
		shot(t, "contract-4-decided"),
	)

	waitJobStatus(t, a, thread, runner.WaitingReview)
	run(t, rev, "the rejected change comes back, re-proposed from the feedback; the reviewer approves it",
		chromedp.Navigate(base+"/reviews/"+j.ID),
		chromedp.WaitVisible(css(`fieldset.item-decision`)),
		contains(`.review-why`, "Re-proposed after feedback"),
		contains(`fieldset.item-decision`, "“"+feedback+"”"),
		contains(`fieldset.item-decision .redline ins`, "42"),
		shot(t, "contract-5-reproposal"),
		chromedp.Click(css(`fieldset.item-decision input[value=approve]`)),
		chromedp.Click(css(`.review-buttons button[value=submit]`)),
		contains(`#review`, "Decision recorded"),
	)

	waitJobStatus(t, a, thread, runner.WaitingReview)
	run(t, rev, "the next clause: 17.6's cap, sized with 1.1's Contract Price; the reviewer approves it",
		chromedp.Navigate(base+"/reviews/"+j.ID),
		chromedp.WaitVisible(css(`fieldset.item-decision`)),
		contains(`.review-main`, "Contract Price (clause 1.1)"),
		contains(`.review-main`, "USD 12,000,000"),
		chromedp.Click(css(`.review-buttons button[value=approve_all]`)),
		contains(`#review`, "Decision recorded"),
	)

	waitJobStatus(t, a, thread, runner.Succeeded)
	dir := t.TempDir()
	dctx, cancel := context.WithTimeout(pm, 60*time.Second)
	defer cancel()
	progress := chromedp.Events(dctx, cdpbrowser.DownloadProgress)
	run(t, pm, "the report offers the DOCX with the tracked changes",
		chromedp.Navigate(base+"/threads/"+thread),
		chromedp.WaitVisible(css(`#report .block-downloads`)),
		contains(`#report`, "Approved changes"),
		contains(`#report #approved-changes`, "Approved by Ravi Rao"),
		contains(`#panel .block-progress`, "Review complete: 4 clauses reviewed"),
		shot(t, "contract-6-report"),
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			yes := true
			_, err := chromedp.Call(ctx, cdpbrowser.SetDownloadBehavior, cdpbrowser.SetDownloadBehaviorParams{
				Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &yes})
			return err
		}),
		chromedp.Click(css(`#report .block-downloads a[href*="redline.docx"]`)),
	)
	var file string
	for ev, err := range progress {
		if err != nil {
			t.Fatalf("the DOCX did not download: %v", err)
		}
		if ev.State == cdpbrowser.DownloadProgressStateCompleted {
			file = filepath.Join(dir, ev.GUID)
			break
		}
	}
	zr, err := zip.OpenReader(file)
	if err != nil {
		t.Fatalf("the download is not a DOCX: %v", err)
	}
	defer zr.Close()
	var doc string
	for _, f := range zr.File {
		if f.Name == "word/document.xml" {
			rc, _ := f.Open()
			b := new(strings.Builder)
			_, _ = io.Copy(b, rc)
			rc.Close()
			doc = b.String()
		}
	}
	for _, want := range []string{`<w:del w:id=`, `w:author="Ravi Rao"`, `<w:t xml:space="preserve">42</w:t>`, `<w:delText xml:space="preserve">90</w:delText>`} {
		if !strings.Contains(doc, want) {
			t.Errorf("the downloaded DOCX lacks %s", want)
		}
	}
}
