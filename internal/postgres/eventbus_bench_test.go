package postgres_test

import (
	"context"
	"net/url"
	"os"
	"strconv"
	"strings"
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
// reports steps/s with events on, off_steps/s, and events_on/off (the target is >= 0.95);
// on Linux, with the database on this machine, also the CPU per step of the database server
// and of this process in each phase (pg_us/step_on, …), which says where the events' cost lands.
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
	var pgOn, pgOff, selfOn, selfOff int64 // CPU ticks (see cpuTicks)
	var offSteps, onSteps int
	b.ResetTimer()
	for i := range b.N * benchPairs {
		order := []bool{false, true}
		if i%2 == 1 { // alternate which phase goes first
			order = []bool{true, false}
		}
		for _, events := range order {
			pg0, self0 := cpuTicks()
			n, took := phase(events)
			pg1, self1 := cpuTicks()
			if events {
				onSteps, on = onSteps+n, on+took
				pgOn, selfOn = pgOn+pg1-pg0, selfOn+self1-self0
			} else {
				offSteps, off = offSteps+n, off+took
				pgOff, selfOff = pgOff+pg1-pg0, selfOff+self1-self0
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
	if local := u.Hostname(); (local == "127.0.0.1" || local == "localhost" || local == "::1" || local == "") && pgOn+pgOff > 0 && selfOn+selfOff > 0 {
		// Where the events' cost lands: CPU per step of the database server and of this
		// process, in each phase.
		perStep := func(ticks int64, steps int) float64 { return float64(ticks) * 1e6 / clockTicks / float64(steps) }
		b.ReportMetric(perStep(pgOn, onSteps), "pg_us/step_on")
		b.ReportMetric(perStep(pgOff, offSteps), "pg_us/step_off")
		b.ReportMetric(perStep(selfOn, onSteps), "go_us/step_on")
		b.ReportMetric(perStep(selfOff, offSteps), "go_us/step_off")
	}
	s := bus.Stats()
	b.ReportMetric(float64(published.Load())/float64(s.Batches), "events/batch")
	if s.Dropped != 0 {
		b.Logf("events dropped: %+v", s)
	}
}

// clockTicks is Linux's USER_HZ, the unit of the CPU times in /proc/<pid>/stat.
const clockTicks = 100

// cpuTicks returns the CPU time (user + system, in clockTicks) used so far by the processes
// named postgres on this machine (the local database server, when the benchmark runs against
// one), with that of their children that exited (backends and autovacuum workers that ended,
// counted in the postmaster), and by this process; zeros where /proc cannot be read.
func cpuTicks() (pg, self int64) {
	procs, _ := os.ReadDir("/proc")
	me := strconv.Itoa(os.Getpid())
	for _, p := range procs {
		b, err := os.ReadFile("/proc/" + p.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid … utime stime cutime cstime: fields 14 to 17, counted from
		// the ")".
		st := string(b)
		open, end := strings.IndexByte(st, '('), strings.LastIndexByte(st, ')')
		if open < 0 || end < open {
			continue
		}
		f := strings.Fields(st[end+1:])
		if len(f) < 15 {
			continue
		}
		var t [4]int64 // utime stime cutime cstime
		for i := range t {
			t[i], _ = strconv.ParseInt(f[11+i], 10, 64)
		}
		switch {
		case p.Name() == me:
			self += t[0] + t[1]
		case st[open+1:end] == "postgres":
			pg += t[0] + t[1] + t[2] + t[3]
		}
	}
	return pg, self
}
