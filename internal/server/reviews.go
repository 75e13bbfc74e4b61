package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"weft/internal/auth"
	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/runner"
	"weft/internal/usertext"
	"weft/internal/workflow"
	"weft/internal/workflow/bideval"
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

// decisionOf reads a recorded decision's decision and comment, every workflow's keys (seed
// 000 §7.2); ok is false for one without a decision. The value's other keys are left alone:
// a workflow's own resume value may use any other key with any JSON (a generic review's
// "at" need not be a time, nor its "scores" a bid's).
func decisionOf(r postgres.ReviewDecision) (v bideval.Decision, ok bool) {
	var kc struct{ Decision, Comment string }
	if json.Unmarshal(r.Decision, &kc) != nil || kc.Decision == "" {
		return v, false
	}
	return bideval.Decision{Decision: kc.Decision, Comment: kc.Comment}, true
}

// reviewInboxLimit bounds the inbox (the oldest pauses are listed).
const reviewInboxLimit = 200

// reviewCommentMax bounds a reviewer's comment.
const reviewCommentMax = 4000

// reviewValueMax bounds a generic review's JSON resume value, in bytes: it is stored in the
// thread and copied into the audit log.
const reviewValueMax = 16 << 10

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
				Node: in.Node, Reasons: payloadReasons(in.Value), Age: page.Ago(p.PausedAt, now), PausedAt: page.When(p.PausedAt),
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

func (s *Server) workflowTitle(name string) string {
	if e, ok := s.app.Registry.Get(name); ok && e.Title != "" {
		return e.Title
	}
	return name
}

// payloadReasons reads "reasons" from an interrupt payload, when it has them.
func payloadReasons(payload json.RawMessage) []page.ReviewReason {
	var p struct {
		Reasons []string `json:"reasons"`
	}
	if len(payload) == 0 || json.Unmarshal(payload, &p) != nil {
		return nil
	}
	out := make([]page.ReviewReason, 0, len(p.Reasons))
	for _, r := range p.Reasons {
		out = append(out, page.ReviewReason{Key: r, Label: page.ReviewReasonLabel(r)})
	}
	return out
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

// reviewFormVM builds the form of the job's pause (interruptID, or its first
// one). It issues a resume token unless token is given (a re-render after a
// refused submission keeps the token, which was not consumed). fieldErrs
// marks score inputs the reviewer got wrong.
func (s *Server) reviewFormVM(c echo.Context, j runner.Job, interruptID, token string, in page.ReviewInput, fieldErrs map[string]bool) (page.ReviewFormVM, error) {
	ctx := c.Request().Context()
	u := currentUser(c)
	it, ok := pickInterrupt(j, interruptID)
	if !ok {
		return page.ReviewFormVM{}, notFound()
	}
	pausedAt, err := s.app.Jobs.PausedAt(ctx, u.TenantID, j.ID)
	if err != nil {
		return page.ReviewFormVM{}, err
	}
	if pausedAt.IsZero() { // answered (or expired) since the job was read
		return page.ReviewFormVM{}, &httpError{status: http.StatusConflict, code: fault.CodeInterruptResumeInvalid,
			msg: "The thread no longer waits for this review: it was answered or the run moved on. Reload the page to see where it stands."}
	}
	answerBy := pausedAt.Add(s.app.Runner.TokenTTL())
	if token == "" && time.Now().Before(answerBy) { // no token is issued once the time ran out
		tok, err := s.app.Runner.IssueToken(ctx, j, it.ID, pausedAt)
		if err != nil {
			return page.ReviewFormVM{}, err
		}
		token, answerBy = tok.Secret, tok.ExpiresAt
	}
	now := time.Now()
	vm := page.ReviewFormVM{
		Action: "/reviews/" + j.ID, StatusURL: "/reviews/" + j.ID + "/status", ThreadHref: page.ThreadPath(j.ThreadID),
		Workflow: s.workflowTitle(j.Workflow), Subject: j.Subject, Node: it.Node, InterruptID: it.ID,
		Age: page.Ago(pausedAt, now), PausedTime: pausedAt, PausedAt: page.When(pausedAt), AnswerBy: page.When(answerBy), Expired: now.After(answerBy),
		Token: token, CSRF: csrfToken(c), Input: in, DraftKey: reviewDraftKey(j.ID) + it.ID + "|" + u.ID,
	}
	if vm.Subject == "" {
		vm.Subject = "thread " + j.ThreadID
	}
	if j.Workflow != bideval.Name {
		vm.Generic = &page.GenericReviewVM{Reasons: payloadReasons(it.Value), Payload: displayPayload(it.Value)}
		return vm, nil
	}
	bid, err := s.bidReviewVM(ctx, u.TenantID, j, it, in, fieldErrs)
	if err != nil {
		return page.ReviewFormVM{}, err
	}
	vm.Bid = bid
	vm.Subject = bid.Supplier
	vm.SubjectDetail = "evaluation " + bid.EvaluationID
	if bid.Project != "" {
		vm.SubjectDetail += " · " + bid.Project
	}
	return vm, nil
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

// displayPayload indents an interrupt payload for reading, hiding any resume
// token it carries (a secret).
func displayPayload(p json.RawMessage) string {
	if len(p) == 0 {
		return "null"
	}
	return displayJSON(p)
}

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

// bidState is the evaluation thread's state, for its rule pack (the one the
// review node validates decisions against).
func (s *Server) bidState(ctx context.Context, threadID string) (bideval.State, error) {
	e, ok := s.app.Registry.Get(bideval.Name)
	if !ok {
		return bideval.State{}, fmt.Errorf("workflow %s is not registered", bideval.Name)
	}
	g, ok := e.Graph.(*graph.Graph[bideval.State])
	if !ok {
		return bideval.State{}, fmt.Errorf("workflow %s has an unexpected graph type", bideval.Name)
	}
	snap, err := g.GetState(ctx, graph.Config{ThreadID: threadID})
	if err != nil {
		return bideval.State{}, fmt.Errorf("load thread %s: %w", threadID, err)
	}
	return snap.Values, nil
}

func (s *Server) bidReviewVM(ctx context.Context, tenant string, j runner.Job, it graph.PendingInterrupt, in page.ReviewInput, fieldErrs map[string]bool) (*page.BidReviewVM, error) {
	st, err := s.app.EvaluationState(ctx, tenant, j.Subject)
	if err != nil {
		return nil, err
	}
	raw, err := s.bidState(ctx, j.ThreadID)
	if err != nil {
		return nil, err
	}
	sc := st.Scoring
	b := &page.BidReviewVM{
		EvaluationID: st.Identity.EvaluationID, Supplier: raw.Supplier.Name, Project: raw.Project.Name,
		TotalScore: page.Score(sc.TotalScore), Confidence: percent(sc.Confidence),
		Coverage: percent(sc.CitationCoverage), ScoredBy: sc.ScoredBy, Offline: sc.ScoredOffline,
	}
	if b.Supplier == "" {
		b.Supplier = st.Identity.SupplierID
	}
	reasons := st.Review.Reasons
	if len(reasons) == 0 {
		for _, r := range payloadReasons(it.Value) {
			reasons = append(reasons, r.Key)
		}
	}
	b.Reasons = bidReasons(reasons, raw)

	chunks := make(map[string]bideval.RetrievedChunk, len(st.Retrieval.RetrievedChunks))
	for _, ch := range st.Retrieval.RetrievedChunks {
		chunks[ch.ChunkID] = ch
	}
	for _, cs := range sc.CriteriaScores {
		cv := page.CriterionReviewVM{
			ID: cs.CriterionID, Name: cs.Name, Weight: percent(cs.Weight), Score: page.Score(cs.Score), Max: trimFloat(cs.MaxScore),
			Confidence: percent(cs.Confidence), Explanation: cs.Explanation, Claims: claimsCited(cs.CitedClaims, cs.Claims),
			Field: scoreField(cs.CriterionID), Input: page.Score(cs.Score), InputError: fieldErrs[cs.CriterionID],
		}
		if in.Scores != nil {
			if v, ok := in.Scores[cs.CriterionID]; ok {
				cv.Input = v
			}
		}
		cv.Chunks = criterionChunks(cs, st.Retrieval.EvidenceBundle[cs.CriterionID], chunks)
		for i := range cv.Chunks { // each chunk opens in its bid document, at its place
			if ch, ok := chunks[cv.Chunks[i].ID]; ok && raw.ProjectID != "" && ch.DocumentID != "" {
				cv.Chunks[i].Href = page.ChunkHref(raw.ProjectID, ch.DocumentID, ch.ChunkID)
			}
		}
		b.Criteria = append(b.Criteria, cv)
	}
	for _, rr := range sc.RuleResults {
		r := page.RuleReviewVM{Name: rr.Name, Severity: rr.Severity, Passed: rr.Passed, Value: rr.Value, Reason: rr.Reason}
		for _, id := range rr.ChunkIDs {
			r.Chunks = append(r.Chunks, page.RuleChunkVM{ID: id})
		}
		b.Rules = append(b.Rules, r)
	}
	// Evidence from a bid document withdrawn since it was retrieved says so.
	var ids []string
	for _, cv := range b.Criteria {
		for _, ch := range cv.Chunks {
			ids = append(ids, ch.ID)
		}
	}
	for _, r := range b.Rules {
		for _, ch := range r.Chunks {
			ids = append(ids, ch.ID)
		}
	}
	withdrawn, err := s.withdrawnNotes(ctx, tenant, ids)
	if err != nil {
		return nil, err
	}
	for _, cv := range b.Criteria {
		for i := range cv.Chunks {
			cv.Chunks[i].Withdrawn = withdrawn[cv.Chunks[i].ID]
		}
	}
	for _, r := range b.Rules {
		for i := range r.Chunks {
			r.Chunks[i].Withdrawn = withdrawn[r.Chunks[i].ID]
		}
	}
	return b, nil
}

// criterionChunks lists a criterion's evidence: the chunks it cites first (the score rests on
// them, as the report lists them), then those its explanation names without citing ("…
// [doc#2]", where the bid falls short of a rubric number), then the rest retrieved for it,
// in retrieval order.
func criterionChunks(cs bideval.CriterionScore, ev bideval.Evidence, chunks map[string]bideval.RetrievedChunk) []page.ReviewChunkVM {
	cited := make(map[string]bool, len(cs.Citations))
	for _, id := range cs.Citations {
		cited[id] = true
	}
	named := map[string]bool{}
	for _, id := range ev.ChunkIDs {
		if !cited[id] && strings.Contains(cs.Explanation, "["+id+"]") {
			named[id] = true
		}
	}
	var out []page.ReviewChunkVM
	seen := map[string]bool{}
	// A chunk retrieved for the criterion says where its search ranked it: the search score
	// itself (a full-text rank, a few hundredths for a good match) reads as no relevance.
	// Its rank is one more than the chunks the search scored higher; those scored alike tie.
	rank := make(map[string]int, len(ev.ChunkIDs))
	tie := map[string]bool{}
	scores := ev.Scores[:min(len(ev.Scores), len(ev.ChunkIDs))]
	for i, id := range ev.ChunkIDs {
		if _, ok := rank[id]; ok {
			continue
		}
		rank[id] = i + 1
		if i < len(scores) {
			rank[id] = 1
			for k, sc := range scores {
				if sc > scores[i] {
					rank[id]++
				} else if k != i && sc == scores[i] && ev.ChunkIDs[k] != id {
					tie[id] = true
				}
			}
		}
	}
	add := func(id string) {
		if seen[id] {
			return
		}
		seen[id] = true
		ch, ok := chunks[id]
		vm := page.ReviewChunkVM{ID: id, Document: ch.Document, Text: ch.Text, Cited: cited[id], Named: named[id]}
		if !ok {
			vm.Text = "(this chunk is no longer in the retrieved evidence)"
		}
		if r, found := rank[id]; found {
			vm.Match = fmt.Sprintf("search match %d of %d", r, len(ev.ChunkIDs))
			if r == 1 {
				vm.Match = fmt.Sprintf("best search match of %d", len(ev.ChunkIDs))
				if len(ev.ChunkIDs) == 1 {
					vm.Match = "the only search match"
				}
			}
			if tie[id] {
				vm.Match += ", tied"
			}
		}
		if vm.Document == "" {
			vm.Document = ch.DocumentID
		}
		out = append(out, vm)
	}
	for _, id := range cs.Citations {
		add(id)
	}
	for _, id := range ev.ChunkIDs {
		add(id)
	}
	order := func(c page.ReviewChunkVM) int {
		switch {
		case c.Cited:
			return 0
		case c.Named:
			return 1
		}
		return 2
	}
	sort.SliceStable(out, func(i, j int) bool { return order(out[i]) < order(out[j]) })
	return out
}

// bidReasons puts the quality gate's numbers next to its reasons.
func bidReasons(keys []string, s bideval.State) []page.ReviewReason {
	th := s.RulePack.Thresholds
	out := make([]page.ReviewReason, 0, len(keys))
	for _, k := range keys {
		r := page.ReviewReason{Key: k, Label: page.ReviewReasonLabel(k)}
		switch k {
		case "low_confidence":
			r.Detail = fmt.Sprintf("The scorer's confidence is %s; the rule pack asks for at least %s.", percent(s.Confidence), percent(th.MinConfidence))
		case "citation_coverage_low":
			r.Detail = fmt.Sprintf("%s of the scorer's claims cite evidence; the rule pack asks for at least %s.", percent(s.CitationCoverage), percent(th.MinCitationCoverage))
		case "hard_rule_failed_high_score":
			var failed []string
			for _, rr := range s.RuleResults {
				if !rr.Passed {
					failed = append(failed, rr.Name)
				}
			}
			r.Detail = fmt.Sprintf("%s failed, yet the total %s reaches the high-score mark %s.", strings.Join(failed, ", "), page.Score(s.TotalScore), page.Score(th.HighScore))
		case "score_outlier":
			r.Detail = fmt.Sprintf("The total %s is more than %s points away from the other bids' mean.", page.Score(s.TotalScore), page.Score(th.OutlierDelta))
		}
		out = append(out, r)
	}
	return out
}

func percent(v float64) string { return strconv.FormatFloat(math.Round(v*1000)/10, 'f', -1, 64) + "%" }

// claimsCited says how many of a criterion's claims cite evidence.
func claimsCited(cited, claims int) string {
	if claims == 0 {
		return "no claims made"
	}
	return fmt.Sprintf("%d of %s cited", cited, page.Plural(int64(claims), "claim", "claims"))
}

func trimFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func scoreField(criterionID string) string { return "score." + criterionID }

// reviewSubmit records a decision: it is built from the form and the
// session, validated as the paused node will validate it, then handed to the
// runner with the form's resume token. Bad input re-renders the form with
// the message and what was typed; a used or expired token explains itself.
func (s *Server) reviewSubmit(c echo.Context) error {
	ctx := c.Request().Context()
	u := currentUser(c)
	j, err := s.reviewJob(c)
	if err != nil {
		return err
	}
	token := strings.TrimSpace(c.FormValue("resume_token"))
	if j.Status != runner.WaitingReview || token == "" {
		return s.renderReviewClosed(c, http.StatusConflict, j, true)
	}
	in := page.ReviewInput{Decision: c.FormValue("decision"), Comment: c.FormValue("comment"), ResumeValue: c.FormValue("resume_value")}
	interruptID := c.FormValue("interrupt")
	if j.Workflow == bideval.Name {
		in.Scores = map[string]string{}
		form, err := c.FormParams()
		if err != nil {
			return badRequest("The form could not be read.")
		}
		for k, v := range form {
			if id, ok := strings.CutPrefix(k, "score."); ok && len(v) > 0 {
				in.Scores[id] = v[0]
			}
		}
	}
	refuse := func(msg string, fieldErrs map[string]bool) error {
		vm, err := s.reviewFormVM(c, j, interruptID, token, in, fieldErrs)
		if err != nil {
			return err
		}
		vm.Error = msg
		return s.renderReviewForm(c, http.StatusBadRequest, vm)
	}
	if n := utf8.RuneCountInString(in.Comment); n > reviewCommentMax {
		return refuse(fmt.Sprintf("The comment is too long (%d characters; at most %d).", n, reviewCommentMax), nil)
	}
	if err := usertext.Check("the comment", in.Comment); err != nil {
		return refuse(sentence(err.Error())+". Remove it and send again.", nil)
	}
	var decision json.RawMessage
	var summary page.ReviewDoneVM
	if j.Workflow == bideval.Name {
		st, err := s.bidState(ctx, j.ThreadID)
		if err != nil {
			return err
		}
		d, fieldErrs, msg, err := bidDecision(st, u, in)
		if err != nil {
			return err
		}
		if msg != "" {
			return refuse(msg, fieldErrs)
		}
		decision, _ = json.Marshal(d)
		summary = page.ReviewDoneVM{Decision: d.Decision, Comment: d.Comment}
		var changed map[string]bool
		if d.Decision == bideval.DecisionReject { // a rejection records no scores: say which edits it dropped
			changed = changedScores(st, in)
		}
		for _, cs := range st.CriteriaScores { // what edit_scores saved, by criterion name
			if v, ok := d.Scores[cs.CriterionID]; ok {
				summary.Scores = append(summary.Scores, page.ThreadKV{Key: cs.Name, Value: strconv.FormatFloat(v, 'f', -1, 64)})
			}
			if changed[cs.CriterionID] {
				summary.NotSaved = append(summary.NotSaved, cs.Name)
			}
		}
	} else {
		d, msg := genericDecision(u.ID, in, "The resume value")
		if msg != "" {
			return refuse(msg, nil)
		}
		decision, _ = json.Marshal(d)
		summary = page.ReviewDoneVM{Decision: in.Decision, Comment: strings.TrimSpace(in.Comment)}
	}
	// The thread's last event before the resume: the done panel streams what
	// follows it.
	lastEvent, err := s.app.Events.LastThreadEventID(ctx, u.TenantID, j.ThreadID)
	if err != nil {
		return err
	}
	resumed, err := s.app.Runner.Resume(ctx, runner.ResumeRequest{TenantID: u.TenantID, JobID: j.ID, Token: token, Actor: u.ID, Decision: decision})
	if isResumeInvalid(err) {
		return s.renderReviewClosed(c, http.StatusConflict, j, true)
	}
	if err != nil {
		return err
	}
	if !isHTMX(c) {
		// The thread's page says the decision was recorded (a plain form post, without JS).
		return c.Redirect(http.StatusSeeOther, page.ThreadPath(j.ThreadID)+"?decided="+url.QueryEscape(j.ID))
	}
	summary.Reviewer, summary.ThreadHref, summary.DraftKey = u.Name, page.ThreadPath(j.ThreadID), reviewDraftKey(j.ID)
	summary.EventsURL = fmt.Sprintf("%s/events?last_event_id=%d", page.ThreadPath(j.ThreadID), lastEvent)
	summary.Status = page.ThreadStatusVM{JobID: resumed.ID, TraceID: resumed.TraceID, Status: string(resumed.Status), RetryCount: resumed.RetryCount,
		Updated: page.Ago(resumed.UpdatedAt, time.Now()), UpdatedAt: resumed.UpdatedAt}
	return render(c, http.StatusOK, page.ReviewDone(summary))
}

// bidDecision builds and checks a bid evaluation's §7.2 decision against the thread's
// state st. msg (with the score inputs at fault) explains a refusal to the reviewer.
func bidDecision(st bideval.State, u auth.User, in page.ReviewInput) (d bideval.Decision, fieldErrs map[string]bool, msg string, err error) {
	d = bideval.Decision{Decision: in.Decision, Comment: strings.TrimSpace(in.Comment),
		Editor: bideval.Editor{ReviewerID: u.ID}, At: time.Now().UTC()}
	known := map[string]bool{}
	for _, cs := range st.CriteriaScores {
		known[cs.CriterionID] = true
	}
	var unknown []string
	for id := range in.Scores {
		if !known[id] {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return d, nil, fmt.Sprintf("The form scores criteria this evaluation does not have: %s. Reload the review form.",
			strings.Join(unknown, ", ")), nil
	}
	switch in.Decision {
	case bideval.DecisionApprove:
		// Approving keeps the model's scores: typed changes would be silently dropped.
		if fieldErrs = changedScores(st, in); len(fieldErrs) > 0 {
			return d, fieldErrs, fmt.Sprintf("You changed %s. Approving keeps the model's scores: save the edited scores "+
				"instead, or put the scores back to approve as scored.", page.Plural(int64(len(fieldErrs)), "score", "scores")), nil
		}
		fieldErrs = nil
	case bideval.DecisionReject:
		if d.Comment == "" {
			return d, nil, "Say why you reject the evaluation: a rejection needs a comment, which the report and the audit log keep.", nil
		}
	case bideval.DecisionEditScores:
		fieldErrs = map[string]bool{}
		var problems []string
		d.Scores = map[string]float64{}
		for _, cs := range st.CriteriaScores {
			raw := scoreInput(in.Scores[cs.CriterionID])
			if raw == "" {
				problems = append(problems, fmt.Sprintf("%s needs a score (0 to %s).", cs.Name, trimFloat(cs.MaxScore)))
				fieldErrs[cs.CriterionID] = true
				continue
			}
			v, perr := bideval.ParseScore(raw, cs.MaxScore) // as the API reads its scores
			if perr != nil {
				problems = append(problems, fmt.Sprintf("%s: %v.", cs.Name, perr))
				fieldErrs[cs.CriterionID] = true
				continue
			}
			if editsScore(v, cs.Score) {
				d.Scores[cs.CriterionID] = v
			}
		}
		if len(problems) > 0 {
			return d, fieldErrs, "Check the scores: " + strings.Join(problems, " "), nil
		}
		if len(d.Scores) == 0 {
			return d, nil, "No score differs from the model's. Change at least one score, or approve as scored.", nil
		}
	default:
		return d, nil, "Choose approve, reject or save edited scores.", nil
	}
	if verr := bideval.ValidateDecision(d, st.RulePack.Criteria); verr != nil {
		var fe *fault.Error
		if errors.As(verr, &fe) {
			return d, nil, "The decision was not accepted: " + fe.Message + ".", nil
		}
		return d, nil, "", verr
	}
	return d, nil, "", nil
}

// changedScores are the criteria (by id) whose score the form changed from the model's, or
// holds something other than a number for.
func changedScores(st bideval.State, in page.ReviewInput) map[string]bool {
	changed := map[string]bool{}
	for _, cs := range st.CriteriaScores {
		raw, ok := in.Scores[cs.CriterionID]
		if !ok {
			continue
		}
		if v, perr := bideval.ParseScore(scoreInput(raw), math.Inf(1)); perr != nil || editsScore(v, cs.Score) {
			changed[cs.CriterionID] = true
		}
	}
	return changed
}

// scoreInput is a typed score ready to parse (a decimal comma is a point).
func scoreInput(raw string) string { return strings.TrimSpace(strings.ReplaceAll(raw, ",", ".")) }

// editsScore says a typed score v changes the model's score: only scores that differ from
// the one the form shows (rounded to a tenth) are edits.
func editsScore(v, model float64) bool { return math.Abs(v-math.Round(model*10)/10) > 1e-9 }

// genericDecision builds the resume value of a workflow without its own
// review view: the reviewer's JSON object, with the decision, the comment
// and the session's identity set over it.
// rejectWithoutComment: a rejection must say why, in every workflow (whoever reads the thread
// later needs to know); the console's form and the API's resume both refuse one that does
// not. Bid evaluations check it again in bideval.ValidateDecision, with their other rules.
func rejectWithoutComment(decision, comment string) bool {
	return decision == "reject" && strings.TrimSpace(comment) == ""
}

// genericDecision is the resume value of a review in a workflow other than a bid evaluation,
// decided by reviewerID (the console's form and the API's resume): approve or reject, a
// comment, and the form's optional JSON object; or why the input cannot be one.
func genericDecision(reviewerID string, in page.ReviewInput, value string) (map[string]any, string) {
	if in.Decision != "approve" && in.Decision != "reject" {
		return nil, "The decision must be approve or reject."
	}
	if rejectWithoutComment(in.Decision, in.Comment) {
		return nil, "Say why you reject: a rejection needs a comment, which the thread and the audit log keep."
	}
	v := map[string]any{}
	if raw := strings.TrimSpace(in.ResumeValue); raw != "" {
		if len(in.ResumeValue) > reviewValueMax {
			return nil, fmt.Sprintf("%s is too long (%d bytes; at most %d).", value, len(in.ResumeValue), reviewValueMax)
		}
		var parsed any
		if err := json.Unmarshal([]byte(raw), &parsed); err != nil {
			if se := (*json.SyntaxError)(nil); errors.As(err, &se) {
				return nil, value + " is not valid JSON: " + syntaxWhere(in.ResumeValue, raw, se) + "."
			}
			return nil, value + " is not valid JSON: " + err.Error() + "."
		}
		obj, ok := parsed.(map[string]any)
		if !ok {
			return nil, value + ` must be a JSON object, such as {"note": "checked"}.`
		}
		for _, k := range []string{"decision", "comment", "editor"} {
			if _, ok := obj[k]; ok {
				return nil, fmt.Sprintf("%s cannot set %q: the decision, the comment and who decided have fields of their own.", value, k)
			}
		}
		if err := runner.StorableJSON([]byte(raw)); err != nil {
			return nil, value + " " + strings.TrimPrefix(err.Error(), "the input ") + "."
		}
		if err := usertext.CheckJSON(value, []byte(raw)); err != nil {
			return nil, err.Error() + "."
		}
		v = obj
	}
	v["decision"] = in.Decision
	if c := strings.TrimSpace(in.Comment); c != "" {
		v["comment"] = c
	}
	v["editor"] = map[string]string{"reviewer_id": reviewerID}
	return v, ""
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
	if j.Workflow == bideval.Name {
		if raw, err := s.bidState(ctx, j.ThreadID); err == nil && raw.Supplier.Name != "" {
			vm.Subject = raw.Supplier.Name + " (evaluation " + j.Subject + ")"
		}
	}
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

// withdrawnNotes says, for those of the tenant's chunks ids names whose bid document was
// withdrawn, who withdrew it and when (page.WithdrawnNote), by chunk id.
func (s *Server) withdrawnNotes(ctx context.Context, tenant string, ids []string) (map[string]string, error) {
	found, err := s.app.Evaluations().WithdrawnChunks(ctx, tenant, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(found))
	names := s.userNames(ctx, tenant)
	for id, d := range found {
		out[id] = page.WithdrawnNote(d.WithdrawnAt, actorName(names(), d.WithdrawnBy))
	}
	return out, nil
}
