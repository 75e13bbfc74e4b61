package sqlite_test

import (
	"context"
	"path/filepath"
	"strconv"
	"testing"

	"weft/internal/checkpoint"
	"weft/internal/graph"
)

type benchState struct {
	Count int      `json:"count"`
	Log   []string `json:"log" weft:"append"`
}

const benchNodes = 10

// BenchmarkCheckpointerSteps runs a ten-node linear graph, one new thread per iteration,
// on the in-memory saver and on the SQLite file, and reports supersteps per second of
// each side by side (one checkpoint per step, plus the input's).
func BenchmarkCheckpointerSteps(b *testing.B) {
	savers := []struct {
		name string
		make func(b *testing.B) graph.Checkpointer
	}{
		{"memory", func(*testing.B) graph.Checkpointer { return checkpoint.NewMemory() }},
		{"sqlite", func(b *testing.B) graph.Checkpointer { return open(b, filepath.Join(b.TempDir(), "bench.db")) }},
	}
	for _, s := range savers {
		b.Run(s.name, func(b *testing.B) {
			g := linear(b, s.make(b))
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				res, err := g.Invoke(ctx, graph.Config{ThreadID: "bench-" + strconv.Itoa(i)}, graph.Update(graph.Set("count", 0)))
				if err != nil || res.State.Count != benchNodes {
					b.Fatalf("run: %+v, %v", res.State, err)
				}
			}
			b.ReportMetric(float64(b.N*benchNodes)/b.Elapsed().Seconds(), "steps/s")
		})
	}
}

func linear(b *testing.B, cp graph.Checkpointer) *graph.Graph[benchState] {
	bld := graph.New[benchState]()
	prev := graph.START
	for i := range benchNodes {
		name := "n" + strconv.Itoa(i)
		bld.AddNode(name, func(_ context.Context, s benchState) (graph.Command, error) {
			return graph.Update(graph.Set("count", s.Count+1), graph.Set("log", name)), nil
		})
		bld.AddEdge(prev, name)
		prev = name
	}
	bld.AddEdge(prev, graph.END)
	g, err := bld.Compile(graph.WithCheckpointer(cp))
	if err != nil {
		b.Fatal(err)
	}
	return g
}
