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

	"weft/internal/app/platform"
	"weft/internal/runner"
)

// metrics exposes jobs by status and queue depth (from the maintained
// counters, never count(*) over jobs) and the node latency histogram.
type metrics struct {
	reg *prometheus.Registry
}

type jobsCollector struct {
	app    *platform.App
	status *prometheus.Desc
	queue  *prometheus.Desc
}

func (j *jobsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- j.status; ch <- j.queue }

// Collect reports, for every tenant, every registered workflow's count in every status (0
// when it has none: a series that vanished at 0 reads as "no data" to an alert) and the
// queue depth per workflow. A count that cannot be read fails the scrape (an invalid metric)
// rather than answering with some tenants missing.
func (j *jobsCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	tenants, err := j.app.Tenants.List(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(j.status, err)
		return
	}
	depth := map[string]float64{}
	for _, e := range j.app.Registry.All() {
		depth[e.Name] = 0
	}
	for _, t := range tenants {
		counts, err := j.app.Jobs.CountJobs(ctx, t)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(j.status, err)
			return
		}
		n := map[[2]string]float64{}
		for wf := range depth {
			for _, st := range runner.Statuses {
				n[[2]string{wf, string(st)}] = 0
			}
		}
		for _, c := range counts {
			n[[2]string{c.Workflow, string(c.Status)}] += float64(c.N)
			if c.Status == runner.Queued || c.Status == runner.RetryScheduled {
				depth[c.Workflow] += float64(c.N)
			}
		}
		for k, v := range n {
			ch <- prometheus.MustNewConstMetric(j.status, prometheus.GaugeValue, v, t, k[0], k[1])
		}
	}
	for wf, n := range depth {
		ch <- prometheus.MustNewConstMetric(j.queue, prometheus.GaugeValue, n, wf)
	}
}

func newMetrics(reg *prometheus.Registry, a *platform.App) *metrics {
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if a != nil {
		reg.MustRegister(&jobsCollector{app: a,
			status: prometheus.NewDesc("weft_jobs", "Jobs by tenant, workflow and status.", []string{"tenant", "workflow", "status"}, nil),
			queue:  prometheus.NewDesc("weft_queue_depth", "Jobs waiting to run (queued or retry scheduled), by workflow.", []string{"workflow"}, nil)})
		if a.NodeLatency != nil {
			reg.MustRegister(a.NodeLatency)
		}
		if a.RunMetrics != nil {
			reg.MustRegister(a.RunMetrics.Collectors()...)
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
	want := []byte(token)
	return func(c echo.Context) error {
		if got, ok := bearer(c.Request()); !ok || subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			c.Response().Header().Set("WWW-Authenticate", `Bearer realm="weft metrics"`)
			return c.String(http.StatusUnauthorized, "send the metrics token as Authorization: Bearer <token>\n")
		}
		return h(c)
	}
}
