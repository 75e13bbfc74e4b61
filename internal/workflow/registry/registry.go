// Package registry lists the workflows a Weft process can run, by name, with
// what the console shows about them. The runner looks graphs up here, and
// the console's pages are driven by it rather than by any one workflow. It
// imports internal/graph only.
package registry

import (
	"encoding/json"
	"fmt"
	"sort"

	"weft/internal/graph"
)

// Entry is one registered workflow.
type Entry struct {
	Name        string // the registry key, e.g. "bid_evaluation"
	Title       string // e.g. "Bid evaluation"
	Description string
	// Path lists the nodes of the main path in order, for progress bars
	// (nodes done ÷ nodes in the path).
	Path  []string
	Graph graph.Runnable
	// CheckInput, when set, refuses a run's input before the run is queued, with a
	// message that says what the input needs (a run that could only fail is not started).
	CheckInput func(input json.RawMessage) error
	// ExampleInput, when set, is a run's input as an example (a JSON object of channel
	// values): the console offers a form that starts runs, filled in with it. Without it the
	// workflow is started elsewhere (a bid evaluation from its tender's page).
	ExampleInput json.RawMessage
	// SubjectOf, when set, names a run by its input (what pages list it as, e.g. a tour's
	// question); without it a run started on a new thread is listed by its thread id.
	SubjectOf func(input json.RawMessage) string
}

// Registry is a set of workflows. Register everything before use; after
// that it is read-only and safe for concurrent use.
type Registry struct {
	byName map[string]Entry
}

// New returns an empty registry.
func New() *Registry { return &Registry{byName: map[string]Entry{}} }

// Register adds a workflow; a duplicate name is an error.
func (r *Registry) Register(e Entry) error {
	if e.Name == "" || e.Graph == nil {
		return fmt.Errorf("register workflow: name and graph are required")
	}
	if _, dup := r.byName[e.Name]; dup {
		return fmt.Errorf("register workflow %q: already registered", e.Name)
	}
	if len(e.Path) == 0 {
		e.Path = e.Graph.Nodes()
	}
	r.byName[e.Name] = e
	return nil
}

// Lookup finds a workflow's graph (runner.Registry).
func (r *Registry) Lookup(name string) (graph.Runnable, bool) {
	e, ok := r.byName[name]
	return e.Graph, ok
}

// Get finds a workflow's entry.
func (r *Registry) Get(name string) (Entry, bool) {
	e, ok := r.byName[name]
	return e, ok
}

// All lists the workflows by title.
func (r *Registry) All() []Entry {
	out := make([]Entry, 0, len(r.byName))
	for _, e := range r.byName {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Title < out[j].Title })
	return out
}
