package graph

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"iter"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"sync"

	"github.com/google/uuid"
)

// Result is where a run stopped: the state, the interrupts it paused on (if
// any), the head checkpoint and the nodes planned next (empty when done).
type Result[S any] struct {
	State        S
	Interrupts   []PendingInterrupt
	CheckpointID string
	Next         []string
}

// Done reports whether the run reached the end of the graph.
func (r Result[S]) Done() bool { return len(r.Next) == 0 && len(r.Interrupts) == 0 }

// Invoke runs the graph on a thread until it ends, pauses or fails.
//
// in.Update starts a new run (its writes are applied as START's); in.Resume
// answers pending interrupts; the zero Command continues the thread from its
// head (after a crash, or past an interrupt_before/after pause).
// cfg.CheckpointID forks the thread from that checkpoint.
func (g *Graph[S]) Invoke(ctx context.Context, cfg Config, in Command) (Result[S], error) {
	return g.execute(ctx, cfg, in, 0, nil, nil)
}

// Stream is Invoke that also yields the events selected by modes as they
// happen. The last event is a KindDone event whose Data is the Result[S];
// a failure is yielded as the error of the last pair.
func (g *Graph[S]) Stream(ctx context.Context, cfg Config, in Command, modes StreamMode) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		stopped := false
		sink := func(ev Event) bool {
			if stopped {
				return false
			}
			if !yield(ev, nil) {
				stopped = true
			}
			return !stopped
		}
		res, err := g.execute(ctx, cfg, in, modes, sink, nil)
		if stopped {
			return
		}
		if err != nil {
			yield(Event{Kind: "error", Thread: cfg.ThreadID, NS: cfg.NS, At: g.cfg.clock.Now(), Data: err.Error()}, err)
			return
		}
		yield(Event{Kind: KindDone, Thread: cfg.ThreadID, NS: cfg.NS, At: g.cfg.clock.Now(), Data: res}, nil)
	}
}

type run[S any] struct {
	g       *Graph[S]
	ctx     context.Context
	cp      Checkpointer
	thread  string
	ns      string
	modes   StreamMode
	sink    func(Event) bool
	stopped bool

	evMu     sync.Mutex
	parallel bool
	evch     chan Event

	head    Checkpoint
	saved   bool
	state   *S
	sv      reflect.Value
	pending []PendingWrite
	steps   int

	// Durability (durability.go): the mode, the checkpoint in flight (async), what exit
	// saves at the end, and a save that failed.
	durability Durability
	flight     *inFlight
	kept       *keptRun
	failed     error
}

func (g *Graph[S]) execute(ctx context.Context, cfg Config, in Command, modes StreamMode, sink func(Event) bool, cp Checkpointer) (Result[S], error) {
	if cp == nil {
		cp = g.cfg.checkpointer
	}
	r := &run[S]{g: g, ctx: ctx, cp: cp, thread: cfg.ThreadID, ns: cfg.NS, modes: modes, sink: sink,
		durability: cmpOr(cfg.Durability, g.cfg.durability, DurabilitySync)}
	if r.sink == nil {
		r.modes = 0
	}
	if err := r.durability.check(); err != nil {
		return Result[S]{}, err
	}
	var s S
	r.state = &s
	r.sv = reflect.ValueOf(r.state).Elem()
	if cp != nil && cfg.ThreadID == "" {
		return Result[S]{}, fmt.Errorf("run graph: a checkpointed graph needs Config.ThreadID")
	}
	done, err := r.start(cfg, in)
	if err != nil || done {
		err = r.finish(err)
		return r.result(nil), err
	}
	ints, err := r.loop()
	err = r.finish(err)
	return r.result(ints), err
}

// cmpOr is the first of vs that is not empty.
func cmpOr(vs ...Durability) Durability {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func (r *run[S]) result(ints []PendingInterrupt) Result[S] {
	res := Result[S]{State: r.snapshot(), Interrupts: ints, CheckpointID: r.head.ID}
	for _, t := range r.head.Next {
		res.Next = append(res.Next, t.Node)
	}
	return res
}

// emit delivers an event to the stream: directly from the loop goroutine, or
// through a channel while tasks run in parallel.
func (r *run[S]) emit(ev Event) {
	if r.modes == 0 || !r.modes.wants(ev.Kind) {
		return
	}
	ev.Thread, ev.NS = r.thread, joinNS(r.ns, ev.NS)
	if ev.At.IsZero() {
		ev.At = r.g.cfg.clock.Now()
	}
	r.evMu.Lock()
	par := r.parallel
	r.evMu.Unlock()
	if par {
		r.evch <- ev
		return
	}
	r.deliver(ev)
}

func (r *run[S]) deliver(ev Event) {
	if r.stopped {
		return
	}
	if !r.sink(ev) {
		r.stopped = true
	}
}

func joinNS(parent, child string) string {
	switch {
	case parent == "":
		return child
	case child == "" || child == parent || len(child) > len(parent) && child[:len(parent)+1] == parent+"|":
		if child == "" {
			return parent
		}
		return child
	}
	return parent + "|" + child
}

// snapshot copies the state for handing out; append channels are capped so
// that appends by the receiver never write into the engine's backing array.
func (r *run[S]) snapshot() S {
	s := *r.state
	capSlices(r.g.schema, reflect.ValueOf(&s).Elem())
	return s
}

func capSlices(sch *schema, v reflect.Value) {
	for _, ch := range sch.channels {
		if ch.kind == kindAppend {
			f := v.Field(ch.index)
			if f.Cap() > f.Len() {
				f.Set(f.Slice3(0, f.Len(), f.Len()))
			}
		}
	}
}

func newID() string { return uuid.Must(uuid.NewV7()).String() }

// taskID is deterministic: a hash of the checkpoint id, step, node and trigger.
func taskID(cpID string, step int, node, trigger string) string {
	h := fnv.New128a()
	h.Write([]byte(cpID))
	h.Write([]byte{0})
	h.Write(strconv.AppendInt(nil, int64(step), 10))
	h.Write([]byte{0})
	h.Write([]byte(node))
	h.Write([]byte{0})
	h.Write([]byte(trigger))
	return hex.EncodeToString(h.Sum(nil))
}

// assignTaskIDs gives the tasks planned at checkpoint cpID (pulls, then pushes in order)
// their ids.
func assignTaskIDs(next []PlannedTask, cpID string, step int) {
	pushes := 0
	for i := range next {
		if next[i].Push {
			next[i].ID = taskID(cpID, step, next[i].Node, "push:"+strconv.Itoa(pushes))
			pushes++
		} else {
			next[i].ID = taskID(cpID, step, next[i].Node, "pull")
		}
	}
}

func interruptID(ns, task string, idx int) string {
	return taskID(ns, idx, task, "interrupt")
}

// load replaces the run's state with a saved tuple.
func (r *run[S]) load(t *Tuple) error {
	var s S
	r.state = &s
	r.sv = reflect.ValueOf(r.state).Elem()
	for name, data := range t.Values {
		ch := r.g.schema.byName[name]
		if ch == nil {
			continue // a channel since removed from the state type
		}
		p := reflect.New(ch.typ)
		if err := json.Unmarshal(data, p.Interface()); err != nil {
			return fmt.Errorf("decode channel %q of checkpoint %s: %w", name, t.Checkpoint.ID, err)
		}
		r.sv.Field(ch.index).Set(p.Elem())
	}
	r.head, r.pending, r.saved = t.Checkpoint, t.Writes, true
	return nil
}

// start positions the run: a fresh thread, new input on an existing thread,
// a resume/continue claim, or a fork. It reports done when there is nothing
// to run.
func (r *run[S]) start(cfg Config, in Command) (bool, error) {
	ctx := r.ctx
	var base *Tuple
	expect := ""
	fork := false
	if r.cp != nil {
		t, err := r.cp.GetTuple(ctx, r.thread, r.ns, cfg.CheckpointID)
		switch {
		case err == nil:
			base, expect = t, t.Checkpoint.ID
		case errors.Is(err, ErrNotFound) && cfg.CheckpointID == "":
		case errors.Is(err, ErrNotFound):
			return false, fmt.Errorf("fork thread %s: checkpoint %s: %w", r.thread, cfg.CheckpointID, ErrNotFound)
		default:
			return false, fmt.Errorf("load thread %s: %w", r.thread, err)
		}
		if cfg.CheckpointID != "" {
			h, err := r.cp.GetTuple(ctx, r.thread, r.ns, "")
			if err != nil {
				return false, fmt.Errorf("load head of thread %s: %w", r.thread, err)
			}
			expect = h.Checkpoint.ID
			fork = expect != base.Checkpoint.ID
		}
	}
	if base != nil {
		if err := r.load(base); err != nil {
			return false, err
		}
	} else {
		r.head = Checkpoint{Step: -1}
	}

	if in.Resume == nil && (len(in.Update) > 0 || base == nil) {
		// A new run: apply the input as START's writes.
		ups, err := r.coerceAll(START, in.Update, nil)
		if err != nil {
			return false, err
		}
		id := newID()
		pre := *r.state
		blobs, err := r.apply([][]update{ups}, id)
		if err != nil {
			return false, err
		}
		next, barriers, err := r.plan([]*done{{node: START, updates: ups}}, pre, id, r.head.Step+1)
		if err != nil {
			return false, err
		}
		cp := Checkpoint{ID: id, ParentID: r.head.ID, Step: r.head.Step + 1, Source: SourceInput,
			Versions: r.head.Versions, Next: next, Barriers: barriers, Nodes: []string{START}}
		if fork {
			cp.ForkOf = base.Checkpoint.ID
		}
		if err := r.commit(cp, blobs, nil, expect); err != nil {
			return false, err
		}
		r.pending = nil
		r.emitValues()
		return len(next) == 0, nil
	}

	// Resume or continue.
	if r.cp == nil {
		return false, fmt.Errorf("resume thread %q: %w", r.thread, ErrNoCheckpointer)
	}
	if base == nil || len(base.Checkpoint.Next) == 0 {
		if in.Resume != nil {
			return false, fmt.Errorf("resume thread %q: %w", r.thread, ErrNothingToResume)
		}
		return true, nil
	}
	pending := pendingInterrupts(base.Writes)
	resume, err := resumeValues(pending, in.Resume)
	if err != nil {
		return false, err
	}
	cp := base.Checkpoint
	cp.ID, cp.ParentID, cp.Source, cp.Nodes, cp.SkipBefore = newID(), base.Checkpoint.ID, SourceResume, nil, true
	cp.ForkOf = "" // the base's own mark: only a checkpoint that branches carries one
	cp.Next = slices.Clone(cp.Next)
	if fork {
		cp.Source, cp.ForkOf = SourceFork, base.Checkpoint.ID
		if cfg.RetryFailed {
			cp.Source = SourceRetry
		}
	}
	replay := fork && !cfg.RetryFailed
	if replay { // the nodes' interrupt() calls ask again (a pause before them does not, as in LangGraph)
		cp.Resume = nil
		// New executions, new task ids: a subgraph's namespace and an interrupt's id derive
		// from its task's, so nothing the first run left under the old ones is found.
		assignTaskIDs(cp.Next, cp.ID, cp.Step)
	}
	if len(resume) > 0 || len(cp.Resume) > 0 {
		merged := make(map[string]json.RawMessage, len(cp.Resume)+len(resume))
		for k, v := range cp.Resume {
			merged[k] = v
		}
		for k, v := range resume {
			merged[k] = v
		}
		cp.Resume = merged
	}
	var carried []PendingWrite
	for _, w := range base.Writes {
		if !replay && w.Channel != WriteInterrupt && w.Channel != WriteError {
			carried = append(carried, w)
		}
	}
	if err := r.commit(cp, nil, carried, expect); err != nil {
		return false, err
	}
	r.pending = carried
	return false, nil
}

// pendingInterrupts lists the interrupts recorded in pending writes.
func pendingInterrupts(ws []PendingWrite) []PendingInterrupt {
	var out []PendingInterrupt
	for _, w := range ws {
		if w.Channel != WriteInterrupt {
			continue
		}
		var it PendingInterrupt
		if json.Unmarshal(w.Data, &it) == nil {
			out = append(out, it)
		}
	}
	return out
}

// resumeValues matches a resume input to the pending interrupts.
func resumeValues(pending []PendingInterrupt, resume any) (map[string]json.RawMessage, error) {
	if resume == nil {
		return nil, nil
	}
	var during []PendingInterrupt
	for _, p := range pending {
		if p.When == InterruptDuring {
			during = append(during, p)
		}
	}
	out := map[string]json.RawMessage{}
	if m, ok := resume.(ResumeMap); ok {
		for id, v := range m {
			if !slices.ContainsFunc(during, func(p PendingInterrupt) bool { return p.ID == id }) {
				return nil, fmt.Errorf("%w: no pending interrupt has id %q", ErrResumeInvalid, id)
			}
			b, err := json.Marshal(v)
			if err != nil {
				return nil, fmt.Errorf("%w: resume value for %s is not JSON: %v", ErrResumeInvalid, id, err)
			}
			out[id] = b
		}
		return out, nil
	}
	switch len(during) {
	case 0:
		if len(pending) == 0 {
			return nil, fmt.Errorf("%w: the thread is not paused", ErrResumeInvalid)
		}
		return nil, nil // a before/after pause takes no value
	case 1:
		b, err := json.Marshal(resume)
		if err != nil {
			return nil, fmt.Errorf("%w: resume value is not JSON: %v", ErrResumeInvalid, err)
		}
		out[during[0].ID] = b
		return out, nil
	}
	return nil, fmt.Errorf("%w: %d interrupts are pending; resume with a ResumeMap keyed by interrupt id", ErrResumeInvalid, len(during))
}

// commit saves a checkpoint (when the graph has a checkpointer) and makes it
// the run's head; under async or exit durability a step's checkpoint is saved
// later (durability.go).
func (r *run[S]) commit(cp Checkpoint, blobs []Blob, writes []PendingWrite, expect string) error {
	cp.ThreadID, cp.NS = r.thread, r.ns
	cp.CreatedAt = r.g.cfg.clock.Now()
	if r.cp != nil {
		for i := range cp.Next {
			t := &cp.Next[i]
			if t.Push && t.Arg == nil {
				b, err := json.Marshal(t.arg)
				if err != nil {
					return fmt.Errorf("encode Send argument for %q: %w", t.Node, err)
				}
				t.Arg = b
			}
		}
		if r.deferrable(cp, writes) {
			if err := r.putLater(cp, blobs, expect); err != nil {
				return err
			}
			r.head = cp
			return nil
		}
		if err := r.settle(); err != nil {
			return err
		}
		if err := r.cp.Put(r.ctx, PutRequest{Checkpoint: cp, Blobs: blobs, Writes: writes, ExpectHead: expect}); err != nil {
			return fmt.Errorf("save checkpoint of thread %s: %w", r.thread, err)
		}
	}
	r.head = cp
	r.committed(cp)
	return nil
}

// committed records that cp is saved (or, without a checkpointer, made) and streams it.
func (r *run[S]) committed(cp Checkpoint) {
	r.saved = true
	if r.modes.wants(KindCheckpoint) {
		r.emit(Event{Kind: KindCheckpoint, Step: cp.Step, Data: cp})
	}
}

// putWrites saves pending writes against the head, once the head is saved.
func (r *run[S]) putWrites(ws []PendingWrite) error {
	if err := r.settle(); err != nil {
		return err
	}
	return r.cp.PutWrites(r.ctx, r.thread, r.ns, r.head.ID, ws)
}

func (r *run[S]) emitValues() {
	if r.modes.wants(KindValues) {
		r.emit(Event{Kind: KindValues, Step: r.head.Step, Data: r.snapshot()})
	}
}

// coerceAll validates a node's writes against the channels.
func (r *run[S]) coerceAll(nodeName string, ws []Write, n *node[S]) ([]update, error) {
	if len(ws) == 0 {
		return nil, nil
	}
	ups := make([]update, 0, len(ws))
	for _, w := range ws {
		ch := r.g.schema.byName[w.Channel]
		if ch == nil {
			return nil, Permanent(fmt.Errorf("node %s wrote to unknown channel %q", nodeName, w.Channel))
		}
		if n != nil && n.writes != nil && !n.writes[w.Channel] {
			return nil, Permanent(fmt.Errorf("node %s wrote to channel %q, which it does not declare in WithWrites", nodeName, w.Channel))
		}
		u, err := ch.coerce(w.Value)
		if err != nil {
			return nil, Permanent(fmt.Errorf("node %s: %w", nodeName, err))
		}
		ups = append(ups, u)
	}
	return ups, nil
}

// apply reduces a step's updates (in task order) into the state and returns
// the blobs of the channels that changed. Unchanged channels keep their
// version; append channels store only the appended items.
func (r *run[S]) apply(all [][]update, newID string) (blobs []Blob, err error) {
	var byCh map[*channel][]update
	var order []*channel
	for _, ups := range all {
		for _, u := range ups {
			if byCh == nil {
				byCh = map[*channel][]update{}
			}
			if _, ok := byCh[u.ch]; !ok {
				order = append(order, u.ch)
			}
			byCh[u.ch] = append(byCh[u.ch], u)
		}
	}
	if len(order) == 0 {
		return nil, nil
	}
	if r.g.cfg.guard != nil {
		before := *r.state
		defer func() {
			if err == nil {
				if gerr := r.g.cfg.guard(before, *r.state); gerr != nil {
					*r.state = before
					blobs, err = nil, gerr
				}
			}
		}()
	}
	sort.Slice(order, func(i, j int) bool { return order[i].index < order[j].index })
	persist := r.cp != nil
	versions := r.head.Versions
	if persist {
		versions = make(map[string]string, len(r.head.Versions)+len(order))
		for k, v := range r.head.Versions {
			versions[k] = v
		}
	}
	for _, ch := range order {
		ups := byCh[ch]
		field := r.sv.Field(ch.index)
		cur := field
		last := -1
		for i, u := range ups {
			if u.overwrite {
				if last >= 0 {
					return nil, &InvalidUpdateError{Channel: ch.name, Reason: "more than one Overwrite in one step"}
				}
				last = i
			}
		}
		if last >= 0 {
			cur = ups[last].val
			ups = ups[last+1:]
		}
		nv := cur
		if len(ups) > 0 {
			vals := make([]reflect.Value, len(ups))
			for i, u := range ups {
				vals[i] = u.val
			}
			if nv, err = ch.reducer.reduce(ch, cur, vals); err != nil {
				return nil, err
			}
		}
		field.Set(nv)
		if !persist {
			continue
		}
		prev, had := versions[ch.name]
		b := Blob{Channel: ch.name, Version: newID}
		var data any = nv.Interface()
		if ch.kind == kindAppend && last < 0 && had {
			b.Delta, b.Base = true, prev
			delta := reflect.MakeSlice(ch.typ, 0, 0)
			for _, u := range ups {
				delta = reflect.AppendSlice(delta, u.val)
			}
			data = delta.Interface()
		}
		enc, err := json.Marshal(data)
		if err != nil {
			return nil, fmt.Errorf("encode channel %q: %w", ch.name, err)
		}
		b.Data = enc
		blobs = append(blobs, b)
		versions[ch.name] = newID
	}
	if persist {
		r.head.Versions = versions
	}
	return blobs, nil
}

// done is a finished task as the planner sees it.
type done struct {
	node    string
	updates []update
	gotos   []Send
	failed  bool // its edges do not fire; only its goto (the error handler)
}

// plan computes the next step's tasks from the tasks that just finished:
// static edges, joins, conditional edges (whose routers see the state before
// the step plus the task's own writes, as in LangGraph) and Command.Goto.
func (r *run[S]) plan(finished []*done, pre S, newID string, step int) ([]PlannedTask, map[string][]string, error) {
	g := r.g
	barriers := r.head.Barriers
	copied := false
	pulls := map[string]bool{}
	var pushes []PlannedTask
	route := func(from string, s Send, allowed func(string) bool) error {
		if s.Node == END {
			return nil
		}
		if g.nodes[s.Node] == nil || (allowed != nil && !allowed(s.Node)) {
			return Permanent(fmt.Errorf("node %s routed to %q, which is not one of its destinations", from, s.Node))
		}
		if s.Arg == nil {
			pulls[s.Node] = true
			return nil
		}
		pushes = append(pushes, PlannedTask{Node: s.Node, Push: true, arg: s.Arg})
		return nil
	}
	for _, d := range finished {
		if d.failed {
			for _, s := range d.gotos {
				pulls[s.Node] = true
			}
			continue
		}
		for _, to := range g.edges[d.node] {
			if to != END {
				pulls[to] = true
			}
		}
		for _, j := range g.joinsFrom[d.node] {
			if !copied {
				barriers = cloneBarriers(barriers)
				copied = true
			}
			if !slices.Contains(barriers[j.key], d.node) {
				barriers[j.key] = append(barriers[j.key], d.node)
			}
		}
		if brs := g.branches[d.node]; len(brs) > 0 {
			st := r.routerState(finished, d, pre)
			for _, br := range brs {
				rt, err := br.router(r.ctx, st)
				if err != nil {
					return nil, nil, &NodeError{Node: d.node, Attempt: 1, Err: fmt.Errorf("route: %w", err)}
				}
				for _, k := range rt.Keys {
					to, ok := br.paths[k]
					if !ok {
						return nil, nil, &NodeError{Node: d.node, Attempt: 1, Err: Permanent(fmt.Errorf("router returned %q, which is not in its path map", k))}
					}
					if err := route(d.node, Send{Node: to}, nil); err != nil {
						return nil, nil, err
					}
				}
				for _, s := range rt.Sends {
					inPaths := func(n string) bool {
						for _, v := range br.paths {
							if v == n {
								return true
							}
						}
						return false
					}
					if err := route(d.node, s, inPaths); err != nil {
						return nil, nil, &NodeError{Node: d.node, Attempt: 1, Err: err}
					}
				}
			}
		}
		for _, s := range d.gotos {
			if err := route(d.node, s, nil); err != nil {
				return nil, nil, &NodeError{Node: d.node, Attempt: 1, Err: err}
			}
		}
	}
	for _, j := range g.joins {
		if len(barriers[j.key]) == len(j.sources) {
			if !copied {
				barriers = cloneBarriers(barriers)
				copied = true
			}
			delete(barriers, j.key)
			if j.to != END {
				pulls[j.to] = true
			}
		}
	}
	next := make([]PlannedTask, 0, len(pulls)+len(pushes))
	for n := range pulls {
		next = append(next, PlannedTask{Node: n})
	}
	if len(next) > 1 {
		sort.Slice(next, func(i, j int) bool { return next[i].Node < next[j].Node })
	}
	next = append(next, pushes...)
	assignTaskIDs(next, newID, step)
	if len(barriers) == 0 {
		barriers = nil
	}
	return next, barriers, nil
}

func cloneBarriers(b map[string][]string) map[string][]string {
	out := make(map[string][]string, len(b)+1)
	for k, v := range b {
		out[k] = slices.Clone(v)
	}
	return out
}

// routerState is the state a router of task d sees.
func (r *run[S]) routerState(finished []*done, d *done, pre S) S {
	if len(finished) == 1 {
		return r.snapshot()
	}
	s := pre
	v := reflect.ValueOf(&s).Elem()
	capSlices(r.g.schema, v)
	byCh := map[*channel][]reflect.Value{}
	var order []*channel
	for _, u := range d.updates {
		if u.overwrite {
			v.Field(u.ch.index).Set(u.val)
			continue
		}
		if _, ok := byCh[u.ch]; !ok {
			order = append(order, u.ch)
		}
		byCh[u.ch] = append(byCh[u.ch], u.val)
	}
	for _, ch := range order {
		if nv, err := ch.reducer.reduce(ch, v.Field(ch.index), byCh[ch]); err == nil {
			v.Field(ch.index).Set(nv)
		}
	}
	return s
}
