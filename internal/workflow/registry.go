package workflow

import (
	"fmt"
	"sort"

	"weft/internal/graph"
)

// Registry is the set of workflows a process runs. Register everything before use; after
// that it is read-only and safe for concurrent use. The runner looks graphs up here, and
// the console's and the API's pages are driven by it rather than by any one workflow.
type Registry struct {
	byName map[string]Definition
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{byName: map[string]Definition{}} }

// Register adds a workflow; a duplicate name is an error.
func (r *Registry) Register(d Definition) error {
	if d.Name == "" || d.Graph == nil {
		return fmt.Errorf("register workflow: name and graph are required")
	}
	if _, dup := r.byName[d.Name]; dup {
		return fmt.Errorf("register workflow %q: already registered", d.Name)
	}
	if len(d.Path) == 0 {
		d.Path = d.Graph.Nodes()
	}
	if d.Title == "" {
		d.Title = d.Name
	}
	r.byName[d.Name] = d
	return nil
}

// Lookup finds a workflow's graph (runner.Registry).
func (r *Registry) Lookup(name string) (graph.Runnable, bool) {
	d, ok := r.byName[name]
	return d.Graph, ok
}

// Get finds a workflow's definition.
func (r *Registry) Get(name string) (Definition, bool) {
	d, ok := r.byName[name]
	return d, ok
}

// All lists the workflows by title.
func (r *Registry) All() []Definition {
	out := make([]Definition, 0, len(r.byName))
	for _, d := range r.byName {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Title < out[j].Title })
	return out
}

// Reviewer is the workflow's review, or the generic one.
func (d Definition) Reviewer() Reviewer {
	if d.Review != nil {
		return d.Review
	}
	return GenericReviewer{}
}

// Startable reports whether the console offers a form that starts runs of the workflow.
func (d Definition) Startable() bool {
	return (d.Start != nil && !d.Start.Elsewhere) || (d.Start == nil && len(d.ExampleInput) > 0)
}
