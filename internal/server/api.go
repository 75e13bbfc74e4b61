package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"reflect"
	"slices"
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
	"weft/internal/workflow/bideval"
	"weft/web/page"
)

// routesAPI registers the JSON API for programs. Every call carries a
// tenant's API token (Authorization: Bearer …); the token's role applies:
// pm starts runs, reviewer resumes, admin does both; all read.
//
//	GET  /api/v1/workflows                   the registered workflows
//	POST /api/v1/runs                        start a run {workflow, input}
//	GET  /api/v1/threads/:id/state           a thread's state (values, next, interrupts)
//	GET  /api/v1/threads/:id/history         its checkpoints, newest first (?before=&limit=)
//	POST /api/v1/threads/:id/resume          resume with the seed 000 §7.2 body
//	GET  /api/v1/threads/:id/events          SSE of its events (Last-Event-ID)
//
// A workflow's own calls are mounted beside these by its handler package (bid evaluation's
// GET /api/v1/evaluations/:id/state, seed 004's get_workflow_state).
//
// Errors are JSON: {"error": {"code": "...", "message": "..."}}.
func (s *Server) routesAPI(g *echo.Group) {
	g.GET("/workflows", s.apiWorkflows)
	g.POST("/runs", s.apiStartRun, requireRole(auth.PM, auth.Admin), jsonBodies)
	g.GET("/threads/:id/state", s.apiThreadState)
	g.GET("/threads/:id/history", s.apiThreadHistory)
	g.POST("/threads/:id/resume-token", s.apiResumeToken, requireRole(auth.Reviewer, auth.Admin), jsonBodies)
	g.POST("/threads/:id/resume", s.apiResume, requireRole(auth.Reviewer, auth.Admin), jsonBodies)
	g.GET("/threads/:id/events", s.apiThreadEvents)
}

type apiWorkflow struct {
	Name        string   `json:"name"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Nodes       []string `json:"nodes"`
	Path        []string `json:"path"`
	Mermaid     string   `json:"mermaid"`
}

func (s *Server) apiWorkflows(c echo.Context) error {
	var out []apiWorkflow
	for _, e := range s.app.Registry.All() {
		out = append(out, apiWorkflow{Name: e.Name, Title: e.Title, Description: e.Description, Nodes: e.Graph.Nodes(), Path: e.Path, Mermaid: e.Graph.Mermaid()})
	}
	return c.JSON(http.StatusOK, map[string]any{"workflows": out})
}

type apiRunRequest struct {
	Workflow string          `json:"workflow"`
	Input    json.RawMessage `json:"input"`
}

type apiJob struct {
	JobID    string            `json:"job_id"`
	ThreadID string            `json:"thread_id"`
	TraceID  string            `json:"trace_id"`
	Workflow string            `json:"workflow"`
	Status   runner.Status     `json:"status"`
	Errors   []runner.JobError `json:"errors"`
}

func jobJSON(j runner.Job) apiJob {
	errs := j.Errors
	if errs == nil {
		errs = []runner.JobError{}
	}
	return apiJob{JobID: j.ID, ThreadID: j.ThreadID, TraceID: j.TraceID, Workflow: j.Workflow, Status: j.Status, Errors: errs}
}

// apiStartRun starts a run. A bid evaluation is started by its
// evaluation_id (the thread, tenant and trace are the evaluation's); other
// workflows take their input channels as given, on a new thread.
func (s *Server) apiStartRun(c echo.Context) error {
	var req apiRunRequest
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if req.Workflow == "" {
		return badRequest(`workflow is missing: send {"workflow": "<name>", "input": {...}} (GET /api/v1/workflows lists the names)`)
	}
	u := currentUser(c)
	ctx := c.Request().Context()
	if req.Workflow == bideval.Name {
		var in struct {
			EvaluationID string `json:"evaluation_id"`
		}
		dec := json.NewDecoder(bytes.NewReader(req.Input))
		dec.DisallowUnknownFields() // an unknown field is a mistake, not something to ignore
		if err := dec.Decode(&in); err != nil || in.EvaluationID == "" {
			why := "evaluation_id is missing"
			switch {
			case len(req.Input) == 0 || string(bytes.TrimSpace(req.Input)) == "null":
				why = "input is missing"
			case err != nil:
				why = jsonProblemOf("input", err)
			}
			return badRequest(fmt.Sprintf(`a bid evaluation run takes {"input": {"evaluation_id": "..."}} and nothing else (%s)`, why))
		}
		j, err := s.app.StartEvaluation(ctx, u.TenantID, in.EvaluationID, u.ID)
		if err != nil {
			return err
		}
		return c.JSON(http.StatusAccepted, jobJSON(j))
	}
	if len(req.Input) > workflowInputMax { // as the console's start form
		return badRequest(fmt.Sprintf("input is too large (%d bytes; at most %d)", len(req.Input), workflowInputMax))
	}
	j, err := s.app.StartRun(ctx, u.TenantID, req.Workflow, req.Input, u.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, jobJSON(j))
}

// threadOf finds a tenant's thread: its latest job and its workflow's graph.
// Another tenant's thread is a 404.
func (s *Server) threadOf(ctx context.Context, tenant, thread string) (runner.Job, graph.Runnable, error) {
	j, err := s.app.Jobs.LatestForThread(ctx, tenant, thread)
	if err != nil {
		return runner.Job{}, nil, err
	}
	e, ok := s.app.Registry.Get(j.Workflow)
	if !ok {
		return runner.Job{}, nil, notFound()
	}
	return j, e.Graph, nil
}

func (s *Server) apiThreadState(c echo.Context) error {
	ctx := c.Request().Context()
	j, g, err := s.threadOf(ctx, currentUser(c).TenantID, c.Param("id"))
	if err != nil {
		return err
	}
	st, err := g.StateJSON(ctx, graph.Config{ThreadID: j.ThreadID})
	if errors.Is(err, graph.ErrNotFound) {
		return c.JSON(http.StatusOK, map[string]any{"job": jobJSON(j), "state": nil})
	}
	if err != nil {
		return err
	}
	return apiJSON(c, http.StatusOK, map[string]any{"job": jobJSON(j), "state": st})
}

// mayResume says whether u may resume paused threads, and so read their resume tokens.
func mayResume(u auth.User) bool { return u.Role == auth.Reviewer || u.Role == auth.Admin }

// apiJSON answers v as JSON; to a caller who may not resume threads (a pm), with the value
// of every "resume_token" key hidden, as the console hides it from everyone: the token is a
// reviewer's to use.
func apiJSON(c echo.Context, status int, v any) error {
	if mayResume(currentUser(c)) {
		return c.JSON(status, v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return c.JSONBlob(status, withoutTokens(b))
}

// withoutTokens is the JSON b with every resume_token's value hidden, as a page shows it.
func withoutTokens(b []byte) []byte { return []byte(encodeForDisplay(b, "")) }

func (s *Server) apiThreadHistory(c echo.Context) error {
	ctx := c.Request().Context()
	j, g, err := s.threadOf(ctx, currentUser(c).TenantID, c.Param("id"))
	if err != nil {
		return err
	}
	limit := 50
	if v := c.QueryParam("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			return badRequest("limit must be a number from 1 to 500")
		}
		limit = n
	}
	// One more than asked for says whether there is an older page.
	cps, err := g.History(ctx, graph.Config{ThreadID: j.ThreadID}, graph.ListOptions{Before: c.QueryParam("before"), Limit: limit + 1})
	if errors.Is(err, graph.ErrUnknownBefore) {
		return badRequest(fmt.Sprintf("before %q names no checkpoint of this thread (made up, another thread's, or pruned since); page again from the newest", c.QueryParam("before")))
	}
	if err != nil {
		return err
	}
	if cps == nil {
		cps = []graph.Checkpoint{}
	}
	next := ""
	if len(cps) > limit {
		cps = cps[:limit]
		next = cps[len(cps)-1].ID
	}
	return apiJSON(c, http.StatusOK, map[string]any{"checkpoints": cps, "next_before": next})
}

// apiResumeToken issues a resume token for the thread's pause (?interrupt_id=, or its first),
// as the console's review form does: for workflows whose state does not carry one (a bid
// evaluation's carries the one issued when it paused). 409 when the thread does not wait.
func (s *Server) apiResumeToken(c echo.Context) error {
	u := currentUser(c)
	ctx := c.Request().Context()
	j, _, err := s.threadOf(ctx, u.TenantID, c.Param("id"))
	if err != nil {
		return err
	}
	if reviewExpired(j) {
		return &httpError{status: http.StatusConflict, code: fault.CodeReviewExpired,
			msg: "the time to answer the thread's pause ran out, and its job went to the dead letters: an admin's retry asks for the review again"}
	}
	if j.Status != runner.WaitingReview {
		return &httpError{status: http.StatusConflict, code: fault.CodeInterruptResumeInvalid,
			msg: "the thread does not wait for a review (its job: " + string(j.Status) + ")"}
	}
	it, ok := pickInterrupt(j, c.QueryParam("interrupt_id"))
	if !ok {
		return &httpError{status: http.StatusNotFound, code: fault.CodeInterruptResumeInvalid,
			msg: fmt.Sprintf("the thread has no pending interrupt %q", c.QueryParam("interrupt_id"))}
	}
	pausedAt, err := s.app.Jobs.PausedAt(ctx, u.TenantID, j.ID)
	if err != nil {
		return err
	}
	tok, err := s.app.Runner.IssueToken(ctx, j, it.ID, pausedAt)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusCreated, map[string]any{"resume_token": tok.Secret, "interrupt_id": it.ID, "node": it.Node,
		"expires_at": tok.ExpiresAt.UTC()})
}

// apiResumeBody is seed 000 §7.2 (plus scores for edit_scores).
type apiResumeBody struct {
	ResumeToken string         `json:"resume_token"`
	Decision    string         `json:"decision"`
	Comment     string         `json:"comment"`
	Editor      bideval.Editor `json:"editor"`
	// Scores are read from their JSON text, as written (bideval.ParseScore): a float64 would
	// take 0.30000000000000004 as a score the console shows as 0.3.
	Scores map[string]json.RawMessage `json:"scores,omitempty"`
	// Value is what the console's form calls the resume value: an object whose fields go to
	// the paused node beside the decision (any workflow but a bid evaluation).
	Value json.RawMessage `json:"value,omitempty"`
}

func (s *Server) apiResume(c echo.Context) error {
	var body apiResumeBody
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	if string(body.Value) == "null" {
		body.Value = nil // null is no value
	}
	u := currentUser(c)
	ctx := c.Request().Context()
	j, _, err := s.threadOf(ctx, u.TenantID, c.Param("id"))
	if err != nil {
		return err
	}
	if body.ResumeToken == "" {
		return &httpError{status: http.StatusBadRequest, code: fault.CodeInterruptResumeInvalid, msg: "resume_token is required"}
	}
	if body.Editor.ReviewerID == "" {
		return &httpError{status: http.StatusBadRequest, code: fault.CodeInterruptResumeInvalid, msg: "editor.reviewer_id is required: a resume carries the reviewer's identity"}
	}
	// The decision is recorded under the reviewer it names, so that must be one of the
	// tenant's users who may review (a pm or another tenant's user cannot be named). Any
	// reviewer or admin of the tenant may be named: the token stands for an integration, not
	// a person, and the audit row records the token beside the name (see the README).
	if r, err := s.auth.User(ctx, body.Editor.ReviewerID); err != nil || r.TenantID != u.TenantID ||
		(r.Role != auth.Reviewer && r.Role != auth.Admin) {
		return &httpError{status: http.StatusForbidden, code: fault.CodeInterruptResumeInvalid,
			msg: fmt.Sprintf("editor.reviewer_id %q is not a reviewer of this tenant", body.Editor.ReviewerID)}
	}
	if n := utf8.RuneCountInString(body.Comment); n > reviewCommentMax {
		return badRequest(fmt.Sprintf("comment is too long (%d characters; at most %d)", n, reviewCommentMax))
	}
	if err := usertext.Check("comment", body.Comment); err != nil {
		return badRequest(err.Error())
	}
	var raw []byte
	if j.Workflow == bideval.Name {
		if len(body.Value) > 0 {
			return badRequest("value is for other workflows' reviews; a bid evaluation's decision is its decision, comment and scores")
		}
		st, err := s.app.EvaluationValues(ctx, j.ThreadID)
		if err != nil {
			return err
		}
		d := bideval.Decision{Decision: body.Decision, Comment: body.Comment, Editor: body.Editor, At: time.Now().UTC()}
		if d.Scores, err = apiScores(body.Scores, body.Decision, st.RulePack.Criteria); err != nil {
			return err
		}
		if err := bideval.ValidateDecision(d, st.RulePack.Criteria); err != nil {
			return err
		}
		if d.Decision == bideval.DecisionEditScores {
			// As the console's form: a score the model gave already is no edit, and an edit
			// that changes nothing is refused rather than reported as "scores edited".
			for _, cs := range st.CriteriaScores {
				if v, ok := d.Scores[cs.CriterionID]; ok && !editsScore(v, cs.Score) {
					delete(d.Scores, cs.CriterionID)
				}
			}
			if len(d.Scores) == 0 {
				return &httpError{status: http.StatusBadRequest, code: bideval.CodeDecisionInvalid,
					msg: "edit_scores changes no score: every score sent is the model's own; send approve to keep them"}
			}
		}
		raw, _ = json.Marshal(d)
	} else {
		// The same value, and the same rules, as the console's review form.
		if len(body.Scores) > 0 {
			return badRequest(fmt.Sprintf("scores belong to a bid evaluation's edit_scores; a %s review is approve or reject", j.Workflow))
		}
		v, msg := genericDecision(body.Editor.ReviewerID, page.ReviewInput{Decision: body.Decision, Comment: body.Comment,
			ResumeValue: string(body.Value)}, "value")
		if msg != "" {
			return badRequest(msg)
		}
		raw, _ = json.Marshal(v)
	}
	// The decision was checked against this thread's workflow: the token must be its pause's.
	resumed, err := s.app.Runner.Resume(ctx, runner.ResumeRequest{TenantID: u.TenantID, JobID: j.ID, Token: body.ResumeToken,
		Actor: body.Editor.ReviewerID + " via " + u.ID, Decision: raw})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, jobJSON(resumed))
}

// apiScores reads a bid evaluation's edited scores (criterion id → the JSON value as sent)
// for a decision. Only edit_scores takes scores: with another decision they are kept as
// zeros, for bideval.ValidateDecision to refuse whatever they hold; so are criteria the rule
// pack does not have, which it refuses by name.
func apiScores(raw map[string]json.RawMessage, decision string, criteria []bideval.Criterion) (map[string]float64, error) {
	if len(raw) == 0 {
		return nil, nil
	}
	bad := func(format string, a ...any) error {
		return &httpError{status: http.StatusBadRequest, code: bideval.CodeDecisionInvalid, msg: fmt.Sprintf(format, a...)}
	}
	scores := map[string]float64{}
	for _, id := range slices.Sorted(maps.Keys(raw)) {
		scores[id] = 0
		i := slices.IndexFunc(criteria, func(c bideval.Criterion) bool { return c.ID == id })
		if decision != bideval.DecisionEditScores || i < 0 {
			continue
		}
		text := string(raw[id])
		if kind := jsonKind(raw[id]); kind != "number" {
			return nil, bad("scores.%s must be a number, not %s", id, kind)
		}
		v, err := bideval.ParseScore(text, criteria[i].MaxScore)
		if err != nil {
			return nil, bad("scores.%s: %v", id, err)
		}
		scores[id] = v
	}
	return scores, nil
}

// jsonKind names the kind of the JSON value b in the API's words: "number", "null", "a JSON
// string", …
func jsonKind(b json.RawMessage) string {
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case 'n':
		return "null"
	case '"':
		return "a JSON string"
	case '{':
		return "a JSON object"
	case '[':
		return "a JSON array"
	case 't', 'f':
		return "a JSON boolean"
	}
	return "number"
}

func (s *Server) apiThreadEvents(c echo.Context) error {
	u := currentUser(c)
	j, _, err := s.threadOf(c.Request().Context(), u.TenantID, c.Param("id"))
	if err != nil {
		return err
	}
	msgs := make([]sseMessage, 1) // reused: writeSSE is done with it before the next event
	var key any = apiEventFrame{}
	encode := encodeAPIEventFrame
	if !mayResume(u) { // an interrupt's payload may carry its resume token
		key, encode = apiEventFrameNoTokens{}, encodeAPIEventFrameNoTokens
	}
	return s.stream(c, u.TenantID, j.ThreadID, 0, func(_ context.Context, ev postgres.StoredEvent) ([]sseMessage, error) {
		frame, err := ev.Encode(key, encode)
		if err != nil {
			return nil, err
		}
		msgs[0] = sseMessage{Frame: frame}
		return msgs, nil
	})
}

// apiEventFrame is the key of an event's API stream message among its
// shared encodings.
type apiEventFrame struct{}

// apiEventFrameNoTokens is the key of the message with resume tokens hidden (for a pm).
type apiEventFrameNoTokens struct{}

// encodeAPIEventFrame is the API stream's message for an event: named by its
// kind, its data the event as JSON. Encoded once per event for all streams.
func encodeAPIEventFrame(ev postgres.StoredEvent) ([]byte, error) { return apiEventMessage(ev, false) }

// encodeAPIEventFrameNoTokens is encodeAPIEventFrame with resume tokens hidden.
func encodeAPIEventFrameNoTokens(ev postgres.StoredEvent) ([]byte, error) {
	return apiEventMessage(ev, true)
}

func apiEventMessage(ev postgres.StoredEvent, hideTokens bool) ([]byte, error) {
	b, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	if hideTokens {
		b = withoutTokens(b)
	}
	return appendSSE(make([]byte, 0, len(b)+len(ev.Kind)+48), ev.ID, ev.Kind, b), nil
}

// jsonBodies refuses a request body sent as anything but application/json (a 415), so that
// no call takes one as JSON that its sender meant otherwise; a request without a body (POST
// …/resume-token) needs no type.
func jsonBodies(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if c.Request().ContentLength != 0 { // a body, of known length or not (-1)
			if err := sentAsJSON(c.Request()); err != nil {
				return err
			}
		}
		return next(c)
	}
}

// sentAsJSON is nil for a request sent as application/json (with or without a charset),
// else a 415 saying so.
func sentAsJSON(r *http.Request) error {
	ct := r.Header.Get(echo.HeaderContentType)
	if mt, _, err := mime.ParseMediaType(ct); err == nil && mt == echo.MIMEApplicationJSON {
		return nil
	}
	msg := fmt.Sprintf("send the body as application/json, not %q", ct)
	if strings.TrimSpace(ct) == "" {
		msg = "send the body as application/json: the request has no Content-Type"
	}
	return &httpError{status: http.StatusUnsupportedMediaType, code: "UNSUPPORTED_MEDIA_TYPE", msg: msg}
}

// decodeJSON reads a JSON body strictly: sent as application/json (else 415, a body without
// a Content-Type too), one JSON value and nothing after it; bad JSON is a 400 with the reason.
func decodeJSON(c echo.Context, v any) error {
	if err := sentAsJSON(c.Request()); err != nil {
		return err
	}
	dec := json.NewDecoder(http.MaxBytesReader(c.Response(), c.Request().Body, 1<<20))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		if _, terr := dec.Token(); errors.As(terr, new(*http.MaxBytesError)) {
			err = terr
		} else if !errors.Is(terr, io.EOF) {
			err = errTrailingData
		}
	}
	if err != nil {
		if tooBig := (*http.MaxBytesError)(nil); errors.As(err, &tooBig) {
			return &httpError{status: http.StatusRequestEntityTooLarge, code: "BODY_TOO_LARGE",
				msg: fmt.Sprintf("the request body is larger than %d bytes", tooBig.Limit)}
		}
		return badRequest("the request body is not valid JSON for this call: " + jsonProblem(err))
	}
	return nil
}

// isFloatKind reports whether t is a floating-point type (a JSON number of any size fits its
// syntax; one that overflows it is out of range, not of the wrong kind).
func isFloatKind(t reflect.Type) bool {
	return t != nil && (t.Kind() == reflect.Float64 || t.Kind() == reflect.Float32)
}

// errTrailingData: the body holds more after its JSON value.
var errTrailingData = errors.New("trailing data")

// jsonProblem says what is wrong with a request body in the API's terms, not Go's (no Go
// type or struct names).
func jsonProblem(err error) string { return jsonProblemOf("the body", err) }

// jsonProblemOf says what is wrong with what (a value of a request: "the body", "input").
func jsonProblemOf(what string, err error) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field != "" && strings.HasPrefix(te.Value, "number ") && isFloatKind(te.Type):
		// A number where a number goes: it does not fit one (1e400).
		return fmt.Sprintf("%s is out of range: %s does not fit a number", te.Field, strings.TrimPrefix(te.Value, "number "))
	case errors.As(err, &te) && te.Field != "":
		return fmt.Sprintf("%s must be %s, not a JSON %s", te.Field, graph.JSONKind(te.Type), te.Value)
	case errors.As(err, &te):
		return fmt.Sprintf("%s must be a JSON object, not a JSON %s", what, te.Value)
	case errors.As(err, &se):
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	case errors.Is(err, errTrailingData):
		return "it holds more after its JSON value; send one object"
	case errors.Is(err, io.EOF):
		return what + " is empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return what + " ends in the middle of a value"
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return "unknown field " + strings.TrimPrefix(err.Error(), "json: unknown field ")
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}
