package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
)

// benchThread grows a thread the way a chat-like graph does: each step writes one message
// (about 400 bytes) and rewrites a small counter; a document channel is written once. With
// appendMessages the messages channel is an append channel (delta blobs: its value grows
// with the thread); otherwise it keeps the last message only (the state stays the same size).
func benchThread(b testing.TB, s graph.Checkpointer, thread string, steps int, appendMessages bool) {
	b.Helper()
	ctx := context.Background()
	msg := strings.Repeat("x", 380)
	head, versions := "", map[string]string{}
	for i := range steps {
		cid := newID()
		blobs := []graph.Blob{
			{Channel: "count", Version: cid, Data: []byte(fmt.Sprint(i))},
			{Channel: "messages", Version: cid, Data: []byte(fmt.Sprintf(`[{"role":"ai","i":%d,"text":%q}]`, i, msg))},
		}
		if i == 0 {
			blobs = append(blobs, graph.Blob{Channel: "doc", Version: cid, Data: []byte(`"` + strings.Repeat("d", 2000) + `"`)})
		} else if appendMessages {
			blobs[1].Delta, blobs[1].Base = true, versions["messages"]
		}
		nv := make(map[string]string, len(versions)+len(blobs))
		for k, v := range versions {
			nv[k] = v
		}
		for _, bl := range blobs {
			nv[bl.Channel] = cid
		}
		cp := graph.Checkpoint{ID: cid, ParentID: head, ThreadID: thread, Step: i, Source: graph.SourceLoop, CreatedAt: time.Now(),
			Versions: nv, Next: []graph.PlannedTask{{ID: fmt.Sprint("task-", i), Node: "chat"}}, Nodes: []string{"chat"}}
		if err := s.Put(ctx, graph.PutRequest{Checkpoint: cp, Blobs: blobs, ExpectHead: head}); err != nil {
			b.Fatal(err)
		}
		head, versions = cid, nv
	}
}

// BenchmarkGetTupleHead reads the head of threads of 10 and 1,000 checkpoints, whose state
// stays the same size (messages=last) or grows by a message a step (messages=append).
func BenchmarkGetTupleHead(b *testing.B) {
	d := pgtest.DB(b)
	s := postgres.NewCheckpointer(d)
	for _, tc := range []struct {
		kind  string
		steps int
	}{{"last", 10}, {"last", 1000}, {"append", 10}, {"append", 1000}} {
		thread := fmt.Sprint("bench-", tc.kind, tc.steps)
		benchThread(b, s, thread, tc.steps, tc.kind == "append")
		b.Run(fmt.Sprintf("messages=%s/checkpoints=%d", tc.kind, tc.steps), func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				if _, err := s.GetTuple(ctx, thread, "", ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStoragePerStep reports the bytes the four checkpoint tables (heap, indexes, TOAST)
// grow by per step, over the second half of a 1,000-step thread, and the new bytes per step.
func BenchmarkStoragePerStep(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		d := pgtest.DB(b)
		s := postgres.NewCheckpointer(d)
		size := func() int64 {
			var n int64
			err := d.Pool().QueryRow(context.Background(), `SELECT sum(pg_total_relation_size(t))::bigint FROM unnest(
				ARRAY['checkpoint_heads', 'checkpoints', 'checkpoint_blobs', 'checkpoint_writes']::regclass[]) AS t`).Scan(&n)
			if err != nil {
				b.Fatal(err)
			}
			return n
		}
		benchThread(b, s, "warm", 500, true)
		before := size()
		benchThread(b, s, "measured", 500, true)
		_, _ = d.Pool().Exec(context.Background(), "CHECKPOINT")
		after := size()
		newBytes := float64(len(`[{"role":"ai","i":999,"text":""}]`) + 380 + 2 + 3)
		b.ReportMetric(float64(after-before)/500, "stored-B/step")
		b.ReportMetric(newBytes, "new-B/step")
		b.ReportMetric(float64(after-before)/500/newBytes, "ratio")
		b.StartTimer()
	}
}
