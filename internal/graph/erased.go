package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
)

// Runnable is a compiled graph seen without its state type: what a job
// runner, a registry or a console needs. *Graph[S] implements it.
type Runnable interface {
	// Run is Invoke/Stream without the type: events go to sink (nil: none).
	Run(ctx context.Context, cfg Config, in Command, modes StreamMode, sink func(Event) bool) (Outcome, error)
	// InputWrites decodes a JSON object (channel → value) into writes,
	// rejecting unknown channels and values of the wrong type.
	InputWrites(obj json.RawMessage) ([]Write, error)
	// StateJSON is GetState with the values as JSON.
	StateJSON(ctx context.Context, cfg Config) (SnapshotJSON, error)
	// UpdateStateJSON is UpdateState with the writes as a JSON object (channel → value),
	// checked as InputWrites checks a run's input.
	UpdateStateJSON(ctx context.Context, cfg Config, values json.RawMessage, asNode string) (Checkpoint, error)
	History(ctx context.Context, cfg Config, opts ListOptions) ([]Checkpoint, error)
	Nodes() []string
	Mermaid() string
	Structure() Structure
	Checkpointer() Checkpointer
	// ErrorRoute lists the error handler and the nodes it leads to (empty
	// without WithErrorHandler).
	ErrorRoute() []string
}

var _ Runnable = (*Graph[struct{}])(nil)

// Outcome is Result without the typed state.
type Outcome struct {
	State        any
	Interrupts   []PendingInterrupt
	CheckpointID string
	Next         []string
}

// Done reports whether the run reached the end of the graph.
func (o Outcome) Done() bool { return len(o.Next) == 0 && len(o.Interrupts) == 0 }

// SnapshotJSON is Snapshot with the values encoded.
type SnapshotJSON struct {
	Values     json.RawMessage    `json:"values"`
	Next       []string           `json:"next"`
	Tasks      []TaskState        `json:"tasks"`
	Interrupts []PendingInterrupt `json:"interrupts"`
	Checkpoint Checkpoint         `json:"checkpoint"`
}

// Run implements Runnable.
func (g *Graph[S]) Run(ctx context.Context, cfg Config, in Command, modes StreamMode, sink func(Event) bool) (Outcome, error) {
	res, err := g.execute(ctx, cfg, in, modes, sink, nil)
	return Outcome{State: res.State, Interrupts: res.Interrupts, CheckpointID: res.CheckpointID, Next: res.Next}, err
}

// InputWrites implements Runnable.
func (g *Graph[S]) InputWrites(obj json.RawMessage) ([]Write, error) {
	if len(obj) == 0 || string(obj) == "null" {
		return nil, nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) {
			return nil, fmt.Errorf("input must be a JSON object of channel values, not a JSON %s", te.Value)
		}
		return nil, fmt.Errorf("input must be a JSON object of channel values: %w", err)
	}
	ws := make([]Write, 0, len(m))
	for _, ch := range g.schema.channels { // channel order, so the result is deterministic
		raw, ok := m[ch.name]
		if !ok {
			continue
		}
		if _, err := ch.coerce(raw); err != nil {
			if te := (*json.UnmarshalTypeError)(nil); errors.As(err, &te) {
				where := strconv.Quote(ch.name)
				if te.Field != "" {
					where += "." + te.Field
				}
				if te.Field == "" && te.Type != ch.typ { // a map's or a slice's element
					return nil, fmt.Errorf("input channel %s must be %s; one of its values is a JSON %s", where, jsonKindOf(ch.typ), te.Value)
				}
				return nil, fmt.Errorf("input channel %s must be %s, not a JSON %s", where, JSONKind(te.Type), te.Value)
			}
			return nil, err
		}
		ws = append(ws, Write{Channel: ch.name, Value: raw})
		delete(m, ch.name)
	}
	for name := range m {
		return nil, fmt.Errorf("the input sets %q, which is not a channel of this workflow's state", name)
	}
	return ws, nil
}

// StateJSON implements Runnable.
func (g *Graph[S]) StateJSON(ctx context.Context, cfg Config) (SnapshotJSON, error) {
	s, err := g.GetState(ctx, cfg)
	if err != nil {
		return SnapshotJSON{}, err
	}
	b, err := json.Marshal(s.Values)
	if err != nil {
		return SnapshotJSON{}, fmt.Errorf("encode state: %w", err)
	}
	return SnapshotJSON{Values: b, Next: s.Next, Tasks: s.Tasks, Interrupts: s.Interrupts, Checkpoint: s.Checkpoint}, nil
}

// UpdateStateJSON implements Runnable.
func (g *Graph[S]) UpdateStateJSON(ctx context.Context, cfg Config, values json.RawMessage, asNode string) (Checkpoint, error) {
	ws, err := g.InputWrites(values)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("update state: %w", err)
	}
	return g.UpdateState(ctx, cfg, ws, asNode)
}

// ErrorRoute implements Runnable.
func (g *Graph[S]) ErrorRoute() []string {
	if g.cfg.errorNode == "" {
		return nil
	}
	seen := map[string]bool{g.cfg.errorNode: true}
	out := []string{g.cfg.errorNode}
	for i := 0; i < len(out); i++ {
		n := out[i]
		next := append([]string(nil), g.edges[n]...)
		for _, br := range g.branches[n] {
			for _, to := range br.paths {
				next = append(next, to)
			}
		}
		if nd := g.nodes[n]; nd != nil {
			next = append(next, nd.destinations...)
		}
		for _, to := range next {
			if to != END && !seen[to] {
				seen[to] = true
				out = append(out, to)
			}
		}
	}
	return out
}

// jsonKindOf is JSONKind, naming the elements of an array or a map ("an object of numbers").
func jsonKindOf(t reflect.Type) string {
	var kind string
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		kind = "an array of "
	case reflect.Map:
		kind = "an object of "
	default:
		return JSONKind(t)
	}
	switch JSONKind(t.Elem()) {
	case "a string":
		return kind + "strings"
	case "true or false":
		return kind + "true or false values"
	case "a number":
		return kind + "numbers"
	case "an array":
		return kind + "arrays"
	}
	return kind + "objects"
}

// JSONKind names the JSON a Go type decodes from ("a string", "a number", …), for messages
// that speak JSON to whoever sent it rather than Go.
func JSONKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8,
		reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}
