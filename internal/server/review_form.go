package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
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
	"weft/web/page"
)

// The review form of any workflow: the workflow describes the page as data (Reviewer.Form)
// and turns the answer into what the run continues with (Reviewer.Decide), the same rules
// for this form and the API's resume; the server adds what every review has: the resume
// token, the answer window, drafts, the notice of a decision made elsewhere.

// recordedDecision is a recorded decision's decision and comment, every workflow's keys (seed
// 000 §7.2); ok is false for one without a decision. The value's other keys are the
// workflow's own.
func decisionOf(r postgres.ReviewDecision) (v struct{ Decision, Comment string }, ok bool) {
	if json.Unmarshal(r.Decision, &v) != nil || v.Decision == "" {
		return v, false
	}
	return v, true
}

// threadFor is the thread of a job as a workflow's review or view reads it: its state at the
// head, its pending interrupts, and who reads it.
func (s *Server) threadFor(ctx context.Context, u auth.User, j runner.Job, g graph.Runnable) (workflow.Thread, error) {
	t := workflow.Thread{TenantID: u.TenantID, ThreadID: j.ThreadID, JobStatus: string(j.Status),
		Reader: workflow.Person{ID: u.ID, Name: u.Name, Role: string(u.Role)}, Now: time.Now()}
	names := s.userNames(ctx, u.TenantID)
	t.Name = func(actor string) string { return actorName(names(), actor) }
	if j.ID != "" {
		ds, err := s.app.Jobs.ReviewDecisions(ctx, u.TenantID, j.ID)
		if err != nil {
			return t, err
		}
		for _, r := range ds {
			if v, ok := decisionOf(r); ok {
				t.Decisions = append(t.Decisions, workflow.Decided{Decision: v.Decision, Comment: v.Comment, By: actorName(names(), r.Actor), At: r.At})
			}
		}
	}
	snap, err := g.StateJSON(ctx, graph.Config{ThreadID: j.ThreadID})
	switch {
	case errors.Is(err, graph.ErrNotFound):
		return t, nil
	case err != nil:
		return t, err
	}
	t.State, t.CheckpointID, t.Next, t.Interrupts = snap.Values, snap.Checkpoint.ID, snap.Next, snap.Interrupts
	return t, nil
}

// reviewOf is a job's pause as its workflow reviews it.
func (s *Server) reviewOf(ctx context.Context, u auth.User, j runner.Job, it graph.PendingInterrupt) (workflow.Definition, workflow.Review, error) {
	def, ok := s.app.Registry.Get(j.Workflow)
	if !ok {
		return def, workflow.Review{}, notFound()
	}
	t, err := s.threadFor(ctx, u, j, def.Graph)
	if err != nil {
		return def, workflow.Review{}, err
	}
	return def, workflow.Review{Thread: t, Interrupt: it}, nil
}

// reviewFormVM builds the form of the job's pause (interruptID, or its first one). It issues
// a resume token unless token is given (a re-render after a refused submission keeps the
// token, which was not consumed). in is what was typed, refused the refusal to show.
func (s *Server) reviewFormVM(c echo.Context, j runner.Job, interruptID, token string, in page.ReviewInput, refused *workflow.AnswerError) (page.ReviewFormVM, error) {
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
	def, rv, err := s.reviewOf(ctx, u, j, it)
	if err != nil {
		return page.ReviewFormVM{}, err
	}
	form, err := def.Reviewer().Form(ctx, rv)
	if err != nil {
		return page.ReviewFormVM{}, err
	}
	if len(form.Reasons) == 0 {
		form.Reasons = payloadReasons(def, it.Value)
	}
	if len(form.Choices) == 0 {
		form.Choices = []workflow.Choice{{Value: workflow.Approve, Label: "Approve", Style: "ok"}, {Value: workflow.Reject, Label: "Reject", Style: "danger"}}
	}
	if in.Values != nil || refused != nil {
		var fields map[string]string
		if refused != nil {
			fields = refused.Fields
		}
		form.Inputs = fillInputs(form.Inputs, in.Values, fields)
	}
	now := time.Now()
	vm := page.ReviewFormVM{
		Action: "/reviews/" + j.ID, StatusURL: "/reviews/" + j.ID + "/status", ThreadHref: page.ThreadPath(j.ThreadID), ThreadID: j.ThreadID,
		Workflow: s.workflowTitle(j.Workflow), Subject: j.Subject, Node: it.Node, InterruptID: it.ID,
		Age: page.Ago(pausedAt, now), PausedTime: pausedAt, PausedAt: page.When(pausedAt), AnswerBy: page.When(answerBy), Expired: now.After(answerBy),
		Token: token, CSRF: csrfToken(c), Input: in, DraftKey: reviewDraftKey(j.ID) + it.ID + "|" + u.ID, Form: form,
	}
	if form.Subject != "" {
		vm.Subject, vm.SubjectDetail = form.Subject, form.SubjectDetail
	}
	if vm.Subject == "" {
		vm.Subject = "thread " + j.ThreadID
	}
	if refused != nil {
		vm.Error, vm.CommentError = refused.Message, refused.Fields["comment"] != ""
	}
	return vm, nil
}

// fillInputs puts what was typed back into the form's inputs, with the refusal's message of
// each field at fault.
func fillInputs(inputs []workflow.Block, typed map[string]string, errs map[string]string) []workflow.Block {
	out := make([]workflow.Block, len(inputs))
	for i, b := range inputs {
		switch v := b.(type) {
		case workflow.ScoreField:
			if t, ok := typed[v.Name]; ok {
				v.Value = t
			}
			v.Error = errs[v.Name]
			b = v
		case workflow.TextBox:
			if t, ok := typed[v.Name]; ok {
				v.Value = t
			}
			v.Error = errs[v.Name]
			b = v
		case workflow.ItemDecisions:
			items := make([]workflow.DecisionItem, len(v.Items))
			for k, it := range v.Items {
				field := v.Name + "." + it.ID
				if t, ok := typed[field]; ok {
					it.Decision = t
				}
				if t, ok := typed[field+".feedback"]; ok {
					it.Feedback = t
				}
				it.Error = errs[field]
				items[k] = it
			}
			v.Items = items
			b = v
		}
		out[i] = b
	}
	return out
}

// formAnswer reads the review form's answer: the choice, the comment, and the values of the
// form's inputs as one JSON object, each the text typed: a field "scores.C1" is key C1 of
// object scores; an item decision list NAME is {"<id>": {"decision", "feedback"}}.
func formAnswer(c echo.Context, inputs []workflow.Block) (workflow.Answer, map[string]string, error) {
	form, err := c.FormParams()
	if err != nil {
		return workflow.Answer{}, nil, badRequest("The form could not be read.")
	}
	typed := map[string]string{}
	values := map[string]any{}
	field := func(name string) (string, bool) {
		vs, ok := form[name]
		if !ok || len(vs) == 0 {
			return "", false
		}
		typed[name] = vs[0]
		return vs[0], true
	}
	for _, b := range inputs {
		var name string
		switch v := b.(type) {
		case workflow.ScoreField:
			name = v.Name
		case workflow.TextBox:
			name = v.Name
		case workflow.ItemDecisions:
			items := map[string]any{}
			for _, it := range v.Items {
				d, okD := field(v.Name + "." + it.ID)
				fb, okF := field(v.Name + "." + it.ID + ".feedback")
				if okD || okF {
					items[it.ID] = map[string]string{"decision": d, "feedback": fb}
				}
			}
			values[v.Name] = items
			continue
		}
		text, ok := field(name)
		if !ok {
			continue
		}
		if obj, key, nested := strings.Cut(name, "."); nested {
			m, _ := values[obj].(map[string]any)
			if m == nil {
				m = map[string]any{}
				values[obj] = m
			}
			m[key] = text
			continue
		}
		values[name] = text
	}
	a := workflow.Answer{Decision: form.Get("decision"), Comment: form.Get("comment"), FromForm: true, Values: map[string]json.RawMessage{}}
	for k, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			return a, typed, err
		}
		a.Values[k] = b
	}
	return a, typed, nil
}

// checkComment refuses a comment that is too long or holds characters people cannot see.
func checkComment(comment string) string {
	if n := utf8.RuneCountInString(comment); n > reviewCommentMax {
		return fmt.Sprintf("The comment is too long (%d characters; at most %d).", n, reviewCommentMax)
	}
	if err := usertext.Check("the comment", comment); err != nil {
		return sentence(err.Error()) + ". Remove it and send again."
	}
	return ""
}

// reviewSubmit records a decision: the workflow's Decide turns the answer into what the run
// continues with, checked as the paused node will check it; the runner then resumes with the
// form's resume token. Bad input re-renders the form with the message and what was typed; a
// used or expired token explains itself.
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
	interruptID := c.FormValue("interrupt")
	it, ok := pickInterrupt(j, interruptID)
	if !ok {
		return s.renderReviewClosed(c, http.StatusConflict, j, true)
	}
	def, rv, err := s.reviewOf(ctx, u, j, it)
	if err != nil {
		return err
	}
	form, err := def.Reviewer().Form(ctx, rv)
	if err != nil {
		return err
	}
	answer, typed, err := formAnswer(c, form.Inputs)
	if err != nil {
		return err
	}
	in := page.ReviewInput{Decision: answer.Decision, Comment: answer.Comment, Values: typed}
	refuse := func(ae *workflow.AnswerError) error {
		vm, err := s.reviewFormVM(c, j, interruptID, token, in, ae)
		if err != nil {
			return err
		}
		return s.renderReviewForm(c, http.StatusBadRequest, vm)
	}
	if msg := checkComment(answer.Comment); msg != "" {
		return refuse(&workflow.AnswerError{Message: msg, Fields: map[string]string{"comment": msg}})
	}
	decision, err := def.Reviewer().Decide(ctx, rv, answer)
	var ae *workflow.AnswerError
	if errors.As(err, &ae) {
		if s.answeredMeanwhile(ctx, u.TenantID, j, it) {
			return s.renderReviewClosed(c, http.StatusConflict, j, true)
		}
		return refuse(ae)
	}
	if err != nil {
		return err
	}
	// The thread's last event before the resume: the done panel streams what follows it.
	lastEvent, err := s.app.Events.LastThreadEventID(ctx, u.TenantID, j.ThreadID)
	if err != nil {
		return err
	}
	req, err := resumeRequest(u.TenantID, j.ID, token, u.ID, decision)
	if err != nil {
		return refuse(&workflow.AnswerError{Message: sentence(err.Error())})
	}
	resumed, err := s.app.Runner.Resume(ctx, req)
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
	summary := page.ReviewDoneVM{Decision: decision.Outcome, Comment: decision.Comment, Note: decision.Note, SummaryTitle: decision.SummaryTitle,
		Reviewer: u.Name, ThreadHref: page.ThreadPath(j.ThreadID), DraftKey: reviewDraftKey(j.ID)}
	for _, kv := range decision.Summary {
		summary.Scores = append(summary.Scores, page.ThreadKV{Key: kv.Key, Value: kv.Value})
	}
	summary.EventsURL = fmt.Sprintf("%s/events?last_event_id=%d", page.ThreadPath(j.ThreadID), lastEvent)
	summary.Status = page.ThreadStatusVM{JobID: resumed.ID, TraceID: resumed.TraceID, Status: string(resumed.Status), RetryCount: resumed.RetryCount,
		Updated: page.Ago(resumed.UpdatedAt, time.Now()), UpdatedAt: resumed.UpdatedAt}
	return render(c, http.StatusOK, page.ReviewDone(summary))
}

// resumeRequest is what the runner needs to record a workflow's decision: the resume value
// (a record of the decision when the decision updates the state instead), the update, and
// who decided. The value must be storable JSON of readable text.
func resumeRequest(tenant, jobID, token, actor string, d workflow.Decision) (runner.ResumeRequest, error) {
	req := runner.ResumeRequest{TenantID: tenant, JobID: jobID, Token: token, Actor: actor, AsNode: d.AsNode}
	value := d.Resume
	if len(d.Update) > 0 {
		values := map[string]any{}
		for _, w := range d.Update {
			values[w.Channel] = w.Value
		}
		b, err := json.Marshal(values)
		if err != nil {
			return req, fmt.Errorf("the update is not JSON: %w", err)
		}
		req.Update = b
		if value == nil {
			value = map[string]any{"decision": d.Outcome, "comment": d.Comment, "editor": map[string]string{"reviewer_id": actor}}
		}
	}
	if value == nil {
		value = map[string]any{"decision": d.Outcome, "comment": d.Comment}
	}
	b, err := json.Marshal(value)
	if err != nil {
		return req, fmt.Errorf("the decision is not JSON: %w", err)
	}
	if err := runner.StorableJSON(b); err != nil {
		return req, err
	}
	if err := usertext.CheckJSON("the decision", b); err != nil {
		return req, err
	}
	req.Decision = b
	return req, nil
}

// payloadReasons reads "reasons" from an interrupt payload, when it has them, named by the
// workflow's reason labels.
func payloadReasons(def workflow.Definition, payload json.RawMessage) []workflow.Reason {
	var p struct {
		Reasons []string `json:"reasons"`
	}
	if len(payload) == 0 || json.Unmarshal(payload, &p) != nil {
		return nil
	}
	out := make([]workflow.Reason, 0, len(p.Reasons))
	for _, r := range p.Reasons {
		label := def.ReasonLabels[r]
		if label == "" {
			label = r
		}
		out = append(out, workflow.Reason{Key: r, Label: label})
	}
	return out
}

// answeredMeanwhile: the pause an answer was checked against is no longer the job's, because
// another decision resumed it while this one was read (the state then moved on, and the
// workflow's refusal says so). Such an answer is a conflict, as a used token is, not the
// reviewer's mistake.
func (s *Server) answeredMeanwhile(ctx context.Context, tenant string, j runner.Job, it graph.PendingInterrupt) bool {
	now, err := s.app.Jobs.Job(ctx, tenant, j.ID)
	if err != nil {
		return false
	}
	if now.Status != runner.WaitingReview || !now.UpdatedAt.Equal(j.UpdatedAt) {
		return true
	}
	_, still := pickInterrupt(now, it.ID)
	return !still
}
