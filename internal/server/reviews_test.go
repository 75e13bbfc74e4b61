package server_test

import (
	"bufio"
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"weft/internal/app"
	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/runner"
	"weft/web/page"
)

// reviewKit is a kit whose workers ran the demo until Bluewater paused for
// review; job is Bluewater's paused job.
func reviewKit(t *testing.T) (*kit, runner.Job) {
	t.Helper()
	k := newKit(t)
	k.work()
	return k, k.waitJob("ev_demo-bluewater", runner.WaitingReview)
}

var (
	tokenRe = regexp.MustCompile(`name="resume_token" value="([^"]+)"`)
	scoreRe = regexp.MustCompile(`name="scores\.([^"]+)"[^>]*value="([^"]*)"`)
	maxRe   = regexp.MustCompile(`name="scores\.([^"]+)" min="0" max="([^"]+)"`)
	sseRe   = regexp.MustCompile(`sse-connect="([^"]+)"`)
)

// reviewForm opens the form and returns its resume token and score inputs.
func reviewForm(t *testing.T, c *client, jobID string) (string, map[string]string, string) {
	t.Helper()
	res, body := c.get("/reviews/" + jobID)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("review form: %d %s", res.StatusCode, text(body))
	}
	m := tokenRe.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("the form carries no resume token: %s", body)
	}
	scores := map[string]string{}
	for _, s := range scoreRe.FindAllStringSubmatch(body, -1) {
		scores[s[1]] = s[2]
	}
	return m[1], scores, body
}

func TestReviewInbox(t *testing.T) {
	t.Parallel()
	k, _ := reviewKit(t)
	for _, who := range []string{"reviewer@demo.weft", "admin@demo.weft"} {
		c := k.login(who)
		res, body := c.get("/reviews")
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s: inbox %d", who, res.StatusCode)
		}
		txt := text(body)
		for _, want := range []string{"Bluewater Systems", "ev_demo-bluewater", "Bid evaluation", "human_review_interrupt", "Review"} {
			if !strings.Contains(txt, want) {
				t.Errorf("%s: the inbox does not show %q: %s", who, want, txt)
			}
		}
		if !regexp.MustCompile(`\d+s ago|\dm ago`).MatchString(txt) {
			t.Errorf("%s: the inbox shows no age: %s", who, txt)
		}
		if !strings.Contains(txt, "Low confidence") && !strings.Contains(txt, "Too few cited claims") &&
			!strings.Contains(txt, "Hard rule failed despite a high score") && !strings.Contains(txt, "Score far from the other bids") {
			t.Errorf("%s: the inbox shows no reason: %s", who, txt)
		}
		if strings.Contains(txt, "Northwind") {
			t.Errorf("%s: the inbox lists an evaluation that does not wait for review", who)
		}
		// The htmx refresh gets the region alone.
		res, part := c.htmx("/reviews")
		if res.StatusCode != http.StatusOK || strings.Contains(part, "<html") || !strings.Contains(part, `id="review-inbox"`) {
			t.Errorf("%s: htmx refresh: %d %s", who, res.StatusCode, part)
		}
	}
	res, _ := k.login("pm@demo.weft").get("/reviews")
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("pm's inbox: %d, want 403", res.StatusCode)
	}
	res, body := k.login("admin@acme.weft").get("/reviews")
	if res.StatusCode != http.StatusOK || strings.Contains(text(body), "Bluewater") || !strings.Contains(text(body), "Nothing waits for your review") {
		t.Fatalf("acme's inbox: %d %s", res.StatusCode, text(body))
	}
}

func TestReviewFormShowsEvidence(t *testing.T) {
	t.Parallel()
	k, job := reviewKit(t)
	c := k.login("reviewer@demo.weft")
	token, scores, body := reviewForm(t, c, job.ID)
	txt := text(body)
	// The token is in the form alone: the thread page's state inspector hides it, for every role.
	for _, who := range []*client{c, k.login("pm@demo.weft")} {
		res, page := who.get("/threads/" + job.ThreadID)
		if res.StatusCode != http.StatusOK || strings.Contains(page, token) || !strings.Contains(html.UnescapeString(page), `"resume_token": "(hidden)"`) {
			t.Errorf("the thread page (%d) shows the resume token, or no hidden one", res.StatusCode)
		}
	}
	for _, want := range []string{"Review: Bluewater Systems", "Why this needs your review", "Criteria and evidence", "Hard rules",
		"Save edited scores", "Approve as scored", "Reject", `_csrf`} {
		if !strings.Contains(txt, want) && !strings.Contains(body, want) {
			t.Errorf("the form does not show %q", want)
		}
	}
	st, err := app.Bid(k.App).EvaluationState(context.Background(), app.DemoTenant, "ev_demo-bluewater")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range st.Review.Reasons {
		if !strings.Contains(body, r) {
			t.Errorf("the form does not show the reason %s", r)
		}
	}
	// Confidence reads as a percentage, as on the thread's report; claims in words.
	if !regexp.MustCompile(`Confidence \d+(\.\d)?%`).MatchString(txt) || strings.Contains(txt, "0 of 0 claims") {
		t.Errorf("confidence or claims: %s", txt)
	}
	if !strings.Contains(body, `class="chunk cited"`) || !strings.Contains(body, `<mark class="cited"`) {
		t.Error("no cited chunk is highlighted")
	}
	// "Cited" marks exactly the chunks the scores rest on (the citations the report lists); a
	// chunk the explanation names where the bid falls short says so instead.
	citations, shortfalls := 0, 0
	for _, cs := range st.Scoring.CriteriaScores {
		citations += len(cs.Citations)
		for _, id := range st.Retrieval.EvidenceBundle[cs.CriterionID].ChunkIDs {
			if !slices.Contains(cs.Citations, id) && strings.Contains(cs.Explanation, "["+id+"]") {
				shortfalls++
			}
		}
	}
	if got := strings.Count(body, `<mark class="cited"`); got != citations {
		t.Errorf("%d chunks marked cited, want the %d citations", got, citations)
	}
	if got := strings.Count(body, `<mark class="named"`); shortfalls == 0 || got != shortfalls {
		t.Errorf("%d chunks marked as a shortfall, want %d (and the demo to have some)", got, shortfalls)
	}
	// Each chunk says where its criterion's search ranked it (the raw search score, a few
	// hundredths, read as no relevance at all).
	// Chunks scored alike tie (the demo's Service criterion finds two at one score).
	ranked, tied := 0, 0
	for id, ev := range st.Retrieval.EvidenceBundle {
		if n := len(ev.ChunkIDs); n >= 2 && len(ev.Scores) == n && strings.HasPrefix(id, "C") {
			want := []string{fmt.Sprintf("best search match of %d", n), fmt.Sprintf("search match %d of %d", n, n)}
			if ev.Scores[0] == ev.Scores[n-1] { // all alike (they come best first)
				want, tied = []string{fmt.Sprintf("best search match of %d, tied", n)}, tied+1
			} else if slices.Equal(slices.Compact(slices.Clone(ev.Scores)), ev.Scores) {
				ranked++
			} else {
				continue
			}
			for _, w := range want {
				if !strings.Contains(txt, w) {
					t.Errorf("criterion %s's %d chunks (scores %v) do not say %q", id, n, ev.Scores, w)
				}
			}
		}
	}
	if tied == 0 {
		ranked = 0 // the fixture no longer has both kinds: the test would check less than it says
	}
	if ranked == 0 || strings.Contains(txt, "relevance 0.") {
		t.Error("the evidence still shows raw search scores as relevance")
	}
	// Evidence reads as text: the proposal's Markdown heading mark is not shown.
	if !strings.Contains(txt, "Proposal — Bluewater Systems") || strings.Contains(txt, "# Proposal") {
		t.Error("the evidence shows Markdown marks, or lacks the proposal's heading")
	}
	// A rule's reason does not repeat the rule's name, which has its own column.
	if !strings.Contains(txt, "Warranty of at least 24 months failed flag 12 12 is below the minimum of 24") {
		t.Errorf("the warranty rule's row: %s", txt)
	}
	if len(scores) != len(st.Scoring.CriteriaScores) || len(scores) == 0 {
		t.Fatalf("score inputs %v for %d criteria", scores, len(st.Scoring.CriteriaScores))
	}
	for _, cs := range st.Scoring.CriteriaScores {
		if !strings.Contains(body, `name="scores.`+cs.CriterionID+`" min="0" max="`+strconv.FormatFloat(cs.MaxScore, 'f', -1, 64)+`" step="0.1"`) {
			t.Errorf("criterion %s: no max %v on its input", cs.CriterionID, cs.MaxScore)
		}
	}
	// Another tenant's admin finds nothing.
	res, _ := k.login("admin@acme.weft").get("/reviews/" + job.ID)
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("acme admin opening demo's review: %d, want 404", res.StatusCode)
	}
	res, _ = k.login("pm@demo.weft").get("/reviews/" + job.ID)
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("pm opening a review: %d, want 403", res.StatusCode)
	}
	res, _ = c.get("/reviews/not-a-job")
	if res.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown job: %d, want 404", res.StatusCode)
	}
}

func TestReviewApprove(t *testing.T) {
	t.Parallel()
	k, job := reviewKit(t)
	c := k.login("reviewer@demo.weft")
	token, _, _ := reviewForm(t, c, job.ID)

	// No CSRF token: refused, nothing consumed.
	res, _ := c.postRaw("/reviews/"+job.ID, url.Values{"resume_token": {token}, "decision": {"approve"}})
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("without CSRF: %d, want 403", res.StatusCode)
	}
	// A link that is not this pause's (another review's form): said so, not "used or expired".
	res, body := c.post("/reviews/"+job.ID, url.Values{"resume_token": {"rt_not-this-one"}, "decision": {"approve"},
		"comment": {"x"}})
	if res.StatusCode != http.StatusConflict || !strings.Contains(text(body), "The link in this form was not issued for this review") {
		t.Fatalf("a link of another pause: %d %s", res.StatusCode, text(body))
	}
	// This pause's own link, expired (as an old tab's after its pause was dead-lettered and
	// retried): said to be used or expired, not "not issued".
	stale, _, _ := reviewForm(t, c, job.ID)
	if _, err := k.App.DB.Pool().Exec(context.Background(), `UPDATE resume_tokens SET expires_at = now() - interval '1 minute'
		WHERE hash = $1`, runner.HashToken(stale)); err != nil {
		t.Fatal(err)
	}
	res, body = c.post("/reviews/"+job.ID, url.Values{"resume_token": {stale}, "decision": {"approve"}, "comment": {"x"}})
	if res.StatusCode != http.StatusConflict || !strings.Contains(text(body), "This review link was already used or has expired") {
		t.Fatalf("this pause's expired link: %d %s", res.StatusCode, text(body))
	}
	// The form cannot speak for someone else: identity comes from the session.
	form := url.Values{"resume_token": {token}, "decision": {"approve"}, "comment": {"Checked the uptime figures by phone."},
		"editor.reviewer_id": {"u_admin"}, "reviewer_id": {"u_admin"}}
	res, _ = c.post("/reviews/"+job.ID, form)
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/threads/"+job.ThreadID+"?decided="+job.ID {
		t.Fatalf("approve: %d → %q", res.StatusCode, res.Header.Get("Location"))
	}
	// A plain form post (no JS) lands on the thread, which says the decision was recorded.
	if _, body := c.get(res.Header.Get("Location")); !strings.Contains(text(body), "Decision recorded: job") {
		t.Errorf("the thread after a plain-post decision does not confirm it: %s", text(body))
	}
	k.waitJob("ev_demo-bluewater", runner.Succeeded)
	// The notice names a decision only where one was recorded: Northwind's run never paused.
	northwind := k.waitJob("ev_demo-northwind", runner.Succeeded)
	if _, body := c.get("/threads/ev_demo-northwind?decided=" + northwind.ID); strings.Contains(text(body), "Decision recorded") {
		t.Errorf("a run that never paused (job %s) is said to have a decision recorded", northwind.ID)
	}
	st, err := app.Bid(k.App).EvaluationState(context.Background(), app.DemoTenant, "ev_demo-bluewater")
	if err != nil {
		t.Fatal(err)
	}
	r := st.Output.ReportPayload
	if r == nil || r.Decision != "approve" || r.Comment != "Checked the uptime figures by phone." || r.ReviewerID != "u_reviewer" {
		t.Fatalf("report: %+v", r)
	}
	// The thread's report names the reviewer and the reasons for people, not by their ids.
	_, body = c.get("/threads/" + job.ThreadID)
	if txt := text(body); !strings.Contains(txt, "Reviewer Ravi Rao") || !strings.Contains(txt, "Sent to review because: Low confidence") ||
		strings.Contains(txt, "Reviewer u_reviewer") || !strings.Contains(txt, "Outcome Scores approved in review") ||
		!strings.Contains(txt, "Decision Approved as scored Reviewer Ravi Rao") {
		t.Fatalf("the thread's report: %s", txt)
	}
	// The history says what wrote the checkpoint no node wrote: the review's answer.
	if h := historyRows(t, body, graph.SourceResume); len(h) != 1 || !strings.Contains(text(h[0]), "review answer") {
		t.Errorf("the history's resume checkpoints: %q, want one written by the review answer", h)
	}

	// The same token again: a clear 409, not a 500.
	res, body = c.post("/reviews/"+job.ID, form)
	if res.StatusCode != http.StatusConflict || !strings.Contains(text(body), "This review link was already used or has expired") ||
		!strings.Contains(text(body), "Reload the review form") {
		t.Fatalf("second submission: %d %s", res.StatusCode, text(body))
	}
	// The form now says the review is done, with the decision.
	res, body = c.get("/reviews/" + job.ID)
	if res.StatusCode != http.StatusOK || !strings.Contains(text(body), "This review is already done") ||
		!strings.Contains(body, `href="/threads/`+job.ThreadID+`"`) || !strings.Contains(text(body), "Approved") ||
		!strings.Contains(text(body), "Ravi Rao") {
		t.Fatalf("form after the decision: %d %s", res.StatusCode, text(body))
	}
	// A job that never paused for review says so, rather than "already done".
	res, body = c.get("/reviews/" + northwind.ID)
	if res.StatusCode != http.StatusOK || !strings.Contains(text(body), "No review is waiting here") ||
		!strings.Contains(text(body), "its job is completed") {
		t.Fatalf("the form of a job that never paused: %d %s", res.StatusCode, text(body))
	}
	// And the evaluation has left the inbox (the demo's contract review still waits there).
	_, body = c.get("/reviews?workflow=bid_evaluation")
	if !strings.Contains(text(body), "No Bid evaluation thread waits for your review") {
		t.Fatalf("inbox after the decision: %s", text(body))
	}
}

func TestReviewEditScoresValidation(t *testing.T) {
	t.Parallel()
	k, job := reviewKit(t)
	c := k.login("admin@demo.weft")
	token, scores, body := reviewForm(t, c, job.ID)
	maxes := map[string]string{}
	for _, m := range maxRe.FindAllStringSubmatch(body, -1) {
		maxes[m[1]] = m[2]
	}
	form := url.Values{"resume_token": {token}, "decision": {"edit_scores"}, "comment": {"Too generous on delivery."}}
	var over string
	for id, v := range scores {
		form.Set("scores."+id, v)
		over = id
	}
	form.Set("scores."+over, maxes[over]+"5") // e.g. 10 → 105
	res, body := c.post("/reviews/"+job.ID, form)
	txt := text(body)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(txt, "above the maximum score") {
		t.Fatalf("score above the max: %d %s", res.StatusCode, txt)
	}
	if !strings.Contains(body, `value="`+maxes[over]+`5"`) || !strings.Contains(body, "Too generous on delivery.") ||
		!strings.Contains(body, `value="`+token+`"`) {
		t.Fatal("the re-rendered form lost the reviewer's input")
	}
	// htmx gets the form region (200, so htmx swaps it) with the message.
	form.Set("_csrf", c.csrf())
	req, _ := http.NewRequest(http.MethodPost, c.base+"/reviews/"+job.ID, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	res, body = c.do(req)
	if res.StatusCode != http.StatusOK || strings.Contains(body, "<html") || !strings.Contains(body, `id="review"`) ||
		!strings.Contains(text(body), "above the maximum score") {
		t.Fatalf("htmx, score above the max: %d %s", res.StatusCode, text(body))
	}
	if j, _ := k.App.Jobs.Job(context.Background(), app.DemoTenant, job.ID); j.Status != runner.WaitingReview {
		t.Fatalf("a refused decision moved the job to %s", j.Status)
	}
	// Fields that are not the form's inputs are not read (the API refuses an unknown criterion
	// by name: TestAPI).
	form.Set("scores."+over, scores[over])
	// Scores go in tenths, as the report shows them: 5.55 would make a total from a digit no one sees.
	form.Set("scores."+over, "5.55")
	res, body = c.post("/reviews/"+job.ID, form)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(text(body), "5.55 has more than one decimal place: scores go in steps of 0.1") {
		t.Fatalf("a score off the 0.1 step: %d %s", res.StatusCode, text(body))
	}
	// A score is a plain decimal, as the form shows it: Go's other float syntaxes (hex,
	// exponents, underscores) are not numbers to a reviewer, and are not read as one.
	for _, odd := range []string{"0x1p1", "1e1", "1_0", "Inf"} {
		form.Set("scores."+over, odd)
		res, body = c.post("/reviews/"+job.ID, form)
		if want := "&#34;" + odd + "&#34; is not a decimal number such as 7 or 7.5"; res.StatusCode != http.StatusBadRequest || !strings.Contains(text(body), want) {
			t.Fatalf("score %q: %d, want 400 with %s", odd, res.StatusCode, want)
		}
	}
	form.Set("scores."+over, scores[over])
	// A rejection needs its reason.
	form.Set("decision", "reject")
	form.Set("comment", " ")
	res, body = c.post("/reviews/"+job.ID, form)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(text(body), "a rejection needs a comment") {
		t.Fatalf("reject without a comment: %d %s", res.StatusCode, text(body))
	}
	// Sent without JavaScript, the refusal's page opens with the keyboard on its message.
	if !strings.Contains(body, `<div class="alert error" role="alert" tabindex="-1" autofocus>`) {
		t.Error("the refused review's message does not take the focus")
	}
	form.Set("comment", "Too generous on delivery.")
	// Approving with a typed change would drop it: refused, the input kept.
	form.Set("decision", "approve")
	form.Set("scores."+over, "1.5")
	res, body = c.post("/reviews/"+job.ID, form)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(text(body), "You changed 1 score. Approving keeps the model") ||
		!strings.Contains(body, `value="1.5"`) {
		t.Fatalf("approve with a changed score: %d %s", res.StatusCode, text(body))
	}
	form.Set("decision", "edit_scores")
	// Nothing changed: not an edit.
	form.Set("scores."+over, scores[over])
	res, body = c.post("/reviews/"+job.ID, form)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(text(body), "No score differs") {
		t.Fatalf("unchanged scores: %d %s", res.StatusCode, text(body))
	}
	// A real edit goes through with the same token (it was not consumed), by htmx.
	edited, want := "7.5", 7.5
	if scores[over] == "7.5" {
		edited, want = "2.5", 2.5
	}
	form.Set("scores."+over, edited)
	req, _ = http.NewRequest(http.MethodPost, c.base+"/reviews/"+job.ID, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	res, body = c.do(req)
	if res.StatusCode != http.StatusOK || !strings.Contains(text(body), "Decision recorded Decision") ||
		!strings.Contains(body, `sse-swap="status"`) {
		t.Fatalf("htmx edit_scores: %d %s", res.StatusCode, body)
	}
	// The page's header, which said "paused at", is swapped to say how the pause was answered.
	if !strings.Contains(body, `<span id="review-head-state" hx-swap-oob="true">answered: `+
		page.ReviewDecisionLabel("edit_scores")+` by `) {
		t.Errorf("the done panel does not update the header: %s", body)
	}
	// The panel says which scores were saved, by the criterion's name.
	vals, err := app.Bid(k.App).EvaluationValues(context.Background(), job.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	criteria := vals.RulePack.Criteria
	name := ""
	for _, cr := range criteria {
		if cr.ID == over {
			name = cr.Name
		}
	}
	if name == "" || !strings.Contains(text(body), "Scores saved "+name+" "+edited) {
		t.Errorf("the done panel does not show the saved score %s (%s) %s: %s", name, over, edited, text(body))
	}
	// The panel's live region follows the thread to its end.
	m := sseRe.FindStringSubmatch(body)
	if m == nil || !strings.HasPrefix(m[1], "/threads/"+job.ThreadID+"/events?last_event_id=") {
		t.Fatalf("the done panel does not stream the thread: %s", body)
	}
	waitStatusEvent(t, c, strings.ReplaceAll(m[1], "&amp;", "&"), "succeeded")
	k.waitJob("ev_demo-bluewater", runner.Succeeded)
	st, _ := app.Bid(k.App).EvaluationState(context.Background(), app.DemoTenant, "ev_demo-bluewater")
	r := st.Output.ReportPayload
	if r == nil || r.Decision != "edit_scores" || r.ReviewerID != "u_admin" {
		t.Fatalf("report: %+v", r)
	}
	model, _ := strconv.ParseFloat(scores[over], 64)
	for _, cs := range r.Criteria {
		if cs.CriterionID == over && (cs.Score != want || !cs.Edited || cs.ModelScore == nil || *cs.ModelScore != model) {
			t.Fatalf("edited criterion %s: %+v (the model scored %v)", over, cs, model)
		}
	}
	// The report shows the edited score beside the model's, whose confidence and explanation
	// the row keeps.
	_, th := c.get("/threads/" + job.ThreadID)
	th = html.UnescapeString(th)
	if want := edited + " / "; !strings.Contains(text(th), "edited model: "+page.Score(model)+" / ") ||
		!strings.Contains(text(th), "The model's explanation of its score:") || !strings.Contains(text(th), want) {
		t.Errorf("the report's edited row does not show the model's score %s: %s", page.Score(model), text(th))
	}
}

// A workflow without its own review view is reviewed on its interrupt
// payload, with a JSON resume value.
// TestReviewRejectSaysScoresNotSaved: a rejection records no scores, so scores the reviewer
// changed before rejecting are named in the done panel as not saved, instead of vanishing.
func TestReviewRejectSaysScoresNotSaved(t *testing.T) {
	t.Parallel()
	k, job := reviewKit(t)
	c := k.login("reviewer@demo.weft")
	token, scores, body := reviewForm(t, c, job.ID)
	if !strings.Contains(body, `<span id="review-head-state">paused at `) {
		t.Fatalf("the review header does not say where the thread paused: %s", text(body))
	}
	// The tender page says why the paused evaluation cannot be started now.
	if _, tender := k.login("pm@demo.weft").get("/projects/demo-dc-network-2026"); !strings.Contains(tender,
		`disabled title="This evaluation waits for a reviewer&#39;s decision: it can be started again once it is answered."`) {
		t.Errorf("the paused evaluation's start button does not say it waits for a reviewer")
	}
	// The reason's numbers read as the summary beside it does: percentages.
	if !regexp.MustCompile(`The scorer(&#39;|')s confidence is [\d.]+%; the rule pack asks for at least [\d.]+%\.`).MatchString(text(body)) {
		t.Errorf("the low-confidence reason does not give its numbers as percentages: %s", text(body))
	}
	vals, err := app.Bid(k.App).EvaluationValues(context.Background(), job.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	criteria := vals.RulePack.Criteria
	form := url.Values{"resume_token": {token}, "decision": {"reject"}, "comment": {"The references do not check out."},
		"_csrf": {c.csrf()}}
	var changed, kept string
	for _, cr := range criteria {
		v, ok := scores[cr.ID]
		if !ok {
			t.Fatalf("the form has no score for %s", cr.ID)
		}
		if changed == "" { // the first criterion's score is changed, the others are left as scored
			changed = cr.Name
			if f, _ := strconv.ParseFloat(v, 64); f == 0 {
				v = "1"
			} else {
				v = "0"
			}
		} else if kept == "" {
			kept = cr.Name
		}
		form.Set("scores."+cr.ID, v)
	}
	req, _ := http.NewRequest(http.MethodPost, c.base+"/reviews/"+job.ID, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("HX-Request", "true")
	res, body := c.do(req)
	txt := text(body)
	if res.StatusCode != http.StatusOK || !strings.Contains(txt, "Decision recorded") {
		t.Fatalf("htmx reject: %d %s", res.StatusCode, txt)
	}
	if !strings.Contains(txt, "Note Scores you changed before rejecting were not saved: "+changed) {
		t.Errorf("the done panel does not say the changed score was not saved: %s", txt)
	}
	if kept != "" && strings.Contains(txt, "were not saved: "+changed+", "+kept) {
		t.Errorf("a score left as scored is named as changed: %s", txt)
	}
	if !strings.Contains(body, `<span id="review-head-state" hx-swap-oob="true">answered: Rejected by `) {
		t.Errorf("the done panel does not update the header: %s", body)
	}
	k.waitJob("ev_demo-bluewater", runner.Succeeded)
	st, _ := app.Bid(k.App).EvaluationState(context.Background(), app.DemoTenant, "ev_demo-bluewater")
	if r := st.Output.ReportPayload; r == nil || r.Decision != "reject" {
		t.Fatalf("report: %+v", r)
	}
	for _, cs := range st.Output.ReportPayload.Criteria {
		if cs.Edited {
			t.Errorf("a rejection saved an edited score: %+v", cs)
		}
	}
	// The run reads as completed (it used to say "succeeded" beside "Rejected"), and the
	// dashboard's tender row counts the rejection.
	if _, th := c.get("/threads/" + job.ThreadID); !strings.Contains(text(th), "human review. completed Job …") {
		t.Errorf("the thread's status does not read as completed: %s", text(th))
	}
	_, dash := k.login("pm@demo.weft").get("/dashboard")
	if !strings.Contains(text(dash), "1 rejected in review") {
		t.Errorf("the dashboard's tender row does not count the rejection: %s", text(dash))
	}
}

// TestReviewEvidenceOpensDocument: a chunk of a review's evidence links to its place in
// its bid document, which the reviewer may open (without the links to the tender the
// reviewer may not open); another tenant gets a 404.
func TestReviewEvidenceOpensDocument(t *testing.T) {
	t.Parallel()
	k, job := reviewKit(t)
	c := k.login("reviewer@demo.weft")
	_, _, body := reviewForm(t, c, job.ID)
	m := regexp.MustCompile(`<a href="(/projects/demo-dc-network-2026/documents/([^"#]+)#chunk-(\d+))" title="Open this chunk in [^"]+">`).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("the evidence does not link its chunks to their documents: %s", text(body))
	}
	res, doc := c.get(m[1])
	if res.StatusCode != http.StatusOK {
		t.Fatalf("the reviewer opens the document %s: %d %s", m[1], res.StatusCode, text(doc))
	}
	if !strings.Contains(doc, `id="chunk-`+m[3]+`"`) || !strings.Contains(text(doc), m[2]+"#"+m[3]) {
		t.Errorf("the document page has no chunk %s#%s: %s", m[2], m[3], text(doc))
	}
	if strings.Contains(doc, `href="/projects/demo-dc-network-2026"`) {
		t.Error("the reviewer's document page links the tender, which a reviewer may not open")
	}
	if res, _ := c.get("/projects/demo-dc-network-2026"); res.StatusCode != http.StatusForbidden {
		t.Errorf("a reviewer opens the tender: %d", res.StatusCode)
	}
	if res, _ := k.login("admin@acme.weft").get(m[1]); res.StatusCode != http.StatusNotFound {
		t.Errorf("another tenant opens the document: %d", res.StatusCode)
	}
}

func TestReviewGenericWorkflow(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	ctx := context.Background()
	j, err := k.App.Runner.Enqueue(ctx, runner.NewJob{TenantID: app.DemoTenant, Workflow: "tour", Subject: "tour <b>demo</b>",
		Input: []byte(`{"question": "<script>alert(1)</script>", "topics": ["alpha", "beta"]}`)})
	if err != nil {
		t.Fatal(err)
	}
	k.work()
	waitStatus := func(want runner.Status) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for time.Now().Before(deadline) {
			if got, err := k.App.Jobs.Job(ctx, app.DemoTenant, j.ID); err == nil && got.Status == want {
				return
			}
			time.Sleep(25 * time.Millisecond)
		}
		t.Fatalf("the tour job never reached %s", want)
	}
	waitStatus(runner.WaitingReview)
	c := k.login("reviewer@demo.weft")
	_, body := c.get("/reviews")
	if !strings.Contains(text(body), "Engine tour") || !strings.Contains(body, "tour &lt;b&gt;demo&lt;/b&gt;") ||
		!strings.Contains(text(body), "Draft ready for approval") {
		t.Fatalf("the inbox does not list the tour's pause, with why it paused: %s", text(body))
	}
	token, _, body := reviewForm(t, c, j.ID)
	for _, want := range []string{"What the workflow asks", "suggested_actions", "Resume value (JSON)", "Approve", "Reject"} {
		if !strings.Contains(body, want) {
			t.Errorf("the generic form does not show %q", want)
		}
	}
	if strings.Contains(body, "<b>demo</b>") {
		t.Fatal("the subject is not escaped")
	}
	form := url.Values{"resume_token": {token}, "decision": {"approve"}, "comment": {"fine"}, "value": {`{"note": "checked`}}
	res, body := c.post("/reviews/"+j.ID, form)
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(text(body), "not valid JSON") || !strings.Contains(body, `{&#34;note&#34;: &#34;checked`) {
		t.Fatalf("bad JSON: %d %s", res.StatusCode, text(body))
	}
	// The message says where the mistake is, as the start form's does.
	form.Set("value", "\n{\"note\": 1,\n  oops}") // counted as typed: the blank first line too
	if res, body = c.post("/reviews/"+j.ID, form); res.StatusCode != http.StatusBadRequest || !strings.Contains(text(body), "at line 3, column 3.") {
		t.Fatalf("bad JSON on line 2: %d %s", res.StatusCode, text(body))
	}
	form.Set("value", `{"comment": "sneaky", "priority": 3}`)
	if res, body = c.post("/reviews/"+j.ID, form); res.StatusCode != http.StatusBadRequest || !strings.Contains(html.UnescapeString(text(body)), `The resume value cannot set "comment"`) {
		t.Fatalf("a resume value setting the comment: %d %s", res.StatusCode, text(body))
	}
	form.Set("value", `["not", "an", "object"]`)
	if res, body = c.post("/reviews/"+j.ID, form); res.StatusCode != http.StatusBadRequest || !strings.Contains(text(body), "must be a JSON object") {
		t.Fatalf("a JSON array: %d %s", res.StatusCode, text(body))
	}
	// Valid JSON that PostgreSQL cannot store is refused in the form, with what was typed kept.
	form.Set("value", `{"note": "a\u0000b"}`)
	if res, body = c.post("/reviews/"+j.ID, form); res.StatusCode != http.StatusBadRequest ||
		!strings.Contains(text(body), `The resume value holds \u0000 (a NUL character), which cannot be stored.`) || !strings.Contains(body, `a\u0000b`) {
		t.Fatalf("a resume value with an escaped NUL: %d %s", res.StatusCode, text(body))
	}
	big := `{"note": "` + strings.Repeat("x", 16<<10) + `"}` // just over 16 KB
	form.Set("value", big)
	if res, body = c.post("/reviews/"+j.ID, form); res.StatusCode != http.StatusBadRequest ||
		!strings.Contains(text(body), fmt.Sprintf("The resume value is too long (%d bytes; at most 16384)", len(big))) {
		t.Fatalf("a 20 KB resume value: %d %s", res.StatusCode, text(body))
	}
	// Comments are limited in characters, as the form's maxlength counts them, not bytes.
	form.Set("value", `{"note": "checked"}`)
	form.Set("comment", strings.Repeat("审", 4001))
	if res, body = c.post("/reviews/"+j.ID, form); res.StatusCode != http.StatusBadRequest || !strings.Contains(text(body), "The comment is too long (4001 characters; at most 4000)") {
		t.Fatalf("a comment of 4001 characters: %d %s", res.StatusCode, text(body))
	}
	// An invisible direction override would make the report show other words than were sent.
	form.Set("comment", "fine\nscore 0\u202e1\u202c")
	if res, body = c.post("/reviews/"+j.ID, form); res.StatusCode != http.StatusBadRequest ||
		!strings.Contains(text(body), "The comment holds the invisible direction control U+202E at line 2, character 8") {
		t.Fatalf("a comment with a direction override: %d %s", res.StatusCode, text(body))
	}
	comment := "a < b & c; " + strings.Repeat("审", 1400) // 4211 bytes, 1411 characters: fine
	form.Set("comment", comment)
	// A rejection needs a comment here too.
	reject := url.Values{"resume_token": {token}, "decision": {"reject"}, "comment": {"  "}}
	if res, body = c.post("/reviews/"+j.ID, reject); res.StatusCode != http.StatusBadRequest || !strings.Contains(text(body), "a rejection needs a comment") {
		t.Fatalf("a rejection without a comment: %d %s", res.StatusCode, text(body))
	}
	// The value's other keys are the workflow's, whatever their JSON: a bid decision's field
	// names ("at", "scores") holding other kinds do not hide the recorded decision.
	form.Set("value", `{"note": "checked", "at": "after lunch", "scores": ["a"]}`)
	res, _ = c.post("/reviews/"+j.ID, form)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve: %d", res.StatusCode)
	}
	if _, body := c.get(res.Header.Get("Location")); !strings.Contains(text(body), "Decision recorded: job") ||
		!strings.Contains(text(body), "Approved by Ravi Rao") {
		t.Errorf("the thread after the decision does not show it recorded, or in its runs")
	}
	waitStatus(runner.Succeeded)
	// The final state shows the comment as typed, not as Go's JSON escapes of < and &.
	_, body = c.get("/threads/" + url.PathEscape(j.ThreadID))
	if !strings.Contains(body, "a &lt; b &amp; c; 审") || strings.Contains(body, `\u003c`) || strings.Contains(body, `\u0026`) {
		t.Fatalf("the final report does not show the comment as typed: %s", text(body))
	}
	// and who decided, and the resume value handed to the paused node.
	if !strings.Contains(body, `&#34;reviewed_by&#34;: &#34;u_reviewer&#34;`) || !strings.Contains(body, `&#34;note&#34;: &#34;checked&#34;`) {
		t.Fatalf("the final report does not name the reviewer or show the resume value: %s", text(body))
	}
	// The thread's runs say who decided what, when, and why.
	runs := body[strings.Index(body, `class="job-decision"`):]
	if !strings.Contains(text(runs), "Approved by Ravi Rao at ") || !strings.Contains(runs, "“a &lt; b &amp; c; 审") {
		t.Fatalf("the runs table does not show the decision: %.400s", text(runs))
	}
}

// waitStatusEvent reads the SSE stream at path until a "status" event
// carries want.
func waitStatusEvent(t *testing.T, c *client, path, want string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	res, err := c.http.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("stream %s: %d", path, res.StatusCode)
	}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	event := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			event = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && event == "status" && strings.Contains(line, want):
			return
		}
	}
	t.Fatalf("the stream ended without a status event carrying %q: %v", want, sc.Err())
}

// The review page of an earlier run shows that run's own decision, and leads to the review
// the thread's new run waits for.
func TestReviewOfAnEarlierRun(t *testing.T) {
	t.Parallel()
	k, first := reviewKit(t)
	c := k.login("reviewer@demo.weft")
	token, _, _ := reviewForm(t, c, first.ID)
	form := url.Values{"resume_token": {token}, "decision": {"reject"}, "comment": {"Prices unclear; warranty too short."}}
	if res, body := c.post("/reviews/"+first.ID, form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("reject: %d %s", res.StatusCode, text(body))
	}
	k.waitJob("ev_demo-bluewater", runner.Succeeded)
	if _, err := app.Bid(k.App).StartEvaluation(context.Background(), app.DemoTenant, "ev_demo-bluewater", "u_pm"); err != nil {
		t.Fatal(err)
	}
	second := k.waitJob("ev_demo-bluewater", runner.WaitingReview)
	res, body := c.get("/reviews/" + first.ID)
	txt := text(body)
	if res.StatusCode != http.StatusOK || !strings.Contains(txt, "This review belongs to an earlier run") ||
		!strings.Contains(txt, "Decision Rejected") || !strings.Contains(txt, "Prices unclear; warranty too short.") ||
		!strings.Contains(body, `href="/reviews/`+second.ID+`"`) || !strings.Contains(txt, "Open the current review") ||
		!strings.Contains(txt, "Thread status waiting for review") {
		t.Fatalf("the earlier run's review page (the thread's status is its new run's): %d %s", res.StatusCode, txt)
	}
	// The new run's state is its own: no decision, report or token of the earlier run.
	st, err := app.Bid(k.App).EvaluationState(context.Background(), app.DemoTenant, "ev_demo-bluewater")
	if err != nil {
		t.Fatal(err)
	}
	if st.Review.HumanDecision != nil || st.Output.ReportPayload != nil || st.Review.ResumeToken == "" ||
		st.Review.HumanReviewPayload == nil || len(st.Scoring.CriteriaScores) == 0 {
		t.Fatalf("the new run's state: decision %+v report %v token set %v payload %v scores %d", st.Review.HumanDecision,
			st.Output.ReportPayload != nil, st.Review.ResumeToken != "", st.Review.HumanReviewPayload != nil, len(st.Scoring.CriteriaScores))
	}
	c = k.login("pm@demo.weft")
	_, body = c.get("/threads/" + second.ThreadID)
	// The earlier run's decision is listed under that run, and nowhere else: not as the new
	// run's review, report or state.
	runs := body[strings.Index(body, `<h2 id="runs-h">`):]
	runs = runs[:strings.Index(runs, "</section>")]
	if rest := strings.Replace(body, runs, "", 1); strings.Contains(text(rest), "Prices unclear") {
		t.Fatalf("the thread page of the new run shows the earlier run's decision: %s", text(rest))
	}
	if !strings.Contains(text(runs), "completed") || !strings.Contains(text(runs), "Rejected by Ravi Rao") {
		t.Fatalf("the runs table does not list the earlier run with its decision: %s", text(runs))
	}
	// Its status names the new run's job and trace (the live region: a run started while the
	// page is open replaces them).
	status := body[strings.Index(body, `id="thread-status"`):]
	status = status[:strings.Index(status, "</dl>")]
	if second.TraceID == first.TraceID || !strings.Contains(status, ">"+second.TraceID+"<") || !strings.Contains(status, `title="`+second.ID+`"`) {
		t.Fatalf("the thread's status after the new run started (trace %s, job %s): %s", second.TraceID, second.ID, status)
	}
	// The new run's review resumes the new run: its decision, not the input again.
	c = k.login("reviewer@demo.weft")
	token, _, _ = reviewForm(t, c, second.ID)
	form = url.Values{"resume_token": {token}, "decision": {"approve"}, "comment": {"Clear now."}}
	if res, body := c.post("/reviews/"+second.ID, form); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("approve the new run: %d %s", res.StatusCode, text(body))
	}
	if done := k.waitJob("ev_demo-bluewater", runner.Succeeded); done.ID != second.ID {
		t.Fatalf("job %s succeeded, want the new run's %s", done.ID, second.ID)
	}
	st, err = app.Bid(k.App).EvaluationState(context.Background(), app.DemoTenant, "ev_demo-bluewater")
	if err != nil {
		t.Fatal(err)
	}
	if d := st.Review.HumanDecision; d == nil || d.Decision != "approve" || d.Comment != "Clear now." || st.Output.ReportPayload == nil {
		t.Fatalf("after approving the new run: decision %+v, report %v", d, st.Output.ReportPayload != nil)
	}
}

// The inbox filters by workflow: its tabs count each workflow's waiting threads (from the
// maintained counters), a tab lists only its workflow's pauses and keeps its filter when the
// list refreshes, and an unknown workflow is a 400 with the message.
func TestReviewInboxByWorkflow(t *testing.T) {
	t.Parallel()
	k, _ := reviewKit(t) // Bluewater's evaluation and the demo's contract review wait for review
	const question = "Which checkpoints does a retried node keep?"
	j, err := k.App.StartRun(context.Background(), app.DemoTenant, "tour", []byte(`{"question": "`+question+`"}`), "u_pm")
	if err != nil {
		t.Fatal(err)
	}
	k.waitJobID(j.ID, runner.WaitingReview)
	contracts, _, err := k.App.Jobs.ListJobs(context.Background(), postgres.JobFilter{TenantID: app.DemoTenant, Workflow: "contract_review"}, postgres.Cursor{}, 1)
	if err != nil || len(contracts) != 1 {
		t.Fatalf("the demo's contract review: %v (%v)", contracts, err)
	}
	k.waitJobID(contracts[0].ID, runner.WaitingReview)
	sessions, _, err := k.App.Jobs.ListJobs(context.Background(), postgres.JobFilter{TenantID: app.DemoTenant, Workflow: "page_generation"}, postgres.Cursor{}, 1)
	if err != nil || len(sessions) != 1 {
		t.Fatalf("the demo's page-generation session: %v (%v)", sessions, err)
	}
	k.waitJobID(sessions[0].ID, runner.WaitingReview)
	c := k.login("reviewer@demo.weft")

	_, body := c.get("/reviews")
	tabs := body[strings.Index(body, `aria-label="Workflow"`):]
	tabs = text(tabs[:strings.Index(tabs, "</nav>")])
	for _, want := range []string{"All 4", "Bid evaluation 1", "Contract review 1", "Engine tour 1", "Page generation 1"} {
		if !strings.Contains(tabs, want) {
			t.Fatalf("the inbox's tabs %q lack %q", tabs, want)
		}
	}
	if txt := text(body); !strings.Contains(txt, "Bluewater Systems") || !strings.Contains(txt, question) {
		t.Fatalf("the unfiltered inbox does not list both pauses: %s", txt)
	}

	res, body := c.get("/reviews?workflow=tour")
	if txt := text(body); res.StatusCode != http.StatusOK || !strings.Contains(txt, question) || strings.Contains(txt, "Bluewater Systems") ||
		!strings.Contains(txt, "1 pause waits for a decision.") {
		t.Fatalf("the tour tab: %d %s", res.StatusCode, txt)
	}
	if !strings.Contains(body, `hx-get="/reviews?workflow=tour" hx-trigger="every 10s"`) {
		t.Fatal("the tour tab's refresh drops its filter")
	}
	if _, body := c.get("/reviews?workflow=bid_evaluation"); !strings.Contains(text(body), "Bluewater Systems") || strings.Contains(text(body), question) {
		t.Fatalf("the bid evaluation tab: %s", text(body))
	}

	res, body = c.get("/reviews?workflow=payroll")
	if res.StatusCode != http.StatusBadRequest || !strings.Contains(text(body), "There is no workflow named payroll: choose a tab") {
		t.Fatalf("an unknown workflow: %d %s", res.StatusCode, text(body))
	}
}

// A pause nobody answers in time does not hold its thread for good: no new review link is
// issued for it, the runner dead-letters it (WF_REVIEW_EXPIRED), it leaves the inbox, and an
// admin's retry asks for the review again, with a new deadline, which can then be answered.
func TestUnansweredReviewExpires(t *testing.T) {
	t.Parallel()
	k, job := reviewKit(t)
	ctx := context.Background()
	reviewer := k.login("reviewer@demo.weft")
	oldToken, _, _ := reviewForm(t, reviewer, job.ID)
	// A day and more goes by.
	if _, err := k.App.DB.Pool().Exec(ctx, `UPDATE jobs SET paused_at = paused_at - interval '25 hours' WHERE id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := k.App.DB.Pool().Exec(ctx, `UPDATE resume_tokens SET expires_at = expires_at - interval '25 hours' WHERE job_id = $1`, job.ID); err != nil {
		t.Fatal(err)
	}
	api := k.api(app.DemoTenant, "reviewer")
	if code, body := api.call("POST", "/api/v1/threads/"+url.PathEscape(job.ThreadID)+"/resume-token", ``); code != http.StatusConflict ||
		errCode(body) != "WF_REVIEW_EXPIRED" || !strings.Contains(errMessage(body), "the time to answer this pause ran out") {
		t.Fatalf("a review link for an expired pause: %d %v, want 409 saying the time ran out", code, body)
	}
	_, body := reviewer.get("/reviews/" + job.ID)
	if tokenRe.MatchString(body) || !strings.Contains(text(body), "The time to answer this pause ran out") ||
		!strings.Contains(text(body), "an admin can retry it to ask for the review again") {
		t.Fatalf("the form of an expired pause:\n%s", text(body))
	}

	// The runner's sweep dead-letters the job: this call, or its rescue loop's own run of it,
	// which may come first (then this one finds nothing left to do).
	if n := k.App.Runner.ExpirePauses(ctx); n > 1 {
		t.Fatalf("the sweep dead-lettered %d jobs, want the one", n)
	}
	failed := k.waitJobID(job.ID, runner.Failed)
	if e := failed.Errors[len(failed.Errors)-1]; e.Code != "WF_REVIEW_EXPIRED" || e.Class != "business" || !strings.Contains(e.Message, "within 24 hours") {
		t.Fatalf("the expired pause's error: %+v", e)
	}
	entry := harborDLQ(t, k, failed) // the entry of this job at its retry count
	if entry.Code != "WF_REVIEW_EXPIRED" {
		t.Fatalf("the DLQ entry: %+v", entry)
	}
	if _, body := reviewer.get("/reviews"); strings.Contains(body, job.ID) {
		t.Fatal("the expired pause is still in the review inbox")
	}
	_, body = k.login("pm@demo.weft").get("/threads/" + url.PathEscape(job.ThreadID))
	if strings.Contains(text(body), "Review waiting") || !strings.Contains(text(body), "WF_REVIEW_EXPIRED at human_review_interrupt") ||
		!strings.Contains(text(body), "in the dead letters") {
		t.Fatalf("the thread page of the expired pause:\n%s", text(body))
	}
	if got := nodeState(t, body, "human_review_interrupt"); got != "failed" {
		t.Errorf("the expired pause's node is drawn %s, want failed", got)
	}
	if res, _ := reviewer.post("/reviews/"+job.ID, url.Values{"resume_token": {oldToken}, "decision": {"approve"}}); res.StatusCode < 400 {
		t.Fatalf("answering the expired pause with its old link: %d", res.StatusCode)
	}
	if n := k.App.Runner.ExpirePauses(ctx); n != 0 {
		t.Fatalf("a second sweep dead-lettered %d jobs", n)
	}
	// Asked again, the API and the open form's watch still say why.
	if code, body := api.call("POST", "/api/v1/threads/"+url.PathEscape(job.ThreadID)+"/resume-token", ``); code != http.StatusConflict ||
		errCode(body) != "WF_REVIEW_EXPIRED" || !strings.Contains(errMessage(body), "went to the dead letters") {
		t.Fatalf("a review link once the pause is dead-lettered: %d %v", code, body)
	}
	if _, body := reviewer.get("/reviews/" + job.ID + "/status"); !strings.Contains(text(body), "The time to answer this pause ran out: the job went to the dead letters") {
		t.Fatalf("the form's watch once the pause is dead-lettered: %s", text(body))
	}

	// The admin retries it: the review is asked for again, and answered. Nothing warns that
	// the retry fails the same way (it is a business error, but a retry is the remedy).
	admin := k.login("admin@demo.weft")
	_, body = admin.get("/threads/" + url.PathEscape(job.ThreadID))
	if runs := runsRegion(t, body); !strings.Contains(runs, "Retry…") || strings.Contains(text(runs), "the same input fails the same way") {
		t.Fatalf("the admin's runs table of the expired pause:\n%s", text(runs))
	}
	if _, body := admin.get("/dlq"); strings.Contains(text(adminRow(t, body, "dlq-"+entry.ID)), "the same input fails the same way") {
		t.Fatal("the DLQ page warns that retrying an expired review fails again")
	}
	if res, _ := admin.post("/dlq/"+entry.ID+"/retry", nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("retry: %d", res.StatusCode)
	}
	again := k.waitJobID(job.ID, runner.WaitingReview)
	if len(again.Interrupts) == 0 {
		t.Fatal("the retried job pauses without an interrupt")
	}
	pausedAt, err := k.App.Jobs.PausedAt(ctx, app.DemoTenant, job.ID)
	if err != nil || time.Since(pausedAt) > time.Hour {
		t.Fatalf("the new pause's time: %v %v", pausedAt, err)
	}
	token, _, _ := reviewForm(t, reviewer, job.ID)
	comment := "late but fine. " + strings.Repeat("Checked every criterion again. ", 100) + "END"
	res, _ := reviewer.post("/reviews/"+job.ID, url.Values{"resume_token": {token}, "decision": {"approve"}, "comment": {comment}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("answering the review asked again: %d", res.StatusCode)
	}
	k.waitJobID(job.ID, runner.Succeeded)
	// The runs table shows the start of a long comment (the whole of it in the cell's title).
	_, body = reviewer.get("/threads/" + url.PathEscape(job.ThreadID))
	runs := runsRegion(t, body)
	if !strings.Contains(text(runs), "late but fine. Checked every criterion again.") || strings.Contains(text(runs), "again. END”") ||
		!strings.Contains(runs, `title="`+comment+`"`) {
		t.Fatalf("the runs table's long comment:\n%s", runs)
	}
}
