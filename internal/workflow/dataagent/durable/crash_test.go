package durable_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"weft/internal/app/platform"
	"weft/internal/graph"
	"weft/internal/llm"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
	"weft/internal/sandbox"
	"weft/internal/workflow"
	"weft/internal/workflow/dataagent"
	"weft/internal/workflow/dataagent/dataagentpg"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// Environment of the worker process TestKilledDuringSqlExecute starts (TestCrashWorkerProcess).
const (
	envWorker     = "DA_WORKER"
	envDB         = "DA_DB"
	readyLine     = "DA_READY"
	stalledPrefix = "DA_STALLED "
	tenant        = "demo"
)

// pythonRuns records every run of the Python step, in whichever process, outside the
// product's transactions: a run that did anything is on record even if its process died.
const pythonRuns = `CREATE TABLE IF NOT EXISTS crash_python_runs (job_id text NOT NULL, pid integer NOT NULL,
	at timestamptz NOT NULL DEFAULT clock_timestamp())`

// countedPython is the sandbox, each run recorded first.
type countedPython struct {
	pool *pgxpool.Pool
	run  *sandbox.Runner
}

func (p countedPython) Run(ctx context.Context, job sandbox.Job) (sandbox.Result, error) {
	j, _ := runner.JobFromContext(ctx)
	if _, err := p.pool.Exec(ctx, `INSERT INTO crash_python_runs (job_id, pid) VALUES ($1, $2)`, j.ID, os.Getpid()); err != nil {
		return sandbox.Result{}, err
	}
	return p.run.Run(ctx, job)
}

// stallSQL is the read-only executor, but its query never answers: it says so on stdout
// and waits to be killed.
type stallSQL struct{}

func (stallSQL) Query(ctx context.Context, schema, sql string) (dataagent.ResultSet, error) {
	j, _ := runner.JobFromContext(ctx)
	fmt.Printf("%s%s\n", stalledPrefix, j.ID)
	<-ctx.Done()
	return dataagent.ResultSet{}, ctx.Err()
}

// openApp is the platform with the data agent registered as the app registers it, with
// countedPython (and, when stall, stallSQL).
func openApp(ctx context.Context, url string, stall bool) (*platform.App, error) {
	a, err := platform.Open(ctx, platform.Config{DatabaseURL: url, LLM: llm.NewOffline(), Runner: runner.Config{
		Lease: time.Second, RescueEvery: 300 * time.Millisecond, PollInterval: 50 * time.Millisecond, Concurrency: 2}})
	if err != nil {
		return nil, err
	}
	pool := a.DB.Pool()
	d := dataagent.Deps{LLM: a.LLM, Artifacts: a.RunArtifacts(), Checkpointer: a.Checkpoints,
		Python: countedPython{pool: pool, run: sandbox.New(sandbox.Config{})}}
	if stall {
		d.SQL = stallSQL{}
	}
	def, err := dataagentpg.Definition(pool, d)
	if err == nil {
		err = a.Registry.Register(def)
	}
	if err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}

// TestCrashWorkerProcess is the process TestKilledDuringSqlExecute kills: workers on DA_DB
// whose SQL executor stalls. It runs until killed, or until its stdin closes.
func TestCrashWorkerProcess(t *testing.T) {
	if os.Getenv(envWorker) != "1" {
		t.Skip("the worker process of TestKilledDuringSqlExecute; runs only when that test starts it")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	a, err := openApp(ctx, os.Getenv(envDB), true)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	fmt.Println(readyLine)
	_ = a.RunWorkers(ctx)
}

// TestKilledDuringSqlExecute: a worker process is killed with SIGKILL while SqlExecute runs
// the plan's SQL (the plan: sql, python, report). Another process's workers rescue the job
// once its lease runs out; the run goes on from its last checkpoint: SqlExecute runs again,
// then the Python step, once, and the report. The Python step ran once in all, its chart
// is stored once, and the answer's numbers are those of a hand-written query.
func TestKilledDuringSqlExecute(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts and kills a worker process")
	}
	if err := sandbox.New(sandbox.Config{}).Check(); err != nil {
		t.Skipf("the Python sandbox cannot run here: %v", err)
	}
	ctx := context.Background()
	url := pgtest.URL(t)
	a, err := openApp(ctx, url, false) // reads state and enqueues; runs no job until the kill
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	pool := a.DB.Pool()
	if err := dataagentpg.InstallDemo(ctx, pool, dataagentpg.Demo{Schema: dataagent.DefaultSchema}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, pythonRuns); err != nil {
		t.Fatal(err)
	}
	if err := a.Tenants.Create(ctx, tenant, "Demo"); err != nil {
		t.Fatal(err)
	}

	// 1. The worker process takes the question and is killed in SqlExecute.
	p := startWorker(t, url)
	j, err := a.StartValues(ctx, tenant, dataagent.Name, workflow.Values{dataagent.FieldQuestion: "GMV by region last month"}, "u_pm")
	if err != nil {
		t.Fatal(err)
	}
	p.await(t, stalledPrefix+j.ID)
	p.kill()
	def, _ := a.Registry.Get(dataagent.Name)
	g := def.Graph.(*graph.Graph[dataagent.State])
	snap, err := g.GetState(ctx, graph.Config{ThreadID: j.ThreadID})
	if err != nil {
		t.Fatal(err)
	}
	if len(snap.Next) != 1 || snap.Next[0] != dataagent.NodeSqlExecute || len(snap.Values.Plan.Steps) != 3 || snap.Values.Plan.Steps[1].Tool != dataagent.ToolPython {
		t.Fatalf("killed with next %v, plan %+v; want SqlExecute of a sql, python, report plan", snap.Next, snap.Values.Plan)
	}

	// 2. This process's workers rescue the job and finish the run.
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = a.RunWorkers(wctx) }()
	t.Cleanup(func() { stop(); <-done })
	final := waitJob(t, a, j.ID, runner.Succeeded)
	s, err := g.GetState(ctx, graph.Config{ThreadID: j.ThreadID})
	if err != nil {
		t.Fatal(err)
	}
	st := s.Values
	if st.Status != dataagent.StatusAnswered || len(st.Steps) != 3 || st.Steps[0].Result == nil || st.Steps[1].Status != dataagent.StepDone ||
		st.Steps[1].Python == nil || st.Steps[1].Python.Chart == nil {
		t.Fatalf("after the rescue: status %s, steps %+v", st.Status, st.Steps)
	}
	var runs int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM crash_python_runs WHERE job_id = $1`, j.ID).Scan(&runs); err != nil {
		t.Fatal(err)
	}
	if runs != 1 {
		t.Errorf("the Python step ran %d times, want once", runs)
	}
	hist, err := g.History(ctx, graph.Config{ThreadID: j.ThreadID}, graph.ListOptions{Source: graph.SourceLoop})
	if err != nil {
		t.Fatal(err)
	}
	wrote := map[string]int{}
	for _, cp := range hist {
		for _, n := range cp.Nodes {
			wrote[n]++
		}
	}
	for node, want := range map[string]int{dataagent.NodeSqlExecute: 1, dataagent.NodePythonExecute: 1, dataagent.NodePythonGenerate: 1,
		dataagent.NodeSqlGenerate: 1, dataagent.NodeReportGenerator: 1} {
		if wrote[node] != want {
			t.Errorf("%s wrote %d checkpoints, want %d (%v)", node, wrote[node], want, wrote)
		}
	}
	arts, err := a.Artifacts.List(ctx, tenant, j.ThreadID)
	if err != nil {
		t.Fatal(err)
	}
	for _, art := range arts {
		if art.Version != 1 {
			t.Errorf("artifact %s has version %d: written twice", art.Key, art.Version)
		}
	}
	if final.RetryCount != 0 {
		t.Errorf("the rescue counted as a retry: %d", final.RetryCount)
	}
	want := handRows(t, pool, `SELECT r.name, sum(o.amount)::text FROM analytics.orders o JOIN analytics.customers c USING (customer_id)
		JOIN analytics.regions r USING (region_id) WHERE o.status = 'paid'
		AND o.ordered_at >= date_trunc('month', now()) - interval '1 month' AND o.ordered_at < date_trunc('month', now())
		GROUP BY 1 ORDER BY sum(o.amount) DESC`)
	if got := st.Steps[0].Result.Rows; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rows %v, want %v", got, want)
	}
}

func handRows(t *testing.T, pool *pgxpool.Pool, sql string) [][]string {
	t.Helper()
	rows, err := pool.Query(context.Background(), sql)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out [][]string
	for rows.Next() {
		var a, b string
		if err := rows.Scan(&a, &b); err != nil {
			t.Fatal(err)
		}
		out = append(out, []string{a, b})
	}
	return out
}

func waitJob(t *testing.T, a *platform.App, id string, want runner.Status) runner.Job {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		j, err := a.Jobs.Job(context.Background(), tenant, id)
		if err == nil && j.Status == want {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %s is %s (%v), want %s; errors %+v", id, j.Status, err, want, j.Errors)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// proc is a worker process.
type proc struct {
	cmd   *exec.Cmd
	lines chan string
	log   string
}

func startWorker(t *testing.T, url string) *proc {
	t.Helper()
	p := &proc{lines: make(chan string, 64), log: filepath.Join(t.TempDir(), "worker.log")}
	logf, err := os.Create(p.log)
	if err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(os.Args[0], "-test.run=^TestCrashWorkerProcess$", "-test.count=1", "-test.v")
	p.cmd.Env = append(os.Environ(), envWorker+"=1", envDB+"="+url)
	p.cmd.Stderr = logf
	out, _ := p.cmd.StdoutPipe()
	if _, err := p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			fmt.Fprintln(logf, sc.Text())
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	t.Cleanup(p.kill)
	p.await(t, readyLine)
	return p
}

func (p *proc) await(t *testing.T, prefix string) {
	t.Helper()
	deadline := time.After(90 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				b, _ := os.ReadFile(p.log)
				t.Fatalf("the worker process ended before %q:\n%s", prefix, b)
			}
			if strings.HasPrefix(l, prefix) {
				return
			}
		case <-deadline:
			t.Fatalf("no %q from the worker process", prefix)
		}
	}
}

// kill ends the process with SIGKILL: no deferred call, no lease given back.
func (p *proc) kill() {
	if p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
}
