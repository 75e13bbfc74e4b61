package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"weft/internal/graph"
	"weft/internal/postgres"
)

// engineState is the shape most agent graphs have: a message log (an append channel) and a
// document (a 2 KB value rewritten at every step).
type engineState struct {
	Messages []string `weft:"append"`
	Doc      string
}

// enginePathNodes is the length of BenchmarkEnginePath's linear graph: a run saves its input
// checkpoint and one per node.
const enginePathNodes = 10

// engineGraph is a linear graph of enginePathNodes nodes, each appending a ~100-byte
// message and rewriting the 2 KB document.
func engineGraph(tb testing.TB, s graph.Checkpointer, opts ...graph.CompileOption) *graph.Graph[engineState] {
	tb.Helper()
	bld := graph.New[engineState]()
	msg := strings.Repeat("m", 90)
	prev := graph.START
	for i := range enginePathNodes {
		name := fmt.Sprint("n", i)
		bld.AddNode(name, func(_ context.Context, st engineState) (graph.Command, error) {
			return graph.Update(graph.Set("Messages", fmt.Sprintf("%s %d %s", name, len(st.Messages), msg)),
				graph.Set("Doc", newDoc())), nil
		})
		bld.AddEdge(prev, name)
		prev = name
	}
	bld.AddEdge(prev, graph.END)
	g, err := bld.Compile(append([]graph.CompileOption{graph.WithCheckpointer(s)}, opts...)...)
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// BenchmarkEnginePath measures the full engine path: graph.Invoke of engineGraph on a new
// thread each time (enginePathNodes+1 steps a run, the input's included), with the
// PostgreSQL checkpointer, at 1 and 8 concurrent threads, in each durability mode, against
// the raw floor: a pgx loop of the minimal durable step (insert a 2 KB row, move a head row,
// commit; rawStep) at the same concurrency on the same pool. An op is one step (under sync,
// one checkpoint; exit saves one a run). The two alternate in eight rounds (raw first in
// even rounds), so load from elsewhere falls on both alike; it reports steps/s, raw_steps/s
// and ratio_vs_raw = steps/s ÷ raw_steps/s.
func BenchmarkEnginePath(b *testing.B) {
	ctx := context.Background()
	d := openBench(b)
	if _, err := d.Pool().Exec(ctx, rawSchema); err != nil {
		b.Fatal(err)
	}
	s := postgres.NewCheckpointer(d)
	for _, mode := range []graph.Durability{graph.DurabilitySync, graph.DurabilityAsync, graph.DurabilityExit} {
		g := engineGraph(b, s, graph.WithDurability(mode))
		for _, threads := range []int{1, 8} {
			benchEnginePath(b, d, g, mode, threads)
		}
	}
}

// benchEnginePath is one of BenchmarkEnginePath's sub-benchmarks.
func benchEnginePath(b *testing.B, d *postgres.DB, g *graph.Graph[engineState], mode graph.Durability, threads int) {
	ctx := context.Background()
	const perRun = enginePathNodes + 1
	b.Run(fmt.Sprintf("durability=%s/threads=%d", mode, threads), func(b *testing.B) {
		rounds := 8
		runs := max(1, b.N/(threads*rounds*perRun)) // runs per thread per round
		if b.N < threads*rounds*perRun {
			rounds = 1
		}
		var weftTime, rawTime time.Duration
		b.ResetTimer()
		for round := range rounds {
			b.StopTimer()
			prefix := newID() // names stay unique across -count runs on one database
			name := func(i, run int) string { return fmt.Sprintf("%s-%d-%d", prefix, i, run) }
			heads := make([]string, threads)
			for i := range heads {
				heads[i] = name(i, 0)
			}
			if _, err := d.Pool().Exec(ctx, `INSERT INTO raw_heads SELECT unnest($1::text[]), gen_random_uuid()`, heads); err != nil {
				b.Fatal(err)
			}
			raw := func() {
				rawTime += parallel(b, threads, func(i int) error {
					for range runs * perRun {
						if err := rawStep(ctx, d.Pool(), name(i, 0)); err != nil {
							return err
						}
					}
					return nil
				})
			}
			weft := func() {
				b.StartTimer()
				weftTime += parallel(b, threads, func(i int) error {
					for run := range runs {
						res, err := g.Invoke(ctx, graph.Config{ThreadID: name(i, run)}, graph.Update(graph.Set("Doc", "")))
						if err != nil {
							return err
						}
						if len(res.State.Messages) != enginePathNodes {
							return fmt.Errorf("thread %s: %d messages, want %d", name(i, run), len(res.State.Messages), enginePathNodes)
						}
					}
					return nil
				})
				b.StopTimer()
			}
			if round%2 == 0 {
				raw()
				weft()
			} else {
				weft()
				raw()
			}
		}
		n := float64(rounds * threads * runs * perRun)
		weftRate, rawRate := n/weftTime.Seconds(), n/rawTime.Seconds()
		b.ReportMetric(weftRate, "steps/s")
		b.ReportMetric(rawRate, "raw_steps/s")
		b.ReportMetric(weftRate/rawRate, "ratio_vs_raw")
	})
}
