package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
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
	g.POST("/threads/:id/runs", s.apiThreadFollowUp, requireRole(auth.PM, auth.Admin), jsonBodies)
	g.POST("/threads/:id/state", s.apiUpdateState, requireRole(auth.Reviewer, auth.Admin), jsonBodies)
	g.GET("/threads/:id/artifacts", s.apiArtifacts)
	g.GET("/threads/:id/artifacts/*", s.apiArtifact)
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
	limit, files := s.apiStartLimit()
	if err := decodeJSONLimit(c, &req, limit); err != nil {
		if he := (*httpError)(nil); errors.As(err, &he) && he.code == "BODY_TOO_LARGE" && files > 0 {
			return &httpError{status: he.status, code: he.code, msg: fmt.Sprintf(
				"the request body is larger than %s, the most a start takes: a start's files may hold at most %s, sent base64-encoded (a third larger)",
				page.Bytes(limit), page.Bytes(files))}
		}
		return err
	}
	if req.Workflow == "" {
		return badRequest(`workflow is missing: send {"workflow": "<name>", "input": {...}} (GET /api/v1/workflows lists the names)`)
	}
	u := currentUser(c)
	ctx := c.Request().Context()
	// A start form's fields check their own sizes (a file's, a text's); a raw input is bounded
	// as the console's raw-JSON start form bounds it.
	if def, ok := s.app.Registry.Get(req.Workflow); (!ok || def.Start == nil) && len(req.Input) > workflowInputMax {
		return badRequest(fmt.Sprintf("input is too large (%d bytes; at most %d)", len(req.Input), workflowInputMax))
	}
	j, err := s.app.StartRun(ctx, u.TenantID, req.Workflow, req.Input, u.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, jobJSON(j))
}

// apiStartLimit bounds POST /api/v1/runs' body: apiBodyLimit, or, when a workflow's start
// form takes files, the most they may hold base64-encoded (4 bytes per 3) and apiBodyLimit for
// the rest. files is the largest start's files' limit (0: no start takes files).
func (s *Server) apiStartLimit() (limit, files int64) {
	limit = apiBodyLimit
	for _, d := range s.app.Registry.All() {
		if d.Start == nil {
			continue
		}
		if n := d.Start.UploadBytes(); n > 0 {
			files = max(files, n)
			limit = max(limit, (n+2)/3*4+apiBodyLimit)
		}
	}
	return limit, files
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

// apiResumeBody is seed 000 §7.2: the token, the decision, the comment and who decided. Any
// other key is the workflow's (a bid evaluation's "scores", a generic review's "value", a
// contract review's "items"), handed to its Decide as sent.
type apiResumeBody struct {
	ResumeToken string
	Decision    string
	Comment     string
	ReviewerID  string
	Values      map[string]json.RawMessage
}

func decodeResumeBody(c echo.Context) (apiResumeBody, error) {
	var raw map[string]json.RawMessage
	if err := decodeJSON(c, &raw); err != nil {
		return apiResumeBody{}, err
	}
	var b apiResumeBody
	text := func(key string, dst *string) error {
		v, ok := raw[key]
		delete(raw, key)
		if !ok || string(v) == "null" {
			return nil
		}
		if err := json.Unmarshal(v, dst); err != nil {
			return badRequest(fmt.Sprintf("%s must be a string, not %s", key, workflow.JSONValueKind(v)))
		}
		return nil
	}
	for key, dst := range map[string]*string{"resume_token": &b.ResumeToken, "decision": &b.Decision, "comment": &b.Comment} {
		if err := text(key, dst); err != nil {
			return b, err
		}
	}
	if ed, ok := raw["editor"]; ok {
		delete(raw, "editor")
		var e struct {
			ReviewerID string `json:"reviewer_id"`
		}
		if err := json.Unmarshal(ed, &e); err != nil {
			return b, badRequest(`editor must be {"reviewer_id": "…"}`)
		}
		b.ReviewerID = e.ReviewerID
	}
	for k, v := range raw {
		if string(v) == "null" {
			delete(raw, k) // null is no value
		}
	}
	b.Values = raw
	return b, nil
}

func (s *Server) apiResume(c echo.Context) error {
	body, err := decodeResumeBody(c)
	if err != nil {
		return err
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
	if body.ReviewerID == "" {
		return &httpError{status: http.StatusBadRequest, code: fault.CodeInterruptResumeInvalid, msg: "editor.reviewer_id is required: a resume carries the reviewer's identity"}
	}
	// The decision is recorded under the reviewer it names, so that must be one of the
	// tenant's users who may review (a pm or another tenant's user cannot be named). Any
	// reviewer or admin of the tenant may be named: the token stands for an integration, not
	// a person, and the audit row records the token beside the name (see the README).
	reviewer, err := s.auth.User(ctx, body.ReviewerID)
	if err != nil || reviewer.TenantID != u.TenantID || (reviewer.Role != auth.Reviewer && reviewer.Role != auth.Admin) {
		return &httpError{status: http.StatusForbidden, code: fault.CodeInterruptResumeInvalid,
			msg: fmt.Sprintf("editor.reviewer_id %q is not a reviewer of this tenant", body.ReviewerID)}
	}
	if n := utf8.RuneCountInString(body.Comment); n > reviewCommentMax {
		return badRequest(fmt.Sprintf("comment is too long (%d characters; at most %d)", n, reviewCommentMax))
	}
	if err := usertext.Check("comment", body.Comment); err != nil {
		return badRequest(err.Error())
	}
	if j.Status != runner.WaitingReview || len(j.Interrupts) == 0 { // as the runner refuses a token then
		return fault.New(fault.Validation, fault.CodeInterruptResumeInvalid, fmt.Sprintf("the thread is not waiting for review (the job is %s)", j.Status))
	}
	// The pause the token answers decides which interrupt the workflow checks the decision
	// against; without a match (an unknown or used token) the runner refuses it below.
	it := j.Interrupts[0]
	if jobID, interruptID, found, err := s.app.Jobs.TokenJob(ctx, u.TenantID, body.ResumeToken); err == nil && found && jobID == j.ID {
		if p, ok := pickInterrupt(j, interruptID); ok {
			it = p
		}
	}
	def, rv, err := s.reviewOf(ctx, reviewer, j, it)
	if err != nil {
		return err
	}
	decision, err := def.Reviewer().Decide(ctx, rv, workflow.Answer{Decision: body.Decision, Comment: body.Comment, Values: body.Values})
	var ae *workflow.AnswerError
	if errors.As(err, &ae) {
		if s.answeredMeanwhile(ctx, u.TenantID, j, it) {
			return &httpError{status: http.StatusConflict, code: fault.CodeInterruptResumeInvalid,
				msg: "the pause was answered by another decision while this one was checked; read the thread's state again"}
		}
		return answerError(ae)
	}
	if err != nil {
		return err
	}
	req, err := resumeRequest(u.TenantID, j.ID, body.ResumeToken, body.ReviewerID+" via "+u.ID, decision)
	if err != nil {
		return badRequest(err.Error())
	}
	resumed, err := s.app.Runner.Resume(ctx, req)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, jobJSON(resumed))
}

// answerError is a workflow's refusal of an answer as the API says it: a 400 with its code,
// message and the fields at fault.
func answerError(ae *workflow.AnswerError) error {
	code := ae.Code
	if code == "" {
		code = fault.CodeValidation
	}
	return &httpError{status: http.StatusBadRequest, code: code, msg: ae.Message, fields: ae.Fields}
}

func (s *Server) apiThreadEvents(c echo.Context) error {
	u := currentUser(c)
	j, g, err := s.threadOf(c.Request().Context(), u.TenantID, c.Param("id"))
	if err != nil {
		return err
	}
	modes, err := streamModes(c.QueryParam("modes"))
	if err != nil {
		return err
	}
	def := s.definition(j.Workflow)
	var key any = apiEventFrame{}
	encode := encodeAPIEventFrame
	if !mayResume(u) { // an interrupt's payload may carry its resume token
		key, encode = apiEventFrameNoTokens{}, encodeAPIEventFrameNoTokens
	}
	var prev map[string]json.RawMessage // the values at the previous checkpoint (updates mode)
	return s.stream(c, u.TenantID, j.ThreadID, 0, func(ctx context.Context, ev postgres.StoredEvent) ([]sseMessage, error) {
		var msgs []sseMessage
		if modes.stored(ev.Kind) {
			name := ev.Kind
			if def.EventName != nil {
				// Named once per event for all the streams of the thread (see Encode).
				n, err := ev.Encode(apiEventName{j.Workflow}, func(e postgres.StoredEvent) ([]byte, error) {
					if n, ok := def.EventName(e.Event); ok {
						return append([]byte{'='}, n...), nil
					}
					return []byte{}, nil
				})
				if err != nil {
					return nil, err
				}
				if len(n) > 0 && string(n[1:]) != name {
					name = string(n[1:])
				}
			}
			if name == ev.Kind {
				frame, err := ev.Encode(key, encode)
				if err != nil {
					return nil, err
				}
				msgs = append(msgs, sseMessage{Frame: frame})
			} else {
				b, err := apiEventMessage(ev, !mayResume(u))
				if err != nil {
					return nil, err
				}
				msgs = append(msgs, sseMessage{Frame: retitleSSE(b, ev.Kind, name)})
			}
		}
		if ev.Kind == graph.KindCheckpoint && (modes.values || modes.updates) {
			more, err := s.stateEvents(ctx, g, def, ev, modes, &prev, !mayResume(u))
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, more...)
		}
		return msgs, nil
	})
}

// apiModes are the stream modes a client picked (?modes=updates,values,custom,debug).
type apiModes struct {
	all, values, updates, custom, debug bool
}

// stored reports whether the stored event kind is wanted: by default every stored kind;
// with modes, custom events with custom, everything with debug, and the events that say
// where a run is (checkpoint, interrupt, job, events_dropped) always.
func (m apiModes) stored(kind string) bool {
	switch {
	case m.all || m.debug:
		return true
	case kind == graph.KindCustom:
		return m.custom
	}
	return true
}

func streamModes(q string) (apiModes, error) {
	if strings.TrimSpace(q) == "" {
		return apiModes{all: true}, nil
	}
	var m apiModes
	for _, w := range strings.Split(q, ",") {
		switch strings.TrimSpace(w) {
		case "values":
			m.values = true
		case "updates":
			m.updates = true
		case "custom":
			m.custom = true
		case "debug":
			m.debug, m.values, m.updates, m.custom = true, true, true, true
		default:
			return m, badRequest(fmt.Sprintf("modes takes values, updates, custom and debug, comma-separated; not %q", w))
		}
	}
	return m, nil
}

// stateEvents are the values and updates events of a checkpoint: the state at it, and the
// channels it changed (by the nodes that wrote it), as the workflow's view allows (its
// hidden channels and every resume token left out).
func (s *Server) stateEvents(ctx context.Context, g graph.Runnable, def workflow.Definition, ev postgres.StoredEvent, m apiModes,
	prev *map[string]json.RawMessage, hideTokens bool) ([]sseMessage, error) {
	var cp graph.CheckpointSummary
	if raw, ok := ev.Data.(json.RawMessage); ok {
		_ = json.Unmarshal(raw, &cp)
	}
	if cp.ID == "" {
		return nil, nil
	}
	snap, err := g.StateJSON(ctx, graph.Config{ThreadID: ev.Thread, CheckpointID: cp.ID})
	if errors.Is(err, graph.ErrNotFound) { // pruned since
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var vals map[string]json.RawMessage
	if err := json.Unmarshal(snap.Values, &vals); err != nil {
		return nil, err
	}
	for _, h := range def.Hidden {
		delete(vals, h)
	}
	var msgs []sseMessage
	frame := func(kind string, data any) error {
		b, err := json.Marshal(map[string]any{"kind": kind, "thread_id": ev.Thread, "step": ev.Step, "checkpoint_id": cp.ID, "nodes": cp.Nodes, "data": data})
		if err != nil {
			return err
		}
		if hideTokens {
			b = withoutTokens(b)
		}
		msgs = append(msgs, sseMessage{Frame: appendSSE(nil, ev.ID, kind, b)})
		return nil
	}
	if m.updates && *prev != nil {
		changed := map[string]json.RawMessage{}
		for k, v := range vals {
			if string((*prev)[k]) != string(v) {
				changed[k] = v
			}
		}
		if err := frame(graph.KindUpdates, changed); err != nil {
			return nil, err
		}
	}
	*prev = vals
	if m.values {
		if err := frame(graph.KindValues, vals); err != nil {
			return nil, err
		}
	}
	return msgs, nil
}

// retitleSSE renames an SSE message's event (a workflow's name for it, seed 001 §7.2).
func retitleSSE(frame []byte, from, to string) []byte {
	return []byte(strings.Replace(string(frame), "event: "+from+"\n", "event: "+to+"\n", 1))
}

// apiEventFrame is the key of an event's API stream message among its
// shared encodings.
type apiEventFrame struct{}

// apiEventName keys an event's name in a workflow's terms (Definition.EventName), memoized
// per event: "=" and the name, or nothing when the workflow does not name it.
type apiEventName struct{ workflow string }

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
func decodeJSON(c echo.Context, v any) error { return decodeJSONLimit(c, v, apiBodyLimit) }

// apiBodyLimit bounds an API call's body (a start that carries files has a limit of its own,
// apiStartLimit).
const apiBodyLimit = 1 << 20

// decodeJSONLimit is decodeJSON for a body of at most limit bytes (larger: a 413).
func decodeJSONLimit(c echo.Context, v any, limit int64) error {
	if err := sentAsJSON(c.Request()); err != nil {
		return err
	}
	dec := json.NewDecoder(http.MaxBytesReader(c.Response(), c.Request().Body, limit))
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

// apiUpdateState is LangGraph's update_state: {"values": {channel: value}, "as_node": "…"}
// applied to the thread's head as if as_node wrote it (as_node "" : the node that wrote the
// head). It is refused while a run of the thread is on its way (queued, running, a retry
// due): the update would race the run. A paused thread may be updated; the resume that
// continues it is the same resume path, with its token. Audited as thread.update_state.
func (s *Server) apiUpdateState(c echo.Context) error {
	var body struct {
		Values json.RawMessage `json:"values"`
		AsNode string          `json:"as_node"`
	}
	if err := decodeJSON(c, &body); err != nil {
		return err
	}
	u := currentUser(c)
	ctx := c.Request().Context()
	j, g, err := s.threadOf(ctx, u.TenantID, c.Param("id"))
	if err != nil {
		return err
	}
	switch j.Status {
	case runner.Queued, runner.Running, runner.RetryScheduled, runner.DLQPending:
		return &httpError{status: http.StatusConflict, code: postgres.CodeThreadBusy,
			msg: fmt.Sprintf("the thread has a run in progress (its job is %s): update its state once the run pauses or ends", j.Status)}
	}
	if len(body.Values) == 0 || string(body.Values) == "null" {
		return badRequest(`values is required: {"values": {"<channel>": <value>}, "as_node": "<node>"}`)
	}
	var vals map[string]json.RawMessage
	if err := json.Unmarshal(body.Values, &vals); err != nil {
		return badRequest("values must be a JSON object of channel values")
	}
	for _, h := range s.definition(j.Workflow).Hidden {
		if _, ok := vals[h]; ok {
			return badRequest(fmt.Sprintf("%s cannot be set from outside the run", h))
		}
	}
	if err := runner.StorableJSON(body.Values); err != nil {
		return badRequest(err.Error())
	}
	if err := usertext.CheckJSON("values", body.Values); err != nil {
		return badRequest(err.Error())
	}
	cp, err := g.UpdateStateJSON(ctx, graph.Config{ThreadID: j.ThreadID}, body.Values, body.AsNode)
	switch {
	case errors.Is(err, graph.ErrConflict):
		return &httpError{status: http.StatusConflict, code: fault.CodeThreadConflict, msg: "the thread moved on while the update was applied: read its state and try again"}
	case errors.Is(err, graph.ErrNotFound):
		return &httpError{status: http.StatusConflict, code: fault.CodeValidation, msg: "the thread has no checkpoint yet: start it before updating its state"}
	case err != nil && !isFault(err):
		return badRequest(err.Error())
	case err != nil:
		return err
	}
	payload, _ := json.Marshal(map[string]any{"checkpoint_id": cp.ID, "as_node": cp.Nodes, "values": json.RawMessage(body.Values)})
	if _, err := s.app.Audit.Append(ctx, postgres.Entry{TenantID: u.TenantID, Actor: u.ID, Action: "thread.update_state", Subject: j.ThreadID,
		Workflow: j.Workflow, Payload: payload}); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, map[string]any{"checkpoint": cp.Summary(), "thread_id": j.ThreadID})
}

func isFault(err error) bool {
	var fe *fault.Error
	return errors.As(err, &fe)
}
