package page

import (
	"net/url"
)

// The dead-letter page (dlq.templ): the view models the handlers of
// internal/server/admin.go fill in.

// DLQVM is the dead-letter page.
type DLQVM struct {
	Table DLQTableVM
}

// DLQTableVM is the table region: the status tabs, the notice after an
// action and one page of entries.
type DLQTableVM struct {
	Status   string        // the status filter: recorded, retried, discarded, or "" for all
	Statuses []AdminOption // the tabs
	Notice   string        // what the last action did
	Error    string        // why the last action was refused
	Details  []string      // under Error: which entries a bulk action left, and why
	Rows     []DLQRow
	// Cursor is this page's cursor ("" on the newest page), Next the older
	// page's ("" on the last page), Prev the newer page's ("" when this page
	// reaches the newest entry).
	Cursor, Next, Prev string
	CSRF               string
	// Counts is how many entries each status holds, each count stopping at CountLimit.
	Counts     map[string]int64
	CountLimit int64
}

// Tabs is the status tabs, each with its count; oob sends them beside the list's own refresh
// (DLQListRefresh), whose new or retried entries change the counts.
func (t DLQTableVM) Tabs(oob bool) TabsVM {
	var all int64
	allStopped := false
	for _, n := range t.Counts {
		all += n
		allStopped = allStopped || t.stopped(n)
	}
	tabs := make([]Tab, 0, len(t.Statuses))
	for _, o := range t.Statuses {
		n, stopped := t.Counts[o.Value], t.stopped(t.Counts[o.Value])
		if o.Value == "" {
			n, stopped = all, allStopped
		}
		title := Plural(n, "entry", "entries")
		if stopped {
			title = "at least " + title
		}
		tabs = append(tabs, Tab{Key: subjectOr(o.Value, "all"), Label: o.Label, Href: t.Href(o.Value), N: n, AtLeast: stopped,
			Title: title, Active: o.Value == t.Status})
	}
	return TabsVM{ID: "dlq-tabs", Label: "Entry status", Target: "#dlq-table", Tabs: tabs, OOB: oob}
}

// stopped reports whether a status's count stopped at the limit.
func (t DLQTableVM) stopped(n int64) bool { return t.CountLimit > 0 && n >= t.CountLimit }

// Href is /dlq with the status filter and more query parameters as key,
// value pairs.
func (t DLQTableVM) Href(status string, kv ...string) string {
	return listHref("/dlq", append([]string{"status", status}, kv...)...)
}

// listHref is path with the query parameters given as key, value pairs, those with an empty
// value left out (a list page's address with its filters and cursor).
func listHref(path string, kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// Selectable reports whether some entry of the page can be ticked for a bulk action (a
// recorded one: retried and discarded entries take no action).
func (t DLQTableVM) Selectable() bool {
	for _, r := range t.Rows {
		if r.Recorded() {
			return true
		}
	}
	return false
}

// OlderHref is the next, older page ("" on the last page).
func (t DLQTableVM) OlderHref() string {
	if t.Next == "" {
		return ""
	}
	return t.Href(t.Status, "after", t.Next)
}

// NewerHref is the page just newer than this one ("" when none is).
func (t DLQTableVM) NewerHref() string {
	if t.Prev == "" {
		return ""
	}
	return t.Href(t.Status, "before", t.Prev)
}

// NewestHref is the first page ("" on it).
func (t DLQTableVM) NewestHref() string {
	if t.Cursor == "" {
		return ""
	}
	return t.Href(t.Status)
}

// DLQRow is one DLQ entry.
type DLQRow struct {
	ID            string
	Workflow      string // the workflow's name
	WorkflowTitle string
	Subject       string // the job's subject, e.g. an evaluation id
	// Thread names the thread for people (an evaluation's supplier, and its tender); its
	// Label is "" when the thread is no evaluation's.
	Thread     DashThreadVM
	JobID      string
	ThreadHref string // "" when the job is gone
	Class      string // error class: validation, business, transient, permanent, security
	Code       string
	Message    string
	TraceID    string
	Node       string
	Attempts   int
	Status     string // the entry's status: recorded, retried, discarded
	ResolvedBy string
	ResolvedAt string
	Created    string // full UTC time
	CreatedAgo string
	Job        DLQJobStatusVM
	// Superseded: the job's thread was started again since; the entry can be discarded,
	// not retried (a retry would take the thread back).
	Superseded bool
}

// Name is what to call the entry's thread: its label, else the job's subject.
func (r DLQRow) Name(none string) string {
	if r.Thread.Label != "" {
		return r.Thread.Label
	}
	return subjectOr(r.Subject, none)
}

// Recorded reports whether the entry waits for a decision (retry or discard).
func (r DLQRow) Recorded() bool { return r.Status == "recorded" }

// RetryAction and DiscardAction are where the row's buttons post.
func (r DLQRow) RetryAction() string   { return "/dlq/" + url.PathEscape(r.ID) + "/retry" }
func (r DLQRow) DiscardAction() string { return "/dlq/" + url.PathEscape(r.ID) + "/discard" }

// DLQJobStatusVM is the job status region of one entry: it polls every
// second while the job is on its way (queued, running, retrying) and stops
// once it is finished or waiting for a review.
type DLQJobStatusVM struct {
	DLQID  string
	Status string // the job's status; "" when the job is gone
	// Retried: the job has been retried since this entry was recorded.
	Retried bool
	// FailedAgain: it then failed again (a newer entry records it).
	FailedAgain bool
}

// ID is the region's element id.
func (j DLQJobStatusVM) ID() string { return "dlq-job-" + j.DLQID }

// URL is where the region polls.
func (j DLQJobStatusVM) URL() string { return "/dlq/" + url.PathEscape(j.DLQID) + "/status" }

// Live reports whether the job is still moving, so the region polls.
func (j DLQJobStatusVM) Live() bool {
	switch j.Status {
	case "", "succeeded", "failed", "waiting_review":
		return false
	}
	return true
}

// Label is the status in words.
func (j DLQJobStatusVM) Label() string {
	if j.Status == "" {
		return "gone"
	}
	return ThreadStatusWords(j.Status)
}

func subjectOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// RetryRepeats says a retry would most likely fail again: business and validation errors
// come from the job's input and data, not from a passing fault. An unanswered review
// (WF_REVIEW_EXPIRED) is the exception: a retry asks for the review again.
func (r DLQRow) RetryRepeats() bool {
	return (r.Class == "business" || r.Class == "validation") && r.Code != CodeReviewExpired
}

// DLQActionsVM is what an entry's Retry… and Discard… forms need (DLQEntryActions).
type DLQActionsVM struct {
	ID, Class, Code      string
	CanRetry, CanDiscard bool
	CSRF                 string
	Field, Value         string // a hidden field the forms carry: the page's status filter, or from=thread
	HXTarget             string // the region the answer replaces ("": a plain post)
}

func (a DLQActionsVM) row() DLQRow { return DLQRow{ID: a.ID, Class: a.Class, Code: a.Code} }

// CodeReviewExpired is the code of a job dead-lettered because nobody answered its pause in
// time (fault.CodeReviewExpired; web does not import internal).
const CodeReviewExpired = "WF_REVIEW_EXPIRED"
