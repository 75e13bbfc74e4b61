package platform

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"weft/internal/runner"
)

// RunMetrics are the runner's Prometheus metrics (a runner.Observer), served at /metrics:
// queue wait, run duration, retries, dead letters, review wait and interrupts.
type RunMetrics struct {
	QueueWait   *prometheus.HistogramVec // workflow
	RunDuration *prometheus.HistogramVec // workflow, outcome
	Retries     *prometheus.CounterVec   // workflow, class
	DeadLetters *prometheus.CounterVec   // workflow, class
	ReviewWait  *prometheus.HistogramVec // workflow
	Interrupts  *prometheus.CounterVec   // workflow
}

// NewRunMetrics makes the runner's metrics (not yet registered: Collectors).
func NewRunMetrics() *RunMetrics {
	secs := prometheus.ExponentialBuckets(0.005, 3, 14) // 5 ms … 6.6 h
	return &RunMetrics{
		QueueWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "weft_queue_wait_seconds",
			Help: "Time from a job becoming runnable (enqueued, retry due, rescued) to a worker claiming it, by workflow.", Buckets: secs},
			[]string{"workflow"}),
		RunDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "weft_run_duration_seconds",
			Help:    "Time one run of a job (an attempt) took from claim or resume to rest, by workflow and outcome (succeeded, waiting_review, retry_scheduled, failed).",
			Buckets: secs}, []string{"workflow", "outcome"}),
		Retries: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weft_job_retries_total",
			Help: "Job retries scheduled after a failed run, by workflow and error class."}, []string{"workflow", "class"}),
		DeadLetters: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weft_dlq_entries_total",
			Help: "Jobs dead-lettered (a DLQ entry written), by workflow and error class."}, []string{"workflow", "class"}),
		ReviewWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "weft_review_wait_seconds",
			Help: "Time a paused job waited for its reviewer's answer, by workflow.", Buckets: secs}, []string{"workflow"}),
		Interrupts: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "weft_interrupts_total",
			Help: "Interrupts runs paused at for review, by workflow."}, []string{"workflow"}),
	}
}

// Collectors are the metrics to register.
func (m *RunMetrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.QueueWait, m.RunDuration, m.Retries, m.DeadLetters, m.ReviewWait, m.Interrupts}
}

var _ runner.Observer = (*RunMetrics)(nil)

// Claimed implements runner.Observer.
func (m *RunMetrics) Claimed(j runner.Job, wait time.Duration) {
	m.QueueWait.WithLabelValues(j.Workflow).Observe(wait.Seconds())
}

// Rested implements runner.Observer.
func (m *RunMetrics) Rested(j runner.Job, e runner.JobEvent, ran time.Duration) {
	if ran > 0 { // (a pause that expired had no run)
		m.RunDuration.WithLabelValues(j.Workflow, string(e.Status)).Observe(ran.Seconds())
	}
	switch e.Status {
	case runner.RetryScheduled:
		m.Retries.WithLabelValues(j.Workflow, e.Class).Inc()
	case runner.Failed:
		m.DeadLetters.WithLabelValues(j.Workflow, e.Class).Inc()
	}
}

// Interrupted implements runner.Observer.
func (m *RunMetrics) Interrupted(j runner.Job, n int) {
	m.Interrupts.WithLabelValues(j.Workflow).Add(float64(n))
}

// Resumed implements runner.Observer.
func (m *RunMetrics) Resumed(j runner.Job, waited time.Duration) {
	m.ReviewWait.WithLabelValues(j.Workflow).Observe(waited.Seconds())
}
