package server

import (
	"strings"

	"github.com/labstack/echo/v4"
	"go.opentelemetry.io/contrib/instrumentation/github.com/labstack/echo/otelecho"

	"weft/internal/telemetry"
)

// traceRequests makes a server span of each request (OpenTelemetry's Echo middleware),
// continuing the caller's W3C traceparent: a run started or resumed through the request
// continues its trace (runner.Job.TraceParent). Static files, the metrics scrape, health
// checks and SSE streams (open for as long as a page is) make none.
func (s *Server) traceRequests() echo.MiddlewareFunc {
	tp := telemetry.Or(nil)
	if s.app != nil && s.app.Tracer != nil {
		tp = s.app.Tracer
	}
	return otelecho.Middleware(telemetry.ServiceName, otelecho.WithTracerProvider(tp), otelecho.WithPropagators(telemetry.Propagator),
		otelecho.WithSkipper(func(c echo.Context) bool {
			p := c.Request().URL.Path
			return p == "/metrics" || p == "/healthz" || strings.HasPrefix(p, "/static/") || isStream(c)
		}))
}
