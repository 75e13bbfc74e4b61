package postgres_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

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
	// An iteration (timed, so that -benchtime runs few) is a fresh database and 1,000 steps;
	// its pool is closed when the iteration ends, the database dropped at cleanup.
	for b.Loop() {
		d, err := postgres.Open(context.Background(), pgtest.URL(b))
		if err != nil {
			b.Fatal(err)
		}
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
		d.Close()
	}
}

// Knobs for tuning BenchmarkSteps (0 keeps the product's defaults): the pool size, which
// the raw baseline shares, and the group committer's commits in flight and batch cap.
var (
	benchPoolConns = flag.Int("bench.poolconns", 0, "BenchmarkSteps: pool_max_conns (0: pgxpool's default)")
	benchFlight    = flag.Int("bench.flight", 0, "BenchmarkSteps: group commits in flight (0: default)")
	benchBatch     = flag.Int("bench.batch", 0, "BenchmarkSteps: Puts per group commit (0: default)")
)

// openBench opens a fresh database with the pool size of -bench.poolconns.
func openBench(b *testing.B) *postgres.DB {
	b.Helper()
	u := pgtest.URL(b)
	if *benchPoolConns > 0 {
		parsed, err := url.Parse(u)
		if err != nil {
			b.Fatal(err)
		}
		q := parsed.Query()
		q.Set("pool_max_conns", strconv.Itoa(*benchPoolConns))
		parsed.RawQuery = q.Encode()
		u = parsed.String()
	}
	d, err := postgres.Open(context.Background(), u)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(d.Close)
	return d
}

// docSize is the state a step changes: a 2 KB string of random base64 characters (so
// PostgreSQL's compression does not shrink it), new at every step.
const docSize = 2000

func newDoc() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	buf := make([]byte, docSize)
	for i := 0; i < docSize; i += 10 {
		r := rand.Uint64()
		for j := i; j < min(i+10, docSize); j++ {
			buf[j] = alphabet[r&63]
			r >>= 6
		}
	}
	return string(buf)
}

// stepState is BenchmarkSteps's state: Doc (last value) changes every step, Count counts
// the steps, Target is the run's input.
type stepState struct {
	Doc    string
	Count  int
	Target int
}

// stepGraph loops one node until Count reaches Target: one checkpoint (a ~2 KB change)
// per step.
func stepGraph(b *testing.B, s graph.Checkpointer) *graph.Graph[stepState] {
	b.Helper()
	bld := graph.New[stepState]()
	bld.AddNode("work", func(_ context.Context, st stepState) (graph.Command, error) {
		return graph.Update(graph.Set("Doc", newDoc()), graph.Set("Count", st.Count+1)), nil
	})
	bld.AddEdge(graph.START, "work")
	bld.AddConditionalEdges("work", graph.Pick(func(st stepState) string {
		if st.Count >= st.Target {
			return "done"
		}
		return "again"
	}), map[string]string{"again": "work", "done": graph.END})
	g, err := bld.Compile(graph.WithCheckpointer(s), graph.WithRecursionLimit(1<<30))
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// parallel runs fn(thread) on threads goroutines and returns the wall time.
func parallel(b *testing.B, threads int, fn func(thread int) error) time.Duration {
	b.Helper()
	var wg sync.WaitGroup
	errs := make([]error, threads)
	start := time.Now()
	for i := range threads {
		wg.Go(func() { errs[i] = fn(i) })
	}
	wg.Wait()
	elapsed := time.Since(start)
	for _, err := range errs {
		if err != nil {
			b.Fatal(err)
		}
	}
	return elapsed
}

// rawSchema is the raw baseline's tables: what a step minimally writes.
const rawSchema = `
CREATE TABLE raw_heads (thread_id text PRIMARY KEY, head uuid NOT NULL);
CREATE TABLE raw_checkpoints (thread_id text NOT NULL, id uuid NOT NULL, data bytea NOT NULL,
    PRIMARY KEY (thread_id, id));`

// rawStep is one raw step: insert a ~2 KB checkpoint row, move the thread's head, commit.
// Both statements go in one pipelined batch, which PostgreSQL runs as one implicit
// transaction: one round trip and one commit, the least a durable step can cost.
func rawStep(ctx context.Context, pool *pgxpool.Pool, thread string) error {
	id := newID()
	batch := &pgx.Batch{}
	batch.Queue(`INSERT INTO raw_checkpoints (thread_id, id, data) VALUES ($1, $2, $3)`, thread, id, []byte(newDoc()))
	batch.Queue(`UPDATE raw_heads SET head = $2 WHERE thread_id = $1`, thread, id)
	return pool.SendBatch(ctx, batch).Close()
}

// BenchmarkSteps runs 1, 8 and 32 threads at once, each a graph whose every step changes a
// 2 KB string, on the PostgreSQL checkpointer, and reports checkpointed steps/s against a
// raw pgx loop on the same pool at the same concurrency (raw_steps/s, ratio_vs_raw =
// steps/s ÷ raw_steps/s). An op is one step of any thread (ns/op = 1/throughput). The two
// alternate in eight rounds (raw first in even rounds, weft first in odd ones), so load
// from elsewhere on the machine falls on both alike; each round starts new threads (one
// input checkpoint each, not counted as a step). puts/commit is the group commit's mean
// batch.
func BenchmarkSteps(b *testing.B) {
	ctx := context.Background()
	d := openBench(b)
	if _, err := d.Pool().Exec(ctx, rawSchema); err != nil {
		b.Fatal(err)
	}
	s := postgres.NewCheckpointer(d)
	postgres.SetGroupCommit(s, *benchFlight, *benchBatch)
	g := stepGraph(b, s)
	for _, threads := range []int{1, 8, 32} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			rounds := 8
			per := max(1, b.N/(threads*rounds)) // steps per thread per round
			if b.N < threads*rounds {
				rounds = 1
			}
			var weftTime, rawTime time.Duration
			txs0, puts0, _ := postgres.GroupCommitStats(s)
			b.ResetTimer()
			for round := range rounds {
				b.StopTimer()
				name := func(i int) string { return fmt.Sprintf("t%d-%d-%d-%d", threads, b.N, round, i) }
				heads := make([]string, threads)
				for i := range heads {
					heads[i] = name(i)
				}
				if _, err := d.Pool().Exec(ctx, `INSERT INTO raw_heads SELECT unnest($1::text[]), gen_random_uuid()`, heads); err != nil {
					b.Fatal(err)
				}
				raw := func() {
					rawTime += parallel(b, threads, func(i int) error {
						for range per {
							if err := rawStep(ctx, d.Pool(), name(i)); err != nil {
								return err
							}
						}
						return nil
					})
				}
				weft := func() {
					b.StartTimer()
					weftTime += parallel(b, threads, func(i int) error {
						res, err := g.Invoke(ctx, graph.Config{ThreadID: name(i)}, graph.Update(graph.Set("Target", per)))
						if err == nil && res.State.Count != per {
							err = fmt.Errorf("thread %s ran %d steps, want %d", name(i), res.State.Count, per)
						}
						return err
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
			b.StopTimer()
			steps := float64(rounds * threads * per)
			weftRate, rawRate := steps/weftTime.Seconds(), steps/rawTime.Seconds()
			b.ReportMetric(weftRate, "steps/s")
			b.ReportMetric(rawRate, "raw_steps/s")
			b.ReportMetric(weftRate/rawRate, "ratio_vs_raw")
			txs, puts, _ := postgres.GroupCommitStats(s)
			if txs > txs0 {
				b.ReportMetric(float64(puts-puts0)/float64(txs-txs0), "puts/commit")
			}
		})
	}
}

// resumeState is a realistic paused thread's state: a few last-value channels and an
// append channel that gains one small item per step.
type resumeState struct {
	Status string
	Draft  string
	Score  int
	Count  int
	Target int
	Log    []string `weft:"append"`
}

// resumeGraph drafts until Count reaches Target (one checkpoint per step, the input's
// included), then pauses before review.
func resumeGraph(tb testing.TB, s graph.Checkpointer) *graph.Graph[resumeState] {
	tb.Helper()
	bld := graph.New[resumeState]()
	bld.AddNode("draft", func(_ context.Context, st resumeState) (graph.Command, error) {
		n := st.Count + 1
		return graph.Update(graph.Set("Count", n), graph.Set("Score", n%100),
			graph.Set("Status", fmt.Sprintf("drafting %d", n)),
			graph.Set("Draft", strings.Repeat(strconv.Itoa(n%10), 400)),
			graph.Set("Log", fmt.Sprintf("step %d: revised the draft", n))), nil
	})
	bld.AddNode("review", func(_ context.Context, st resumeState) (graph.Command, error) {
		return graph.Update(graph.Set("Status", "reviewed")), nil
	})
	bld.AddEdge(graph.START, "draft")
	bld.AddConditionalEdges("draft", graph.Pick(func(st resumeState) string {
		if st.Count+1 >= st.Target { // the input checkpoint counts as one
			return "review"
		}
		return "again"
	}), map[string]string{"again": "draft", "review": "review"})
	bld.AddEdge("review", graph.END)
	g, err := bld.Compile(graph.WithCheckpointer(s), graph.WithInterruptBefore("review"), graph.WithRecursionLimit(1<<20))
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// BenchmarkResume measures resume latency on paused threads of 10, 1,000 and 10,000
// checkpoints (the Log channel then holds as many items, stored as deltas). A resume is what the
// engine does to claim a paused thread: GetTuple of the head, then Put of the claim
// checkpoint (the head's plan, the resume value, the carried writes; no blobs) with the head
// as the expected head. Each iteration resumes both threads (alternating which goes first)
// and then, untimed, moves each head back and deletes the claim, so the threads keep their
// length. It reports p50 and p99 in µs per length, p99_1000/p99_10, p99_10000/p99_10, the GetTuple part's
// p50 (get_p50_us_*), and, as the floor any durable resume stands on, the p50 and p99 of
// a one-row update's commit timed beside each resume (commit_p50_us, commit_p99_us).
func BenchmarkResume(b *testing.B) {
	ctx := context.Background()
	d := pgtest.DB(b)
	s := postgres.NewCheckpointer(d)
	g := resumeGraph(b, s)
	lengths := []int{10, 1000, 10000}
	for _, n := range lengths {
		thread := fmt.Sprint("resume-", n)
		if _, err := g.Invoke(ctx, graph.Config{ThreadID: thread}, graph.Update(graph.Set("Target", n))); err != nil {
			b.Fatal(err)
		}
		cps, err := s.List(ctx, thread, "", graph.ListOptions{})
		if err != nil || len(cps) != n {
			b.Fatalf("thread %s: %d checkpoints (%v), want %d", thread, len(cps), err, n)
		}
	}
	if _, err := d.Pool().Exec(ctx, "VACUUM ANALYZE"); err != nil {
		b.Fatal(err)
	}
	// resume claims thread and returns the head it found, the claim's id and the time the
	// GetTuple took.
	resume := func(thread string) (head, claim string, get time.Duration, err error) {
		start := time.Now()
		t, err := s.GetTuple(ctx, thread, "", "")
		get = time.Since(start)
		if err != nil {
			return "", "", get, err
		}
		cp := t.Checkpoint
		cp.ID, cp.ParentID, cp.Source, cp.Nodes, cp.SkipBefore = newID(), t.Checkpoint.ID, graph.SourceResume, nil, true
		cp.Next = slices.Clone(cp.Next)
		cp.Resume = map[string]json.RawMessage{"approve": json.RawMessage(`true`)}
		cp.CreatedAt = time.Now()
		var carried []graph.PendingWrite
		for _, w := range t.Writes {
			if w.Channel != graph.WriteInterrupt && w.Channel != graph.WriteError {
				carried = append(carried, w)
			}
		}
		err = s.Put(ctx, graph.PutRequest{Checkpoint: cp, Writes: carried, ExpectHead: t.Checkpoint.ID})
		return t.Checkpoint.ID, cp.ID, get, err
	}
	undo := func(thread, head, claim string) {
		tag, err := d.Pool().Exec(ctx, `WITH h AS (
			UPDATE checkpoint_heads SET head = $2 WHERE thread_id = $1 AND ns = '' AND head = $3 RETURNING space_id
		) DELETE FROM checkpoints c USING h WHERE c.space_id = h.space_id AND c.id = $3`, thread, head, claim)
		if err != nil || tag.RowsAffected() != 1 {
			b.Fatalf("undo the claim on %s: %v (%d rows)", thread, err, tag.RowsAffected())
		}
	}
	// The floor: one durable commit of a one-row update, measured beside the resumes.
	if _, err := d.Pool().Exec(ctx, `CREATE TABLE commit_floor (id int PRIMARY KEY, n int NOT NULL); INSERT INTO commit_floor VALUES (1, 0)`); err != nil {
		b.Fatal(err)
	}
	samples, gets := make([][]time.Duration, len(lengths)), make([][]time.Duration, len(lengths))
	var commits []time.Duration
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		for k := range lengths {
			j := (i + k) % len(lengths)
			thread := fmt.Sprint("resume-", lengths[j])
			start := time.Now()
			head, claim, get, err := resume(thread)
			samples[j], gets[j] = append(samples[j], time.Since(start)), append(gets[j], get)
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			undo(thread, head, claim)
			start = time.Now()
			if _, err := d.Pool().Exec(ctx, `UPDATE commit_floor SET n = n + 1 WHERE id = 1`); err != nil {
				b.Fatal(err)
			}
			commits = append(commits, time.Since(start))
			b.StartTimer()
		}
	}
	b.StopTimer()
	pct := func(ds []time.Duration, p float64) float64 {
		ds = slices.Clone(ds)
		slices.Sort(ds)
		return float64(ds[min(len(ds)-1, int(p*float64(len(ds))))].Nanoseconds()) / 1e3
	}
	for j, n := range lengths {
		b.ReportMetric(pct(samples[j], 0.50), fmt.Sprintf("p50_us_%d", n))
		b.ReportMetric(pct(samples[j], 0.99), fmt.Sprintf("p99_us_%d", n))
		b.ReportMetric(pct(gets[j], 0.50), fmt.Sprintf("get_p50_us_%d", n))
	}
	b.ReportMetric(pct(commits, 0.50), "commit_p50_us")
	b.ReportMetric(pct(commits, 0.99), "commit_p99_us")
	b.ReportMetric(pct(samples[1], 0.99)/pct(samples[0], 0.99), "p99_1000/p99_10")
	b.ReportMetric(pct(samples[2], 0.99)/pct(samples[0], 0.99), "p99_10000/p99_10")
}
