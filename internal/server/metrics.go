package server

import (
	"context"
	"crypto/subtle"
	"net/http"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"weft/internal/app"
)

// metrics exposes jobs by status and queue depth (from the maintained
// counters, never count(*) over jobs) and the node latency histogram.
type metrics struct {
	reg *prometheus.Registry
}

type jobsCollector struct {
	app    *app.App
	status *prometheus.Desc
	queue  *prometheus.Desc
}

func (j *jobsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- j.status; ch <- j.queue }

func (j *jobsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	tenants, err := j.app.Evaluations.Tenants(ctx)
	if err != nil {
		return
	}
	depth := map[string]float64{}
	for _, t := range tenants {
		counts, err := j.app.Jobs.CountJobs(ctx, t)
		if err != nil {
			return
		}
		for _, c := range counts {
			ch <- prometheus.MustNewConstMetric(j.status, prometheus.GaugeValue, float64(c.N), t, c.Workflow, string(c.Status))
			if c.Status == "queued" || c.Status == "retry_scheduled" {
				depth[c.Workflow] += float64(c.N)
			}
		}
	}
	for wf, n := range depth {
		ch <- prometheus.MustNewConstMetric(j.queue, prometheus.GaugeValue, n, wf)
	}
}

func newMetrics(reg *prometheus.Registry, a *app.App) *metrics {
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if a != nil {
		reg.MustRegister(&jobsCollector{app: a,
			status: prometheus.NewDesc("weft_jobs", "Jobs by tenant, workflow and status.", []string{"tenant", "workflow", "status"}, nil),
			queue:  prometheus.NewDesc("weft_queue_depth", "Jobs waiting to run (queued or retry scheduled), by workflow.", []string{"workflow"}, nil)})
		if a.NodeLatency != nil {
			reg.MustRegister(a.NodeLatency)
		}
	}
	return &metrics{reg: reg}
}

// handler serves the metrics; with a token, only to a scraper that sends it as
// "Authorization: Bearer <token>" (the metrics name tenants and their job counts).
func (m *metrics) handler(token string) echo.HandlerFunc {
	h := echo.WrapHandler(promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		// The server's gzip middleware compresses the answer; compressing here too
		// sent gzip inside gzip, which a scraper cannot read.
		DisableCompression: true}))
	if token == "" {
		return h
	}
	want := []byte("Bearer " + token)
	return func(c echo.Context) error {
		if subtle.ConstantTimeCompare([]byte(c.Request().Header.Get("Authorization")), want) != 1 {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="weft metrics"`)
			return c.String(http.StatusUnauthorized, "send the metrics token as Authorization: Bearer <token>\n")
		}
		return h(c)
	}
}
