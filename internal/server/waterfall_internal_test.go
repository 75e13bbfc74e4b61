package server

import (
	"math"
	"strings"
	"testing"
	"time"

	"weft/internal/graph"
	"weft/internal/runner"
)

// TestWaterfallPlacesParallelBranches: executions sit on the run's time axis in proportion
// to their start and length; two branches that ran at once are marked parallel, and the
// records of other jobs of the thread are not drawn.
func TestWaterfallPlacesParallelBranches(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ex := func(job, node string, from, to int) runner.NodeExecution {
		return runner.NodeExecution{JobID: job, Node: node, TaskID: node, StartedAt: at(from), EndedAt: at(to), Attempts: 1}
	}
	td := &threadData{job: runner.Job{ID: "j2", Status: runner.Succeeded}, execs: []runner.NodeExecution{
		ex("j1", "earlier_run", -500, -400),
		ex("j2", "plan", 0, 10), ex("j2", "branch_a", 10, 30), ex("j2", "branch_b", 12, 25), ex("j2", "join", 30, 40),
	}}
	vm := td.waterfall(at(1000))
	type want struct {
		label    string
		x, w     float64
		parallel bool
	}
	wants := []want{{"plan", 0, 250, false}, {"branch_a", 250, 500, true}, {"branch_b", 300, 325, true}, {"join", 750, 250, false}}
	if len(vm.Rows) != len(wants) || vm.Total != "40.0 ms" && vm.Total != "40 ms" {
		t.Fatalf("rows %+v, total %q", vm.Rows, vm.Total)
	}
	for i, w := range wants {
		r := vm.Rows[i]
		if r.Label != w.label || math.Abs(r.X-w.x) > 0.01 || math.Abs(r.W-w.w) > 0.01 || r.Parallel != w.parallel || r.Kind != "done" {
			t.Errorf("row %d: %+v, want %+v", i, r, w)
		}
	}
}

// TestWaterfallShowsAPauseBeforeANode: a run paused before a node runs (interrupt_before, as
// the contract review's human_approval) has no record of that node yet; the waterfall still
// draws the paused node at the pause and the open review from there to now, so the axis
// that reaches now is explained.
func TestWaterfallShowsAPauseBeforeANode(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ex := func(node string, from, to int) runner.NodeExecution {
		return runner.NodeExecution{JobID: "j1", Node: node, TaskID: node, StartedAt: at(from), EndedAt: at(to), Attempts: 1}
	}
	pending := graph.PendingInterrupt{ID: "i1", Node: "human_approval", TaskID: "t-approval", When: graph.InterruptBefore}
	td := &threadData{
		job:   runner.Job{ID: "j1", Status: runner.WaitingReview, PausedAt: at(110), Interrupts: []graph.PendingInterrupt{pending}},
		execs: []runner.NodeExecution{ex("init", 0, 10), ex("clause_validate", 10, 100)},
		snap:  graph.SnapshotJSON{Tasks: []graph.TaskState{{ID: "t-approval", Node: "human_approval", Interrupts: []graph.PendingInterrupt{pending}}}},
	}
	vm := td.waterfall(at(1000))
	var got []string
	for _, r := range vm.Rows {
		got = append(got, r.Kind+"|"+r.Label+"|"+r.Note)
	}
	want := []string{"done|init|", "done|clause_validate|", "interrupted|human_approval|paused for review before it runs", "review|waiting for review|still open"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if r := vm.Rows[3]; math.Abs(r.X-110) > 0.01 || math.Abs(r.X+r.W-1000) > 0.01 {
		t.Errorf("the open review spans %v+%v‰, want from 110‰ to the axis' end", r.X, r.W)
	}
}

// TestWaterfallShowsAnsweredPausesBeforeANode: once such a pause is answered, the node runs
// for the first time after the decision; the wait from the pause to the resumed node is drawn
// as an answered review (a pause inside a node, whose task runs again, is drawn once).
func TestWaterfallShowsAnsweredPausesBeforeANode(t *testing.T) {
	t.Parallel()
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ex := func(node, task string, from, to int) runner.NodeExecution {
		return runner.NodeExecution{JobID: "j1", Node: node, TaskID: task, StartedAt: at(from), EndedAt: at(to), Attempts: 1}
	}
	td := &threadData{
		job: runner.Job{ID: "j1", Status: runner.Succeeded},
		execs: []runner.NodeExecution{ex("validate", "v1", 0, 100),
			ex("human_approval", "a1", 400, 410), ex("ask", "k1", 410, 420), // paused before human_approval, answered at 390
			ex("ask", "k1", 700, 710), ex("done", "d1", 710, 1000)}, // paused inside ask, answered at 650
		reviewedAt: []time.Time{at(390), at(650)},
	}
	vm := td.waterfall(at(2000))
	var got []string
	for _, r := range vm.Rows {
		got = append(got, r.Kind+"|"+r.Label+"|"+r.Note)
	}
	want := []string{"done|validate|", "review|waiting for review|answered", "done|human_approval|", "interrupted|ask|paused for review",
		"review|waiting for review|answered", "done|ask|", "done|done|"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if r := vm.Rows[1]; math.Abs(r.X-100) > 0.01 || math.Abs(r.W-300) > 0.01 {
		t.Errorf("the answered review spans %v+%v‰, want 100+300", r.X, r.W)
	}
}
