package loadtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"weft/internal/app"
	"weft/internal/runner"
)

// Under-load target (the "Load" section).
const (
	underLoadRatioTarget = 1.25
	burstJobs            = 200 // tour jobs run flat out to measure the runner's top rate
	// underLoadShare is the dashboard's request rate as a share of its idle throughput
	// (wrk, 16 connections): well below saturation, so the p99 measures the page, not a queue.
	underLoadShare = 0.2
	// underLoadPairs idle and loaded windows of underLoadWindow alternate; the figure is the
	// median of the pairs' p99 ratios, so one stall of the machine (a database checkpoint, an
	// autovacuum) in one window does not decide it.
	underLoadPairs  = 5
	underLoadWindow = 6 * time.Second
)

var tourInput = json.RawMessage(`{"question":"What makes durable workflows survive crashes and restarts?"}`)

// BenchmarkDashboardUnderLoad: the dashboard's p99 on an idle system and while the runner
// (in the same process, as in `weft serve`) runs tour jobs at half its top rate, measured in
// the same run by running a burst of jobs flat out. Each tour job runs five supersteps, a
// checkpoint each, and pauses for review. Both p99s come from the same fixed request rate, a
// fifth of the page's idle throughput (open loop, each request timed from when it was due):
// with more connections than cores, a closed loop measures the queue it builds, and the
// runner's share of the two cores shows up as queueing rather than as page latency. Idle and
// loaded windows alternate (underLoadPairs of each); the tour jobs of every loaded window
// stay waiting for review, so later idle windows show whether the page slows as data grows.
// Target: the median over the pairs of p99 loaded / p99 idle ≤ 1.25.
func BenchmarkDashboardUnderLoad(b *testing.B) {
	k := setup(b)
	ctx := context.Background()
	wctx, stopWorkers := context.WithCancel(ctx)
	workersDone := make(chan struct{})
	go func() { defer close(workersDone); _ = k.App.RunWorkers(wctx) }()
	b.Cleanup(func() { stopWorkers(); <-workersDone })
	cookie := login(b, k.Base, "pm@demo.weft")
	checkPage(b, k.Base, cookie, "/dashboard", "Engine tour")
	waitQuiet(b, k.App) // the demo's evaluations run to their review

	// Top rate.
	cp0 := checkpoints(b, k.App)
	start := time.Now()
	for range burstJobs {
		enqueueTour(b, k.App)
	}
	waitQuiet(b, k.App)
	burst := time.Since(start)
	topSteps := float64(checkpoints(b, k.App)-cp0) / burst.Seconds()
	topJobs := float64(burstJobs) / burst.Seconds()
	b.Logf("top rate: %d tour jobs in %v: %.0f jobs/s, %.0f checkpoints/s", burstJobs, burst.Round(time.Millisecond), topJobs, topSteps)

	b.ResetTimer()
	url := k.Base + "/dashboard"
	sat := load(b, url, cookie, pageLoadTime/2, pageConns)
	rate := underLoadShare * sat.RPS
	b.Logf("idle throughput (%d connections): %s; measuring at %.0f req/s in %d pairs of %v windows", pageConns, sat, rate,
		underLoadPairs, underLoadWindow)
	every := time.Duration(float64(time.Second) / (topJobs / 2)) // half the top rate
	var ratios, idleP99, loadedP99, loadSteps []float64
	for i := range underLoadPairs {
		waitQuiet(b, k.App)
		idle := loadAtRate(b, url, cookie, underLoadWindow, rate)

		lctx, stopLoad := context.WithCancel(ctx)
		var enqueued atomic.Int64
		var wg sync.WaitGroup
		wg.Go(func() {
			t := time.NewTicker(every)
			defer t.Stop()
			for {
				select {
				case <-lctx.Done():
					return
				case <-t.C:
					enqueueTour(b, k.App)
					enqueued.Add(1)
				}
			}
		})
		time.Sleep(time.Second) // the runner gets going
		cp1, t1 := checkpoints(b, k.App), time.Now()
		pool := poolWaits(k.App)
		loaded := loadAtRate(b, url, cookie, underLoadWindow, rate)
		waits := pool()
		steps := float64(checkpoints(b, k.App)-cp1) / time.Since(t1).Seconds()
		stopLoad()
		wg.Wait()
		ratios = append(ratios, float64(loaded.P99)/float64(idle.P99))
		b.Logf("pair %d: idle p50 %.2f p99 %.2f ms; loaded p50 %.2f p99 %.2f ms (%.2f×), runner at %.0f checkpoints/s (%.0f%% of top, %d jobs); %s",
			i+1, ms(idle.P50), ms(idle.P99), ms(loaded.P50), ms(loaded.P99), ratios[i], steps, 100*steps/topSteps, enqueued.Load(), waits)
		idleP99, loadedP99 = append(idleP99, ms(idle.P99)), append(loadedP99, ms(loaded.P99))
		loadSteps = append(loadSteps, steps)
	}
	ratio := median(slices.Clone(ratios))
	b.Logf("p99 loaded/idle per pair %.2f; median %.2f (target ≤ %.2f)", ratios, ratio, underLoadRatioTarget)
	if ratio > underLoadRatioTarget {
		b.Logf("TARGET MISSED: p99 loaded/idle %.2f > %.2f", ratio, underLoadRatioTarget)
	}
	b.ReportMetric(median(idleP99), "idle_p99_ms")
	b.ReportMetric(median(loadedP99), "loaded_p99_ms")
	b.ReportMetric(ratio, "p99_loaded/p99_idle")
	b.ReportMetric(rate, "req/s")
	b.ReportMetric(topSteps, "top_ckpt/s")
	b.ReportMetric(median(loadSteps), "loaded_ckpt/s")
}

// median of xs (which it sorts).
func median(xs []float64) float64 {
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

func enqueueTour(b *testing.B, a *app.App) {
	if _, err := a.Runner.Enqueue(context.Background(), runner.NewJob{TenantID: app.DemoTenant, Workflow: "tour",
		Subject: "load test", Input: tourInput}); err != nil {
		b.Error(err)
	}
}

// waitQuiet waits until no job of the demo tenant is queued, running or scheduled to retry.
func waitQuiet(b *testing.B, a *app.App) {
	b.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		var busy int64
		if err := a.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM jobs
			WHERE status IN ('queued', 'running', 'retry_scheduled')`).Scan(&busy); err != nil {
			b.Fatal(err)
		}
		if busy == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Fatal("jobs still busy after 2 minutes")
}

// poolWaits starts counting the database pool's acquisitions (server and runner alike); the
// function it returns says how many there were since, how many found no idle connection,
// and the mean wait for one.
func poolWaits(a *app.App) func() string {
	s0 := a.DB.Pool().Stat()
	return func() string {
		s := a.DB.Pool().Stat()
		n := s.AcquireCount() - s0.AcquireCount()
		waited := s.EmptyAcquireCount() - s0.EmptyAcquireCount()
		mean := time.Duration(0)
		if n > 0 {
			mean = (s.AcquireDuration() - s0.AcquireDuration()) / time.Duration(n)
		}
		return fmt.Sprintf("pool (%d connections): %d acquisitions, %d waited, mean wait %v", s.MaxConns(), n, waited,
			mean.Round(time.Microsecond))
	}
}

func checkpoints(b *testing.B, a *app.App) int64 {
	b.Helper()
	var n int64
	if err := a.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM checkpoints`).Scan(&n); err != nil {
		b.Fatal(err)
	}
	return n
}
