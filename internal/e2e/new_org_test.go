package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"weft/internal/workflow/bideval"
)

// orgRulePack is the rule pack the PM imports: the schema's example, with a quality gate
// that sends a high-scoring bid missing a flagged requirement to review.
var orgRulePack = strings.Replace(bideval.RulePackYAMLExample, "high_score: 80", "high_score: 40", 1)

// TestNewOrganisation is Weft used by an organisation that is not the demo, in Chromium:
//  1. an admin made by the CLI's calls signs in and invites a PM and a reviewer, who set
//     their passwords by their links;
//  2. the PM creates a tender, imports a rule pack from YAML, edits one weight in the form
//     (the sum check refuses 95, then 100 saves), adds two suppliers and uploads a PDF and a
//     DOCX bid;
//  3. the PM starts the evaluations;
//  4. the reviewer approves the one that pauses;
//  5. a new rule pack version makes the tender offer re-running with it;
//  6. the admin deactivates the reviewer, who is signed out at the next request.
func TestNewOrganisation(t *testing.T) {
	path := chromium(t)
	_, _, base := newOrg(t)
	fixtures, err := filepath.Abs(filepath.Join("..", "workflow", "bideval", "bidevalhttp", "testdata"))
	if err != nil {
		t.Fatal(err)
	}

	// 1. The admin invites a PM and a reviewer.
	admin := browser(t, path)
	run(t, admin, "the admin signs in", signIn(base, "ines@harbour.example", orgAdminPW))
	pmLink := invite(t, admin, base, "Paul Planner", "paul@harbour.example", "pm")
	revLink := invite(t, admin, base, "Rhea Reviewer", "rhea@harbour.example", "reviewer")
	run(t, admin, "the users page", shot(t, "org-1-admin-invited"))
	pm := browser(t, path)
	acceptInvite(t, pm, base, pmLink, "paul@harbour.example", "orchard piston 5521 violet")
	rev := browser(t, path)
	acceptInvite(t, rev, base, revLink, "rhea@harbour.example", "saffron tugboat 4410 quarry")

	// 2. The PM sets the tender up.
	run(t, pm, "the PM creates a tender",
		chromedp.Navigate(base+"/dashboard"),
		chromedp.WaitVisible(css(`a[href="/projects/new"]`)),
		chromedp.Click(css(`a[href="/projects/new"]`)),
		chromedp.WaitVisible(css(`#new-tender`)),
		chromedp.SendKeys(css(`#new-tender input[name=name]`), "Harbour cranes 2027"),
		chromedp.SendKeys(css(`#new-tender input[name=reference]`), "HW-2027-01"),
		chromedp.SendKeys(css(`#new-tender input[name=budget]`), "2500000"),
		chromedp.SetValue(css(`#new-tender input[name=currency]`), "EUR"),
		chromedp.SetValue(css(`#new-tender textarea[name=description]`), "Two ship-to-shore cranes with their control network."),
		shot(t, "org-2-pm-new-tender"),
		chromedp.Click(css(`#new-tender button[type=submit]`)),
		chromedp.WaitVisible(css(`#rule-pack-import`)),
		contains(`#rule-pack-notice`, "Tender created"),
	)
	run(t, pm, "the PM imports the rule pack from YAML",
		// Set in the page in one step: a node handle held across a step can go stale.
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#rule-pack-import textarea[name=yaml]').value = `+jsonString(orgRulePack)),
		gone(`#rule-pack-notice`),
		chromedp.Click(css(`#rule-pack-import button[type=submit]`)),
		chromedp.WaitVisible(css(`#rule-pack-notice`)),
		contains(`#rule-pack-notice`, "Saved as version v1"),
		contains(`#weight-sum`, "they sum to 100"),
		shot(t, "org-2-pm-rule-pack-imported"),
	)
	run(t, pm, "the PM edits a weight and sees the sum check",
		chromedp.SetValue(css(`#rule-pack-form tr[data-criterion="C1"] input[name=cr_weight]`), "55"),
		chromedp.Click(css(`#rule-pack-form button[type=submit]`)),
		chromedp.WaitVisible(css(`#rule-pack-error`)),
		contains(`#rule-pack-error`, "the weights sum to 95, not 100"),
		contains(`#weight-sum`, "they sum to 95"),
		shot(t, "org-2-pm-weight-sum-refused"),
		chromedp.SetValue(css(`#rule-pack-form tr[data-criterion="C2"] input[name=cr_weight]`), "45"),
		chromedp.Click(css(`#rule-pack-form button[type=submit]`)),
		chromedp.WaitVisible(css(`#rule-pack-notice`)),
		contains(`#rule-pack-notice`, "Saved as version v2"),
		contains(`#rule-pack-versions`, "v1"),
		shot(t, "org-2-pm-rule-pack-v2"),
	)
	run(t, pm, "the PM adds two suppliers",
		chromedp.Click(css(`main .crumbs a[href^="/projects/"]`)),
		chromedp.WaitVisible(css(`#add-supplier`)),
		contains(`#project-rule-pack`, "v2"),
		chromedp.SendKeys(css(`#add-supplier input[name=name]`), "Kranbau Nord GmbH"),
		chromedp.Click(css(`#add-supplier button`)),
		chromedp.WaitVisible(css(`#suppliers .alert`)),
		chromedp.SendKeys(css(`#add-supplier input[name=name]`), "Lift & Co"),
		gone(`main .alert`),
		chromedp.Click(css(`#add-supplier button`)),
		chromedp.WaitVisible(css(`#suppliers tr[data-supplier="Lift & Co"]`)),
	)
	upload := func(supplier, title, file string) step {
		return chromedp.Steps(
			chromedp.WaitVisible(css(`form[action$="/documents"] select[name=evaluation_id]`)),
			chromedp.Evaluate[chromedp.Void](`(s => { for (const o of s.options) { if (o.textContent === `+jsString(supplier)+`) { s.value = o.value; } } })(document.querySelector('form[action$="/documents"] select[name=evaluation_id]'))`),
			chromedp.SetValue(css(`form[action$="/documents"] input[name=title]`), title),
			chromedp.SetUploadFiles(css(`form[action$="/documents"] input[type=file]`), []string{filepath.Join(fixtures, file)}),
			gone(`main .alert`),
			chromedp.Click(css(`form[action$="/documents"] button[type=submit]`)),
			chromedp.WaitVisible(css(`main .alert.ok`)),
			contains(`main .alert.ok`, "Document added"),
		)
	}
	run(t, pm, "the PM uploads a PDF and a DOCX bid",
		upload("Kranbau Nord GmbH", "Bid (PDF)", "kranbau-bid.pdf"),
		upload("Lift & Co", "Bid (Word)", "lift-bid.docx"),
		contains(`table.documents`, "Bid (PDF)"),
		contains(`table.documents`, "Bid (Word)"),
		shot(t, "org-2-pm-tender-ready"),
	)

	// 3. The PM starts the evaluations: one completes, the other waits for a review (Lift &
	// Co has no ISO 9001 certificate, a flagged rule, and scores high).
	run(t, pm, "the PM starts the evaluations",
		chromedp.Click(css(`form[action$="/start"] button`)),
		present(`#project-results .alert.ok`),
		contains(`#project-results`, "Waiting for review"),
		contains(`#project-results`, "Completed"),
		shot(t, "org-3-pm-started"),
	)

	// 4. The reviewer approves the one that paused.
	run(t, rev, "the reviewer approves",
		chromedp.Navigate(base+"/reviews"),
		chromedp.WaitVisible(css(`a[href^="/reviews/"]`)),
		contains(`main`, "Lift & Co"),
		chromedp.Click(css(`a[href^="/reviews/"]`)),
		chromedp.WaitVisible(css(`#review-form button[value=approve]`)),
		shot(t, "org-4-reviewer-review"),
		chromedp.Click(css(`#review-form button[value=approve]`)),
		present(`.badge.succeeded`),
		shot(t, "org-4-reviewer-approved"),
	)

	// 5. A new rule pack version: the tender offers re-running with it.
	run(t, pm, "a new version is offered for re-runs",
		chromedp.Navigate(base+"/dashboard"),
		chromedp.WaitVisible(css(`a[href^="/projects/harbour"], #tenders a[href^="/projects/"]`)),
		chromedp.Click(css(`#tenders a[href^="/projects/"]`)),
		chromedp.WaitVisible(css(`#edit-rule-pack`)),
		chromedp.Click(css(`#edit-rule-pack`)),
		chromedp.WaitVisible(css(`#rule-pack-form`)),
		chromedp.SetValue(css(`#rule-pack-form tr[data-criterion="C1"] input[name=cr_weight]`), "50"),
		chromedp.SetValue(css(`#rule-pack-form tr[data-criterion="C2"] input[name=cr_weight]`), "50"),
		chromedp.Click(css(`#rule-pack-form button[type=submit]`)),
		chromedp.WaitVisible(css(`#rule-pack-notice`)),
		contains(`#rule-pack-notice`, "Saved as version v3"),
		chromedp.Click(css(`main .crumbs a[href^="/projects/"]`)),
		chromedp.WaitVisible(css(`#project-results`)),
		contains(`#project-results`, "Re-run with v3"),
		shot(t, "org-5-pm-rerun-offered"),
	)

	// The setup pages fit a phone's width (their wide tables scroll in their own boxes).
	run(t, pm, "a phone's width", chromedp.EmulateViewport(390, 844))
	for _, p := range []string{"/projects/new", "/dashboard"} {
		fits(t, pm, base+p, 390)
	}
	tender := read(t, pm, "the tender's address", chromedp.Evaluate[string](`document.querySelector('#tenders a[href^="/projects/"]').getAttribute('href')`))
	for _, p := range []string{tender, tender + "/rule-pack"} {
		fits(t, pm, base+p, 390)
	}
	run(t, pm, "the rule pack page on a phone", chromedp.Navigate(base+tender+"/rule-pack"), chromedp.WaitVisible(css(`#rule-pack-form`)),
		shot(t, "org-5-pm-rule-pack-phone"))
	noSidewaysTables(t, pm, "the rule pack page on a phone")
	run(t, pm, "back to a desktop's width", chromedp.EmulateViewport(1400, 1000))
	run(t, admin, "a phone's width", chromedp.EmulateViewport(390, 844))
	fits(t, admin, base+"/admin/users", 390)
	noSidewaysTables(t, admin, "the users page on a phone")
	run(t, admin, "the users page on a phone", shot(t, "org-5-admin-users-phone"), chromedp.EmulateViewport(1400, 1000))

	// 6. The admin deactivates the reviewer, who is signed out at the next request.
	run(t, admin, "the admin deactivates the reviewer",
		chromedp.Navigate(base+"/admin/users"),
		chromedp.WaitVisible(css(`tr[data-email="rhea@harbour.example"] form[action$="/deactivate"] button`)),
		chromedp.Click(css(`tr[data-email="rhea@harbour.example"] form[action$="/deactivate"] button`)),
		chromedp.WaitVisible(css(`#users-notice`)),
		shot(t, "org-6-admin-deactivated"),
	)
	run(t, rev, "the reviewer is signed out at the next request",
		chromedp.Navigate(base+"/reviews"),
		chromedp.WaitVisible(css(`input[name=email]`)),
		holds(`location.pathname === "/login"`),
		shot(t, "org-6-reviewer-signed-out"),
	)
	if _, err := os.Stat(filepath.Join("testdata", "output", "org-6-reviewer-signed-out.png")); err != nil {
		t.Fatal(err)
	}
}

// gone removes the elements matching selector from the page, so that a wait for one after a
// form's submission sees the next page's, not this one's.
func gone(selector string) step {
	return chromedp.Evaluate[chromedp.Void](`document.querySelectorAll(` + jsString(selector) + `).forEach(e => e.remove())`)
}

// jsonString quotes s for JavaScript, newlines and all.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// jsString quotes s for JavaScript.
func jsString(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}
