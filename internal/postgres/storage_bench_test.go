package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
)

// storageState is a chat-like thread: an append channel of ~400-byte
// messages and a counter.
type storageState struct {
	Messages []storageMsg `json:"messages" weft:"append"`
	Count    int          `json:"count"`
	Round    int          `json:"round"`
}

type storageMsg struct {
	I    int    `json:"i"`
	Text string `json:"text"`
}

// BenchmarkStorageGrowth measures what one step stores against what it
// adds: bytes stored per step ÷ new bytes per step (target ≤ 3), at thread
// length 50 and at thread length 1,000, and their quotient (target ≤ 1.1:
// storage grows with what changed, not with the thread's length). Each
// figure is the growth of the checkpoint tables (segments and snapshots
// included, though ~400-byte items get neither) over the last 50 steps of
// 20 threads, so page granularity averages out.
func BenchmarkStorageGrowth(b *testing.B) {
	const threads, window = 20, 50
	text := strings.Repeat("evidence ", 44) // ~400 bytes
	newBytes := func(i int) float64 {
		m, _ := json.Marshal(storageMsg{I: i, Text: text})
		c, _ := json.Marshal(i)
		return float64(len(m) + len(c))
	}
	// One measurement per run: the figures are storage ratios, and the one
	// iteration (timed) takes longer than any -benchtime, so b.Loop stops.
	for i := 0; b.Loop(); i++ {
		if i > 0 {
			continue
		}
		d := pgtest.DB(b)
		cp := postgres.NewCheckpointer(d)
		bld := graph.New[storageState]()
		bld.AddNode("step", func(_ context.Context, s storageState) (graph.Command, error) {
			return graph.Update(graph.Set("messages", storageMsg{I: s.Count + 1, Text: text}), graph.Set("count", s.Count+1)), nil
		})
		bld.AddEdge(graph.START, "step")
		bld.AddConditionalEdges("step", graph.Pick(func(s storageState) string {
			if s.Count%window == 0 {
				return "pause"
			}
			return "again"
		}), map[string]string{"again": "step", "pause": graph.END})
		g, err := bld.Compile(graph.WithCheckpointer(cp), graph.WithRecursionLimit(window+1))
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		size := func() float64 {
			var n int64
			if err := d.Pool().QueryRow(ctx, `SELECT sum(pg_total_relation_size(t))::bigint FROM unnest(
				ARRAY['checkpoint_heads', 'checkpoints', 'checkpoint_blobs', 'checkpoint_writes',
					'checkpoint_segments', 'checkpoint_snapshots']::regclass[]) AS t`).Scan(&n); err != nil {
				b.Fatal(err)
			}
			return float64(n)
		}
		// advance runs every thread through the next window of steps.
		round := 0
		advance := func(first bool) {
			round++
			for t := 0; t < threads; t++ {
				// Every window is a new run on the thread that sets round (a few bytes per
				// window), the first one included, so both measured windows hold the same
				// channels: each checkpoint's versions name all three.
				in := graph.Update(graph.Set("round", round))
				if first {
					in = graph.Update(graph.Set("count", 0), graph.Set("round", round))
				}
				if _, err := g.Invoke(ctx, graph.Config{ThreadID: fmt.Sprintf("t%d", t)}, in); err != nil {
					b.Fatal(err)
				}
			}
		}
		ratioAt := func(length int) float64 {
			before := size()
			advance(length == window)
			stored := (size() - before) / (threads * window)
			var added float64
			for i := length - window + 1; i <= length; i++ {
				added += newBytes(i)
			}
			return stored / (added / window)
		}
		r50 := ratioAt(window)
		for l := 2 * window; l < 1000; l += window {
			advance(false)
		}
		r1000 := ratioAt(1000)
		b.ReportMetric(r50, "bytes_stored/bytes_new@50")
		b.ReportMetric(r1000, "bytes_stored/bytes_new")
		b.ReportMetric(r1000/r50, "ratio1000/ratio50")
	}
}
