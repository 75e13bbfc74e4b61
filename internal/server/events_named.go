package server

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/workflow"
	"weft/web/page"
)

// A workflow's named events (Definition.EventName: seed 001 §7.2's brief_start, …) on the
// thread page: the list so far, and each new one live (event "wf_event").

// threadEventRows are the thread's named events so far (the newest maxThreadEvents), when
// its workflow names them.
const maxThreadEvents = 300

func (s *Server) threadEventRows(ctx context.Context, td *threadData) (page.ThreadEventsVM, error) {
	if td.entry.EventName == nil {
		return page.ThreadEventsVM{}, nil
	}
	vm := page.ThreadEventsVM{Named: true}
	for after := int64(0); ; {
		evs, err := s.app.Events.ListEvents(ctx, td.tenant, td.thread, after, 500)
		if err != nil {
			return vm, err
		}
		for _, ev := range evs {
			if row, ok := namedEvent(td.entry, ev); ok {
				vm.Rows = append(vm.Rows, row)
			}
		}
		if len(evs) < 500 {
			break
		}
		after = evs[len(evs)-1].ID
	}
	if n := len(vm.Rows); n > maxThreadEvents {
		vm.Rows = slices.Clone(vm.Rows[n-maxThreadEvents:])
	}
	return vm, nil
}

// namedEvent is an event as the workflow names it, in a row (ok false: it has no name).
func namedEvent(def workflow.Definition, ev postgres.StoredEvent) (page.ThreadEventVM, bool) {
	if def.EventName == nil {
		return page.ThreadEventVM{}, false
	}
	name, ok := def.EventName(ev.Event)
	if !ok || name == "" {
		return page.ThreadEventVM{}, false
	}
	row := page.ThreadEventVM{Name: name, Node: ev.Node, At: ev.At.UTC().Format(time.TimeOnly)}
	switch ev.Kind {
	case graph.KindCheckpoint:
		var cp graph.CheckpointSummary
		if b, err := json.Marshal(ev.Data); err == nil && json.Unmarshal(b, &cp) == nil {
			row.Node = strings.Join(cp.Nodes, ", ")
			if len(cp.Next) > 0 {
				row.Detail = "next: " + strings.Join(cp.Next, ", ")
			}
		}
	case graph.KindCustom:
		if b, err := json.Marshal(ev.Data); err == nil {
			row.Detail = threadClip(string(b), 160)
		}
	}
	return row, true
}
