package server

import (
	"fmt"
	"slices"
	"time"

	"weft/internal/runner"
	"weft/web/component"
	"weft/web/page"
)

// waterfallRows bounds the executions the waterfall draws (the newest run's last ones).
const waterfallRows = 200

// waterfall draws the newest run (the thread's newest job, every attempt of it) from its
// node records: each execution a bar on the run's time axis, overlapping bars where branches
// ran in parallel, a header per attempt when the job was retried, and the waits between
// (for a retry, for a review: until now while the review is still open) as bars of their own.
// It needs nothing but the records: no trace collector.
func (td *threadData) waterfall(now time.Time) page.WaterfallVM {
	j := td.job
	var execs []runner.NodeExecution
	for _, ex := range td.execs {
		if ex.JobID == j.ID {
			execs = append(execs, ex)
		}
	}
	if len(execs) == 0 {
		return page.WaterfallVM{}
	}
	slices.SortStableFunc(execs, func(a, b runner.NodeExecution) int { return a.StartedAt.Compare(b.StartedAt) })
	execs = execs[max(0, len(execs)-waterfallRows):]
	// Each error in the job's history ended an attempt.
	attemptOf := func(t time.Time) int {
		n := 0
		for _, e := range j.Errors {
			if !t.Before(e.At) {
				n++
			}
		}
		return n
	}
	waiting := map[string]bool{} // tasks paused now
	if j.Status == runner.WaitingReview {
		for _, t := range td.snap.Tasks {
			if len(t.Interrupts) > 0 {
				waiting[t.ID] = true
			}
		}
	}
	t0, t1 := execs[0].StartedAt, execs[0].EndedAt
	for _, ex := range execs {
		t1 = later(t1, ex.EndedAt)
	}
	if len(waiting) > 0 {
		t1 = later(t1, now)
	}
	span := max(t1.Sub(t0), time.Millisecond)
	place := func(from, to time.Time) (x, w float64) {
		x = 1000 * float64(from.Sub(t0)) / float64(span)
		w = max(1000*float64(to.Sub(from))/float64(span), 2)
		return min(x, 998), min(w, 1000-min(x, 998))
	}
	title := func(from, to time.Time) string {
		return fmt.Sprintf("+%s · %s", page.ThreadMillis(ms(from.Sub(t0))), page.ThreadMillis(ms(to.Sub(from))))
	}
	vm := page.WaterfallVM{Job: page.ShortID(j.ID), Total: page.ThreadMillis(ms(span))}
	for _, f := range []float64{0, 0.25, 0.5, 0.75, 1} {
		label := page.ThreadMillis(f * ms(span))
		if f == 0 {
			label = "0"
		}
		vm.Ticks = append(vm.Ticks, page.WaterfallTick{X: f * 1000, Label: label})
	}
	// A pause before a node (interrupt_before) leaves no record of its own: the node runs for
	// the first time after the decision. Each such answered pause is drawn before the first
	// execution after its decision, from the end of the last one before it. (A pause inside a
	// node is drawn at that node, whose task runs again.)
	answered := map[int]time.Time{} // execution index → when its wait began
	for _, d := range td.reviewedAt {
		next := slices.IndexFunc(execs, func(ex runner.NodeExecution) bool { return !ex.StartedAt.Before(d) })
		if next <= 0 || slices.ContainsFunc(execs[:next], func(ex runner.NodeExecution) bool { return ex.TaskID == execs[next].TaskID }) {
			continue
		}
		from := execs[0].EndedAt
		for _, ex := range execs[:next] {
			if !ex.EndedAt.After(d) {
				from = later(from, ex.EndedAt)
			}
		}
		answered[next] = from
	}
	multi := attemptOf(execs[0].StartedAt) != attemptOf(execs[len(execs)-1].StartedAt) || len(j.Errors) > 0
	attempt, lastEnd := -1, t0
	for i, ex := range execs {
		if a := attemptOf(ex.StartedAt); a != attempt && multi {
			head := page.WaterfallRow{Kind: "attempt", Label: fmt.Sprintf("Attempt %d", a+1)}
			if a > 0 && a-1 < len(j.Errors) {
				e := j.Errors[a-1]
				head.Note = fmt.Sprintf("retry after %s (%s)", e.Code, e.Class)
			}
			vm.Rows = append(vm.Rows, head)
			if a > 0 && ex.StartedAt.After(lastEnd) {
				x, w := place(lastEnd, ex.StartedAt)
				vm.Rows = append(vm.Rows, page.WaterfallRow{Kind: "backoff", Label: "waiting to retry", X: x, W: w, Title: title(lastEnd, ex.StartedAt)})
			}
			attempt = a
		}
		if from, ok := answered[i]; ok {
			x, w := place(from, ex.StartedAt)
			vm.Rows = append(vm.Rows, page.WaterfallRow{Kind: "review", Label: "waiting for review", Note: "answered", X: x, W: w, Title: title(from, ex.StartedAt)})
		}
		row := page.WaterfallRow{Kind: component.StateDone, Label: ex.Node, Title: title(ex.StartedAt, ex.EndedAt)}
		row.X, row.W = place(ex.StartedAt, ex.EndedAt)
		// The task ran again later in this job (without failing), or waits now: it paused.
		var resumedAt time.Time
		for _, next := range execs[i+1:] {
			if next.TaskID == ex.TaskID {
				resumedAt = next.StartedAt
				break
			}
		}
		paused := ex.ErrorCode == "" && (!resumedAt.IsZero() || waiting[ex.TaskID])
		switch {
		case ex.ErrorCode != "":
			row.Kind, row.Note = component.StateFailed, ex.ErrorCode
		case paused:
			row.Kind, row.Note = component.StateInterrupted, "paused for review"
		case ex.Cached:
			row.Kind, row.Note = "cached", "cached"
		}
		if ex.Attempts > 1 {
			row.Note = fmt.Sprintf("%s %d tries", row.Note, ex.Attempts)
		}
		for k, other := range execs {
			if k != i && attemptOf(other.StartedAt) == attemptOf(ex.StartedAt) &&
				other.StartedAt.Before(ex.EndedAt) && ex.StartedAt.Before(other.EndedAt) {
				row.Parallel = true
				break
			}
		}
		vm.Rows = append(vm.Rows, row)
		if paused {
			until, note := resumedAt, "answered"
			if until.IsZero() {
				until, note = now, "still open"
			}
			x, w := place(ex.EndedAt, until)
			vm.Rows = append(vm.Rows, page.WaterfallRow{Kind: "review", Label: "waiting for review", Note: note, X: x, W: w, Title: title(ex.EndedAt, until)})
		}
		lastEnd = later(lastEnd, ex.EndedAt)
	}
	// A task paused before it ran (interrupt_before) has no record yet: draw it at the pause,
	// and the open review from there to now.
	if len(waiting) > 0 {
		ran := map[string]bool{}
		for _, ex := range execs {
			ran[ex.TaskID] = true
		}
		pause := later(lastEnd, j.PausedAt)
		for _, t := range td.snap.Tasks {
			if !waiting[t.ID] || ran[t.ID] {
				continue
			}
			x, w := place(pause, pause)
			vm.Rows = append(vm.Rows, page.WaterfallRow{Kind: component.StateInterrupted, Label: t.Node, Note: "paused for review before it runs", X: x, W: w, Title: title(pause, pause)})
			x, w = place(pause, now)
			vm.Rows = append(vm.Rows, page.WaterfallRow{Kind: "review", Label: "waiting for review", Note: "still open", X: x, W: w, Title: title(pause, now)})
		}
	}
	return vm
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
