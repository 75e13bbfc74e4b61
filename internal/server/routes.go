package server

import (
	"fmt"
	"net/http"
	"slices"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"weft/web/page"
)

// webBodyLimit bounds a page request's body (echo's BodyLimit syntax).
const webBodyLimit = "8M"

// routes registers every route. Pages go through CSRF protection and the
// session; each area registers its own routes with its role checks in its
// own file (dashboard.go, runs.go, threads.go, reviews.go, admin.go,
// api.go), and each workflow's own pages theirs (mounts.go). Role rules:
//
//	dashboard, starting runs                    pm, admin
//	a workflow's own pages                      as it declares (bid evaluation's tenders: pm, admin)
//	threads (view)                              pm, reviewer, admin
//	review inbox and form                       reviewer, admin
//	fork from a checkpoint                      admin
//	audit log, dead letters                     admin
//	users of the admin's tenant (/admin/users)  admin
//	own account (/account)                      every signed-in user
//	a one-time password link (/password)        whoever holds the link
//	/api/v1                                     API token of the tenant (its role applies)
func (s *Server) routes() {
	e := s.echo
	e.GET("/healthz", s.healthz)
	e.GET("/metrics", s.metrics.handler(s.cfg.MetricsToken))
	e.GET("/static/*", staticFiles())
	// Browsers ask for /favicon.ico where a page names no icon (a CSV export, say).
	e.GET("/favicon.ico", func(c echo.Context) error {
		return c.Redirect(http.StatusMovedPermanently, "/static/img/favicon.svg")
	})

	// Pages' forms are small (a bid document is at most 2 MB): a larger body is refused (413)
	// before the CSRF check reads it.
	web := e.Group("", s.pageBodyLimit(), s.csrf())
	web.GET("/login", s.loginPage)
	web.POST("/login", s.login, s.loginLimiter())
	s.routesPasswordLinks(web)
	// The logout address opened asks first when signed in; signed out, there is nothing to
	// ask: the sign-in page.
	web.GET("/logout", func(c echo.Context) error {
		if _, ok := s.auth.SessionUser(c.Request().Context()); !ok {
			return c.Redirect(http.StatusSeeOther, "/login")
		}
		return s.requireUser(func(c echo.Context) error { return render(c, http.StatusOK, page.SignOut(s.meta(c, "Log out"))) })(c)
	})
	signedIn := web.Group("", s.requireUser)
	signedIn.POST("/logout", s.logout)
	// Whether the browser is still signed in: a page whose live stream failed asks, and says
	// "signed out" rather than "reconnecting…" for good (static/js/keepview.js). 204, or
	// (for htmx-style requests) a 401.
	signedIn.GET("/session", func(c echo.Context) error { return c.NoContent(http.StatusNoContent) })

	signedIn.GET("/", home)
	s.routesDashboard(signedIn)
	s.routesRuns(signedIn)
	s.routesThreads(signedIn)
	s.routesReviews(signedIn)
	s.routesAdmin(signedIn)
	s.routesUsers(signedIn)
	s.routesArtifacts(signedIn)

	api := e.Group("/api/v1", s.requireToken)
	s.routesAPI(api)
	s.routesUsersAPI(api)
	s.mountWorkflows(signedIn, api)
	// The router's 404 (as the groups' catch-alls answer): handleError makes it a 405 when
	// the address takes other methods.
	e.RouteNotFound("/*", func(c echo.Context) error { return echo.ErrNotFound })
}

// startFormPath is the route of a workflow's start form.
const startFormPath = "/workflows/:name/start"

// pageBodyLimit bounds a page request's body before anything reads it: webBodyLimit (a 413),
// but a start form whose files may hold more takes them whole (their limit, and 1 MB for
// its other fields).
func (s *Server) pageBodyLimit() echo.MiddlewareFunc {
	std := middleware.BodyLimit(webBodyLimit)
	return func(next echo.HandlerFunc) echo.HandlerFunc {
		limited := std(next)
		return func(c echo.Context) error {
			r := c.Request()
			if r.Method != http.MethodPost || c.Path() != startFormPath {
				return limited(c)
			}
			def, ok := s.app.Registry.Get(c.Param("name"))
			if !ok || def.Start == nil {
				return limited(c)
			}
			files := def.Start.UploadBytes()
			limit := files + 1<<20
			if limit <= webBodyLimitBytes {
				return limited(c)
			}
			if r.ContentLength > limit {
				return &httpError{status: http.StatusRequestEntityTooLarge, code: "BODY_TOO_LARGE", msg: fmt.Sprintf(
					"What was sent is larger than this start form takes (%s at most; its files at most %s): send a smaller file.",
					page.Bytes(limit), page.Bytes(files))}
			}
			r.Body = http.MaxBytesReader(c.Response(), r.Body, limit)
			return next(c)
		}
	}
}

// webBodyLimitBytes is webBodyLimit in bytes.
const webBodyLimitBytes = 8 << 20

// allowedMethods lists the methods that have a route for path (none: the path is unknown,
// or only a catch-all answers it).
func allowedMethods(e *echo.Echo, path string) []string {
	routes := map[string]bool{}
	for _, r := range e.Routes() {
		routes[r.Method+" "+r.Path] = true
	}
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		c := e.NewContext(nil, nil)
		e.Router().Find(m, path, c)
		if routes[m+" "+c.Path()] {
			allow = append(allow, m)
		}
	}
	if slices.Contains(allow, http.MethodGet) && !streamPath(path) {
		allow = slices.Insert(allow, 1, http.MethodHead) // Handler answers HEAD as GET (streams aside)
	}
	return allow
}

// healthz answers 200 once the database answers (migrations are applied
// before the server starts).
func (s *Server) healthz(c echo.Context) error {
	if err := s.app.DB.Ping(c.Request().Context()); err != nil {
		return c.JSON(http.StatusServiceUnavailable, map[string]string{"status": "database unavailable"})
	}
	return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
}
