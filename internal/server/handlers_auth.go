package server

import (
	"errors"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"weft/internal/auth"
	"weft/web/page"
)

// demoLogins are the logins the login page lists (configured, never looked up).
func (s *Server) demoLogins(echo.Context) []page.DemoLogin { return s.cfg.DemoLogins }

// DemoLogins lists the demo users for the login page.
func DemoLogins() []page.DemoLogin {
	var out []page.DemoLogin
	for _, u := range auth.DemoUsers("demo", "acme") {
		out = append(out, page.DemoLogin{Email: u.Email, Role: string(u.Role) + " · " + u.TenantID, Password: auth.DemoPassword})
	}
	return out
}

func (s *Server) loginPage(c echo.Context) error {
	if u, ok := s.auth.SessionUser(c.Request().Context()); ok && u.ID != "" {
		// Signed in already (in another tab, say): on to the page the link asked for.
		return c.Redirect(http.StatusSeeOther, s.nextFor(u.Role, safeNext(c.QueryParam("next"))))
	}
	vm := page.LoginVM{Next: safeNext(c.QueryParam("next")), Demo: s.demoLogins(c)}
	if c.QueryParam("ended") == "1" {
		vm.Info = "Your session ended. Sign in again to carry on: a form you were filling in keeps what you typed."
	}
	return render(c, http.StatusOK, page.Login(s.meta(c, "Sign in"), vm))
}

func (s *Server) login(c echo.Context) error {
	email := strings.TrimSpace(c.FormValue("email"))
	next := safeNext(c.FormValue("next"))
	u, err := s.auth.Authenticate(c.Request().Context(), email, c.FormValue("password"))
	if errors.Is(err, auth.ErrInvalidLogin) || (err == nil && u.ID == "") {
		return render(c, http.StatusUnauthorized, page.Login(s.meta(c, "Sign in"),
			page.LoginVM{Email: email, Next: next, Error: "The email or password is not right.", Demo: s.demoLogins(c)}))
	}
	if errors.Is(err, auth.ErrDeactivated) {
		return render(c, http.StatusForbidden, page.Login(s.meta(c, "Sign in"),
			page.LoginVM{Email: email, Next: next, Error: "This account is deactivated. Ask an admin of your organisation to reactivate it.", Demo: s.demoLogins(c)}))
	}
	if err != nil {
		return err
	}
	if err := s.auth.Login(c.Request().Context(), u); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, s.nextFor(u.Role, next))
}

func (s *Server) logout(c echo.Context) error {
	if err := s.auth.Logout(c.Request().Context()); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/login")
}

// safeNext keeps redirects on this site.
func safeNext(n string) string {
	if !strings.HasPrefix(n, "/") || strings.HasPrefix(n, "//") || strings.Contains(n, "\\") {
		return ""
	}
	// Browsers drop tabs and newlines from a URL ("/\t/evil.example" is "//evil.example" to
	// them): no control character may pass, and the rest must parse as a path of this site.
	if strings.IndexFunc(n, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return ""
	}
	if u, err := url.Parse(n); err != nil || u.Scheme != "" || u.Host != "" || u.User != nil {
		return ""
	}
	return n
}

// roleSection is a section of the console open to some roles only.
type roleSection struct {
	prefix string
	roles  []auth.Role
}

// coreSections are the console's own sections open to some roles only (the routes'
// requireRole; TestLoginNextFollowsRoles checks the two agree for every page). A workflow's
// pages add theirs (mount.Routes.Section), and the pages open to every role whatever their
// section (mount.Routes.OpenTo: a bid document, which reviewers open from a review's evidence).
var coreSections = []roleSection{
	{"/dashboard", []auth.Role{auth.PM, auth.Admin}},
	{"/workflows", []auth.Role{auth.PM, auth.Admin}},
	{"/runs", []auth.Role{auth.PM, auth.Admin}},
	{"/reviews", []auth.Role{auth.Reviewer, auth.Admin}},
	{"/audit", []auth.Role{auth.Admin}},
	{"/dlq", []auth.Role{auth.Admin}},
	{"/admin", []auth.Role{auth.Admin}},
}

// nextFor is where a sign-in goes: next when the user's role may open it, else the role's
// home ("/"): a shared link to another role's page would land on a 403.
func (s *Server) nextFor(role auth.Role, next string) string {
	if next == "" || !s.mayOpen(role, next) {
		return "/"
	}
	return next
}

// mayOpen says whether role may open the console page at target (a path, with or without
// query and fragment), by the pages open to every role and the sections.
func (s *Server) mayOpen(role auth.Role, target string) bool {
	p := target
	if i := strings.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	for _, pattern := range s.openTo {
		if ok, _ := path.Match(pattern, p); ok {
			return true
		}
	}
	for _, sec := range s.sections {
		if (p == sec.prefix || strings.HasPrefix(p, sec.prefix+"/") || strings.HasPrefix(p, sec.prefix+".")) &&
			!slices.Contains(sec.roles, role) {
			return false
		}
	}
	return true
}
