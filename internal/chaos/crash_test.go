package chaos_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
)

// Environment of the worker process TestCrashKill9 starts (TestChaosWorkerProcess).
const (
	envWorker = "CHAOS_WORKER"
	envDB     = "CHAOS_DB"
	envSeed   = "CHAOS_SEED" // replays a kill schedule
	envLogs   = "CHAOS_LOGS" // 1: log the workers' warnings and errors even when the tests pass
	readyLine = "CHAOS_WORKER_READY"
)

// Crash test parameters.
const (
	crashJobs    = 300
	crashKills   = 15              // SIGKILLs before the last worker is left to finish
	crashFewLeft = 10              // stop killing when no more jobs than this are unfinished
	crashBudget  = 4 * time.Minute // the whole test
)

// TestChaosWorkerProcess is the worker process of TestCrashKill9 (the test binary run again
// with CHAOS_WORKER=1): it runs a runner on CHAOS_DB until killed, or until its stdin closes
// (the parent asks it to stop, or died).
func TestChaosWorkerProcess(t *testing.T) {
	if os.Getenv(envWorker) != "1" {
		t.Skip("the worker process of TestCrashKill9; runs only when that test starts it")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		cancel()
	}()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("pid", os.Getpid())
	work := func() time.Duration { return time.Millisecond + rand.N(4*time.Millisecond) } // 1–5 ms: kills land mid-step
	err := runWorker(ctx, os.Getenv(envDB), log, work, func() { fmt.Println(readyLine) })
	if err != nil {
		t.Fatal(err)
	}
}

// TestCrashKill9: 300 jobs of a 6-node graph whose last node is an idempotent side effect;
// worker processes are killed with SIGKILL at random moments until all jobs finish. Expect 0
// lost jobs, 0 duplicate side effects, and no node re-executed after its checkpoint.
func TestCrashKill9(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts and kills worker processes for 15–30 s")
	}
	start := time.Now()
	deadline := start.Add(crashBudget)
	url := pgtest.URL(t)
	b := newBench(t, url, crashJobs)
	enqueued := time.Since(start)

	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(envSeed); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s: %v", envSeed, err)
		}
	}
	t.Logf("kill schedule seed %d (%s=%d replays it)", seed, envSeed, seed)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))

	logs := t.TempDir()
	var all []*worker
	t.Cleanup(func() {
		for _, w := range all {
			w.kill()
		}
		if t.Failed() || os.Getenv(envLogs) == "1" {
			for _, w := range all {
				t.Logf("worker %d (pid %d, %s) warnings and errors:\n%s", w.n, w.pid(), w.end(), interesting(w.log(), 15))
			}
		}
	})
	spawn := func() *worker {
		w, err := startWorker(url, logs, len(all)+1)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, w)
		return w
	}
	unfinished := func() int {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		st, err := b.statuses(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(b.jobs) - st[string(runner.Succeeded)]
	}

	kills, rounds := 0, 0
	var killedAt []int // unfinished jobs as each round started
	for kills < crashKills && time.Now().Before(deadline) {
		left := unfinished()
		if left <= crashFewLeft {
			break
		}
		ws := []*worker{spawn()}
		if rng.IntN(2) == 1 {
			ws = append(ws, spawn())
		}
		for _, w := range ws {
			if err := w.waitReady(30 * time.Second); err != nil {
				t.Fatalf("worker %d: %v\n%s", w.n, err, w.log())
			}
		}
		time.Sleep(time.Duration(100+rng.IntN(601)) * time.Millisecond)
		for _, w := range ws {
			w.kill()
			kills++
		}
		rounds++
		killedAt = append(killedAt, left)
	}
	killPhase := time.Since(start)

	last := spawn()
	if err := last.waitReady(30 * time.Second); err != nil {
		t.Fatalf("last worker: %v\n%s", err, last.log())
	}
	st, ok := b.waitFor(deadline, b.allSucceeded)
	if !ok {
		t.Fatalf("not done within %v: job statuses %v after %d kills (want all %d succeeded)", crashBudget, st, kills, len(b.jobs))
	}
	took := time.Since(start)
	if err := last.stop(10 * time.Second); err != nil {
		t.Errorf("last worker did not stop cleanly: %v", err)
	}

	// A killed worker's failures would go unnoticed but for its log.
	for _, w := range all {
		if l := w.log(); strings.Contains(l, "WARNING: DATA RACE") || strings.Contains(l, "panic:") {
			t.Errorf("worker %d (%s) raced or panicked:\n%s", w.n, w.end(), l)
		}
	}
	f := b.verify(t)
	t.Logf("crash test: %d jobs × %d nodes, %d workers started, %d SIGKILLs in %d rounds (unfinished jobs as each started: %v); "+
		"enqueue %v, kill phase %v, all succeeded after %v", len(b.jobs), len(line), len(all), kills, rounds, killedAt,
		enqueued.Round(time.Millisecond), killPhase.Round(time.Millisecond), took.Round(time.Millisecond))
	t.Logf("crash test: %s", f)
}

// worker is a worker process.
type worker struct {
	n     int
	cmd   *exec.Cmd
	stdin io.WriteCloser
	out   *readyWriter
	file  *os.File
	path  string
	ready chan struct{}
	done  chan struct{} // closed when the process has been waited for
	err   error         // Wait's, set before done closes
	sent  atomic.Bool   // SIGKILL sent
	once  sync.Once
}

// end says how the process ended.
func (w *worker) end() string {
	select {
	case <-w.done:
	default:
		return "running"
	}
	if w.sent.Load() {
		return "SIGKILL"
	}
	return fmt.Sprintf("exited: %v", w.err)
}

func startWorker(url, dir string, n int) (*worker, error) {
	path := filepath.Join(dir, fmt.Sprintf("worker-%02d.log", n))
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	w := &worker{n: n, file: f, path: path, ready: make(chan struct{}), done: make(chan struct{})}
	w.out = &readyWriter{w: f, ready: w.ready}
	w.cmd = exec.Command(os.Args[0], "-test.run=^TestChaosWorkerProcess$", "-test.count=1", "-test.v")
	w.cmd.Env = append(os.Environ(), envWorker+"=1", envDB+"="+url)
	w.cmd.Stdout, w.cmd.Stderr = w.out, f
	if w.stdin, err = w.cmd.StdinPipe(); err != nil {
		f.Close()
		return nil, err
	}
	if err := w.cmd.Start(); err != nil {
		f.Close()
		return nil, err
	}
	go func() {
		w.err = w.cmd.Wait()
		f.Close()
		close(w.done)
	}()
	return w, nil
}

func (w *worker) pid() int { return w.cmd.Process.Pid }

func (w *worker) waitReady(timeout time.Duration) error {
	select {
	case <-w.ready:
		return nil
	case <-w.done:
		return fmt.Errorf("exited before it was ready (%s)", w.end())
	case <-time.After(timeout):
		return fmt.Errorf("not ready after %v", timeout)
	}
}

// kill sends SIGKILL and waits for the process to be gone.
func (w *worker) kill() {
	w.once.Do(func() {
		select {
		case <-w.done:
			return
		default:
		}
		w.sent.Store(true)
		_ = w.cmd.Process.Kill()
		<-w.done
	})
}

// stop asks the worker to finish (its stdin closes), then kills it after timeout.
func (w *worker) stop(timeout time.Duration) error {
	_ = w.stdin.Close()
	select {
	case <-w.done:
		if !w.cmd.ProcessState.Success() {
			return fmt.Errorf("worker %d %s", w.n, w.cmd.ProcessState)
		}
		return nil
	case <-time.After(timeout):
		w.kill()
		return fmt.Errorf("worker %d still running %v after stdin closed; killed", w.n, timeout)
	}
}

func (w *worker) log() string {
	b, _ := os.ReadFile(w.path)
	return string(b)
}

// readyWriter passes a worker's stdout to its log and closes ready at the ready line.
type readyWriter struct {
	w     io.Writer
	ready chan struct{}
	mu    sync.Mutex
	line  []byte
	seen  bool
}

func (r *readyWriter) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.seen {
		r.line = append(r.line, p...)
		for {
			i := bytes.IndexByte(r.line, '\n')
			if i < 0 {
				break
			}
			if strings.TrimSpace(string(r.line[:i])) == readyLine {
				r.seen = true
				close(r.ready)
				break
			}
			r.line = r.line[i+1:]
		}
	}
	return r.w.Write(p)
}
