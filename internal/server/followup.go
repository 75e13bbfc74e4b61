package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
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

// A workflow's follow-up runs (workflow.Definition.FollowUp) and its named events
// (Definition.EventName) on the thread page:
//
//	POST /threads/:id/follow-up           another run on the thread, from the follow-up form (pm, admin)
//	POST /api/v1/threads/:id/runs         the same from the API: {"input": {…the form's fields}}

func followUpPath(thread string) string { return page.ThreadPath(thread) + "/follow-up" }

// mayStart: the reader starts runs (pm, admin).
func mayStart(u auth.User) bool { return u.Role == auth.PM || u.Role == auth.Admin }

// followUpVM is the thread's follow-up form: shown when its workflow has one, its run ended
// well, and the reader may start runs.
func (td *threadData) followUpVM(u auth.User, csrf string) page.ThreadFollowUpVM {
	f := td.entry.FollowUp
	if f == nil || !mayStart(u) || td.job.Status != runner.Succeeded || len(td.snap.Next) > 0 || !td.started {
		return page.ThreadFollowUpVM{}
	}
	vm := page.ThreadFollowUpVM{Show: true, Title: "Another run on this thread", Action: followUpPath(td.thread), CSRF: csrf}
	for _, fd := range f.Fields {
		vm.Fields = append(vm.Fields, page.StartFieldVM{Field: fd, Value: fd.Default})
	}
	if len(f.Fields) == 1 {
		vm.Title = f.Fields[0].Label
	}
	return vm
}

// threadFollowUp starts another run on the thread from its follow-up form; refused values
// show the page again with the form's errors (400).
func (s *Server) threadFollowUp(c echo.Context) error {
	ctx := c.Request().Context()
	u := currentUser(c)
	thread := c.Param("id")
	def, _, ok, err := s.app.FollowUpOf(ctx, u.TenantID, thread)
	if errors.Is(err, graph.ErrNotFound) {
		return notFound()
	}
	if err != nil {
		return err
	}
	if !ok {
		return notFound()
	}
	texts, files, err := readStartForm(c, def.FollowUp.Fields)
	if err != nil {
		return err
	}
	vals, err := def.FollowUp.ParseForm(texts, files)
	if err == nil {
		var j runner.Job
		if j, err = s.app.StartFollowUp(ctx, u.TenantID, thread, vals, u.ID); err == nil {
			return c.Redirect(http.StatusSeeOther, page.ThreadPath(thread)+"?followed="+url.QueryEscape(j.ID))
		}
	}
	var fe workflow.FieldErrors
	var ft *fault.Error
	msg := ""
	switch {
	case errors.As(err, &fe):
		msg = "Check the fields marked below."
	case errors.Is(err, postgres.ErrThreadBusy):
		msg = "The thread has a run in progress: wait for it to end."
	case errors.As(err, &ft) && (ft.Class == fault.Validation || ft.Class == fault.Business):
		msg = sentence(fault.Detail(ft.Code, ft.Class, ft.Message))
	default:
		return err
	}
	return s.renderThread(c, http.StatusBadRequest, thread, func(td *threadData, vm *page.ThreadVM) {
		vm.FollowUp = td.followUpVM(u, csrfToken(c))
		vm.FollowUp.Show, vm.FollowUp.Error = true, msg
		if vm.FollowUp.Action == "" {
			vm.FollowUp.Action, vm.FollowUp.CSRF, vm.FollowUp.Title = followUpPath(thread), csrfToken(c), "Another run on this thread"
			for _, fd := range def.FollowUp.Fields {
				vm.FollowUp.Fields = append(vm.FollowUp.Fields, page.StartFieldVM{Field: fd})
			}
		}
		for i, f := range vm.FollowUp.Fields {
			vm.FollowUp.Fields[i].Value, vm.FollowUp.Fields[i].Error = texts[f.Name], fe[f.Name]
		}
	})
}

// apiThreadFollowUp starts another run on the thread from the API: {"input": {…}} holds the
// follow-up form's fields.
func (s *Server) apiThreadFollowUp(c echo.Context) error {
	var req struct {
		Input json.RawMessage `json:"input"`
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	u := currentUser(c)
	ctx := c.Request().Context()
	def, _, ok, err := s.app.FollowUpOf(ctx, u.TenantID, c.Param("id"))
	if errors.Is(err, graph.ErrNotFound) {
		return notFound()
	}
	if err != nil {
		return err
	}
	if !ok {
		return &httpError{status: http.StatusBadRequest, code: fault.CodeValidation,
			msg: fmt.Sprintf("a %s thread takes no follow-up run", def.Title)}
	}
	j, err := s.app.StartFollowUpJSON(ctx, u.TenantID, c.Param("id"), req.Input, u.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, jobJSON(j))
}

// threadEventRows are the thread's named events so far (the newest maxThreadEvents), when
// its workflow names them.
const maxThreadEvents = 300

func (s *Server) threadEventRows(ctx context.Context, td *threadData) (page.ThreadEventsVM, error) {
	if td.entry.EventName == nil {
		return page.ThreadEventsVM{}, nil
	}
	vm := page.ThreadEventsVM{Named: true}
	for after := int64(0); ; {
		evs, err := s.app.Events.ListEvents(ctx, td.tenant, td.thread, after, 500)
		if err != nil {
			return vm, err
		}
		for _, ev := range evs {
			if row, ok := namedEvent(td.entry, ev); ok {
				vm.Rows = append(vm.Rows, row)
			}
		}
		if len(evs) < 500 {
			break
		}
		after = evs[len(evs)-1].ID
	}
	if n := len(vm.Rows); n > maxThreadEvents {
		vm.Rows = slices.Clone(vm.Rows[n-maxThreadEvents:])
	}
	return vm, nil
}

// namedEvent is an event as the workflow names it, in a row (ok false: it has no name).
func namedEvent(def workflow.Definition, ev postgres.StoredEvent) (page.ThreadEventVM, bool) {
	if def.EventName == nil {
		return page.ThreadEventVM{}, false
	}
	name, ok := def.EventName(ev.Event)
	if !ok || name == "" {
		return page.ThreadEventVM{}, false
	}
	row := page.ThreadEventVM{Name: name, Node: ev.Node, At: ev.At.UTC().Format(time.TimeOnly)}
	switch ev.Kind {
	case graph.KindCheckpoint:
		var cp graph.CheckpointSummary
		if b, err := json.Marshal(ev.Data); err == nil && json.Unmarshal(b, &cp) == nil {
			row.Node = strings.Join(cp.Nodes, ", ")
			if len(cp.Next) > 0 {
				row.Detail = "next: " + strings.Join(cp.Next, ", ")
			}
		}
	case graph.KindCustom:
		if b, err := json.Marshal(ev.Data); err == nil {
			row.Detail = threadClip(string(b), 160)
		}
	}
	return row, true
}
