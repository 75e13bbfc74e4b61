package graph

import (
	"context"
	"time"
)

// StreamMode selects which events a run emits. Modes combine with |.
type StreamMode uint8

// Stream modes, as in LangGraph.
const (
	// ModeValues: the full state after each step (Data: S).
	ModeValues StreamMode = 1 << iota
	// ModeUpdates: each task's writes (Data: map[string]any, channel -> value).
	ModeUpdates
	// ModeCustom: what a node emitted with Emit (Data: the payload).
	ModeCustom
	// ModeTasks: a task starting (Data: TaskStart) and its result (TaskResult).
	ModeTasks
	// ModeCheckpoints: each saved checkpoint (Data: Checkpoint).
	ModeCheckpoints
	// ModeDebug: everything above plus interrupts and step boundaries.
	ModeDebug

	ModeAll = ModeValues | ModeUpdates | ModeCustom | ModeTasks | ModeCheckpoints | ModeDebug
)

// Event kinds (Event.Kind).
const (
	KindValues     = "values"
	KindUpdates    = "updates"
	KindCustom     = "custom"
	KindTaskStart  = "task_start"
	KindTaskResult = "task_result"
	KindCheckpoint = "checkpoint"
	KindInterrupt  = "interrupt"
	KindStep       = "step"
	KindDone       = "done"
)

// Event is the one event type of a run, consumed by the SSE layer, the CLI
// and tests alike.
type Event struct {
	Kind   string    `json:"kind"`
	Thread string    `json:"thread_id,omitempty"`
	NS     string    `json:"ns,omitempty"`
	Step   int       `json:"step"`
	Node   string    `json:"node,omitempty"`
	TaskID string    `json:"task_id,omitempty"`
	At     time.Time `json:"at"`
	Data   any       `json:"data,omitempty"`
}

// TaskStart is the Data of a task_start event.
type TaskStart struct {
	ID       string `json:"id"`
	Node     string `json:"node"`
	Push     bool   `json:"push,omitempty"`
	Attempt  int    `json:"attempt"`
	InputLen int    `json:"input_size,omitempty"`
}

// TaskResult is the Data of a task_result event.
type TaskResult struct {
	ID         string             `json:"id"`
	Node       string             `json:"node"`
	Writes     map[string]any     `json:"writes,omitempty"`
	Error      string             `json:"error,omitempty"`
	Interrupts []PendingInterrupt `json:"interrupts,omitempty"`
	Attempts   int                `json:"attempts"`
	Cached     bool               `json:"cached,omitempty"`
	Replayed   bool               `json:"replayed,omitempty"` // writes came from a saved pending write
	Started    time.Time          `json:"started_at"`
	Ended      time.Time          `json:"ended_at"`
	InputSize  int                `json:"input_size"`
	OutputSize int                `json:"output_size"`
	// Err is the task's error itself (Error is its text), for a consumer in the process to
	// classify; it is not serialized.
	Err error `json:"-"`
}

// Wants reports whether events of kind are selected by the modes.
func (m StreamMode) Wants(kind string) bool { return m.wants(kind) }

func (m StreamMode) wants(kind string) bool {
	if m&ModeDebug != 0 {
		return true
	}
	switch kind {
	case KindValues:
		return m&ModeValues != 0
	case KindUpdates:
		return m&ModeUpdates != 0
	case KindCustom:
		return m&ModeCustom != 0
	case KindTaskStart, KindTaskResult:
		return m&ModeTasks != 0
	case KindCheckpoint:
		return m&ModeCheckpoints != 0
	case KindInterrupt, KindDone:
		return m != 0
	}
	return false
}

// Emit sends a custom event (a progress report, say) from inside a node to
// the run's stream. It does nothing outside a node or when nobody streams
// custom events.
func Emit(ctx context.Context, payload any) {
	sc := scopeFrom(ctx)
	if sc == nil {
		return
	}
	sc.emitter.emit(Event{Kind: KindCustom, Step: sc.step, Node: sc.task.Node, TaskID: sc.task.ID, Data: payload})
}
