package page

// The review inbox and review form (reviews.templ): the view models the
// handlers of internal/server/reviews.go fill in.

import (
	"net/url"
	"strings"
	"time"

	"weft/internal/workflow"
)

// ReviewInboxVM is the inbox: every pause of the tenant waiting for a
// decision, longest waiting first.
type ReviewInboxVM struct {
	Items []ReviewItem
	// Truncated: more pauses wait than the inbox shows (the oldest are shown).
	Truncated bool
	// Workflow is the workflow the inbox is filtered to ("" for all), WorkflowTitle its title.
	Workflow, WorkflowTitle string
	// Tabs filter the inbox by workflow (none when there is nothing to choose between).
	Tabs []ReviewTab
}

// ReviewTab is a workflow filter of the inbox: N threads of it wait for review.
type ReviewTab struct {
	Workflow string // "" for all
	Label    string
	N        int64
	Active   bool
}

// Key names the tab in its element id: its workflow, or "all".
func (t ReviewTab) Key() string {
	if t.Workflow == "" {
		return "all"
	}
	return t.Workflow
}

// Href is the inbox filtered to the tab's workflow.
func (t ReviewTab) Href() string { return reviewInboxHref(t.Workflow) }

// TabsVM is the inbox's tabs as the page shows them.
func (v ReviewInboxVM) TabsVM() TabsVM {
	tabs := make([]Tab, len(v.Tabs))
	for i, t := range v.Tabs {
		tabs[i] = Tab{Key: t.Key(), Label: t.Label, Href: t.Href(), N: t.N, Title: Plural(t.N, "thread waits", "threads wait"), Active: t.Active}
	}
	return TabsVM{ID: "review-tabs", Label: "Workflow", Target: "#review-inbox", Tabs: tabs}
}

// Href is the inbox as filtered now (its refresh).
func (v ReviewInboxVM) Href() string { return reviewInboxHref(v.Workflow) }

func reviewInboxHref(workflow string) string { return listHref("/reviews", "workflow", workflow) }

// ReviewItem is one pending interrupt.
type ReviewItem struct {
	Href          string // the review form
	Workflow      string // the workflow's title
	Subject       string // e.g. the supplier's name
	SubjectDetail string // e.g. the evaluation id and the tender
	Node          string
	Reasons       []ReviewReason
	Age           string // "12m ago"
	PausedAt      string // full timestamp (tooltip)
	Overdue       bool   // the answer window has closed
}

// ReviewReason is why a thread paused for review.
type ReviewReason = workflow.Reason

// ReviewFormVM is the review form of one pause. Bid and Generic are
// exclusive: a bid evaluation gets the evidence and score editor, any other
// workflow its interrupt payload and a JSON resume value.
type ReviewFormVM struct {
	Action        string // where the form posts
	StatusURL     string
	ThreadHref    string
	Workflow      string
	Subject       string
	SubjectDetail string
	Node          string
	InterruptID   string
	Age           string
	PausedTime    time.Time // when it paused (Age keeps counting from it in the browser)
	PausedAt      string
	AnswerBy      string // when the resume token expires
	Expired       bool   // the answer window has closed: the form cannot be sent
	DraftKey      string // where the browser keeps what is typed (drafts.js)
	Token         string // the resume token issued for this render
	CSRF          string
	Error         string // what was wrong with the last submission
	CommentError  bool   // the comment is at fault
	Input         ReviewInput
	ThreadID      string        // the thread whose artifacts the form's blocks name
	Form          workflow.Form // the workflow's review page, as data
}

// ReviewInput is what the reviewer typed, kept across a failed submission.
type ReviewInput struct {
	Decision string
	Comment  string
	Values   map[string]string // the form's inputs by field name, as typed
}

// ReviewDoneVM is the panel that replaces the form once a decision is
// recorded. Its status region is the thread page's (ThreadStatus), kept
// live by the thread's event stream (its "status" event).
type ReviewDoneVM struct {
	Decision     string // approve, reject, edit_scores
	Comment      string
	Scores       []ThreadKV // edit_scores: the scores saved, by criterion name
	Reviewer     string
	Note         string // said beside the summary (edits a rejection dropped)
	SummaryTitle string // what Scores are ("Scores saved"; "" : "Recorded")
	ThreadHref   string
	EventsURL    string // the thread's SSE stream, after the last event seen
	Status       ThreadStatusVM
	DraftKey     string // the prefix of the job's draft keys: the browser forgets what it kept
}

// ReviewAnswered is what the review page's header says once its pause was answered.
func ReviewAnswered(decision, reviewer string) string {
	return "answered: " + ReviewDecisionLabel(decision) + " by " + reviewer
}

// ReviewDecisionLabel is a review decision in words.
func ReviewDecisionLabel(d string) string {
	switch d {
	case "approve":
		return "Approved"
	case "reject":
		return "Rejected"
	case "edit_scores":
		return "Scores edited"
	}
	// A workflow's own word ("partly_approved"), as people write it.
	d = strings.ReplaceAll(d, "_", " ")
	if d == "" {
		return d
	}
	return strings.ToUpper(d[:1]) + d[1:]
}

// reviewDecisionBadge is the badge class of a decision.
func reviewDecisionBadge(d string) string {
	switch d {
	case "approve":
		return "approved"
	case "reject":
		return "rejected"
	case "edit_scores":
		return "scores_edited"
	}
	return ""
}

// ReviewClosedVM explains why a review cannot be answered here (any more).
type ReviewClosedVM struct {
	Title      string
	Message    string
	Status     string // the job's status now
	Subject    string
	Decision   string // the recorded decision, when known
	Comment    string
	Reviewer   string
	FormHref   string // "reload the form" (empty: not offered)
	FormLabel  string // the link's words; empty: "Reload the review form"
	ThreadHref string
	DraftKey   string // the prefix of the job's draft keys: forgotten when a decision is shown
	Unsent     string // the comment of the refused submission, shown back so it is not lost
	KeepDraft  bool   // a refused submission: the tab keeps the form's draft (scores and all)
}

// CountText says how many pauses wait.
func (v ReviewInboxVM) CountText() string {
	s := itoa(len(v.Items)) + " pauses wait for a decision."
	if len(v.Items) == 1 {
		s = "1 pause waits for a decision."
	}
	if v.Truncated {
		s += " Only the oldest are listed; answer them to see the rest."
	}
	return s
}

// WatchURL is what the open form polls to learn that its pause was answered meanwhile.
func (v ReviewFormVM) WatchURL() string {
	return v.StatusURL + "?interrupt=" + url.QueryEscape(v.InterruptID)
}

// commentHint is the comment box's placeholder: the workflow's, or a general one.
func commentHint(f workflow.Form) string {
	if f.CommentHint != "" {
		return f.CommentHint
	}
	return "What you checked and why you decided so (kept in the thread and the audit log)"
}

func summaryTitle(t string) string {
	if t == "" {
		return "Recorded"
	}
	return t
}
