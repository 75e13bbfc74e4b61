package graph

import (
	"context"
	"encoding/json"
	"time"
)

// Checkpointer persists a thread's checkpoints. Implementations: the in-memory
// saver (internal/checkpoint) for tests and embedding, and the PostgreSQL one
// (internal/postgres) for the product. Both pass checkpointtest.Run.
//
// A thread (per namespace) has exactly one head. Put advances it by
// compare-and-set: it succeeds only when the stored head equals
// PutRequest.ExpectHead, and otherwise returns ErrConflict, so two concurrent
// runs never fork a thread silently.
type Checkpointer interface {
	// Put saves a checkpoint, the blobs of the channels it changed and the
	// pending writes it starts with, and moves the head to it, atomically.
	Put(ctx context.Context, req PutRequest) error
	// PutWrites saves pending writes of one task against a saved checkpoint.
	// Saving the same (checkpoint, task, seq) again replaces it.
	PutWrites(ctx context.Context, thread, ns, checkpointID string, writes []PendingWrite) error
	// GetTuple loads a checkpoint with its channel values and pending writes.
	// An empty checkpointID means the head. ErrNotFound when absent.
	GetTuple(ctx context.Context, thread, ns, checkpointID string) (*Tuple, error)
	// List pages through checkpoints newest first, without channel values.
	List(ctx context.Context, thread, ns string, opts ListOptions) ([]Checkpoint, error)
	// DeleteThread removes everything stored for a thread (all namespaces).
	DeleteThread(ctx context.Context, thread string) error
	// Prune removes old checkpoints and reports how many it removed, and how
	// many whole threads OlderThan dropped.
	Prune(ctx context.Context, opts PruneOptions) (PruneResult, error)
}

// Checkpoint sources.
const (
	SourceInput  = "input"  // a run's input was applied
	SourceLoop   = "loop"   // a superstep finished
	SourceUpdate = "update" // UpdateState
	SourceFork   = "fork"   // a run forked from an older checkpoint
	SourceRetry  = "retry"  // a failed step retried from an older checkpoint (Config.RetryFailed)
	SourceResume = "resume" // a resume or continue claimed the thread
)

// Checkpoint is a thread's state after a superstep, minus the channel values,
// which travel as blobs keyed by channel and version.
type Checkpoint struct {
	ID        string    `json:"id"`
	ParentID  string    `json:"parent_id,omitempty"`
	ThreadID  string    `json:"thread_id"`
	NS        string    `json:"ns,omitempty"`
	Step      int       `json:"step"`
	Source    string    `json:"source"`
	CreatedAt time.Time `json:"created_at"`
	// Versions maps each channel that has a value to the version holding it.
	// A version is the id of the checkpoint that wrote it, so versions never
	// collide across forks; a channel left unchanged keeps its version.
	Versions map[string]string `json:"versions"`
	// Next is the plan for the next superstep.
	Next []PlannedTask `json:"next,omitempty"`
	// Barriers records, per join, which sources have finished.
	Barriers map[string][]string `json:"barriers,omitempty"`
	// Resume holds resume values by interrupt id (set by a resume claim and
	// carried until the step completes).
	Resume map[string]json.RawMessage `json:"resume,omitempty"`
	// SkipBefore: a paused interrupt_before was acknowledged; the next step
	// runs without pausing again.
	SkipBefore bool `json:"skip_before,omitempty"`
	// Nodes that wrote this checkpoint (the step's tasks, or UpdateState's
	// as-node).
	Nodes []string `json:"nodes,omitempty"`
	// ForkOf is the checkpoint a fork branched from.
	ForkOf string `json:"fork_of,omitempty"`
}

// PlannedTask is one task of the next superstep. Its ID is deterministic:
// a hash of the checkpoint id, step, node and trigger.
type PlannedTask struct {
	ID   string          `json:"id"`
	Node string          `json:"node"`
	Push bool            `json:"push,omitempty"` // from a Send
	Arg  json.RawMessage `json:"arg,omitempty"`  // Send argument

	arg any // in-process copy of Arg, avoids a decode when not persisted
}

// Blob is the stored value of one channel at one version. A delta blob holds
// only the items appended since Base (a JSON array); readers concatenate the
// chain back to a full blob. Storage thus grows with what changed.
type Blob struct {
	Channel string
	Version string
	Delta   bool
	Base    string
	Data    []byte
}

// PendingWrite is a write saved against a checkpoint before the step that
// follows it completes: a finished task's output, or the special channels
// WriteInterrupt and WriteError.
type PendingWrite struct {
	TaskID  string `json:"task_id"`
	Node    string `json:"node"`
	Seq     int    `json:"seq"`
	Channel string `json:"channel"`
	Data    []byte `json:"data"`
}

// Special pending-write channels.
const (
	WriteInterrupt = "__interrupt__"
	WriteError     = "__error__"
	WriteDone      = "__done__" // marks a task that finished with no writes
)

// PutRequest is one atomic save.
type PutRequest struct {
	Checkpoint Checkpoint
	Blobs      []Blob
	Writes     []PendingWrite
	// ExpectHead is the head the writer saw; "" for a new thread.
	ExpectHead string
}

// Tuple is a checkpoint with its values (full JSON per channel, deltas
// already concatenated) and its pending writes.
type Tuple struct {
	Checkpoint Checkpoint
	Values     map[string][]byte
	Writes     []PendingWrite
}

// ListOptions filter and page a List.
type ListOptions struct {
	Before string // only checkpoints older than this id
	Limit  int    // 0: no limit
	Source string // only this source
}

// PruneOptions select what Prune removes. Threads nil means every thread.
// KeepLast > 0 keeps each thread's newest KeepLast checkpoints (always
// including the head). OlderThan, when set, deletes whole threads whose head
// is older.
type PruneOptions struct {
	Threads   []string
	KeepLast  int
	OlderThan time.Time
}

// PruneResult says what a Prune removed: checkpoints, and the whole threads
// among them that OlderThan dropped.
type PruneResult struct {
	Checkpoints, Threads int
}

// Add sums two results.
func (r PruneResult) Add(o PruneResult) PruneResult {
	return PruneResult{Checkpoints: r.Checkpoints + o.Checkpoints, Threads: r.Threads + o.Threads}
}

// CheckpointSummary is a checkpoint without its versions, plan arguments
// and resume values: what an event about it needs to say.
type CheckpointSummary struct {
	ID       string    `json:"id"`
	ParentID string    `json:"parent_id,omitempty"`
	Step     int       `json:"step"`
	Source   string    `json:"source"`
	Nodes    []string  `json:"nodes,omitempty"`
	Next     []string  `json:"next,omitempty"`
	ForkOf   string    `json:"fork_of,omitempty"`
	At       time.Time `json:"created_at"`
}

// Summary is the checkpoint's summary.
func (c Checkpoint) Summary() CheckpointSummary {
	s := CheckpointSummary{ID: c.ID, ParentID: c.ParentID, Step: c.Step, Source: c.Source, Nodes: c.Nodes, ForkOf: c.ForkOf, At: c.CreatedAt}
	for _, t := range c.Next {
		s.Next = append(s.Next, t.Node)
	}
	return s
}
