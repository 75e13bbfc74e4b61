package graph_test

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"testing"

	"weft/internal/checkpoint"
	"weft/internal/graph"
)

// Benchmarks of the superstep engine. Each reports, besides the usual
// ns/op, B/op and allocs/op (op = one Invoke), per-superstep figures:
// ns/step = timed elapsed / (b.N * steps) and allocs/step from
// runtime.MemStats.Mallocs deltas taken over the timed windows only.
//
// Checkpointed cases start a new thread per iteration. To keep the saver
// from growing without bound they run in chunks: before each chunk, outside
// the timer, a fresh checkpoint.Memory is made, the graph compiled against
// it, the thread ids formatted and the old saver collected.

// measure runs b.N iterations in chunks of at most chunk. prepare runs
// outside the timer and returns the body for iteration i of its chunk.
func measure(b *testing.B, steps, chunk int, prepare func(n int) func(i int)) {
	b.Helper()
	b.ReportAllocs()
	b.StopTimer()
	b.ResetTimer()
	var ms runtime.MemStats
	var mallocs uint64
	for done := 0; done < b.N; {
		n := min(chunk, b.N-done)
		body := prepare(n)
		runtime.GC()
		runtime.ReadMemStats(&ms)
		before := ms.Mallocs
		b.StartTimer()
		for i := 0; i < n; i++ {
			body(i)
		}
		b.StopTimer()
		runtime.ReadMemStats(&ms)
		mallocs += ms.Mallocs - before
		done += n
	}
	total := float64(b.N) * float64(steps)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/total, "ns/step")
	b.ReportMetric(float64(mallocs)/total, "allocs/step")
}

// threadIDs formats n distinct thread ids outside the timer.
func threadIDs(prefix string, n int) []graph.Config {
	cfgs := make([]graph.Config, n)
	for i := range cfgs {
		cfgs[i] = graph.Config{ThreadID: prefix + strconv.Itoa(i)}
	}
	return cfgs
}

func mustCompile[S any](b *testing.B, bld *graph.Builder[S], opts ...graph.CompileOption) *graph.Graph[S] {
	b.Helper()
	g, err := bld.Compile(opts...)
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// invoker returns a chunk body that invokes g once per iteration (on thread
// cfgs[i] when cfgs is non-nil) and checks the final state with check.
func invoker[S any](b *testing.B, g *graph.Graph[S], cfgs []graph.Config, in graph.Command, check func(S) error) func(int) {
	ctx := context.Background()
	return func(i int) {
		var cfg graph.Config
		if cfgs != nil {
			cfg = cfgs[i]
		}
		res, err := g.Invoke(ctx, cfg, in)
		if err != nil {
			b.Fatal(err)
		}
		if check != nil {
			if err := check(res.State); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// ---- Linear10 -------------------------------------------------------------

type linearState struct {
	Count int
	Name  string
}

const linearNodes = 10

func buildLinear() *graph.Builder[linearState] {
	bld := graph.New[linearState]()
	inc := func(_ context.Context, s linearState) (graph.Command, error) {
		return graph.Update(graph.Set("Count", s.Count+1)), nil
	}
	prev := graph.START
	for i := range linearNodes {
		name := "n" + strconv.Itoa(i)
		bld.AddNode(name, inc)
		bld.AddEdge(prev, name)
		prev = name
	}
	bld.AddEdge(prev, graph.END)
	return bld
}

func checkLinear(s linearState) error {
	if s.Count != linearNodes || s.Name != "bench" {
		return fmt.Errorf("final state %+v, want Count %d", s, linearNodes)
	}
	return nil
}

func BenchmarkLinear10(b *testing.B) {
	in := graph.Update(graph.Set("Name", "bench"))
	b.Run("no_checkpointer", func(b *testing.B) {
		g := mustCompile(b, buildLinear())
		measure(b, linearNodes, b.N, func(int) func(int) {
			return invoker(b, g, nil, in, checkLinear)
		})
	})
	b.Run("memory_checkpointer", func(b *testing.B) {
		measure(b, linearNodes, 1000, func(n int) func(int) {
			g := mustCompile(b, buildLinear(), graph.WithCheckpointer(checkpoint.NewMemory()))
			return invoker(b, g, threadIDs("t", n), in, checkLinear)
		})
	})
}

// ---- Fanout8 --------------------------------------------------------------

type fanState struct {
	Count int
	Items []string `weft:"append"`
}

const (
	fanWorkers = 8
	fanSteps   = 3 // split, the 8 workers, join
)

func buildFanout(useJoin bool) *graph.Builder[fanState] {
	bld := graph.New[fanState]()
	bld.AddNode("split", func(context.Context, fanState) (graph.Command, error) {
		return graph.Command{}, nil
	})
	bld.AddEdge(graph.START, "split")
	workers := make([]string, fanWorkers)
	for i := range workers {
		name := "w" + strconv.Itoa(i)
		workers[i] = name
		bld.AddNode(name, func(context.Context, fanState) (graph.Command, error) {
			return graph.Update(graph.Set("Items", name)), nil
		})
		bld.AddEdge("split", name)
		if !useJoin {
			bld.AddEdge(name, "join")
		}
	}
	if useJoin {
		bld.AddJoin(workers, "join")
	}
	bld.AddNode("join", func(_ context.Context, s fanState) (graph.Command, error) {
		return graph.Update(graph.Set("Count", len(s.Items))), nil
	})
	bld.AddEdge("join", graph.END)
	return bld
}

func checkFanout(s fanState) error {
	if s.Count != fanWorkers || len(s.Items) != fanWorkers {
		return fmt.Errorf("final state %+v, want %d items", s, fanWorkers)
	}
	return nil
}

func BenchmarkFanout8(b *testing.B) {
	in := graph.Command{}
	for _, useJoin := range []bool{false, true} {
		shape := "edges"
		if useJoin {
			shape = "join"
		}
		b.Run(shape+"/no_checkpointer", func(b *testing.B) {
			g := mustCompile(b, buildFanout(useJoin))
			measure(b, fanSteps, b.N, func(int) func(int) {
				return invoker(b, g, nil, in, checkFanout)
			})
		})
		b.Run(shape+"/memory_checkpointer", func(b *testing.B) {
			measure(b, fanSteps, 2500, func(n int) func(int) {
				g := mustCompile(b, buildFanout(useJoin), graph.WithCheckpointer(checkpoint.NewMemory()))
				return invoker(b, g, threadIDs("t", n), in, checkFanout)
			})
		})
	}
}

// ---- Loop100Append --------------------------------------------------------

type loopState struct {
	Count int
	Items []string `weft:"append"`
}

const loopSteps = 100

func buildLoop() *graph.Builder[loopState] {
	bld := graph.New[loopState]()
	bld.AddNode("step", func(_ context.Context, s loopState) (graph.Command, error) {
		return graph.Update(graph.Set("Count", s.Count+1), graph.Set("Items", "x")), nil
	})
	bld.AddEdge(graph.START, "step")
	bld.AddConditionalEdges("step", graph.Pick(func(s loopState) string {
		if s.Count >= loopSteps {
			return "done"
		}
		return "again"
	}), map[string]string{"again": "step", "done": graph.END})
	return bld
}

func checkLoop(s loopState) error {
	if s.Count != loopSteps || len(s.Items) != loopSteps {
		return fmt.Errorf("final Count %d with %d items, want %d", s.Count, len(s.Items), loopSteps)
	}
	return nil
}

func BenchmarkLoop100Append(b *testing.B) {
	in := graph.Command{}
	limit := graph.WithRecursionLimit(2 * loopSteps)
	b.Run("no_checkpointer", func(b *testing.B) {
		g := mustCompile(b, buildLoop(), limit)
		measure(b, loopSteps, b.N, func(int) func(int) {
			return invoker(b, g, nil, in, checkLoop)
		})
	})
	b.Run("memory_checkpointer", func(b *testing.B) {
		measure(b, loopSteps, 100, func(n int) func(int) {
			g := mustCompile(b, buildLoop(), limit, graph.WithCheckpointer(checkpoint.NewMemory()))
			return invoker(b, g, threadIDs("t", n), in, checkLoop)
		})
	})
}
