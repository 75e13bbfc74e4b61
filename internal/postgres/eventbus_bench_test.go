package postgres_test

import (
	"context"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
)

type benchState struct {
	Count int
	Name  string
}

const (
	benchWorkers = 8 // concurrent threads
	benchNodes   = 5 // supersteps per run, one checkpoint each
	// benchPhase is how long each phase runs: long enough that the writer's last batch of
	// an events-on phase, which lands in the phase after it, is a small part of either.
	benchPhase = 250 * time.Millisecond
	// benchPairs is how many windows of each one iteration runs: the ratio of a single pair
	// moves by tens of percent, and the default benchtime (1s) would give two.
	benchPairs = 10
)

// BenchmarkEventsOverhead measures what streaming every event of a run through the event
// bus costs the engine on the PostgreSQL checkpointer: 8 goroutines each run a five-step
// graph on new threads, back to back, with events off (no sink, as a runner with no
// EventSink) and on (a runner-style sink publishing what the runner publishes: custom
// progress, checkpoint summaries, interrupts). Windows of benchPhase alternate between the
// two (one iteration is benchPairs of each), so both see the same database; the bus writes
// concurrently, as in a server, and the steps completed in each window are counted. It
// reports steps/s with events on, off_steps/s, and events_on/off (the target is >= 0.95).
func BenchmarkEventsOverhead(b *testing.B) {
	ctx := context.Background()
	u, err := url.Parse(pgtest.URL(b))
	if err != nil {
		b.Fatal(err)
	}
	q := u.Query()
	q.Set("pool_max_conns", "16") // a connection per worker, and the writer's
	u.RawQuery = q.Encode()
	d, err := postgres.Open(ctx, u.String())
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	bus := postgres.NewEventBus(d, postgres.EventBusOptions{})
	bld := graph.New[benchState]()
	prev := graph.START
	for i := range benchNodes {
		name := "n" + strconv.Itoa(i)
		bld.AddNode(name, func(_ context.Context, s benchState) (graph.Command, error) {
			return graph.Update(graph.Set("Count", s.Count+1)), nil
		})
		bld.AddEdge(prev, name)
		prev = name
	}
	bld.AddEdge(prev, graph.END)
	g, err := bld.Compile(graph.WithCheckpointer(postgres.NewCheckpointer(d)))
	if err != nil {
		b.Fatal(err)
	}
	in := graph.Update(graph.Set("Name", "bench"))

	var seq atomic.Int64
	var published atomic.Int64
	// phase runs the workers for benchPhase and returns the steps they completed and the
	// time they took (until the last run in flight when the phase ended returned).
	phase := func(events bool) (int, time.Duration) {
		var wg sync.WaitGroup
		var runs atomic.Int64
		start := time.Now()
		deadline := start.Add(benchPhase)
		for range benchWorkers {
			wg.Go(func() {
				for time.Now().Before(deadline) {
					cfg := graph.Config{ThreadID: "bench-" + strconv.FormatInt(seq.Add(1), 10)}
					var sink func(graph.Event) bool
					modes := graph.StreamMode(0)
					if events {
						modes = graph.ModeCustom | graph.ModeCheckpoints // what the runner publishes
						sink = func(ev graph.Event) bool {
							if cp, ok := ev.Data.(graph.Checkpoint); ok {
								ev.Data = cp.Summary() // as the runner publishes it
							}
							published.Add(1)
							bus.Publish(ctx, "bench", ev)
							return true
						}
					}
					out, err := g.Run(ctx, cfg, in, modes, sink)
					if err != nil || !out.Done() {
						b.Errorf("run: %v", err)
						return
					}
					runs.Add(1)
				}
			})
		}
		wg.Wait()
		return int(runs.Load()) * benchNodes, time.Since(start)
	}
	// Warm up the pool, the statement caches, the tables and the writer.
	phase(false)
	phase(true)

	var off, on time.Duration
	var offSteps, onSteps int
	b.ResetTimer()
	for i := range b.N * benchPairs {
		order := []bool{false, true}
		if i%2 == 1 { // alternate which phase goes first
			order = []bool{true, false}
		}
		for _, events := range order {
			n, took := phase(events)
			if events {
				onSteps, on = onSteps+n, on+took
			} else {
				offSteps, off = offSteps+n, off+took
			}
		}
	}
	b.StopTimer()
	closeCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := bus.Close(closeCtx); err != nil {
		b.Fatal(err)
	}
	onRate, offRate := float64(onSteps)/on.Seconds(), float64(offSteps)/off.Seconds()
	b.ReportMetric(onRate, "steps/s")
	b.ReportMetric(offRate, "off_steps/s")
	b.ReportMetric(onRate/offRate, "events_on/off")
	s := bus.Stats()
	b.ReportMetric(float64(published.Load())/float64(s.Batches), "events/batch")
	if s.Dropped != 0 {
		b.Logf("events dropped: %+v", s)
	}
}
