package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// START and END are the virtual entry and exit nodes.
const (
	START = "__start__"
	END   = "__end__"
)

// Sentinel errors for expected states. Stores return them (wrapped or not);
// callers test with errors.Is.
var (
	// ErrNotFound: no such thread or checkpoint.
	ErrNotFound = errors.New("not found")
	// ErrConflict: the thread's head moved under a concurrent run or resume.
	ErrConflict = errors.New("thread head moved concurrently")
	// ErrNoCheckpointer: the operation needs a checkpointer and the graph has none.
	ErrNoCheckpointer = errors.New("graph compiled without a checkpointer")
	// ErrResumeInvalid: a resume value does not match the pending interrupts.
	ErrResumeInvalid = errors.New("resume does not match the pending interrupts")
	// ErrNothingToResume: resume or continue on a thread with no pending work.
	ErrNothingToResume = errors.New("thread has nothing to resume")
	// ErrUnknownBefore: a history page's ListOptions.Before names no checkpoint of the thread
	// (a made-up cursor, another thread's, or one pruned since).
	ErrUnknownBefore = errors.New("before names no checkpoint of the thread")
)

// Write is one channel update produced by a node: data, so it can be saved as
// a pending write and replayed. Writing a zero value is an ordinary write.
type Write struct {
	Channel string
	Value   any
}

// Set returns a write of v to channel.
func Set(channel string, v any) Write { return Write{Channel: channel, Value: v} }

// Overwrite, written to an append or merge channel, replaces the channel's
// value instead of being reduced into it.
type Overwrite struct{ Value any }

// Send asks for a task of Node whose input state is Arg (a value of the
// graph's state type, or anything that decodes into it from JSON). It is the
// map-reduce fan-out primitive. A Send with a nil Arg is a plain "go to Node"
// that receives the current state.
type Send struct {
	Node string
	Arg  any
}

// Command is what a node returns and what a run is invoked with.
//
// From a node: Update holds its writes; Goto adds tasks for the next step on
// top of the node's static edges.
//
// As a run's input: Update is applied as the writes of START (a new run),
// Resume answers pending interrupts (a single value, or a ResumeMap keyed by
// interrupt id). The zero Command continues a thread from its head.
type Command struct {
	Update []Write
	Goto   []Send
	Resume any
}

// ResumeMap resumes several pending interrupts at once, keyed by interrupt id.
type ResumeMap map[string]any

// Update is shorthand for a Command carrying only writes.
func Update(ws ...Write) Command { return Command{Update: ws} }

// Goto is shorthand for a Command routing to the named nodes.
func Goto(nodes ...string) Command {
	c := Command{Goto: make([]Send, len(nodes))}
	for i, n := range nodes {
		c.Goto[i] = Send{Node: n}
	}
	return c
}

// Resume is shorthand for a Command that resumes a thread with v.
func Resume(v any) Command { return Command{Resume: v} }

// Route is what a conditional edge's router returns: path-map keys to follow
// and/or Sends to fan out.
type Route struct {
	Keys  []string
	Sends []Send
}

// To routes to the given path-map keys.
func To(keys ...string) Route { return Route{Keys: keys} }

// Fanout routes to the given Sends.
func Fanout(sends ...Send) Route { return Route{Sends: sends} }

// NodeFunc is a node: it reads the typed state and returns writes.
type NodeFunc[S any] func(ctx context.Context, state S) (Command, error)

// Router picks the outgoing path of a conditional edge.
type Router[S any] func(ctx context.Context, state S) (Route, error)

// Pick adapts a plain key function into a Router.
func Pick[S any](f func(S) string) Router[S] {
	return func(_ context.Context, s S) (Route, error) { return To(f(s)), nil }
}

// Config addresses a thread (and optionally one of its checkpoints).
type Config struct {
	ThreadID string
	// CheckpointID, when set on a run, forks the thread from that checkpoint;
	// on GetState it reads that checkpoint instead of the head. A fork replays,
	// as LangGraph's time travel does: every task after the checkpoint runs
	// again, even one whose writes the checkpoint kept, and their interrupt()
	// calls pause again instead of taking the answers given before (a pause
	// before the checkpoint's next nodes does not repeat, as in LangGraph).
	CheckpointID string
	// RetryFailed makes a fork from CheckpointID a retry of the step that
	// failed there: the tasks that finished keep their saved writes (and the
	// answers to their interrupts), and only the others run, as a resume of a
	// failed step does.
	RetryFailed bool
	// NS is the checkpoint namespace: "" for the root graph; subgraphs get
	// their own, derived from the parent task.
	NS string
	// Durability, when set, is this run's durability mode (WithDurability
	// sets the graph's default; sync when neither does).
	Durability Durability
}

// PendingInterrupt is a pause waiting for outside input.
type PendingInterrupt struct {
	ID     string          `json:"id"`
	Node   string          `json:"node"`
	TaskID string          `json:"task_id"`
	NS     string          `json:"ns,omitempty"`
	When   string          `json:"when"` // "before", "after" or "during"
	Value  json.RawMessage `json:"value,omitempty"`
}

// Interrupt "when" values.
const (
	InterruptBefore = "before"
	InterruptAfter  = "after"
	InterruptDuring = "during"
)

// NodeError is a node's failure: the node, the attempt that failed last, the
// cause.
type NodeError struct {
	Node    string
	TaskID  string
	Attempt int
	Err     error
}

func (e *NodeError) Error() string {
	return fmt.Sprintf("node %s failed (attempt %d): %v", e.Node, e.Attempt, e.Err)
}
func (e *NodeError) Unwrap() error { return e.Err }

// PanicError is a panic recovered inside a node; it becomes that node's error.
type PanicError struct {
	Value any
	Stack string
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// RecursionLimitError: the run took more supersteps than its limit.
type RecursionLimitError struct{ Limit int }

func (e *RecursionLimitError) Error() string {
	return fmt.Sprintf("recursion limit of %d reached without hitting a stop condition; raise it with WithRecursionLimit", e.Limit)
}

// InvalidUpdateError: a channel received an update it cannot take, such as
// two values for a last-value channel in one step.
type InvalidUpdateError struct {
	Channel string
	Reason  string
}

func (e *InvalidUpdateError) Error() string {
	return fmt.Sprintf("invalid concurrent update at channel %q: %s", e.Channel, e.Reason)
}

// CompileError lists everything wrong with a graph definition.
type CompileError struct{ Problems []string }

func (e *CompileError) Error() string {
	return "compile graph: " + strings.Join(e.Problems, "; ")
}

// permanentError marks an error that retries will not fix.
type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// Permanent marks err as not worth retrying: the default RetryOn gives up on
// it at once.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err}
}

// IsPermanent reports whether err was marked with Permanent.
func IsPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}
