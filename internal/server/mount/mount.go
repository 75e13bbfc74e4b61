// Package mount is what a workflow's own handler package (internal/workflow/<name>/<name>http,
// where a workflow really needs pages of its own: bid evaluation's tenders) builds on to add
// its routes to the console and the API: the route groups with the session, CSRF and token
// checks applied, the page frame, the signed-in user, role checks and the server's way of
// showing errors. The server (internal/server) hands a Routes to each Func the App wiring
// lists; it never imports a workflow's handler package, and this package imports neither of
// them (internal/app imports the handler packages, and the server imports internal/app). It
// imports echo, templ, web/layout, internal/auth and the standard library.
//
// Errors a handler returns are shown as the server shows its own: graph.ErrNotFound is a
// 404, a fault.Error of class Validation a 400, Business a 409, Security a 403, with its
// message; anything else a 500 whose cause is logged, not shown.
package mount

import (
	"bytes"
	"context"
	"unicode"
	"unicode/utf8"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"weft/internal/auth"
	"weft/web/layout"
)

// Func adds a workflow's routes to the server.
type Func func(Routes)

// Routes is where a workflow's handlers register, and what they render with.
type Routes struct {
	// Pages is the console for signed-in users: the session, CSRF protection and the page
	// body limit (MaxFile for a file) are applied; add RequireRole per route, and declare the
	// path's section (Section) so that sign-in and links follow the same rule.
	Pages *echo.Group
	// API is /api/v1 for the tenant's API tokens (the token's user is User); add RequireRole
	// per route. Answer with JSON.
	API *echo.Group

	// RequireRole admits only the given roles (others get a 403 saying which role it needs).
	RequireRole func(roles ...auth.Role) echo.MiddlewareFunc
	// Section declares that the console's pages under prefix ("/projects") are for roles
	// only; OpenTo, that the pages matching pattern (path.Match: "/projects/*/documents/*")
	// are open to every signed-in role whatever their section. Sign-in's next page and
	// MayOpen follow them.
	Section func(prefix string, roles ...auth.Role)
	OpenTo  func(pattern string)
	// MayOpen says whether role may open the console's page at path (links to pages a
	// reader may not open are left out).
	MayOpen func(role auth.Role, path string) bool

	// Meta is the frame of the request's page (its title, the user, the navigation); Active
	// is the navigation key to mark ("dashboard").
	Meta func(c echo.Context, title, active string) layout.Meta
	// UserNames names the tenant's users by id, read once when first called (nil when they
	// cannot be read); ActorName words an audit actor with them, as the server's pages do.
	UserNames func(ctx context.Context, tenantID string) func() map[string]string
	ActorName func(names map[string]string, actor string) string
	// Explain is how the console shows err: its status, machine code and message (the
	// message is safe to show; a server error's cause is not in it).
	Explain func(err error) (status int, code, message string)
	// JSON answers the API with v as JSON, with every resume token hidden from a caller who
	// may not resume threads.
	JSON func(c echo.Context, status int, v any) error
}

// MaxFile is the largest file a console form takes (a bid document). A larger one is the
// workflow's to refuse with its own message; a request over the page body limit is refused
// by the server before it reaches a handler.
const MaxFile = 2 << 20

// UserKey is the echo context key of the signed-in user (auth.User), set by the server
// before a handler runs.
const UserKey = "weft.user"

// CSRFKey is the echo context key of the request's CSRF token, which every form posts back
// as the field _csrf (or the header X-CSRF-Token).
const CSRFKey = "csrf"

// User is the request's user: the session's on a page, the token's on the API.
func User(c echo.Context) auth.User {
	u, _ := c.Get(UserKey).(auth.User)
	return u
}

// CSRFToken is the token a page's forms post back.
func CSRFToken(c echo.Context) string {
	t, _ := c.Get(CSRFKey).(string)
	return t
}

// IsHTMX reports whether the request is an htmx partial request (not a boosted full-page
// navigation): it wants the region, not the page.
func IsHTMX(c echo.Context) bool {
	return c.Request().Header.Get("HX-Request") == "true" && c.Request().Header.Get("HX-Boosted") != "true"
}

// Render writes a templ component as the answer, with a status.
func Render(c echo.Context, status int, comp templ.Component) error {
	var buf bytes.Buffer
	if err := comp.Render(c.Request().Context(), &buf); err != nil {
		return err
	}
	return c.HTMLBlob(status, buf.Bytes())
}

// Sentence starts msg with a capital letter, for people to read (the domain's errors are
// Go-style, lower case).
func Sentence(msg string) string {
	r, n := utf8.DecodeRuneInString(msg)
	if !unicode.IsLower(r) {
		return msg
	}
	return string(unicode.ToUpper(r)) + msg[n:]
}
