package graph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"time"
)

// task is one planned task being run in the current step.
type task[S any] struct {
	PlannedTask
	node  *node[S]
	input S

	updates    []update
	gotos      []Send
	writes     []PendingWrite // encoded, when persisted
	err        error
	interrupts []PendingInterrupt
	attempts   int
	failed     bool // failed and was routed to the error handler
	cached     bool
	replayed   bool
	started    time.Time
	ended      time.Time
	inSize     int
	outSize    int
}

// scope is what a running node can reach through its context.
type scope struct {
	emitter    interface{ emit(Event) }
	cp         Checkpointer
	thread     string
	ns         string
	step       int
	task       PlannedTask
	resume     map[string]json.RawMessage
	counter    int
	interrupts []PendingInterrupt
	modes      StreamMode
	durability Durability // the run's, which its subgraphs' runs take
}

type scopeKey struct{}

func scopeFrom(ctx context.Context) *scope {
	sc, _ := ctx.Value(scopeKey{}).(*scope)
	return sc
}

// interruptSignal is the error a node returns from Interrupt.
type interruptSignal struct{ interrupts []PendingInterrupt }

func (e *interruptSignal) Error() string {
	return fmt.Sprintf("interrupted (%d pending)", len(e.interrupts))
}

func isInterrupt(err error) bool {
	var s *interruptSignal
	return errors.As(err, &s)
}

// Interrupt pauses the node for outside input. The first time it is reached
// it records payload (which must be JSON) and returns an error the node must
// return. When the thread is resumed the node runs again from its start, and
// this call returns the resume value, decoded into T. Calls are matched to
// resume values by their order within the node, so a node may interrupt
// several times.
func Interrupt[T any](ctx context.Context, payload any) (T, error) {
	var zero T
	sc := scopeFrom(ctx)
	if sc == nil {
		return zero, errors.New("graph.Interrupt called outside a running node")
	}
	idx := sc.counter
	sc.counter++
	id := interruptID(sc.ns, sc.task.ID, idx)
	if raw, ok := sc.resume[id]; ok {
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			return zero, Permanent(fmt.Errorf("decode resume value of interrupt %s: %w", id, err))
		}
		return v, nil
	}
	data, err := json.Marshal(payload)
	if err != nil {
		return zero, Permanent(fmt.Errorf("interrupt payload must be JSON: %w", err))
	}
	it := PendingInterrupt{ID: id, Node: sc.task.Node, TaskID: sc.task.ID, NS: sc.ns, When: InterruptDuring, Value: data}
	sc.interrupts = append(sc.interrupts, it)
	return zero, &interruptSignal{interrupts: []PendingInterrupt{it}}
}

// HasResume reports whether the node's next Interrupt call will return a
// stored resume value instead of pausing.
func HasResume(ctx context.Context) bool {
	sc := scopeFrom(ctx)
	if sc == nil {
		return false
	}
	_, ok := sc.resume[interruptID(sc.ns, sc.task.ID, sc.counter)]
	return ok
}

// NextInterruptID is the id the node's next Interrupt call will have, so a
// node can bind something (a resume token) to it before pausing.
func NextInterruptID(ctx context.Context) string {
	sc := scopeFrom(ctx)
	if sc == nil {
		return ""
	}
	return interruptID(sc.ns, sc.task.ID, sc.counter)
}

// loop runs supersteps until the graph ends, pauses or fails.
func (r *run[S]) loop() ([]PendingInterrupt, error) {
	g := r.g
	for len(r.head.Next) > 0 {
		if err := r.ctx.Err(); err != nil {
			return nil, err
		}
		if err := r.flightFailed(); err != nil { // async: the last step's save failed
			return nil, err
		}
		if r.steps >= g.cfg.recursionLimit {
			return nil, &RecursionLimitError{Limit: g.cfg.recursionLimit}
		}
		step := r.head.Step + 1

		if !r.head.SkipBefore {
			if ints := r.pauseBefore(); len(ints) > 0 {
				return ints, r.recordInterrupts(ints)
			}
		}
		r.steps++
		tasks, err := r.prepare()
		if err != nil {
			return nil, err
		}
		r.emit(Event{Kind: KindStep, Step: step, Data: len(tasks)})
		r.execute(step, tasks)

		var ints []PendingInterrupt
		for _, t := range tasks {
			if t.err != nil && r.handleFailure(step, t) {
				continue
			}
			if t.err != nil {
				if r.cp != nil {
					msg, _ := json.Marshal(t.err.Error())
					if err := r.putWrites([]PendingWrite{{TaskID: t.ID, Node: t.Node, Channel: WriteError, Data: msg}}); err != nil && r.failed != nil {
						return nil, err // the head itself was not saved
					}
				}
				return nil, t.err
			}
			ints = append(ints, t.interrupts...)
		}
		if len(ints) > 0 {
			return ints, r.recordInterrupts(ints)
		}

		id := newID()
		pre := *r.state
		all := make([][]update, len(tasks))
		fin := make([]*done, len(tasks))
		for i, t := range tasks {
			all[i] = t.updates
			fin[i] = &done{node: t.Node, updates: t.updates, gotos: t.gotos, failed: t.failed}
		}
		blobs, err := r.apply(all, id)
		if err != nil {
			return nil, err
		}
		next, barriers, err := r.plan(fin, pre, id, step+1)
		if err != nil {
			return nil, err
		}
		nodes := make([]string, 0, len(tasks))
		for _, t := range tasks {
			if !slices.Contains(nodes, t.Node) {
				nodes = append(nodes, t.Node)
			}
		}
		cp := Checkpoint{ID: id, ParentID: r.head.ID, Step: step, Source: SourceLoop,
			Versions: r.head.Versions, Next: next, Barriers: barriers, Nodes: nodes}
		if err := r.commit(cp, blobs, nil, r.head.ID); err != nil {
			return nil, err
		}
		r.pending = nil
		r.emitValues()

		if len(next) > 0 {
			var after []PendingInterrupt
			for _, n := range nodes {
				if g.after[n] {
					after = append(after, PendingInterrupt{ID: interruptID(r.ns, id+":after:"+n, -1), Node: n, TaskID: "after:" + n, NS: r.ns, When: InterruptAfter})
				}
			}
			if len(after) > 0 {
				return after, r.recordInterrupts(after)
			}
		}
	}
	return nil, nil
}

// handleFailure turns a failed task into writes and a route to the graph's
// error handler, when it has one. It reports whether it did.
func (r *run[S]) handleFailure(step int, t *task[S]) bool {
	g := r.g
	if g.cfg.errorNode == "" || g.onErrorRoute[t.Node] || errors.Is(t.err, context.Canceled) || r.ctx.Err() != nil {
		return false // a failure on the error route itself fails the run
	}
	f := NodeFailure{Node: t.Node, TaskID: t.ID, Attempts: t.attempts, Error: t.err.Error(), Step: step, CheckpointID: r.head.ID}
	cause := t.err
	var ne *NodeError
	if errors.As(cause, &ne) {
		cause = ne.Err
	}
	ups, err := r.coerceAll(g.cfg.errorNode, g.cfg.errorRecord(f, cause), nil)
	if err != nil {
		t.err = fmt.Errorf("record failure of %s: %w (original error: %v)", t.Node, err, t.err)
		return false
	}
	if r.cp != nil {
		msg, _ := json.Marshal(t.err.Error())
		_ = r.putWrites([]PendingWrite{{TaskID: t.ID, Node: t.Node, Channel: WriteError, Data: msg}})
	}
	r.emit(Event{Kind: "error", Step: step, Node: t.Node, TaskID: t.ID, Data: f})
	t.err, t.failed = nil, true
	t.updates, t.gotos = ups, []Send{{Node: g.cfg.errorNode}}
	return true
}

// pauseBefore lists the interrupt_before pauses due for the next step.
func (r *run[S]) pauseBefore() []PendingInterrupt {
	var out []PendingInterrupt
	for _, t := range r.head.Next {
		if r.g.before[t.Node] {
			out = append(out, PendingInterrupt{ID: interruptID(r.ns, t.ID, -1), Node: t.Node, TaskID: t.ID, NS: r.ns, When: InterruptBefore})
		}
	}
	return out
}

// recordInterrupts saves the interrupts against the head and streams them.
func (r *run[S]) recordInterrupts(ints []PendingInterrupt) error {
	for _, it := range ints {
		step := r.head.Step + 1 // the step that paused
		if it.When == InterruptAfter {
			step = r.head.Step
		}
		r.emit(Event{Kind: KindInterrupt, Step: step, Node: it.Node, TaskID: it.TaskID, Data: it})
	}
	if r.cp == nil {
		return nil
	}
	ws := make([]PendingWrite, len(ints))
	for i, it := range ints {
		b, err := json.Marshal(it)
		if err != nil {
			return err
		}
		ws[i] = PendingWrite{TaskID: it.TaskID, Node: it.Node, Seq: i, Channel: WriteInterrupt, Data: b}
	}
	if err := r.putWrites(ws); err != nil {
		return fmt.Errorf("save interrupts of thread %s: %w", r.thread, err)
	}
	return nil
}

// prepare builds the step's tasks, replaying the writes of tasks that already
// finished before a failure or pause (pending writes).
func (r *run[S]) prepare() ([]*task[S], error) {
	var saved map[string][]PendingWrite
	for _, w := range r.pending {
		if w.Channel == WriteInterrupt || w.Channel == WriteError {
			continue
		}
		if saved == nil {
			saved = map[string][]PendingWrite{}
		}
		saved[w.TaskID] = append(saved[w.TaskID], w)
	}
	tasks := make([]*task[S], len(r.head.Next))
	for i, pt := range r.head.Next {
		n := r.g.nodes[pt.Node]
		if n == nil {
			return nil, fmt.Errorf("checkpoint %s plans unknown node %q", r.head.ID, pt.Node)
		}
		t := &task[S]{PlannedTask: pt, node: n}
		if ws, ok := saved[pt.ID]; ok {
			if err := r.replay(t, ws); err != nil {
				return nil, err
			}
		} else if pt.Push {
			in, err := r.sendInput(pt)
			if err != nil {
				return nil, err
			}
			t.input = in
		} else {
			t.input = r.snapshot()
		}
		tasks[i] = t
	}
	return tasks, nil
}

func (r *run[S]) sendInput(pt PlannedTask) (S, error) {
	var s S
	switch a := pt.arg.(type) {
	case S:
		return a, nil
	case *S:
		return *a, nil
	}
	raw := pt.Arg
	if raw == nil {
		b, err := json.Marshal(pt.arg)
		if err != nil {
			return s, fmt.Errorf("Send to %q: argument is not JSON: %w", pt.Node, err)
		}
		raw = b
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("Send to %q: argument does not decode into the state: %w", pt.Node, err)
	}
	return s, nil
}

func (r *run[S]) replay(t *task[S], ws []PendingWrite) error {
	t.replayed = true
	for _, w := range ws {
		switch w.Channel {
		case WriteDone:
		case writeGoto:
			var gs []Send
			if err := json.Unmarshal(w.Data, &gs); err != nil {
				return fmt.Errorf("decode saved goto of %s: %w", t.Node, err)
			}
			t.gotos = append(t.gotos, gs...)
		default:
			ch := r.g.schema.byName[w.Channel]
			if ch == nil {
				return fmt.Errorf("saved write of %s to unknown channel %q", t.Node, w.Channel)
			}
			u, err := ch.decodeUpdate(w.Data)
			if err != nil {
				return err
			}
			t.updates = append(t.updates, u)
		}
	}
	t.writes = ws
	return nil
}

const writeGoto = "__goto__"

// execute runs the step's tasks: inline when there is one, otherwise in
// parallel up to the concurrency bound, streaming events as they come.
func (r *run[S]) execute(step int, tasks []*task[S]) {
	todo := 0
	for _, t := range tasks {
		if !t.replayed {
			todo++
		}
	}
	if todo <= 1 {
		for _, t := range tasks {
			r.startTask(step, t)
			if !t.replayed {
				r.runTask(step, t)
			}
			r.finishTask(t, len(tasks) > 1)
		}
		return
	}
	if r.modes != 0 {
		r.evMu.Lock()
		r.parallel = true
		if r.evch == nil {
			r.evch = make(chan Event, 64)
		}
		r.evMu.Unlock()
	}
	results := make(chan *task[S], len(tasks))
	sem := make(chan struct{}, r.g.cfg.maxConcurrency)
	for _, t := range tasks {
		r.startTask(step, t)
		if t.replayed {
			results <- t
			continue
		}
		go func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			r.runTask(step, t)
			results <- t
		}()
	}
	finished := 0
	for finished < len(tasks) {
		select {
		case ev := <-r.evch:
			r.deliver(ev)
		case t := <-results:
			finished++
			r.finishTask(t, true)
		}
	}
	if r.modes == 0 {
		return
	}
	r.evMu.Lock()
	r.parallel = false
	r.evMu.Unlock()
	for {
		select {
		case ev := <-r.evch:
			r.deliver(ev)
		default:
			return
		}
	}
}

func (r *run[S]) startTask(step int, t *task[S]) {
	if r.modes.wants(KindTaskStart) && !t.replayed {
		if b, err := json.Marshal(t.input); err == nil {
			t.inSize = len(b)
		}
		r.emit(Event{Kind: KindTaskStart, Step: step, Node: t.Node, TaskID: t.ID,
			Data: TaskStart{ID: t.ID, Node: t.Node, Push: t.Push, Attempt: 1, InputLen: t.inSize}})
	}
}

// finishTask runs in the loop goroutine: it saves a finished task's writes as
// pending writes (when siblings could still fail) and streams its result.
func (r *run[S]) finishTask(t *task[S], siblings bool) {
	persist := r.cp != nil && siblings && t.err == nil && len(t.interrupts) == 0 && !t.replayed &&
		r.durability != DurabilityExit // exit saves nothing until the run stops
	needSize := r.modes.wants(KindTaskResult)
	if (persist || needSize) && t.writes == nil && t.err == nil && len(t.interrupts) == 0 {
		if err := r.encodeWrites(t); err != nil {
			t.err = &NodeError{Node: t.Node, TaskID: t.ID, Attempt: t.attempts, Err: err}
			persist = false
		}
	}
	if persist {
		if err := r.putWrites(t.writes); err != nil {
			t.err = &NodeError{Node: t.Node, TaskID: t.ID, Attempt: t.attempts, Err: fmt.Errorf("save pending writes: %w", err)}
		}
	}
	if t.err == nil && len(t.interrupts) == 0 && r.modes.wants(KindUpdates) {
		r.emit(Event{Kind: KindUpdates, Step: r.head.Step + 1, Node: t.Node, TaskID: t.ID, Data: writesMap(t.updates)})
	}
	if needSize {
		res := TaskResult{ID: t.ID, Node: t.Node, Attempts: t.attempts, Cached: t.cached, Replayed: t.replayed,
			Started: t.started, Ended: t.ended, InputSize: t.inSize, OutputSize: t.outSize, Interrupts: t.interrupts}
		if t.err != nil {
			res.Error, res.Err = t.err.Error(), t.err
		} else {
			res.Writes = writesMap(t.updates)
		}
		r.emit(Event{Kind: KindTaskResult, Step: r.head.Step + 1, Node: t.Node, TaskID: t.ID, At: t.ended, Data: res})
	}
}

func writesMap(ups []update) map[string]any {
	m := make(map[string]any, len(ups))
	for _, u := range ups {
		m[u.ch.name] = u.val.Interface()
	}
	return m
}

func (r *run[S]) encodeWrites(t *task[S]) error {
	ws := make([]PendingWrite, 0, len(t.updates)+1)
	size := 0
	for i, u := range t.updates {
		b, err := encodeUpdate(u)
		if err != nil {
			return err
		}
		size += len(b)
		ws = append(ws, PendingWrite{TaskID: t.ID, Node: t.Node, Seq: i, Channel: u.ch.name, Data: b})
	}
	if len(t.gotos) > 0 {
		b, err := json.Marshal(t.gotos)
		if err != nil {
			return fmt.Errorf("encode goto: %w", err)
		}
		ws = append(ws, PendingWrite{TaskID: t.ID, Node: t.Node, Seq: len(ws), Channel: writeGoto, Data: b})
	}
	if len(ws) == 0 {
		ws = append(ws, PendingWrite{TaskID: t.ID, Node: t.Node, Channel: WriteDone, Data: []byte("null")})
	}
	t.writes, t.outSize = ws, size
	return nil
}

// runTask runs a node with its cache and retry policies. It never panics.
func (r *run[S]) runTask(step int, t *task[S]) {
	n := t.node
	t.started = r.g.cfg.clock.Now()
	defer func() { t.ended = r.g.cfg.clock.Now() }()

	var cacheKey string
	if n.cache != nil {
		cacheKey = r.cacheKey(t)
		if data, ok, err := r.g.cfg.cache.Get(r.ctx, n.name, cacheKey); err == nil && ok {
			if err := r.fromCache(t, data); err == nil {
				t.cached, t.attempts = true, 0
				return
			}
		}
	}
	hook := taskHookFrom(r.ctx)
	var prevErr error
	for attempt := 1; ; attempt++ {
		t.attempts = attempt
		sc := &scope{emitter: r, cp: r.cp, thread: r.thread, ns: r.ns, step: step, task: t.PlannedTask, resume: r.head.Resume, modes: r.modes,
			durability: r.durability}
		ctx := r.ctx
		if hook != nil {
			ctx = hook(ctx, TaskAttempt{Node: n.name, TaskID: t.ID, Step: step, Attempt: attempt, PrevErr: prevErr})
		}
		cmd, err := callNode(context.WithValue(ctx, scopeKey{}, sc), n.fn, t.input)
		if len(sc.interrupts) > 0 && (err == nil || isInterrupt(err)) {
			t.interrupts = sc.interrupts
			return
		}
		var si *interruptSignal
		if errors.As(err, &si) { // a subgraph's interrupts
			t.interrupts = si.interrupts
			return
		}
		if err == nil {
			t.updates, err = r.coerceAll(n.name, cmd.Update, n)
			t.gotos = cmd.Goto
			if err == nil {
				break
			}
		}
		if n.retry == nil || attempt >= n.retry.MaxAttempts || !n.retry.RetryOn(err) {
			t.err = &NodeError{Node: n.name, TaskID: t.ID, Attempt: attempt, Err: err}
			return
		}
		prevErr = err
		d := n.retry.Interval(attempt)
		if n.retry.Jitter {
			d += time.Duration(r.g.cfg.rand() * float64(time.Second))
		}
		if r.modes&ModeDebug != 0 {
			r.emit(Event{Kind: "retry", Step: step, Node: n.name, TaskID: t.ID, Data: map[string]any{"attempt": attempt, "error": err.Error(), "wait_ms": d.Milliseconds()}})
		}
		if serr := r.g.cfg.clock.Sleep(r.ctx, d); serr != nil {
			t.err = &NodeError{Node: n.name, TaskID: t.ID, Attempt: attempt, Err: errors.Join(err, serr)}
			return
		}
	}
	if n.cache != nil {
		if err := r.encodeWrites(t); err == nil {
			if b, err := json.Marshal(t.writes); err == nil {
				_ = r.g.cfg.cache.Set(r.ctx, n.name, cacheKey, b, n.cache.TTL)
			}
		}
	}
}

func (r *run[S]) cacheKey(t *task[S]) string {
	if t.node.cache.Key != nil {
		return t.node.cache.Key(t.input)
	}
	b, _ := json.Marshal(t.input)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func (r *run[S]) fromCache(t *task[S], data []byte) error {
	var ws []PendingWrite
	if err := json.Unmarshal(data, &ws); err != nil {
		return err
	}
	for i := range ws {
		ws[i].TaskID = t.ID
	}
	if err := r.replay(t, ws); err != nil {
		return err
	}
	t.replayed = false
	return nil
}

// callNode calls a node, turning a panic into a *PanicError.
func callNode[S any](ctx context.Context, fn NodeFunc[S], in S) (cmd Command, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: string(debug.Stack())}
		}
	}()
	return fn(ctx, in)
}
