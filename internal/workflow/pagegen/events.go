package pagegen

import (
	"encoding/json"

	"weft/internal/graph"
)

// SSE event names, seed 001 §7.2.
const (
	EventBriefStart       = "brief_start"
	EventBriefComplete    = "brief_complete"
	EventStyleExtracted   = "style_extracted"
	EventRegistryComplete = "registry_complete"
	EventGenerateStart    = "generate_start"
	EventGenerateProgress = "generate_progress"
	EventGenerateComplete = "generate_complete"
	EventRefineWaiting    = "refine_waiting"
	EventRefineStart      = "refine_start"
	EventRefineComplete   = "refine_complete"
	EventBuildStart       = "build_start"
	EventBuildProgress    = "build_progress"
	EventBuildComplete    = "build_complete"
	EventBuildFailed      = "build_failed"
	EventInterrupt        = "interrupt"
)

// EventNames lists every name StreamEvents produces.
var EventNames = []string{EventBriefStart, EventBriefComplete, EventStyleExtracted, EventRegistryComplete,
	EventGenerateStart, EventGenerateProgress, EventGenerateComplete, EventRefineWaiting, EventRefineStart,
	EventRefineComplete, EventBuildStart, EventBuildProgress, EventBuildComplete, EventBuildFailed, EventInterrupt}

// StreamEvent is one SSE event: its §7.2 name and a JSON payload.
type StreamEvent struct {
	Name string `json:"event"`
	Data any    `json:"data"`
}

// starts and completes map node starts and completions to event names (§7.2: a node's
// completion is *_complete; a stream_writer output is *_progress; __interrupt__ is
// interrupt / refine_waiting).
var (
	starts = map[string]string{NodeBrief: EventBriefStart, NodeGenerate: EventGenerateStart,
		NodeRefine: EventRefineStart, NodeRender: EventBuildStart}
	completes = map[string]string{NodeBrief: EventBriefComplete, NodeStyle: EventStyleExtracted,
		NodeRegistry: EventRegistryComplete, NodeGenerate: EventGenerateComplete, NodeRefine: EventRefineComplete,
		NodeRender: EventBuildComplete}
)

// StreamEvents maps one engine event to the seed's SSE events (none, one, or two for a
// feedback interrupt: interrupt, then refine_waiting). It reads event data both as the
// engine's own values and as they come back from JSON (an event bus), so a server can
// call it on either. Events of nodes §7.2 names no event for (aesthetic_scorer,
// refine_gate's completion) map to none.
func StreamEvents(ev graph.Event) []StreamEvent {
	switch ev.Kind {
	case graph.KindTaskStart:
		ts, ok := as[graph.TaskStart](ev.Data)
		if name := starts[ev.Node]; name != "" && ok {
			return []StreamEvent{{name, map[string]any{"node": ev.Node, "task_id": ts.ID}}}
		}
	case graph.KindTaskResult:
		res, ok := as[graph.TaskResult](ev.Data)
		if !ok || len(res.Interrupts) > 0 {
			return nil
		}
		if res.Error != "" {
			if ev.Node == NodeRender {
				return []StreamEvent{{EventBuildFailed, BuildFailure{Error: res.Error}}}
			}
			return nil
		}
		return completed(ev.Node, res)
	case graph.KindCustom:
		if f, ok := as[BuildFailure](ev.Data); ok && f.Error != "" && ev.Node == NodeRender {
			return []StreamEvent{{EventBuildFailed, f}}
		}
		if p, ok := as[Progress](ev.Data); ok {
			switch p.Stage { // generate's pages, and refine's when it lays them out again
			case "generate":
				return []StreamEvent{{EventGenerateProgress, p}}
			case "build":
				return []StreamEvent{{EventBuildProgress, p}}
			}
		}
	case graph.KindInterrupt:
		it, ok := as[graph.PendingInterrupt](ev.Data)
		if !ok {
			return nil
		}
		out := []StreamEvent{{EventInterrupt, it}}
		var req FeedbackRequest
		if it.Node == NodeRefineGate && json.Unmarshal(it.Value, &req) == nil && req.Type == InterruptNeedFB {
			out = append(out, StreamEvent{EventRefineWaiting, RefineWaiting{InterruptID: it.ID, FeedbackRequest: req}})
		}
		return out
	}
	return nil
}

// RefineWaiting is the refine_waiting payload: the pause to answer and what to ask.
type RefineWaiting struct {
	InterruptID string `json:"interrupt_id"`
	FeedbackRequest
}

// completed builds a *_complete event's payload from the node's writes.
func completed(node string, res graph.TaskResult) []StreamEvent {
	name := completes[node]
	if name == "" {
		return nil
	}
	w := func(ch string, into any) bool {
		v, ok := res.Writes[ch]
		if !ok {
			return false
		}
		b, err := json.Marshal(v)
		return err == nil && json.Unmarshal(b, into) == nil
	}
	data := map[string]any{"node": node, "cached": res.Cached, "attempts": res.Attempts}
	switch node {
	case NodeBrief:
		var doc ProductDoc
		var pages []Page
		if w(keyProductDoc.Name(), &doc) && w(keyPages.Name(), &pages) {
			data["name"], data["audience"], data["value_proposition"], data["pages"] = doc.Name, doc.Audience, doc.ValueProposition, pages
		}
	case NodeStyle:
		var t StyleTokens
		if w(keyStyleTokens.Name(), &t) {
			data["palette"], data["source"], data["swatches"] = t.Palette, t.Source, t.Swatches
		}
	case NodeRegistry:
		var r ComponentRegistry
		if w(keyComponentRegistry.Name(), &r) {
			types := make([]string, len(r.Components))
			for i, c := range r.Components {
				types[i] = c.Type
			}
			data["components"] = types
		}
	case NodeGenerate:
		var ps []PageSchema
		if w(keyPageSchemas.Name(), &ps) {
			data["pages"] = len(ps)
		}
	case NodeRefine:
		var rs []Refinement
		if w(keyRefinements.Name(), &rs) && len(rs) > 0 {
			data["round"], data["applied"], data["unapplied"] = rs[0].Round, rs[0].Applied, rs[0].Unapplied
		}
	case NodeRender:
		var status string
		var arts BuildArtifacts
		w(keyBuildStatus.Name(), &status)
		if status == BuildFailed {
			var msg string
			w(keyError.Name(), &msg)
			return []StreamEvent{{EventBuildFailed, BuildFailure{Error: msg, Class: "permanent"}}}
		}
		if w(keyBuildArtifacts.Name(), &arts) {
			data["round"], data["pages"], data["zip"], data["contrast_fixes"] = arts.Round, arts.Pages, arts.Zip, arts.Fixes
		}
	}
	return []StreamEvent{{name, data}}
}

// as reads v as a T: directly when it is one, else through JSON.
func as[T any](v any) (T, bool) {
	if t, ok := v.(T); ok {
		return t, true
	}
	if p, ok := v.(*T); ok && p != nil {
		return *p, true
	}
	var t T
	b, err := json.Marshal(v)
	if err != nil || json.Unmarshal(b, &t) != nil {
		return t, false
	}
	return t, true
}
