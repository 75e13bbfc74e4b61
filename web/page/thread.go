package page

import (
	"fmt"
	"strconv"
	"time"

	"weft/internal/workflow"
	"weft/web/component"
)

// ThreadVM is the thread page: one run of a workflow on a thread, drawn,
// timed, inspected and (for admins) forkable.
type ThreadVM struct {
	ThreadID      string
	Workflow      string // registry name
	WorkflowTitle string
	Description   string
	Heading       string // e.g. the supplier of an evaluation, or the thread id
	// TenderHref links an evaluation's thread to its tender's page (TenderName), for those
	// who may open it.
	TenderHref, TenderName string
	Subject                string // what the thread is about (an evaluation id)
	// EventsURL is the live stream, starting after the last event the page
	// reflects.
	EventsURL string
	Flash     string // a message after a redirect (e.g. a fork queued)
	Error     string // why an action taken on the page was refused
	// DraftClear, when set, makes the browser forget the drafts kept under it (the start
	// form's, once its run started: drafts.js).
	DraftClear string

	Status   ThreadStatusVM
	Review   ThreadReviewWaitingVM
	Graph    component.GraphVM
	Mermaid  string
	Timeline ThreadTimelineVM
	Jobs     []ThreadJobVM
	State    ThreadStateVM
	History  ThreadHistoryVM
	Report   ThreadReportVM
	// Panel is the workflow's domain panel (progress, findings so far).
	Panel []workflow.Block
	// Artifacts are the files the thread's runs made.
	Artifacts []ThreadArtifactVM
	// Events are the workflow's named events so far (when it names them).
	Events ThreadEventsVM
	// FollowUp is the workflow's form for another run on the thread (when it has one).
	FollowUp ThreadFollowUpVM
}

// ThreadEventsVM is the list of a workflow's named events; Named: the workflow names them.
type ThreadEventsVM struct {
	Named bool
	Rows  []ThreadEventVM
}

// ThreadEventVM is one named event: its name, the node, when, and its data in short.
type ThreadEventVM struct {
	Name, Node, At, Detail string
}

// ThreadFollowUpVM is the follow-up form: shown when the thread's run has ended and the
// reader may start runs.
type ThreadFollowUpVM struct {
	Show   bool
	Title  string
	Action string
	CSRF   string
	Fields []StartFieldVM
	Error  string
}

// Multipart: the form sends a file.
func (v ThreadFollowUpVM) Multipart() bool { return WorkflowStartVM{Fields: v.Fields}.Multipart() }

// ThreadStatusVM is the job status badge region (live event "status").
type ThreadStatusVM struct {
	JobID      string
	TraceID    string // the job's: each run of a thread has its own
	Status     string // a job status, or "not_started"
	RetryCount int
	Updated    string // page.Ago of UpdatedAt when rendered (the browser keeps it current)
	UpdatedAt  time.Time
	Head       string // the head checkpoint, short
	Step       int
	Next       []string
}

// StatusLabel is the status in words.
func (s ThreadStatusVM) StatusLabel() string { return ThreadStatusWords(s.Status) }

// ThreadStatusWords turns a job status into words.
func ThreadStatusWords(s string) string {
	switch s {
	case "succeeded": // the run reached its end, whatever it decided (a rejection too)
		return "completed"
	case "waiting_review":
		return "waiting for review"
	case "retry_scheduled":
		return "retry scheduled"
	case "dlq_pending":
		return "dead-lettering"
	case "dlq_recorded":
		return "dead-lettered"
	case "not_started":
		return "not started"
	case "":
		return "unknown"
	}
	return s
}

// ThreadReviewWaitingVM is the "review waiting" notice (live event "review").
type ThreadReviewWaitingVM struct {
	Waiting   bool
	Node      string
	Href      string // /reviews/{job_id}; empty when the viewer cannot review
	Reasons   []ReviewReason
	Suggested []string
	// Inline: the review form is loaded in place (Definition.InlineReview), kept across the
	// region's live updates while the pause lasts (the job's id names it).
	Inline bool
	JobID  string
}

// ThreadTimelineVM is the node timeline (live event "timeline").
type ThreadTimelineVM struct {
	Rows     []ThreadTimelineRow
	MultiJob bool // rows come from more than one job: show the job column
	Total    string
	// Waterfall draws the newest run's node executions on its time axis.
	Waterfall WaterfallVM
}

// ThreadTimelineRow is one node execution.
type ThreadTimelineRow struct {
	Node       string
	Job        string // short job id
	Started    string
	StartedAt  string // full timestamp, for the title
	LatencyMS  float64
	MaxMS      float64 // the longest execution of the timeline (the meter's max)
	InputSize  int
	OutputSize int
	Attempts   int
	ErrorCode  string
	Cached     bool
	Outcome    string // done, failed, interrupted
}

// Latency formats the latency.
func (r ThreadTimelineRow) Latency() string { return ThreadMillis(r.LatencyMS) }

// Retries is attempts beyond the first.
func (r ThreadTimelineRow) Retries() int { return max(r.Attempts-1, 0) }

// ThreadMillis formats milliseconds.
func ThreadMillis(ms float64) string {
	switch {
	case ms >= 10000:
		return strconv.FormatFloat(ms/1000, 'f', 1, 64) + " s"
	case ms >= 1000:
		return strconv.FormatFloat(ms/1000, 'f', 2, 64) + " s"
	case ms >= 10:
		return strconv.FormatFloat(ms, 'f', 0, 64) + " ms"
	case ms >= 1:
		return strconv.FormatFloat(ms, 'f', 1, 64) + " ms"
	case ms >= 0.001:
		return strconv.FormatFloat(ms*1000, 'f', 0, 64) + " µs"
	}
	return "< 1 µs"
}

// Bytes formats a size for people (B, kB, MB).
func Bytes[N int | int64](n N) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f kB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

// ThreadJobVM is one job (run) of the thread.
type ThreadJobVM struct {
	ID, Short  string
	Status     string
	RetryCount int
	Created    string
	ForkFrom   string // short checkpoint id the job forked from
	RetryFrom  string // where its scheduled retry starts
	Errors     []ThreadJobErrorVM
	Decisions  []ThreadDecisionVM  // the reviews the run's pauses got
	DeadLetter *ThreadDeadLetterVM // the run's newest dead-letter entry, if it has one
}

// ThreadDeadLetterVM is where a failed run's dead-letter entry stands and, for an admin, the
// Retry and Discard actions of the dead-letter page.
type ThreadDeadLetterVM struct {
	ID         string
	Status     string // recorded, retried or discarded
	Class      string // the error class
	Code       string // the error code
	Recorded   string // when it was recorded
	Superseded bool   // the thread was started again since: discard only
	ResolvedBy string // who retried or discarded it
	ResolvedAt string
	CanRetry   bool // an admin, the entry recorded, and the run the thread's newest
	CanDiscard bool // an admin, the entry recorded
	CSRF       string
}

// Label is the entry's status in words.
func (d ThreadDeadLetterVM) Label() string {
	switch d.Status {
	case "recorded":
		return "in the dead letters"
	case "retried":
		return "dead letter retried"
	case "discarded":
		return "dead letter discarded"
	}
	return d.Status
}

// ThreadDecisionVM is a reviewer's answer to one of a run's pauses.
type ThreadDecisionVM struct {
	Decision string // approve, reject, edit_scores
	Reviewer string // a name ("Ravi Rao", "Ada Admin via API token ci")
	Comment  string // clipped to a few lines
	Full     string // the whole comment when Comment is clipped
	At       string
}

// ThreadJobErrorVM is one entry of a job's error history.
type ThreadJobErrorVM struct {
	At, Node, Class, Code, Message string
	// Nth is "failure 2 of 3" where the run failed more than once (a retried run fails
	// again with the same code and message: the number and the time tell them apart).
	Nth string
	// RetryCount is the job's retry count when it failed: its dead letter's key.
	RetryCount int
	// DeadLetter is the entry this failure left in the dead letters, for every failure but
	// the last (whose entry the run shows with its actions): how it was resolved.
	DeadLetter *ThreadDeadLetterVM
}

// ThreadStateVM is the thread's state.
type ThreadStateVM struct {
	Title string // "Evaluation state (get_workflow_state)" or "Thread state"
	Note  string
	JSON  string // pretty-printed; rendered escaped
}

// ThreadHistoryVM is one page of checkpoints, newest first.
type ThreadHistoryVM struct {
	ThreadID   string
	Rows       []ThreadCheckpointRow
	Pruned     bool   // the finished thread's checkpoints were pruned
	NewerHref  string // the first page, when this is not it
	OlderHref  string // the next page
	ForkURL    string // POST target of the fork form
	CanFork    bool   // admin
	ForkReason string // why forking is not possible now (thread busy)
	CSRF       string
	Branches   bool // some rows are on an earlier branch
}

// ThreadCheckpointRow is one checkpoint.
type ThreadCheckpointRow struct {
	ID, Short   string
	Step        int
	Source      string
	Nodes       []string
	Next        []string
	Created     string
	ForkOf      string
	ForkOfShort string
	// RetryOf is the short id of the failed job whose retry (from the dead letters, or
	// scheduled) started this checkpoint (Source "retry"), when the thread still lists it.
	RetryOf string
	// Why says what wrote a checkpoint that no node wrote (a resume: "review answer",
	// "run continued").
	Why      string
	Head     bool
	Forkable bool // has work after it
	// EarlierBranch: not an ancestor of the head (a fork started the current run from
	// before it).
	EarlierBranch bool
}

// ThreadReportVM is the final report: a bid evaluation's report_payload, or a
// summary of any other workflow's final state.
type ThreadReportVM struct {
	Kind     string           // "evaluation", "summary" or "none"
	Message  string           // why there is no report yet, or a note
	Failed   bool             // the run failed: Message is an error
	Blocks   []workflow.Block // the workflow's report (Kind "blocks")
	ThreadID string           // whose artifacts the blocks name
	Summary  []ThreadKV
}

// ThreadKV is a labelled value.
type ThreadKV struct{ Key, Value string }

// ThreadArtifactVM is a file a run of the thread made.
type ThreadArtifactVM struct {
	Key, Name, ContentType string
	Size                   string
	Version                int
	HTML                   bool // served sandboxed: shown in a frame as well as downloaded
	Updated                string
}

// threadFloat formats a float for an attribute (meter values).
func threadFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// ShortID shortens an id for display: the tail of a UUID (its head is a
// timestamp shared by ids made close together).
func ShortID(id string) string {
	if len(id) <= 12 {
		return id
	}
	return "…" + id[len(id)-8:]
}
