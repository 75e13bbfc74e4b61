package server

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/labstack/echo/v4"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/server/mount"
	"weft/internal/workflow"
	"weft/web/page"
)

// httpError is an error with the status, machine code and safe message the
// edge shows.
type httpError struct {
	status int
	code   string
	msg    string
	fields map[string]string // the fields at fault, by name (a form's, the API's)
}

func (e *httpError) Error() string { return e.msg }

func badRequest(msg string) error {
	return &httpError{status: http.StatusBadRequest, code: fault.CodeValidation, msg: msg}
}

func notFound() error {
	return &httpError{status: http.StatusNotFound, code: fault.CodeNotFound, msg: "There is nothing here, or it belongs to another tenant."}
}

// classify maps any error to what the client sees; api words it for programs
// (the JSON API) rather than for people in the console.
func classify(err error, api bool) *httpError {
	he := classifyErr(err, api)
	if m := sentence(he.msg); !api && m != he.msg { // the domain's errors are Go-style, lower case
		c := *he
		c.msg = m
		return &c
	}
	return he
}

func classifyErr(err error, api bool) *httpError {
	var he *httpError
	var ee *echo.HTTPError
	var fe *fault.Error
	switch {
	case errors.As(err, &he):
		return he
	case errors.As(err, &ee):
		msg := http.StatusText(ee.Code)
		if ee.Code == http.StatusNotFound {
			return notFound().(*httpError)
		}
		if ee.Code == http.StatusRequestEntityTooLarge { // the console's body limit (the API has its own)
			return &httpError{status: ee.Code, code: "BODY_TOO_LARGE",
				msg: fmt.Sprintf("What was sent is larger than the console takes (%sB at most; a document at most %d MB): send a smaller file or less text.",
					webBodyLimit, mount.MaxFile>>20)}
		}
		if m, ok := ee.Message.(string); ok && ee.Code < 500 {
			msg = m
		}
		return &httpError{status: ee.Code, code: strings.ToUpper(strings.ReplaceAll(http.StatusText(ee.Code), " ", "_")), msg: msg}
	case errors.Is(err, graph.ErrNotFound):
		return notFound().(*httpError)
	case errors.As(err, new(workflow.FieldErrors)):
		var fe workflow.FieldErrors
		errors.As(err, &fe)
		return &httpError{status: http.StatusBadRequest, code: fault.CodeValidation, msg: "Check the fields: " + fe.Error(), fields: fe}
	case errors.As(err, new(*workflow.AnswerError)):
		var ae *workflow.AnswerError
		errors.As(err, &ae)
		return answerError(ae).(*httpError)
	case errors.Is(err, graph.ErrUnknownBefore):
		return badRequest(unknownBeforeMsg).(*httpError)
	case errors.As(err, &fe):
		status := http.StatusInternalServerError
		msg := fe.Message
		switch {
		case fe.Code == fault.CodeInterruptResumeInvalid:
			status = http.StatusConflict
			msg = "This review link cannot be used: " + fe.Message + ". Open the review again from the inbox."
			if api {
				msg = "The resume token cannot be used: " + fe.Message + ". If the thread waits for a review, get its token with POST /api/v1/threads/{thread}/resume-token."
			}
		case fe.Class == fault.Validation:
			status = http.StatusBadRequest
		case fe.Class == fault.Security:
			status = http.StatusForbidden
		case fe.Class == fault.Business:
			status = http.StatusConflict
		default:
			msg = "Something went wrong on our side."
		}
		if msg == "" {
			msg = http.StatusText(status)
		}
		return &httpError{status: status, code: fe.Code, msg: msg}
	case errors.Is(err, graph.ErrConflict):
		return &httpError{status: http.StatusConflict, code: fault.CodeThreadConflict, msg: "Someone else changed this thread at the same moment. Reload and try again."}
	case unstorableText(err):
		return &httpError{status: http.StatusBadRequest, code: fault.CodeValidation, msg: postgres.UnstorableText}
	}
	return &httpError{status: http.StatusInternalServerError, code: fault.CodeUnknown, msg: "Something went wrong on our side. The error was logged."}
}

// handleError renders errors: JSON with a machine code for the API, a
// fragment for htmx, a friendly page otherwise. 404s stay 404s.
func (s *Server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	req := c.Request()
	// The router's 404 for an address that other methods have: a 405 naming them.
	if ee := (*echo.HTTPError)(nil); errors.As(err, &ee) && ee.Code == http.StatusNotFound {
		if allow := allowedMethods(c.Echo(), echo.GetPath(req)); len(allow) > 0 && !slices.Contains(allow, req.Method) {
			c.Response().Header().Set(echo.HeaderAllow, strings.Join(allow, ", "))
			err = echo.NewHTTPError(http.StatusMethodNotAllowed,
				fmt.Sprintf("This address does not take %s; it takes %s.", req.Method, strings.Join(allow, " or ")))
		}
	}
	api := strings.HasPrefix(req.URL.Path, "/api/")
	he := classify(err, api)
	if he.status >= 500 {
		s.log.ErrorContext(c.Request().Context(), "request failed", "err", err, "path", c.Request().URL.Path, "request_id", c.Response().Header().Get(echo.HeaderXRequestID))
	}
	switch {
	case api:
		body := map[string]any{"code": he.code, "message": he.msg}
		if len(he.fields) > 0 {
			body["fields"] = he.fields
		}
		_ = c.JSON(he.status, map[string]any{"error": body})
	case req.Header.Get("HX-Request") == "true":
		// htmx swaps only 2xx by default; retarget the message into the page's alert slot.
		c.Response().Header().Set("HX-Retarget", "#alerts")
		c.Response().Header().Set("HX-Reswap", "innerHTML")
		_ = render(c, he.status, page.Alert(page.AlertVM{Kind: "error", Message: he.msg, Code: he.code}))
	default:
		// An unknown URL matched no route, so no route checked the session: the page still
		// shows a signed-in user the navigation.
		if currentUser(c).ID == "" && s.auth != nil {
			if u, ok := s.auth.SessionUser(req.Context()); ok {
				c.Set(ctxUser, u)
			}
		}
		_ = render(c, he.status, page.ErrorPage(s.meta(c, "Error"), page.ErrorVM{Status: he.status, Title: http.StatusText(he.status), Message: he.msg, Code: he.code}))
	}
}

func urlQueryEscape(s string) string { return url.QueryEscape(s) }

// sentence starts msg with a capital letter, for people to read.
func sentence(msg string) string { return mount.Sentence(msg) }

// unstorableText reports PostgreSQL refusing text the client sent: a NUL byte or a byte
// sequence that is not UTF-8, in an address or a form value, from a store that did not
// translate it (postgres.translate makes it a validation fault).
func unstorableText(err error) bool {
	var pe *pgconn.PgError
	// 22021 is character_not_in_repertoire, 22P05 untranslatable_character (jsonb and an escaped NUL).
	return errors.As(err, &pe) && (pe.Code == "22021" || pe.Code == "22P05")
}

// unknownBeforeMsg refuses a history page's before cursor (graph.ErrUnknownBefore).
const unknownBeforeMsg = "The page link names no checkpoint of this thread (made up, another thread's, or pruned since): start again from the newest."
