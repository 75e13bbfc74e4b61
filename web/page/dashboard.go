package page

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"weft/internal/workflow"
)

// DashboardVM is the PM's dashboard: one section per registered workflow
// (live), and the workflows' own parts (bid evaluation's tenders).
type DashboardVM struct {
	Live DashboardLiveVM
	// StreamURL is the SSE endpoint the live region listens to.
	StreamURL string
}

// DashboardLiveVM is the live region: what the SSE stream and the periodic
// refresh re-render.
type DashboardLiveVM struct {
	Workflows []DashWorkflowVM
	Now       time.Time
	// CanReview shows links into the review form (reviewers and admins).
	CanReview bool
	// Views are the workflows' own parts of the dashboard (Views.Dashboard), after the panels.
	Views []DashViewVM
}

// DashViewVM is a workflow's own part of the dashboard: blocks of the view vocabulary.
type DashViewVM struct {
	Workflow string
	Blocks   []workflow.Block
}

// DashWorkflowVM is one workflow's counts and lists.
type DashWorkflowVM struct {
	Name, Title, Description string
	StartHref                string // the form that starts a run ("": started elsewhere)
	PathLen                  int
	Counts                   []DashCountVM
	Total                    int64
	Running                  []DashRunningVM
	Waiting                  []DashWaitingVM
	Failures                 []DashFailureVM
	// More* are how many more the counters know of than are listed.
	MoreRunning, MoreWaiting, MoreFailures int64
	// RunningStatus filters the runs page that "and N more" running opens: "running", or ""
	// (every status) when jobs waiting to retry are among them.
	RunningStatus string
}

// DashCountVM is how many jobs are in one status.
type DashCountVM struct {
	Status string
	N      int64
}

// DashThreadVM names a thread for people.
type DashThreadVM struct {
	ThreadID string
	Label    string // e.g. the supplier; "" shows the thread id
	Context  string // e.g. the tender
	Href     string // link for the context, "" for none
}

// Title is what to show for the thread.
func (t DashThreadVM) Title() string {
	if t.Label != "" {
		return t.Label
	}
	return dashShortID(t.ThreadID)
}

// DashRunningVM is an active job with its progress along the workflow's path.
type DashRunningVM struct {
	Thread     DashThreadVM
	JobID      string
	Status     string
	Done, Of   int
	RetryCount int
	Since      time.Time
}

// Percent is the progress as a whole percentage.
func (r DashRunningVM) Percent() int {
	if r.Of <= 0 {
		return 0
	}
	return r.Done * 100 / r.Of
}

// DashWaitingVM is a job paused for a human review.
type DashWaitingVM struct {
	Thread DashThreadVM
	JobID  string
	Since  time.Time
}

// DashFailureVM is a failed job's last error.
type DashFailureVM struct {
	Thread  DashThreadVM
	JobID   string
	Code    string
	Class   string
	Message string
	Node    string
	At      time.Time
}

// StatusLabel is how the console names a job's status, or a run's as a workflow's page
// shows it ("completed", "not_started").
func StatusLabel(s string) string { return dashStatusLabel(s) }

// dashStatusLabel is how the console names a job or evaluation status.
func dashStatusLabel(s string) string {
	switch s {
	case "queued":
		return "Queued"
	case "running":
		return "Running"
	case "waiting_review":
		return "Waiting for review"
	case "retry_scheduled":
		return "Retry scheduled"
	case "dlq_pending":
		return "DLQ pending"
	case "dlq_recorded":
		return "DLQ recorded"
	case "failed":
		return "Failed"
	case "succeeded", "completed":
		return "Completed"
	case "not_started":
		return "Not started"
	case "":
		return "—"
	}
	return s
}

// Age formats how long something has lasted: "45s", "12m", "3h 5m", "2d 4h".
func dashAge(since, now time.Time) string {
	if since.IsZero() {
		return "—"
	}
	d := max(now.Sub(since), 0)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd %dh", int(d.Hours()/24), int(d.Hours())%24)
}

// ShortID shortens a long id (a UUID) for display; the full id stays in
// links and titles.
func dashShortID(id string) string {
	if len(id) > 13 {
		return id[:8] + "…"
	}
	return id
}

func dashI64(n int64) string { return strconv.FormatInt(n, 10) }

// dashPathEscape escapes an id for a URL path segment.
func dashPathEscape(id string) string { return url.PathEscape(id) }

// ThreadPath is the address of a thread's page.
func ThreadPath(threadID string) string { return "/threads/" + url.PathEscape(threadID) }

// Plural counts things: "1 job", "3 jobs".
func Plural(n int64, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return dashI64(n) + " " + many
}

// dashRunsHref is the runs page filtered to a workflow's jobs in a status.
func dashRunsHref(workflow, status string) string {
	return listHref("/runs", "workflow", workflow, "status", status)
}

// dashWaitingHref lists a workflow's waiting reviews: the inbox's tab for those who review,
// the runs page for the others.
func dashWaitingHref(canReview bool, workflow string) string {
	if canReview {
		return reviewInboxHref(workflow)
	}
	return dashRunsHref(workflow, "waiting_review")
}

// dashCountTitle is a count's tooltip. The counts are of runs, so a thread started again
// counts each of its runs: the ended ones say so (the panels list only each thread's latest).
func dashCountTitle(status string) string {
	t := "List these runs: " + dashStatusLabel(status)
	if status == "failed" || status == "succeeded" {
		t += " (every run, those whose thread was started again since too)"
	}
	return t
}
