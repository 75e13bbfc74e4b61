package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
	"testing"

	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
)

// crashState is the crash harness's state: every step appends its number to Log.
type crashState struct {
	Log   []string `weft:"append"`
	Count int
	Doc   string
}

const crashSteps = 20

// crashGraph loops one node crashSteps times. kill, when > 0, is the step at which the
// node kills its own process (SIGKILL: no deferred call, no flush, as a crash); ran records
// the steps the node ran.
func crashGraph(tb testing.TB, s graph.Checkpointer, mode graph.Durability, kill int, ran *[]int) *graph.Graph[crashState] {
	tb.Helper()
	b := graph.New[crashState]()
	b.AddNode("work", func(_ context.Context, st crashState) (graph.Command, error) {
		step := st.Count + 1
		if step == kill {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
		if ran != nil {
			*ran = append(*ran, step)
		}
		return graph.Update(graph.Set("Log", fmt.Sprint("s", step)), graph.Set("Count", step), graph.Set("Doc", newDoc())), nil
	})
	b.AddEdge(graph.START, "work")
	b.AddConditionalEdges("work", graph.Pick(func(st crashState) string {
		if st.Count >= crashSteps {
			return "done"
		}
		return "again"
	}), map[string]string{"again": "work", "done": graph.END})
	g, err := b.Compile(graph.WithCheckpointer(s), graph.WithDurability(mode), graph.WithRecursionLimit(100))
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// TestDurabilityCrashChild is the process the crash test kills: it runs the graph on the
// database and thread it is given until its node kills it. It does nothing in a normal run.
func TestDurabilityCrashChild(t *testing.T) {
	url := os.Getenv("WEFT_CRASH_URL")
	if url == "" {
		t.Skip("run by TestDurabilityCrash")
	}
	kill, _ := strconv.Atoi(os.Getenv("WEFT_CRASH_AT"))
	d, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	g := crashGraph(t, postgres.NewCheckpointer(d), graph.Durability(os.Getenv("WEFT_CRASH_MODE")), kill, nil)
	_, err = g.Invoke(context.Background(), graph.Config{ThreadID: os.Getenv("WEFT_CRASH_THREAD")},
		graph.Update(graph.Set("Count", 0)))
	t.Fatalf("the run was not killed at step %d: %v", kill, err)
}

// TestDurabilityCrash kills a process running a graph at a random step, in each durability
// mode, and checks what the crash lost: the thread's head is the last checkpoint the mode
// had saved (sync: the step before; async: that one or the one before, which was in
// flight; exit: nothing of the run), and continuing the thread runs exactly the steps after
// it, so the log holds every step once.
func TestDurabilityCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	t.Parallel()
	url := pgtest.URL(t)
	d, err := postgres.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	s := postgres.NewCheckpointer(d)
	ctx := context.Background()
	for _, mode := range []graph.Durability{graph.DurabilitySync, graph.DurabilityAsync, graph.DurabilityExit} {
		for trial := range 2 {
			kill := 2 + rand.IntN(crashSteps-2) // steps 2..crashSteps-1
			thread := fmt.Sprintf("crash-%s-%d", mode, trial)
			cmd := exec.Command(os.Args[0], "-test.run=^TestDurabilityCrashChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), "WEFT_CRASH_URL="+url, "WEFT_CRASH_MODE="+string(mode),
				"WEFT_CRASH_AT="+strconv.Itoa(kill), "WEFT_CRASH_THREAD="+thread)
			out, err := cmd.CombinedOutput()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
				t.Fatalf("%s: the child was not killed (%v): %s", mode, err, out)
			}
			head, err := s.GetTuple(ctx, thread, "", "")
			saved := -1 // the last step saved; -1: none
			if err == nil {
				saved = head.Checkpoint.Step
			} else if !errors.Is(err, graph.ErrNotFound) {
				t.Fatal(err)
			}
			var ok bool
			switch mode {
			case graph.DurabilitySync:
				ok = saved == kill-1
			case graph.DurabilityAsync:
				ok = saved == kill-1 || saved == kill-2
			case graph.DurabilityExit:
				ok = saved == -1
			}
			if !ok {
				t.Fatalf("%s: killed at step %d, the head is step %d", mode, kill, saved)
			}
			// Continue (or, with nothing saved, start again) in the same mode.
			var ran []int
			g := crashGraph(t, s, mode, 0, &ran)
			in := graph.Command{}
			if saved < 0 {
				in = graph.Update(graph.Set("Count", 0))
			}
			res, err := g.Invoke(ctx, graph.Config{ThreadID: thread}, in)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for i := 1; i <= crashSteps; i++ {
				want = append(want, fmt.Sprint("s", i))
			}
			if !slices.Equal(res.State.Log, want) {
				t.Fatalf("%s: killed at %d, head %d: the log after the resume is %v", mode, kill, saved, res.State.Log)
			}
			if len(ran) == 0 || ran[0] != max(saved, 0)+1 {
				t.Fatalf("%s: killed at %d, head %d: the resume ran steps %v", mode, kill, saved, ran)
			}
			if tup, err := s.GetTuple(ctx, thread, "", ""); err != nil || logLen(tup) != crashSteps {
				t.Fatalf("%s: the saved head after the resume: %v", mode, err)
			}
			t.Logf("%s: killed at step %d; resumed from step %d", mode, kill, saved)
		}
	}
}

func logLen(t *graph.Tuple) int {
	var n int
	for _, c := range string(t.Values["Log"]) {
		if c == '"' {
			n++
		}
	}
	return n / 2
}
