package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"weft/internal/auth"
	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/runner"
	"weft/internal/workflow"
	"weft/web/page"
)

// The review inbox and form (reviewer, admin): every pause of the tenant's
// threads, across workflows; a bid evaluation is reviewed on its evidence
// with editable scores, any other workflow on its interrupt payload with a
// JSON resume value. The form carries a resume token issued when it is
// rendered; the reviewer's identity comes from the session, never the form.
func (s *Server) routesReviews(g *echo.Group) {
	reviewers := requireRole(auth.Reviewer, auth.Admin)
	g.GET("/reviews", s.reviewInbox, reviewers)
	g.GET("/reviews/:job_id", s.reviewForm, reviewers)
	g.POST("/reviews/:job_id", s.reviewSubmit, reviewers)
	g.GET("/reviews/:job_id/status", s.reviewStatus, reviewers)
}

// reviewStatus is what an open review form polls (every 10 s): 204 while its pause still
// waits, else the notice that it was answered (by whom, when known) or moved on, so a
// reviewer does not type a decision that can no longer be sent.
func (s *Server) reviewStatus(c echo.Context) error {
	ctx := c.Request().Context()
	tenant := currentUser(c).TenantID
	j, err := s.app.Jobs.Job(ctx, tenant, c.Param("job_id"))
	if err != nil {
		return err
	}
	interrupt := c.QueryParam("interrupt")
	if _, ok := pickInterrupt(j, interrupt); ok && j.Status == runner.WaitingReview {
		pausedAt, err := s.app.Jobs.PausedAt(ctx, tenant, j.ID)
		if err != nil {
			return err
		}
		switch {
		case pausedAt.IsZero(): // answered or expired since the job was read: as below
		case time.Now().Before(pausedAt.Add(s.app.Runner.TokenTTL())):
			return c.NoContent(http.StatusNoContent)
		default:
			return render(c, http.StatusOK, page.ReviewWatchClosed("The time to answer this pause ran out at "+
				page.When(pausedAt.Add(s.app.Runner.TokenTTL()))+": this form can no longer be sent.", "the time to answer ran out"))
		}
	}
	msg := "This pause was answered or the run moved on (the job is " + page.ThreadStatusWords(string(j.Status)) + "): this form can no longer be sent."
	state := "answered or moved on elsewhere"
	if reviewExpired(j) {
		msg = "The time to answer this pause ran out: the job went to the dead letters, where an admin can retry it to ask for the review again. This form can no longer be sent."
		state = "the time to answer ran out"
	}
	if d, ok, err := s.pauseDecision(ctx, tenant, j.ID, interrupt); err != nil {
		return err
	} else if ok {
		msg = fmt.Sprintf("%s decided at %s (%s): this form can no longer be sent.", d.reviewer, page.When(d.at),
			page.ReviewDecisionLabel(d.decision))
		state = page.ReviewAnswered(d.decision, d.reviewer)
	}
	return render(c, http.StatusOK, page.ReviewWatchClosed(msg+" What you typed stays in this tab; open the thread to see where it stands.", state))
}

// pauseDecision is the decision recorded for one pause (interrupt) of a job, its newest
// when interrupt is "" (the job's last decision); ok is false when there is none.
func (s *Server) pauseDecision(ctx context.Context, tenant, jobID, interrupt string) (d struct {
	decision, comment, reviewer, actor string
	at                                 time.Time
}, ok bool, err error) {
	decisions, err := s.app.Jobs.ReviewDecisions(ctx, tenant, jobID)
	if err != nil {
		return d, false, err
	}
	for k := len(decisions) - 1; k >= 0; k-- {
		r := decisions[k]
		if interrupt != "" && r.InterruptID != interrupt {
			continue
		}
		v, ok := decisionOf(r)
		if !ok {
			return d, false, nil
		}
		d.decision, d.comment, d.actor, d.at = v.Decision, v.Comment, r.Actor, r.At
		d.reviewer = s.reviewerName(ctx, tenant, r.Actor)
		return d, true, nil
	}
	return d, false, nil
}

// reviewInboxLimit bounds the inbox (the oldest pauses are listed).
const reviewInboxLimit = 200

// reviewCommentMax bounds a reviewer's comment.
const reviewCommentMax = 4000

func (s *Server) reviewInbox(c echo.Context) error {
	ctx := c.Request().Context()
	u := currentUser(c)
	workflow := c.QueryParam("workflow")
	if _, ok := s.app.Registry.Get(workflow); workflow != "" && !ok {
		return badRequest(fmt.Sprintf("There is no workflow named %s: choose a tab of the inbox.", workflow))
	}
	pending, err := s.app.Jobs.PendingReviews(ctx, u.TenantID, workflow, reviewInboxLimit+1)
	if err != nil {
		return err
	}
	counts, err := s.app.Jobs.CountJobs(ctx, u.TenantID)
	if err != nil {
		return err
	}
	vm := page.ReviewInboxVM{Items: []page.ReviewItem{}, Workflow: workflow, Tabs: s.reviewTabs(workflow, counts)}
	if workflow != "" {
		vm.WorkflowTitle = s.workflowTitle(workflow)
	}
	if len(pending) > reviewInboxLimit {
		pending, vm.Truncated = pending[:reviewInboxLimit], true
	}
	now := time.Now()
	runs := make([]runRef, len(pending))
	for i, p := range pending {
		runs[i] = runRef{p.Job.Workflow, p.Job.Subject}
	}
	subjects, err := s.describe(ctx, u.TenantID, runs)
	if err != nil {
		return err
	}
	for _, p := range pending {
		subject, detail := reviewSubject(p.Job, subjects[runRef{p.Job.Workflow, p.Job.Subject}])
		ints := p.Job.Interrupts
		if len(ints) == 0 {
			ints = []graph.PendingInterrupt{{}}
		}
		for _, in := range ints {
			href := "/reviews/" + p.Job.ID
			if len(p.Job.Interrupts) > 1 {
				href += "?interrupt=" + url.QueryEscape(in.ID)
			}
			vm.Items = append(vm.Items, page.ReviewItem{
				Href: href, Workflow: s.workflowTitle(p.Job.Workflow), Subject: subject, SubjectDetail: detail,
				Node: in.Node, Reasons: payloadReasons(s.definition(p.Job.Workflow), in.Value), Age: page.Ago(p.PausedAt, now), PausedAt: page.When(p.PausedAt),
				Overdue: !p.PausedAt.IsZero() && now.After(p.PausedAt.Add(s.app.Runner.TokenTTL())),
			})
		}
	}
	if adminPartial(c) { // a history restore of a tab's address wants the whole page
		return render(c, http.StatusOK, page.ReviewInbox(vm))
	}
	m := s.meta(c, "Review inbox")
	m.Active = "reviews"
	return render(c, http.StatusOK, page.ReviewInboxPage(m, vm))
}

// reviewTabs are the inbox's workflow filters, with the number of threads each has waiting
// (from the maintained counters): none while at most one workflow has any and no filter is
// chosen, as there is nothing to choose between.
func (s *Server) reviewTabs(chosen string, counts []postgres.JobCount) []page.ReviewTab {
	waiting := map[string]int64{}
	var total int64
	for _, n := range counts {
		if n.Status == runner.WaitingReview {
			waiting[n.Workflow] += n.N
			total += n.N
		}
	}
	tabs := []page.ReviewTab{{Label: "All", N: total, Active: chosen == ""}}
	for _, e := range s.app.Registry.All() {
		if waiting[e.Name] > 0 || e.Name == chosen {
			tabs = append(tabs, page.ReviewTab{Workflow: e.Name, Label: s.workflowTitle(e.Name), N: waiting[e.Name], Active: e.Name == chosen})
		}
	}
	if chosen == "" && len(tabs) <= 2 {
		return nil
	}
	return tabs
}

// reviewSubject names what a paused job is about: as its workflow describes its subject (a
// bid evaluation by its supplier, with the evaluation and its tender), else by the job's
// subject or thread.
func reviewSubject(j runner.Job, d workflow.Subject) (subject, detail string) {
	switch {
	case d.Title != "":
		detail = j.Subject
		if d.Detail != "" {
			detail += " · " + d.Detail
		}
		return d.Title, detail
	case j.Subject != "":
		return j.Subject, "thread " + j.ThreadID
	}
	return "thread " + j.ThreadID, ""
}

// definition is a workflow's definition (the zero one for a name no longer registered).
func (s *Server) definition(name string) workflow.Definition {
	d, _ := s.app.Registry.Get(name)
	return d
}

func (s *Server) workflowTitle(name string) string {
	if e, ok := s.app.Registry.Get(name); ok && e.Title != "" {
		return e.Title
	}
	return name
}

// reviewJob loads the tenant's job (404 for another tenant's or an unknown id).
func (s *Server) reviewJob(c echo.Context) (runner.Job, error) {
	return s.app.Jobs.Job(c.Request().Context(), currentUser(c).TenantID, c.Param("job_id"))
}

func (s *Server) reviewForm(c echo.Context) error {
	j, err := s.reviewJob(c)
	if err != nil {
		return err
	}
	if j.Status != runner.WaitingReview {
		return s.renderReviewClosed(c, http.StatusOK, j, false)
	}
	vm, err := s.reviewFormVM(c, j, c.QueryParam("interrupt"), "", page.ReviewInput{}, nil)
	if err != nil {
		if isResumeInvalid(err) {
			return s.renderReviewClosed(c, http.StatusOK, j, false)
		}
		return err
	}
	return s.renderReviewForm(c, http.StatusOK, vm)
}

func (s *Server) renderReviewForm(c echo.Context, status int, vm page.ReviewFormVM) error {
	if isHTMX(c) {
		return render(c, htmxStatus(status), page.ReviewForm(vm))
	}
	m := s.meta(c, "Review · "+vm.Subject)
	m.Active = "reviews"
	return render(c, status, page.ReviewPage(m, vm))
}

// htmxStatus: htmx 2 swaps only 2xx responses under the page's htmx-config,
// so a partial that must be seen (the form again with its message) goes out
// as 200; the plain form post gets the real 4xx.
func htmxStatus(status int) int {
	if status >= 400 && status < 500 {
		return http.StatusOK
	}
	return status
}

func pickInterrupt(j runner.Job, id string) (graph.PendingInterrupt, bool) {
	if len(j.Interrupts) == 0 {
		return graph.PendingInterrupt{}, false
	}
	if id == "" {
		return j.Interrupts[0], true
	}
	for _, it := range j.Interrupts {
		if it.ID == id {
			return it, true
		}
	}
	return graph.PendingInterrupt{}, false
}

// reviewDraftKey begins the key under which the browser keeps a review form's unsent answer
// (static/js/drafts.js): the job's, then its interrupt and the reviewer, so an answer is put
// back only into the same pause for the same person. The done and closed panels forget every
// draft of the job by this prefix.
func reviewDraftKey(jobID string) string { return "/reviews/" + jobID + "|" }

// hiddenSecret replaces a secret's value on the console's pages.
const hiddenSecret = "(hidden)"

// displayJSON indents JSON for reading on a page, with the value of every
// "resume_token" key, at any depth, replaced by hiddenSecret: the console
// never shows a token (the review form carries its own, for reviewers only;
// programs read theirs from the API's state). Anything that is not JSON is
// returned as it is.
func displayJSON(raw []byte) string { return encodeForDisplay(raw, "  ") }

// displayJSONLine is displayJSON on one line (for a value in a table cell).
func displayJSONLine(raw []byte) string { return encodeForDisplay(raw, "") }

// encodeForDisplay re-encodes raw for a page, indented by indent ("" for one line), without
// Go's \u003c escapes of <, > and & (templ escapes what it shows) and with secrets hidden.
func encodeForDisplay(raw []byte, indent string) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers keep their digits
	var v any
	if err := dec.Decode(&v); err != nil {
		return string(raw)
	}
	hideSecrets(v)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return string(raw)
	}
	return strings.TrimSpace(buf.String())
}

// isResumeToken reports whether v is a resume token's secret, under whatever key (k): a
// channel version under a resume_token key is not one.
func isResumeToken(_ string, v any) bool {
	s, ok := v.(string)
	return ok && runner.IsToken(s)
}

func hideSecrets(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if isResumeToken(k, e) {
				x[k] = hiddenSecret
				continue
			}
			hideSecrets(e)
		}
	case []any:
		for _, e := range x {
			hideSecrets(e)
		}
	}
}

// reviewerName is a reviewer's name when they are a user of the tenant, else their id; a
// decision sent through an API token ("u_admin via token:ci") reads "Ada Admin via API
// token ci".
func (s *Server) reviewerName(ctx context.Context, tenant, id string) string {
	return actorName(s.userNames(ctx, tenant)(), id)
}

// reviewExpired: the job failed because nobody answered its pause in time (and is not yet
// retried).
func reviewExpired(j runner.Job) bool {
	switch j.Status {
	case runner.Failed, runner.DLQPending, runner.DLQRecorded:
		return len(j.Errors) > 0 && j.Errors[len(j.Errors)-1].Code == fault.CodeReviewExpired
	}
	return false
}

func isResumeInvalid(err error) bool {
	var fe *fault.Error
	return errors.As(err, &fe) && fe.Code == fault.CodeInterruptResumeInvalid
}

// renderReviewClosed explains that a review cannot be answered here: done
// already (opening the form), or the link was used or expired (submitting).
func (s *Server) renderReviewClosed(c echo.Context, status int, j runner.Job, submitted bool) error {
	ctx := c.Request().Context()
	vm := page.ReviewClosedVM{Status: string(j.Status), Subject: j.Subject, ThreadHref: page.ThreadPath(j.ThreadID), DraftKey: reviewDraftKey(j.ID)}
	if submitted {
		vm.Title = "This review link was already used or has expired"
		vm.Message = "A decision was already recorded with this form (perhaps in another tab), or the time to answer ran out. Nothing was changed by this submission. Reload the review form to see where the thread stands."
		vm.FormHref = "/reviews/" + j.ID
		vm.Unsent = strings.TrimSpace(c.FormValue("comment"))
	}
	tenant := currentUser(c).TenantID
	// This job's own decision (the thread's state holds the latest run's, which may be another
	// job's), for the pause the form answered when it was sent.
	interrupt := ""
	if submitted {
		interrupt = c.FormValue("interrupt")
	}
	d, ok, err := s.pauseDecision(ctx, tenant, j.ID, interrupt)
	if err != nil {
		return err
	}
	if ok {
		vm.Decision, vm.Comment, vm.Reviewer = d.decision, d.comment, d.reviewer
		if who, _, _ := strings.Cut(d.actor, " via "); submitted && interrupt != "" && who != currentUser(c).ID {
			vm.Title = "Another reviewer decided first"
			vm.Message = vm.Reviewer + " recorded a decision on this pause before yours arrived. Nothing was changed by your submission."
			vm.FormHref = ""
		}
	}
	vm.KeepDraft = submitted // a refused submission keeps what was typed in the tab
	// The thread's status is its latest run's; a newer run may be waiting for its own review.
	var newer string
	if latest, err := s.app.Jobs.LatestForThread(ctx, tenant, j.ThreadID); err == nil {
		vm.Status = string(latest.Status)
		if latest.ID != j.ID && latest.Status == runner.WaitingReview {
			newer = "/reviews/" + latest.ID
		}
	}
	if submitted && !ok && newer == "" && vm.Status == string(runner.WaitingReview) {
		// Still waiting and nobody answered: a link issued for another job or pause (another
		// review's form, or one edited by hand) is told apart from this pause's own used or
		// expired one.
		jobID, interruptID, found, err := s.app.Jobs.TokenJob(ctx, tenant, strings.TrimSpace(c.FormValue("resume_token")))
		if err != nil {
			return err
		}
		if !found || jobID != j.ID || (interrupt != "" && interruptID != interrupt) {
			vm.Title = "The link in this form was not issued for this review"
			vm.Message = "The form did not carry a link issued for this pause (it may come from another review's form). Nothing was changed. Reload the review form to answer this review."
		}
	}
	if !submitted {
		switch {
		case newer != "":
			vm.Title = "This review belongs to an earlier run"
			vm.Message = "The thread was started again since, and its new run waits for a review of its own."
			vm.FormHref, vm.FormLabel = newer, "Open the current review"
		case j.Status == runner.WaitingReview:
			vm.Title = "This review cannot be answered any more"
			vm.Message = "The time to answer this pause ran out."
		case vm.Decision != "":
			vm.Title = "This review is already done"
			vm.Message = "This thread no longer waits for a decision. Open the thread to follow it."
		default:
			vm.Title = "No review is waiting here"
			vm.Message = "This thread is not waiting for a decision (its job is " + page.ThreadStatusWords(string(j.Status)) + "). Open the thread to follow it."
		}
	}
	if isHTMX(c) {
		return render(c, htmxStatus(status), page.ReviewClosed(vm))
	}
	m := s.meta(c, vm.Title)
	m.Active = "reviews"
	return render(c, status, page.ReviewClosedPage(m, vm))
}
