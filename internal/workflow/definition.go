package workflow

import (
	"context"
	"encoding/json"
	"time"

	"weft/internal/graph"
)

// Definition is one workflow as the platform sees it: its graph and what the
// console, the API and the runner need to offer it without knowing its name.
// Every part but Name, Title and Graph is optional, with a generic default.
type Definition struct {
	Name        string // the registry key, e.g. "bid_evaluation"
	Title       string // e.g. "Bid evaluation"
	Description string
	// Path lists the nodes of the main path in order, for progress bars (nodes done ÷ nodes
	// in the path). Default: every node.
	Path  []string
	Graph graph.Runnable

	// Start, when set, is the start form: typed fields the console renders and the API
	// takes as JSON, turned into the run's input. Without it, a workflow with ExampleInput
	// gets the raw-JSON start form; with neither, it is started elsewhere (a bid evaluation
	// from its tender's page).
	Start *StartForm
	// FollowUp, when set, is a form on the page of a thread whose run has ended that starts
	// another run on the same thread (a page-generation session's next round of feedback);
	// its Start gets the thread in StartRequest.ThreadID, and the run it returns is queued on
	// that thread whatever its ThreadID says. The API takes the same fields.
	FollowUp *StartForm
	// ExampleInput, when set, is a run's input as an example (a JSON object of channel
	// values), offered by the raw-JSON start form.
	ExampleInput json.RawMessage
	// CheckInput, when set, refuses a run's input before the run is queued, with a message
	// that says what the input needs.
	CheckInput func(input json.RawMessage) error
	// SubjectOf, when set, names a run by its input (what pages list it as); without it a
	// run is listed by its thread id.
	SubjectOf func(input json.RawMessage) string
	// Forked, when set, is told of a new run of one of the workflow's threads that a fork
	// from a checkpoint queued (with the run's subject, as its earlier run had it), as
	// StartForm's Started is told of a started one: bid evaluation points its evaluation at
	// the new job. Its error is reported; the run stays queued.
	Forked func(ctx context.Context, tenantID, subject, threadID, jobID string) error

	// Review, when set, describes the review page of a pause as data and turns a
	// reviewer's answer into a resume value or an update of the state. The console's form
	// and the API's resume both go through it. Without it, the generic review asks for a
	// decision (approve or reject), a comment and an optional JSON value.
	Review Reviewer
	// InlineReview: the thread page shows a pause's review form in place, under its "review
	// waiting" notice, for a reader who may answer it (a short form, such as page
	// generation's feedback box), besides the link to its page.
	InlineReview bool
	// Views build the workflow's pages from its state; each nil view has a generic default.
	Views Views
	// EventName, when set, names the workflow's SSE events (seed 001 §7.2); without it an
	// event is named by its kind.
	EventName func(ev graph.Event) (name string, ok bool)
	// Describe, when set, names runs in lists (runs, dead letters, the review inbox, the
	// dashboard) by their subjects (a job's subject, as SubjectOf or a start gave it), in one
	// call per page: the bid evaluation's supplier and tender for its evaluation id. Subjects
	// it does not know are left out of the map and listed as they are.
	Describe func(ctx context.Context, tenantID string, subjects []string) (map[string]Subject, error)
	// AuditActions are the audit actions the workflow writes besides the platform's
	// ("evaluation.report"), which the audit log's action filter suggests.
	AuditActions []string
	// ReasonLabels names the reasons a workflow's interrupts give for a review (an
	// interrupt payload's "reasons"), for the inbox and the review page.
	ReasonLabels map[string]string
	// Hidden lists state channels never shown to a reader (in the API's state, the value
	// and update streams and the console's state view): secrets such as resume tokens.
	Hidden []string
}

// Subject is what a run is about, in words: Title ("Bluewater Systems"), Detail
// ("evaluation ev_… · Data centre network upgrade 2026") and, when it has one, the page of
// what it is about.
type Subject struct {
	Title, Detail, Href string
}

// Person is who answers a review or reads a view.
type Person struct {
	ID, Name, Role string
}

// Thread is a thread as a view or a review sees it: its state at the head, what runs
// next, its pending interrupts and its job's status.
type Thread struct {
	TenantID string
	ThreadID string
	// State is the thread's values at its head checkpoint, as JSON (decode it with
	// DecodeState into the workflow's state type).
	State        json.RawMessage
	CheckpointID string
	Next         []string
	Interrupts   []graph.PendingInterrupt
	// JobStatus is the latest run's job status ("" before any run).
	JobStatus string
	Reader    Person
	Now       time.Time
	// Decisions are the review decisions recorded on the latest run, oldest first, each
	// with who made it in words ("Ravi Rao via API token ci").
	Decisions []Decided
	// Name says who an actor is (a user's id or email, "system:…") in words, as the
	// console names people; nil: as it is.
	Name func(actor string) string
}

// Decided is a recorded review decision.
type Decided struct {
	Decision, Comment string
	By                string // who, in words
	At                time.Time
}

// NameOf is t.Name(actor), or actor when the thread has no names.
func (t Thread) NameOf(actor string) string {
	if t.Name == nil {
		return actor
	}
	return t.Name(actor)
}

// Views are the workflow's own pages, as blocks built from its state. A nil field
// takes the generic default.
type Views struct {
	// Panel is the thread page's domain panel (progress, findings so far), shown while the
	// thread runs and after.
	Panel func(ctx context.Context, t Thread) ([]Block, error)
	// Report is the thread's result, once there is one (nil blocks: no report yet).
	Report func(ctx context.Context, t Thread) ([]Block, error)
	// State is the API's domain state of a thread (default: the state's values, less the
	// hidden channels).
	State func(ctx context.Context, t Thread) (any, error)
	// Dashboard is the workflow's part of a tenant's dashboard (e.g. bid evaluation's
	// tenders), under its counts.
	Dashboard func(ctx context.Context, tenantID string, reader Person) ([]Block, error)
	// Live, when set, turns a custom event of a running thread (what a node emitted with
	// graph.Emit, as JSON) into blocks that the thread page appends below its panel as they
	// come (a report streamed as it is written); the panel drawn at the next step replaces
	// them. nil: the event shows nothing.
	Live func(custom json.RawMessage) []Block
}

// DecodeState decodes a thread's state into the workflow's state type.
func DecodeState[S any](raw json.RawMessage) (S, error) {
	var s S
	if len(raw) == 0 {
		return s, nil
	}
	err := json.Unmarshal(raw, &s)
	return s, err
}
