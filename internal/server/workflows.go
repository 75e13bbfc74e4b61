package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"weft/internal/fault"
	"weft/internal/workflow"
	"weft/web/page"
)

// workflowInputMax bounds the input typed into the start form.
const workflowInputMax = 64 << 10

func workflowStartPath(name string) string { return "/workflows/" + url.PathEscape(name) + "/start" }

// workflowDraftKey begins the key under which the browser keeps the start form's input
// (drafts.js), then the user's id: a session that ends before the form is sent does not lose
// it; the new thread's page forgets it.
func workflowDraftKey(name string) string { return workflowStartPath(name) + "|" }

// startable finds a workflow the console starts runs of (one with an example input); others
// are 404 here (a bid evaluation starts from its tender).
func (s *Server) startable(c echo.Context) (workflow.Definition, error) {
	e, ok := s.app.Registry.Get(c.Param("name"))
	if !ok || e.ExampleInput == nil {
		return workflow.Definition{}, notFound()
	}
	return e, nil
}

func (s *Server) workflowStartVM(c echo.Context, e workflow.Definition, input string) page.WorkflowStartVM {
	return page.WorkflowStartVM{Name: e.Name, Title: e.Title, Description: e.Description, Action: workflowStartPath(e.Name),
		Input: input, CSRF: csrfToken(c), DraftKey: workflowDraftKey(e.Name) + currentUser(c).ID}
}

// workflowStartForm shows the start form, filled in with the workflow's example input.
func (s *Server) workflowStartForm(c echo.Context) error {
	e, err := s.startable(c)
	if err != nil {
		return err
	}
	return render(c, http.StatusOK, page.WorkflowStartPage(s.meta(c, "Start "+e.Title), s.workflowStartVM(c, e, string(e.ExampleInput))))
}

// workflowStart starts the run and opens its thread; input the workflow refuses gets the
// form again with the message and the input as typed (status 400).
func (s *Server) workflowStart(c echo.Context) error {
	e, err := s.startable(c)
	if err != nil {
		return err
	}
	typed := c.FormValue("input")
	refuse := func(msg, code string) error {
		v := s.workflowStartVM(c, e, typed)
		v.Error, v.ErrorCode = msg, code
		return render(c, http.StatusBadRequest, page.WorkflowStartPage(s.meta(c, "Start "+e.Title), v))
	}
	in := strings.TrimSpace(typed)
	switch {
	case len(in) > workflowInputMax:
		return refuse(fmt.Sprintf("The input is too long (%d bytes; at most %d).", len(in), workflowInputMax), fault.CodeValidation)
	case in == "":
		return refuse("Type the run's input: a JSON object such as the example.", fault.CodeValidation)
	}
	var obj map[string]json.RawMessage
	err = json.Unmarshal([]byte(in), &obj)
	if se := (*json.SyntaxError)(nil); errors.As(err, &se) {
		return refuse("The input is not valid JSON: "+syntaxWhere(typed, in, se)+".", fault.CodeValidation)
	}
	if err != nil || obj == nil {
		return refuse("The input must be a JSON object, such as "+string(e.ExampleInput)+".", fault.CodeValidation)
	}
	u := currentUser(c)
	j, err := s.app.StartRun(c.Request().Context(), u.TenantID, e.Name, json.RawMessage(in), u.ID)
	var fe *fault.Error
	if errors.As(err, &fe) && fe.Class == fault.Validation {
		return refuse(sentence(fault.Detail(fe.Code, fe.Class, fe.Message)), fe.Code)
	}
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, page.ThreadPath(j.ThreadID)+"?started="+url.QueryEscape(j.ID))
}

// syntaxWhere is workflow.SyntaxWhere.
func syntaxWhere(typed, parsed string, se *json.SyntaxError) string {
	return workflow.SyntaxWhere(typed, parsed, se)
}
