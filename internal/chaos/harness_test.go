package chaos_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const (
	workflowName = "chaos_line"
	tenantID     = "t_chaos"
	effectAction = "chaos.effect"
)

// line is the graph's path: n1 → … → n6; n6 is the side effect.
var line = []string{"n1", "n2", "n3", "n4", "n5", "n6"}

// lineState: every node appends its name to Trail, so a node that ran again after its
// checkpoint would show twice in the final state.
type lineState struct {
	Seq   int      `json:"seq"`
	Trail []string `json:"trail" weft:"append"`
}

// schema is what the tests add to their database, next to the product's tables. The
// chaos_* tables are written outside the product's transactions: chaos_node_runs gets a row
// when a node starts (before it does anything), chaos_effect_calls when the side effect's
// function is called (whether or not its transaction then commits). effect_log is the side
// effect itself: a row per audit entry of the effect, copied by a trigger, so it commits or
// rolls back with the effect's transaction (Effects.Once); it has no unique constraint, so a
// repeated effect would show. chaos_job_moves records every status change of a job.
const schema = `
CREATE TABLE chaos_node_runs (job_id text NOT NULL, node text NOT NULL, pid integer NOT NULL, started_at timestamptz NOT NULL);
CREATE TABLE chaos_effect_calls (job_id text NOT NULL, pid integer NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE TABLE effect_log (job_id text NOT NULL, at timestamptz NOT NULL);
CREATE FUNCTION chaos_effect_log() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO effect_log (job_id, at) VALUES (NEW.subject, NEW.at);
    RETURN NULL;
END $$;
CREATE TRIGGER chaos_effect_log AFTER INSERT ON audit_log
    FOR EACH ROW WHEN (NEW.action = '` + effectAction + `') EXECUTE FUNCTION chaos_effect_log();
CREATE TABLE chaos_job_moves (job_id uuid NOT NULL, from_status text NOT NULL, to_status text NOT NULL,
    lease_until timestamptz, at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE FUNCTION chaos_job_move() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO chaos_job_moves (job_id, from_status, to_status, lease_until) VALUES (NEW.id, OLD.status, NEW.status, OLD.lease_until);
    RETURN NULL;
END $$;
CREATE TRIGGER chaos_job_move AFTER UPDATE ON jobs
    FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION chaos_job_move();
`

// probe writes the tests' own records on a pool of its own (never inside the product's
// transactions).
type probe struct {
	pool *pgxpool.Pool
	pid  int
}

func openProbe(ctx context.Context, url string) (*probe, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = 8
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	return &probe{pool: pool, pid: os.Getpid()}, nil
}

// nodeStarted records a node's start. A node whose start could not be recorded fails (and
// does nothing), so every execution that did anything is on record.
func (p *probe) nodeStarted(ctx context.Context, jobID, node string) error {
	_, err := p.pool.Exec(ctx, `INSERT INTO chaos_node_runs (job_id, node, pid, started_at) VALUES ($1, $2, $3, $4)`,
		jobID, node, p.pid, time.Now())
	if err != nil {
		return fmt.Errorf("record start of %s: %w", node, err)
	}
	return nil
}

func (p *probe) effectCalled(ctx context.Context, jobID string) error {
	_, err := p.pool.Exec(ctx, `INSERT INTO chaos_effect_calls (job_id, pid) VALUES ($1, $2)`, jobID, p.pid)
	if err != nil {
		return fmt.Errorf("record effect call: %w", err)
	}
	return nil
}

// buildLine compiles the graph, the same in every process. work is how long a node works;
// opts add to the compile options.
func buildLine(d *postgres.DB, p *probe, work func() time.Duration, opts ...graph.CompileOption) (*graph.Graph[lineState], error) {
	b := graph.New[lineState]()
	audit := postgres.NewAudit(d)
	prev := graph.START
	for i, name := range line {
		effect := i == len(line)-1
		b.AddNode(name, func(ctx context.Context, _ lineState) (graph.Command, error) {
			j, ok := runner.JobFromContext(ctx)
			if !ok {
				return graph.Command{}, errors.New("the node runs outside a job")
			}
			if err := p.nodeStarted(ctx, j.ID, name); err != nil {
				return graph.Command{}, err
			}
			if err := sleep(ctx, work()); err != nil {
				return graph.Command{}, err
			}
			if effect {
				_, _, err := postgres.NewEffects(d, j.TenantID).Once(ctx, j.ID, func(ctx context.Context) (json.RawMessage, error) {
					if err := p.effectCalled(ctx, j.ID); err != nil {
						return nil, err
					}
					// Audit.Append joins the effect's transaction; the trigger copies the
					// row into effect_log.
					_, err := audit.Append(ctx, postgres.Entry{TenantID: j.TenantID, Actor: "system:chaos", Action: effectAction,
						Subject: j.ID, Workflow: workflowName})
					return json.RawMessage(`{"done":true}`), err
				})
				if err != nil {
					return graph.Command{}, err
				}
			}
			return graph.Update(graph.Set("trail", []string{name})), nil
		})
		b.AddEdge(prev, name)
		prev = name
	}
	b.AddEdge(prev, graph.END)
	return b.Compile(append([]graph.CompileOption{graph.WithCheckpointer(postgres.NewCheckpointer(d)), graph.WithName(workflowName)}, opts...)...)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// registry is the one-workflow runner.Registry.
type registry map[string]graph.Runnable

func (r registry) Lookup(name string) (graph.Runnable, bool) {
	g, ok := r[name]
	return g, ok
}

// workerConfig is the runner's tuning in every test: a short lease, so a dead worker's jobs
// come back within about 1.5 s.
func workerConfig() runner.Config {
	return runner.Config{
		Concurrency:  4,
		Lease:        time.Second,
		PollInterval: 50 * time.Millisecond,
		RescueEvery:  500 * time.Millisecond,
		Backoff:      func(int) time.Duration { return 100 * time.Millisecond },
	}
}

// runWorker is a worker process: it opens the database (applying migrations), runs the
// runner and its wake-up listener until ctx ends, and calls ready once it is open.
func runWorker(ctx context.Context, url string, log *slog.Logger, work func() time.Duration, ready func()) error {
	d, err := postgres.Open(ctx, url, postgres.WithLogger(log))
	if err != nil {
		return err
	}
	defer d.Close()
	p, err := openProbe(ctx, url)
	if err != nil {
		return err
	}
	defer p.pool.Close()
	g, err := buildLine(d, p, work)
	if err != nil {
		return err
	}
	wake := postgres.NewListener(d)
	cfg := workerConfig()
	cfg.Store, cfg.Workflows, cfg.Logger, cfg.Wake = postgres.NewJobStore(d), registry{workflowName: g}, log, wake.C()
	r := runner.New(cfg)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); _ = wake.Run(ctx) }()
	defer wg.Wait()
	if ready != nil {
		ready()
	}
	return r.Run(ctx)
}

// bench is a test's database: the product's tables plus the schema above, n jobs enqueued.
type bench struct {
	url   string
	db    *postgres.DB
	probe *probe
	graph *graph.Graph[lineState]
	jobs  []runner.Job
}

func newBench(t *testing.T, url string, n int) *bench {
	t.Helper()
	ctx := context.Background()
	d, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	p, err := openProbe(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.pool.Close)
	if _, err := p.pool.Exec(ctx, schema); err != nil {
		t.Fatalf("create the test's tables: %v", err)
	}
	g, err := buildLine(d, p, func() time.Duration { return 0 }) // for reading state only
	if err != nil {
		t.Fatal(err)
	}
	b := &bench{url: url, db: d, probe: p, graph: g}
	r := runner.New(runner.Config{Store: postgres.NewJobStore(d), Workflows: registry{workflowName: g}})
	for i := range n {
		j, err := r.Enqueue(ctx, runner.NewJob{TenantID: tenantID, Workflow: workflowName, Input: json.RawMessage(fmt.Sprintf(`{"seq":%d}`, i))})
		if err != nil {
			t.Fatal(err)
		}
		b.jobs = append(b.jobs, j)
	}
	return b
}

// statuses counts the jobs by status.
func (b *bench) statuses(ctx context.Context) (map[string]int, error) {
	rows, err := b.probe.pool.Query(ctx, `SELECT status, count(*) FROM jobs GROUP BY status`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			return nil, err
		}
		out[s] = n
	}
	return out, rows.Err()
}

// waitFor polls until cond holds on the job counts (true), or the deadline passes (false,
// with the last counts). Query errors (the database restarting) are retried.
func (b *bench) waitFor(deadline time.Time, cond func(map[string]int) bool) (map[string]int, bool) {
	var last map[string]int
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		st, err := b.statuses(ctx)
		cancel()
		if err == nil {
			last = st
			if cond(st) {
				return st, true
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return last, false
}

func (b *bench) allSucceeded(st map[string]int) bool {
	return st[string(runner.Succeeded)] == len(b.jobs)
}

// figures are what a run did, for the log.
type figures struct {
	claims, reclaimed, rescued, requeued int // claims of all jobs; jobs claimed more than once; leases expired and requeued; all running → queued
	retries                              int // running → retry_scheduled
	nodeRuns, reruns                     int // node executions; those beyond one per node and job
	effectCalls                          int // calls of the side effect's function (committed or not)
}

func (f figures) String() string {
	return fmt.Sprintf("claims %d (jobs re-claimed: %d), leases expired and rescued %d (all running→queued: %d), transient retries %d, "+
		"node executions %d (re-run before their checkpoint: %d), effect function calls %d",
		f.claims, f.reclaimed, f.rescued, f.requeued, f.retries, f.nodeRuns, f.reruns, f.effectCalls)
}

// verify asserts the three properties and returns the figures: every job succeeded (none
// lost); effect_log has exactly one row per job (no duplicate side effect); every thread's
// final trail is n1..n6 exactly, each node's write is in exactly one committed checkpoint,
// and no execution of a node started after that checkpoint (no node re-executed after its
// checkpoint).
func (b *bench) verify(t *testing.T) figures {
	t.Helper()
	ctx := context.Background()
	pool := b.probe.pool
	var f figures

	st, err := b.statuses(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !b.allSucceeded(st) {
		var bad []string
		rows, err := pool.Query(ctx, `SELECT id::text, status, retry_count, errors::text FROM jobs WHERE status <> 'succeeded' ORDER BY id LIMIT 10`)
		if err == nil {
			for rows.Next() {
				var id, s, errs string
				var rc int
				if rows.Scan(&id, &s, &rc, &errs) == nil {
					bad = append(bad, fmt.Sprintf("%s %s retry_count=%d errors=%s", id, s, rc, errs))
				}
			}
			rows.Close()
		}
		t.Errorf("lost jobs: statuses %v, want all %d succeeded; e.g.\n%s", st, len(b.jobs), strings.Join(bad, "\n"))
	}

	effects := map[string]int{}
	rows, err := pool.Query(ctx, `SELECT job_id, count(*) FROM effect_log GROUP BY job_id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			t.Fatal(err)
		}
		effects[id] = n
	}
	rows.Close()
	missing, dup, total := 0, 0, 0
	for _, j := range b.jobs {
		switch n := effects[j.ID]; {
		case n == 0:
			missing++
		case n > 1:
			dup++
			t.Errorf("job %s: side effect done %d times", j.ID, n)
		}
		total += effects[j.ID]
	}
	if missing > 0 || dup > 0 || total != len(b.jobs) || len(effects) != len(b.jobs) {
		t.Errorf("effect_log: %d rows for %d jobs, want exactly one per job (%d jobs without, %d with duplicates)", total, len(effects), missing, dup)
	}

	// Node executions, by job and node.
	runs := map[string]map[string][]time.Time{}
	rows, err = pool.Query(ctx, `SELECT job_id, node, started_at FROM chaos_node_runs`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id, node string
		var at time.Time
		if err := rows.Scan(&id, &node, &at); err != nil {
			t.Fatal(err)
		}
		if runs[id] == nil {
			runs[id] = map[string][]time.Time{}
		}
		runs[id][node] = append(runs[id][node], at)
		f.nodeRuns++
	}
	rows.Close()
	f.reruns = f.nodeRuns - len(b.jobs)*len(line)

	bad := 0
	for _, j := range b.jobs {
		cfg := graph.Config{ThreadID: j.ThreadID}
		snap, err := b.graph.GetState(ctx, cfg)
		if err != nil {
			t.Errorf("job %s: %v", j.ID, err)
			bad++
			continue
		}
		if !slices.Equal(snap.Values.Trail, line) || len(snap.Next) != 0 {
			t.Errorf("job %s: final trail %v (next %v), want %v", j.ID, snap.Values.Trail, snap.Next, line)
			bad++
		}
		hist, err := b.graph.History(ctx, cfg, graph.ListOptions{})
		if err != nil {
			t.Errorf("job %s: history: %v", j.ID, err)
			continue
		}
		done := map[string]int{}
		for _, cp := range hist {
			for _, n := range cp.Nodes {
				if n == graph.START {
					continue
				}
				done[n]++
				for _, at := range runs[j.ID][n] {
					if !at.Before(cp.CreatedAt) {
						t.Errorf("job %s: node %s started at %s, after its checkpoint %s of %s", j.ID, n,
							at.Format(time.RFC3339Nano), cp.ID, cp.CreatedAt.Format(time.RFC3339Nano))
						bad++
					}
				}
			}
		}
		for _, n := range line {
			if done[n] != 1 {
				t.Errorf("job %s: node %s completed in %d checkpoints, want 1", j.ID, n, done[n])
				bad++
			}
			if len(runs[j.ID][n]) == 0 {
				t.Errorf("job %s: node %s has no recorded execution", j.ID, n)
			}
		}
		if bad > 20 {
			t.Fatal("too many bad threads; stopping")
		}
	}

	err = pool.QueryRow(ctx, `SELECT
		count(*) FILTER (WHERE to_status = 'running'),
		count(*) FILTER (WHERE from_status = 'running' AND to_status = 'queued' AND lease_until < at),
		count(*) FILTER (WHERE from_status = 'running' AND to_status = 'queued'),
		count(*) FILTER (WHERE to_status = 'retry_scheduled'),
		(SELECT count(*) FROM (SELECT job_id FROM chaos_job_moves WHERE to_status = 'running' GROUP BY job_id HAVING count(*) > 1) AS r),
		(SELECT count(*) FROM chaos_effect_calls)
		FROM chaos_job_moves`).Scan(&f.claims, &f.rescued, &f.requeued, &f.retries, &f.reclaimed, &f.effectCalls)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// interesting is a log's warnings and errors, at most limit lines.
func interesting(log string, limit int) string {
	var out []string
	for l := range strings.SplitSeq(log, "\n") {
		if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") || strings.Contains(l, "panic") {
			out = append(out, l)
		}
	}
	if len(out) > limit {
		out = append(out[:limit], fmt.Sprintf("… %d more", len(out)-limit))
	}
	return strings.Join(out, "\n")
}

// inProcessWorker runs runWorker in a goroutine with slow nodes; the returned stop ends it.
func inProcessWorker(t *testing.T, url string, work time.Duration) (stop func(), log *pgtest.LogBuffer) {
	t.Helper()
	log = &pgtest.LogBuffer{}
	logger := slog.New(slog.NewTextHandler(io.Writer(log), &slog.HandlerOptions{Level: slog.LevelInfo}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runWorker(ctx, url, logger, func() time.Duration { return work }, nil) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("worker: %v", err)
			}
		})
	}
	t.Cleanup(func() {
		stop()
		if t.Failed() || os.Getenv(envLogs) == "1" {
			t.Logf("worker warnings and errors:\n%s", interesting(log.String(), 60))
		}
	})
	return stop, log
}
