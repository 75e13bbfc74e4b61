package server

import (
	"errors"
	"net/http"
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
		return c.Redirect(http.StatusSeeOther, "/")
	}
	return render(c, http.StatusOK, page.Login(s.meta(c, "Sign in"), page.LoginVM{Next: safeNext(c.QueryParam("next")), Demo: s.demoLogins(c)}))
}

func (s *Server) login(c echo.Context) error {
	email := strings.TrimSpace(c.FormValue("email"))
	next := safeNext(c.FormValue("next"))
	u, err := s.auth.Authenticate(c.Request().Context(), email, c.FormValue("password"))
	if errors.Is(err, auth.ErrInvalidLogin) || (err == nil && u.ID == "") {
		return render(c, http.StatusUnauthorized, page.Login(s.meta(c, "Sign in"),
			page.LoginVM{Email: email, Next: next, Error: "The email or password is not right.", Demo: s.demoLogins(c)}))
	}
	if err != nil {
		return err
	}
	if err := s.auth.Login(c.Request().Context(), u); err != nil {
		return err
	}
	if next == "" {
		next = "/"
	}
	return c.Redirect(http.StatusSeeOther, next)
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
	return n
}
