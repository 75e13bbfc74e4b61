// Package bideval holds bid evaluation's own pages (served by bidevalhttp): a tender's page
// with its evaluations, their comparison and its bid documents, and a bid document's page.
// Its components take view models; it imports templ, web/layout and web/page (the generic
// pieces: alerts, formats) and internal/workflow/bideval for the workflow's addresses and
// words.
package bideval

import (
	"net/url"
	"strconv"
	"time"

	"github.com/a-h/templ"

	bid "weft/internal/workflow/bideval"
	"weft/web/page"
)

// ProjectVM is a tender's page.
type ProjectVM struct {
	ID, Name, Description string
	Budget                string // formatted with its currency
	RulePackVersion       string
	HardRules, Criteria   int
	Created               time.Time
	Reference             string
	Deadline              *time.Time
	Results               ProjectResultsVM
	Suppliers             SuppliersVM
	Upload                ProjectUploadVM
	Documents             []ProjectDocumentVM
}

// ProjectDocumentVM is one uploaded bid document.
type ProjectDocumentVM struct {
	ID, Supplier, Title, Size string
	Chunks                    int
	Added                     time.Time
	// Withdrawn is when it was withdrawn (nil: it is searched), by WithdrawnBy.
	Withdrawn   *time.Time
	WithdrawnBy string
}

// WithdrawHref is the address the document's Withdraw… form posts to.
func (d ProjectDocumentVM) WithdrawHref(projectID string) templ.SafeURL {
	return templ.URL(bid.DocumentPath(projectID, d.ID) + "/withdraw")
}

// RestoreHref is the address the document's Restore form posts to.
func (d ProjectDocumentVM) RestoreHref(projectID string) templ.SafeURL {
	return templ.URL(bid.DocumentPath(projectID, d.ID) + "/restore")
}

// WithdrawnNote says who withdrew the document and when ("" when it is not withdrawn).
func (d ProjectDocumentVM) WithdrawnNote() string {
	if d.Withdrawn == nil {
		return ""
	}
	return bid.WithdrawnNote(*d.Withdrawn, d.WithdrawnBy)
}

// Href is the document's page.
func (d ProjectDocumentVM) Href(projectID string) templ.SafeURL {
	return templ.URL(bid.DocumentPath(projectID, d.ID))
}

// DocumentVM is the page of one bid document.
type DocumentVM struct {
	ProjectID, Project string
	// ProjectLinks: the reader may open the dashboard and the project (a reviewer, who
	// comes from the review's evidence, may not).
	ProjectLinks bool
	Doc          ProjectDocumentVM
	Chunks       []DocumentChunkVM
}

// DocumentChunkVM is one chunk of a document.
type DocumentChunkVM struct {
	ID   string
	Seq  int
	Text string
}

// ProjectUploadVM is the upload form's state after a refused upload: the message, and the
// supplier and title as typed (a file input cannot be refilled).
type ProjectUploadVM struct {
	Error, EvaluationID, Title string
}

// ProjectResultsVM is the swappable region of a tender's page: its
// evaluations (with the start buttons) and the comparison of completed ones.
type ProjectResultsVM struct {
	ProjectID string
	CSRF      string
	Rows      []ProjectEvalVM
	Ranking   []ProjectEvalVM // completed and ranked, best first
	Notice    *page.AlertVM   // the outcome of the last action
	// Active is how many evaluations are in progress (queued, running or
	// waiting for a review); Moving, how many of them run or wait to: the
	// region refreshes itself while there are any, asking again for the
	// notice (NoticeQuery, the page's query that shows it) so it stays.
	Active, Moving int
	NoticeQuery    string
	// Startable is how many evaluations "Start all" would start; Reruns, how
	// many of those ran before (their results are redone: Start all asks first).
	Startable, Reruns int
}

// Completed is how many evaluations have completed (ranked or not: a bid rejected in its
// review completes without a rank).
func (v ProjectResultsVM) Completed() int {
	n := 0
	for _, r := range v.Rows {
		if r.Status == "completed" {
			n++
		}
	}
	return n
}

// ProjectEvalVM is one supplier's evaluation.
type ProjectEvalVM struct {
	ID, Supplier, ThreadID string
	Status                 string // the job's status while it runs, else the evaluation's
	Outcome                string
	Total                  *float64
	Rank                   int // 0: not ranked
	Top                    bool
	Active                 bool // queued, running, waiting or retrying: cannot be started
	HasRun                 bool // started before: starting again is a re-run
	// RanWith is the rule pack version its latest report used; Current, the one the tender
	// uses now: when they differ, a re-run scores with the new one.
	RanWith, Current string
	ErrorCode        string
}

// BusyWhy says why an active evaluation cannot be started now.
func (e ProjectEvalVM) BusyWhy() string {
	if e.Status == "waiting_review" {
		return "This evaluation waits for a reviewer's decision: it can be started again once it is answered."
	}
	return "This evaluation is in progress: it can be started again once it has finished."
}

// TotalText is the total score, or a dash.
func (e ProjectEvalVM) TotalText() string {
	if e.Total == nil {
		return "—"
	}
	return page.Score(*e.Total)
}

// RankText is the rank, or a dash.
func (e ProjectEvalVM) RankText() string {
	if e.Rank == 0 {
		return "—"
	}
	return "#" + strconv.Itoa(e.Rank)
}

func projectStartPath(projectID, evalID string) string {
	return bid.ProjectPath(projectID) + "/evaluations/" + url.PathEscape(evalID) + "/start"
}

func projectPath(projectID string) string { return bid.ProjectPath(projectID) }

func itoa(n int) string { return strconv.Itoa(n) }

func scoreValue(v *float64) string {
	if v == nil {
		return "0"
	}
	return strconv.FormatFloat(*v, 'f', 1, 64)
}

func startAllTitle(v ProjectResultsVM) string {
	switch v.Startable {
	case 0:
		return "Every evaluation is in progress"
	case 1:
		return "Start the one evaluation that is not in progress"
	}
	return "Start the " + strconv.Itoa(v.Startable) + " evaluations that are not in progress"
}

// startAllConfirm is Start all's question when it would run finished evaluations again.
func startAllConfirm(v ProjectResultsVM) string {
	q := "Start " + page.Plural(int64(v.Startable), "evaluation", "evaluations") + "? "
	if v.Reruns == v.Startable {
		return q + "Each ran before: its result is replaced by the new run's, and reviews are asked for again where needed."
	}
	return q + strconv.Itoa(v.Reruns) + " of them ran before: those results are replaced by the new runs', and reviews are asked for again where needed."
}

// RefreshHref is where the region refreshes itself from.
func (v ProjectResultsVM) RefreshHref() string {
	if v.NoticeQuery == "" {
		return projectPath(v.ProjectID)
	}
	return projectPath(v.ProjectID) + "?" + v.NoticeQuery
}
