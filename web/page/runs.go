package page

import "time"

// RunsVM is the runs page: a tenant's jobs newest first, filtered by workflow and status,
// a page at a time.
type RunsVM struct {
	Workflow, Status string        // the filters ("" for all)
	Workflows        []AdminOption // the workflow filter's choices
	Statuses         []AdminOption // the status filter's choices
	Rows             []RunRow
	// Cursor is this page's cursor ("" on the newest page), Next the older page's ("" on the
	// last page), Prev the newer page's ("" when this page reaches the newest run).
	Cursor, Next, Prev string
	Error              string // why the filter or page link was refused (shown where the list goes)
}

// RunRow is one job: what its thread is about, where it stands.
type RunRow struct {
	Thread        DashThreadVM
	JobID         string
	WorkflowTitle string
	Status        string
	RetryCount    int
	// Superseded: the thread was started again since this run (a later run is its current
	// one), so a failure here is history.
	Superseded bool
	Created    time.Time
	Updated    time.Time
}

// Href is /runs with the page's filters and more query parameters as key, value pairs.
func (v RunsVM) Href(kv ...string) string {
	return listHref("/runs", append([]string{"workflow", v.Workflow, "status", v.Status}, kv...)...)
}

// OlderHref is the next, older page ("" on the last page).
func (v RunsVM) OlderHref() string {
	if v.Next == "" {
		return ""
	}
	return v.Href("after", v.Next)
}

// NewerHref is the page just newer than this one ("" when none is).
func (v RunsVM) NewerHref() string {
	if v.Prev == "" {
		return ""
	}
	return v.Href("before", v.Prev)
}

// NewestHref is the first page ("" on it).
func (v RunsVM) NewestHref() string {
	if v.Cursor == "" {
		return ""
	}
	return v.Href()
}

// Filtered reports whether a filter is set.
func (v RunsVM) Filtered() bool { return v.Workflow != "" || v.Status != "" }
