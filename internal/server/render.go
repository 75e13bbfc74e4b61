package server

import (
	"net/http"

	"github.com/a-h/templ"
	"github.com/labstack/echo/v4"

	"weft/internal/auth"
	"weft/internal/server/mount"
	"weft/web/layout"
)

// render writes a templ component with a status.
func render(c echo.Context, status int, comp templ.Component) error {
	return mount.Render(c, status, comp)
}

// isHTMX reports whether the request is an htmx partial request (not a
// boosted full-page navigation).
func isHTMX(c echo.Context) bool { return mount.IsHTMX(c) }

// meta is the frame's view model for a request.
func (s *Server) meta(c echo.Context, title string) layout.Meta {
	m := layout.Meta{Title: title, CSRF: csrfToken(c)}
	if s.app != nil && s.app.LLM != nil {
		m.LLM, m.Offline = s.app.LLM.Name(), s.app.LLM.Offline()
	}
	if u := currentUser(c); u.ID != "" {
		m.User = &layout.User{Name: u.Name, Role: string(u.Role), Tenant: u.TenantID}
	}
	return m
}

// home sends each role to its starting page.
func home(c echo.Context) error {
	switch currentUser(c).Role {
	case auth.Reviewer:
		return c.Redirect(http.StatusSeeOther, "/reviews")
	default:
		return c.Redirect(http.StatusSeeOther, "/dashboard")
	}
}
