package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
)

// Snapshot is a thread's state at one checkpoint.
type Snapshot[S any] struct {
	Values     S
	Next       []string
	Tasks      []TaskState
	Interrupts []PendingInterrupt
	Checkpoint Checkpoint
}

// TaskState is a planned task as seen at a checkpoint: done (its writes are
// saved as pending writes), failed, or interrupted.
type TaskState struct {
	ID         string             `json:"id"`
	Node       string             `json:"node"`
	Push       bool               `json:"push,omitempty"`
	Done       bool               `json:"done,omitempty"`
	Error      string             `json:"error,omitempty"`
	Interrupts []PendingInterrupt `json:"interrupts,omitempty"`
}

func (g *Graph[S]) newRun(ctx context.Context, cfg Config) (*run[S], error) {
	if g.cfg.checkpointer == nil {
		return nil, ErrNoCheckpointer
	}
	if cfg.ThreadID == "" {
		return nil, errors.New("a thread id is required")
	}
	r := &run[S]{g: g, ctx: ctx, cp: g.cfg.checkpointer, thread: cfg.ThreadID, ns: cfg.NS}
	var s S
	r.state = &s
	r.sv = reflect.ValueOf(r.state).Elem()
	return r, nil
}

// GetState reads the thread's head (or cfg.CheckpointID): values, the nodes
// planned next, their tasks and the pending interrupts.
func (g *Graph[S]) GetState(ctx context.Context, cfg Config) (Snapshot[S], error) {
	var snap Snapshot[S]
	r, err := g.newRun(ctx, cfg)
	if err != nil {
		return snap, fmt.Errorf("get state: %w", err)
	}
	t, err := r.cp.GetTuple(ctx, cfg.ThreadID, cfg.NS, cfg.CheckpointID)
	if err != nil {
		return snap, fmt.Errorf("get state of thread %s: %w", cfg.ThreadID, err)
	}
	if err := r.load(t); err != nil {
		return snap, err
	}
	snap.Values = r.snapshot()
	snap.Checkpoint = t.Checkpoint
	snap.Interrupts = pendingInterrupts(t.Writes)
	byTask := map[string]*TaskState{}
	for _, pt := range t.Checkpoint.Next {
		snap.Next = append(snap.Next, pt.Node)
		snap.Tasks = append(snap.Tasks, TaskState{ID: pt.ID, Node: pt.Node, Push: pt.Push})
	}
	for i := range snap.Tasks {
		byTask[snap.Tasks[i].ID] = &snap.Tasks[i]
	}
	for _, w := range t.Writes {
		ts := byTask[w.TaskID]
		if ts == nil {
			continue
		}
		switch w.Channel {
		case WriteError:
			_ = json.Unmarshal(w.Data, &ts.Error)
		case WriteInterrupt:
		default:
			ts.Done = true
		}
	}
	for _, it := range snap.Interrupts {
		if ts := byTask[it.TaskID]; ts != nil {
			ts.Interrupts = append(ts.Interrupts, it)
		}
	}
	return snap, nil
}

// History lists the thread's checkpoints newest first, without values.
// Page with ListOptions.Before (the last id of the previous page) and Limit.
// A fork shows as a checkpoint whose ForkOf names the checkpoint it branched
// from.
func (g *Graph[S]) History(ctx context.Context, cfg Config, opts ListOptions) ([]Checkpoint, error) {
	if g.cfg.checkpointer == nil {
		return nil, fmt.Errorf("history: %w", ErrNoCheckpointer)
	}
	return g.cfg.checkpointer.List(ctx, cfg.ThreadID, cfg.NS, opts)
}

// UpdateState applies writes to the thread as if node asNode had written
// them: they go through the channels' reducers, and asNode's outgoing edges
// fire (its routers see the new state), replacing the tasks planned before.
// asNode "" means the node that wrote the head checkpoint, when there is
// exactly one. With cfg.CheckpointID set, the update forks from that
// checkpoint. A following Invoke with the zero Command continues from it.
func (g *Graph[S]) UpdateState(ctx context.Context, cfg Config, writes []Write, asNode string) (Checkpoint, error) {
	r, err := g.newRun(ctx, cfg)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("update state: %w", err)
	}
	t, err := r.cp.GetTuple(ctx, cfg.ThreadID, cfg.NS, cfg.CheckpointID)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("update state of thread %s: %w", cfg.ThreadID, err)
	}
	expect := t.Checkpoint.ID
	if cfg.CheckpointID != "" {
		h, err := r.cp.GetTuple(ctx, cfg.ThreadID, cfg.NS, "")
		if err != nil {
			return Checkpoint{}, fmt.Errorf("update state of thread %s: %w", cfg.ThreadID, err)
		}
		expect = h.Checkpoint.ID
	}
	if err := r.load(t); err != nil {
		return Checkpoint{}, err
	}
	if asNode == "" {
		switch nodes := t.Checkpoint.Nodes; len(nodes) {
		case 1:
			asNode = nodes[0]
		case 0:
			asNode = START
		default:
			return Checkpoint{}, fmt.Errorf("update state: ambiguous update, the head was written by %v: pass asNode", nodes)
		}
	}
	if asNode != START && g.nodes[asNode] == nil {
		return Checkpoint{}, fmt.Errorf("update state: node %q does not exist", asNode)
	}
	var n *node[S]
	if asNode != START {
		n = g.nodes[asNode]
	}
	ups, err := r.coerceAll(asNode, writes, n)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("update state: %w", err)
	}
	id := newID()
	pre := *r.state
	blobs, err := r.apply([][]update{ups}, id)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("update state: %w", err)
	}
	next, barriers, err := r.plan([]*done{{node: asNode, updates: ups}}, pre, id, t.Checkpoint.Step+2)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("update state: %w", err)
	}
	cp := Checkpoint{ID: id, ParentID: t.Checkpoint.ID, Step: t.Checkpoint.Step + 1, Source: SourceUpdate,
		Versions: r.head.Versions, Next: next, Barriers: barriers, Nodes: []string{asNode}}
	if expect != t.Checkpoint.ID {
		cp.ForkOf = t.Checkpoint.ID
	}
	if err := r.commit(cp, blobs, nil, expect); err != nil {
		return Checkpoint{}, err
	}
	return cp, nil
}
