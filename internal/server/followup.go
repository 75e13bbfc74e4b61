package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/labstack/echo/v4"

	"weft/internal/auth"
	"weft/internal/fault"
	"weft/internal/runner"
	"weft/internal/workflow"
	"weft/web/page"
)

// A follow-up: a new input on a finished thread of a workflow that takes one
// (Definition.FollowUp), which continues the thread with a new run.
//
//	POST /threads/:id/follow-up          the thread page's form (pm, admin)
//	POST /api/v1/threads/:id/runs        the API's, {"input": {<the form's fields>}} (pm, admin)

func followUpPath(thread string) string { return page.ThreadPath(thread) + "/follow-up" }

// mayStart: the user starts runs (pm, admin).
func mayStart(u auth.User) bool { return u.Role == auth.PM || u.Role == auth.Admin }

// followUpVM is the thread page's follow-up form: offered to those who start runs, on a
// thread of a workflow with a FollowUp form whose jobs have all finished.
func (td *threadData) followUpVM(u auth.User, csrf string) page.ThreadFollowUpVM {
	f := td.entry.FollowUp
	if f == nil || !mayStart(u) || !td.started {
		return page.ThreadFollowUpVM{}
	}
	for _, j := range td.jobs {
		if !j.Status.Terminal() {
			return page.ThreadFollowUpVM{Waiting: "A follow-up can be asked here once the thread's run has finished."}
		}
	}
	vm := page.ThreadFollowUpVM{Open: true, Action: followUpPath(td.thread), CSRF: csrf}
	for _, fd := range f.Fields {
		vm.Fields = append(vm.Fields, page.StartFieldVM{Field: fd, Value: fd.Default})
	}
	return vm
}

// threadFollowUp queues the follow-up and opens the thread again; refused values get the page
// again with the messages beside the fields and the values as typed (400), a thread with a run
// in progress the page with why (409).
func (s *Server) threadFollowUp(c echo.Context) error {
	ctx := c.Request().Context()
	u := currentUser(c)
	thread := c.Param("id")
	def, _, err := s.app.FollowUpDef(ctx, u.TenantID, thread)
	if err != nil {
		return err
	}
	if def.FollowUp == nil {
		return notFound()
	}
	texts, files, err := readFields(c, def.FollowUp.Fields)
	if err != nil {
		return err
	}
	vals, err := def.FollowUp.ParseForm(texts, files)
	if err == nil {
		var j runner.Job
		if j, err = s.app.FollowUp(ctx, u.TenantID, thread, vals, u.ID); err == nil {
			return c.Redirect(http.StatusSeeOther, page.ThreadPath(thread)+"?followed="+url.QueryEscape(j.ID))
		}
	}
	return s.refuseFollowUp(c, thread, texts, err)
}

// refuseFollowUp renders the thread's page with the follow-up form's refusal, or returns an
// error the edge maps (a fault of the server).
func (s *Server) refuseFollowUp(c echo.Context, thread string, texts map[string]string, err error) error {
	var fe workflow.FieldErrors
	var ft *fault.Error
	status, msg, code := http.StatusBadRequest, "Check the fields marked below.", fault.CodeValidation
	switch {
	case errors.As(err, &fe):
	case errors.As(err, &ft) && ft.Class == fault.Validation:
		msg, code = sentence(fault.Detail(ft.Code, ft.Class, ft.Message)), ft.Code
	case errors.As(err, &ft) && ft.Class == fault.Business:
		status, msg, code = http.StatusConflict, sentence(fault.Detail(ft.Code, ft.Class, ft.Message)), ft.Code
	default:
		return err
	}
	return s.renderThread(c, status, thread, func(td *threadData, vm *page.ThreadVM) {
		if !vm.FollowUp.Open && td.entry.FollowUp != nil { // busy: the form as sent, with why
			vm.FollowUp = page.ThreadFollowUpVM{Open: true, Action: followUpPath(thread), CSRF: csrfToken(c)}
			for _, fd := range td.entry.FollowUp.Fields {
				vm.FollowUp.Fields = append(vm.FollowUp.Fields, page.StartFieldVM{Field: fd, Value: fd.Default})
			}
		}
		for i, f := range vm.FollowUp.Fields {
			if t, ok := texts[f.Name]; ok || f.Kind == workflow.Bool {
				vm.FollowUp.Fields[i].Value = t
			}
			vm.FollowUp.Fields[i].Error = fe[f.Name]
		}
		vm.FollowUp.Error, vm.FollowUp.ErrorCode = msg, code
	})
}

// apiFollowUp queues a follow-up from the API: {"input": {<the FollowUp form's fields>}}.
func (s *Server) apiFollowUp(c echo.Context) error {
	var req struct {
		Input json.RawMessage `json:"input"`
	}
	if err := decodeJSON(c, &req); err != nil {
		return err
	}
	if len(req.Input) == 0 {
		return badRequest(`input is missing: send {"input": {...}} with the fields of the workflow's follow-up`)
	}
	u := currentUser(c)
	j, err := s.app.FollowUpJSON(c.Request().Context(), u.TenantID, c.Param("id"), req.Input, u.ID)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, jobJSON(j))
}

// followedNotice is the notice after a follow-up was queued.
func followedNotice(short, title string) string {
	return fmt.Sprintf("Follow-up queued: job %s of %s continues this thread.", short, title)
}
