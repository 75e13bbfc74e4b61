package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/labstack/echo/v4"

	"weft/internal/fault"
	"weft/internal/runner"
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
	if !ok || !e.Startable() {
		return workflow.Definition{}, notFound()
	}
	return e, nil
}

func (s *Server) workflowStartVM(c echo.Context, e workflow.Definition, input string) page.WorkflowStartVM {
	v := page.WorkflowStartVM{Name: e.Name, Title: e.Title, Description: e.Description, Action: workflowStartPath(e.Name),
		Input: input, CSRF: csrfToken(c), DraftKey: workflowDraftKey(e.Name) + currentUser(c).ID}
	if e.Start != nil {
		for _, f := range e.Start.Fields {
			v.Fields = append(v.Fields, page.StartFieldVM{Field: f, Value: f.Default})
		}
	}
	return v
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
	if e.Start != nil {
		return s.workflowStartFields(c, e)
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

// workflowStartFields starts a run from a workflow's typed start form: each field checked
// (the same rules as the API's), refusals shown beside their fields with what was typed.
func (s *Server) workflowStartFields(c echo.Context, e workflow.Definition) error {
	texts, files, err := readStartForm(c, e.Start.Fields)
	if err != nil {
		return err
	}
	refuse := func(fields map[string]string, msg, code string) error {
		v := s.workflowStartVM(c, e, "")
		for i, f := range v.Fields {
			if t, ok := texts[f.Name]; ok || f.Kind == workflow.Bool {
				v.Fields[i].Value = t
			}
			v.Fields[i].Error = fields[f.Name]
		}
		v.Error, v.ErrorCode = msg, code
		return render(c, http.StatusBadRequest, page.WorkflowStartPage(s.meta(c, "Start "+e.Title), v))
	}
	vals, err := e.Start.ParseForm(texts, files)
	if err == nil {
		u := currentUser(c)
		var j runner.Job
		if j, err = s.app.StartValues(c.Request().Context(), u.TenantID, e.Name, vals, u.ID); err == nil {
			return c.Redirect(http.StatusSeeOther, page.ThreadPath(j.ThreadID)+"?started="+url.QueryEscape(j.ID))
		}
	}
	var fe workflow.FieldErrors
	if errors.As(err, &fe) {
		return refuse(fe, "Check the fields marked below.", fault.CodeValidation)
	}
	var ft *fault.Error
	if errors.As(err, &ft) && (ft.Class == fault.Validation || ft.Class == fault.Business) {
		return refuse(nil, sentence(fault.Detail(ft.Code, ft.Class, ft.Message)), ft.Code)
	}
	return err
}

// readStartForm reads a start form's fields from a console post: texts by name, and each
// file field's upload (at most its limit and one byte more, so a larger one is refused by the
// field's own check).
func readStartForm(c echo.Context, fields []workflow.Field) (map[string]string, map[string]workflow.File, error) {
	texts, files := map[string]string{}, map[string]workflow.File{}
	form, err := c.FormParams()
	if err != nil {
		return nil, nil, badRequest("The form could not be read.")
	}
	for _, f := range fields {
		if f.Kind != workflow.Upload {
			if vs, ok := form[f.Name]; ok && len(vs) > 0 {
				texts[f.Name] = vs[0]
			}
			continue
		}
		fh, err := c.FormFile(f.Name)
		if err != nil {
			continue // none sent: the field's own rule says whether one is required
		}
		limit := f.MaxBytes
		if limit <= 0 {
			limit = 10 << 20
		}
		file, err := fh.Open()
		if err != nil {
			return nil, nil, err
		}
		data, err := io.ReadAll(io.LimitReader(file, limit+1))
		_ = file.Close()
		if err != nil {
			return nil, nil, err
		}
		files[f.Name] = workflow.File{Name: fh.Filename, ContentType: fh.Header.Get("Content-Type"), Data: data}
	}
	return texts, files, nil
}
