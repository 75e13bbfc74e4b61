package server

import (
	"context"

	"github.com/labstack/echo/v4"

	"weft/internal/auth"
	"weft/internal/server/mount"
	"weft/web/layout"
)

// mountWorkflows adds the routes of the workflows' own pages and API calls (the App's
// Mounts: bid evaluation's tenders) to the signed-in pages and the API.
func (s *Server) mountWorkflows(pages, api *echo.Group) {
	if s.app == nil {
		return
	}
	r := mount.Routes{
		Pages: pages, API: api,
		RequireRole: requireRole,
		Section: func(prefix string, roles ...auth.Role) {
			s.sections = append(s.sections, roleSection{prefix: prefix, roles: roles})
		},
		OpenTo:  func(pattern string) { s.openTo = append(s.openTo, pattern) },
		MayOpen: s.mayOpen,
		Meta: func(c echo.Context, title, active string) layout.Meta {
			m := s.meta(c, title)
			m.Active = active
			return m
		},
		UserNames: func(ctx context.Context, tenantID string) func() map[string]string { return s.userNames(ctx, tenantID) },
		ActorName: actorName,
		Explain: func(err error) (int, string, string) {
			he := classify(err, false)
			return he.status, he.code, he.msg
		},
		JSON: apiJSON,
	}
	for _, m := range s.app.Mounts {
		m(r)
	}
}
