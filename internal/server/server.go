// Package server is Weft's HTTP edge: the Echo web console (templ pages,
// htmx partials, SSE), the JSON API under /api/v1, /healthz and /metrics.
// It maps domain types to the view models of web/ and errors to status
// codes with safe messages. It knows workflows only through the plug-in
// contract (internal/workflow): a workflow's own pages (bid evaluation's
// tenders) are mounted through internal/server/mount by the App's wiring,
// and never imported here. With those handler packages and mount, it is the
// only package that imports echo.
package server

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"

	"weft/internal/app/platform"
	"weft/internal/auth"
	"weft/static"
	"weft/web/page"
)

// Config configures a Server.
type Config struct {
	App  *platform.App
	Auth *auth.Service
	Log  *slog.Logger
	// SecureCookies marks cookies Secure (serve over HTTPS in production).
	SecureCookies bool
	// MetricsToken, when set, is required of /metrics scrapers as a bearer token.
	MetricsToken string
	// TrustProxy takes the client's address from X-Forwarded-For (set by a reverse proxy in
	// front, which must overwrite what clients send) instead of the connection's peer.
	TrustProxy bool
	// LoginRate is how many failed sign-ins one client address may make per minute, in a
	// burst of as many (default 10); correct ones are not counted.
	LoginRate float64
	// Metrics is where Prometheus metrics are registered (default: a new
	// registry, served at /metrics).
	Metrics *prometheus.Registry
	// DemoLogins are listed on the login page (weft dev sets them while the
	// demo users exist; production leaves it empty).
	DemoLogins []page.DemoLogin
	// StreamRecheck is how often a live stream checks that its session (or API token) still
	// stands, and ends once it does not: logged out, expired or revoked (default 15 s).
	StreamRecheck time.Duration
}

// Server is the HTTP server.
type Server struct {
	app     *platform.App
	auth    *auth.Service
	log     *slog.Logger
	echo    *echo.Echo
	cfg     Config
	metrics *metrics

	// closing is closed when the server begins to shut down: live streams end then (their
	// clients reconnect to another instance, or to this one restarted), rather than holding
	// the shutdown until its timeout.
	closing   chan struct{}
	closeOnce sync.Once

	live liveCache // recent answers of the streams' credential checks

	sse     *sseWriters // the taken-over streams' writers, started by the first
	sseOnce sync.Once

	// sections are the console's sections open to some roles only, the core's and those the
	// workflows' pages declare; openTo the pages open to every role whatever their section.
	sections []roleSection
	openTo   []string
}

// endStreams ends every live stream (at the start of a shutdown).
func (s *Server) endStreams() { s.closeOnce.Do(func() { close(s.closing) }) }

// New builds the server and its routes.
func New(cfg Config) *Server {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.LoginRate <= 0 {
		cfg.LoginRate = 10
	}
	if cfg.StreamRecheck <= 0 {
		cfg.StreamRecheck = sseHeartbeat
	}
	if cfg.Metrics == nil {
		cfg.Metrics = prometheus.NewRegistry()
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	// A client's address (the sign-in limiter's key) is the connection's peer, unless a proxy
	// in front is trusted to say whose request it forwards: otherwise anyone could send
	// X-Forwarded-For and be a new address at every attempt.
	e.IPExtractor = echo.ExtractIPDirect()
	if cfg.TrustProxy {
		e.IPExtractor = echo.ExtractIPFromXFFHeader()
	}
	s := &Server{app: cfg.App, auth: cfg.Auth, log: cfg.Log, echo: e, cfg: cfg, closing: make(chan struct{}),
		sections: slices.Clone(coreSections)}
	s.metrics = newMetrics(cfg.Metrics, cfg.App)
	e.HTTPErrorHandler = s.handleError
	// Compression and the timeout wrap the logger, which renders errors, so an
	// error page is written through them before they finish.
	e.Use(s.traceRequests())
	e.Use(middleware.RequestID())
	e.Use(securityHeaders(s.cfg.SecureCookies))
	e.Use(middleware.GzipWithConfig(middleware.GzipConfig{Skipper: isStream}))
	e.Use(middleware.ContextTimeoutWithConfig(middleware.ContextTimeoutConfig{Skipper: isStream, Timeout: 30 * time.Second}))
	e.Use(s.recoverPanics)
	e.Use(s.logRequests)
	e.Use(s.sessions)
	s.routes()
	return s
}

// Handler is the server as an http.Handler.
//
// It answers HEAD as the GET of the same address would, without its body (uptime checks send
// HEAD /healthz): Echo routes a copy of the request made a GET, while net/http, which still
// holds the HEAD request, writes no body. Streams are left alone (a HEAD of one would hold a
// stream open).
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead && !streamPath(r.URL.Path) {
			get := r.Clone(r.Context())
			get.Method = http.MethodGet
			r = get
		}
		s.echo.ServeHTTP(w, r)
	})
}

// Serve serves on ln until ctx ends, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second}
	srv.RegisterOnShutdown(s.endStreams)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// staticFiles serves the embedded static/ tree with long caching (the
// vendored files are pinned).
func staticFiles() echo.HandlerFunc {
	files := http.StripPrefix("/static/", http.FileServer(http.FS(static.FS)))
	return func(c echo.Context) error {
		// A missing file is the console's 404 page, not the file server's plain text.
		if st, err := fs.Stat(static.FS, strings.TrimPrefix(c.Request().URL.Path, "/static/")); err != nil || st.IsDir() {
			return notFound()
		}
		c.Response().Header().Set("Cache-Control", "public, max-age=86400")
		files.ServeHTTP(c.Response(), c.Request())
		return nil
	}
}

// Route is one registered route (for the authorization matrix test).
type Route struct{ Method, Path string }

// Routes lists the registered routes.
func (s *Server) Routes() []Route {
	var out []Route
	for _, r := range s.echo.Routes() {
		out = append(out, Route{Method: r.Method, Path: r.Path})
	}
	return out
}
