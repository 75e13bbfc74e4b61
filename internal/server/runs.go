package server

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"weft/internal/auth"
	"weft/internal/postgres"
	"weft/internal/runner"
	"weft/web/page"
)

// runsPageSize is how many runs a page of /runs lists.
const runsPageSize = 25

func (s *Server) routesRuns(g *echo.Group) {
	g.GET("/runs", s.runsPage, requireRole(auth.PM, auth.Admin))
}

// runsPage lists the tenant's runs (jobs) newest first, filtered by workflow and status, a
// page at a time (keyset: ?after= is the last row's cursor of the newer page, ?before= the
// first row's of the older one). An unknown workflow or status is a 400 with the message.
func (s *Server) runsPage(c echo.Context) error {
	ctx := c.Request().Context()
	u := currentUser(c)
	v := page.RunsVM{Workflow: c.QueryParam("workflow"), Status: strings.TrimSpace(c.QueryParam("status")), Cursor: c.QueryParam("after"),
		Workflows: []page.AdminOption{{Value: "", Label: "All workflows"}}, Statuses: []page.AdminOption{{Value: "", Label: "Any status"}}}
	for _, e := range s.app.Registry.All() {
		v.Workflows = append(v.Workflows, page.AdminOption{Value: e.Name, Label: s.workflowTitle(e.Name)})
	}
	for _, st := range runner.Lasting { // a filter on the others would never match
		v.Statuses = append(v.Statuses, page.AdminOption{Value: string(st), Label: page.ThreadStatusWords(string(st))})
	}
	// A filter or page link that is not right is a 400: the page with its form and the message
	// where the list was (the list's own refresh just gets the error).
	refuse := func(msg string) error {
		if adminPartial(c) {
			return badRequest(msg)
		}
		v.Error, v.Cursor = msg, ""
		m := s.meta(c, "Runs")
		m.Active = "runs"
		return render(c, http.StatusBadRequest, page.RunsPage(m, v))
	}
	if err := s.knownWorkflow(v.Workflow); err != nil {
		return refuse(classify(err, false).msg)
	}
	for _, st := range runner.Statuses { // a status as the list words it ("completed")
		if v.Status != string(st) && strings.EqualFold(v.Status, page.ThreadStatusWords(string(st))) {
			v.Status = string(st)
		}
	}
	if v.Status == string(runner.DLQPending) || v.Status == string(runner.DLQRecorded) {
		v.Status = string(runner.Failed) // an older link's dead-letter filter: the runs it meant
	}
	if v.Status != "" && !slices.Contains(runner.Statuses, runner.Status(v.Status)) {
		return refuse(fmt.Sprintf("There is no status %s: choose one from the list.", v.Status))
	}
	filter := postgres.JobFilter{TenantID: u.TenantID, Workflow: v.Workflow, Status: runner.Status(v.Status)}
	jobs, pg, err := keysetPage(v.Cursor, c.QueryParam("before"),
		func(after postgres.Cursor) ([]runner.Job, postgres.Cursor, error) {
			return s.app.Jobs.ListJobs(ctx, filter, after, runsPageSize)
		},
		func(before postgres.Cursor) ([]runner.Job, postgres.Cursor, error) {
			return s.app.Jobs.ListJobsNewer(ctx, filter, before, runsPageSize)
		},
		func(j runner.Job) postgres.Cursor { return postgres.Cursor{CreatedAt: j.CreatedAt, ID: j.ID} })
	if errors.Is(err, errBadCursor) {
		return refuse("The page link is not valid. Start again from the newest runs.")
	}
	if err != nil {
		return err
	}
	v.Cursor = pg.cursor
	threads := make([]string, 0, len(jobs))
	for _, j := range jobs {
		threads = append(threads, j.ThreadID)
	}
	// Whether their threads moved on, and what the runs are about (their workflows' Describe).
	var latest map[string]string
	reads := s.app.DB.Reads()
	s.app.Jobs.QueueLatestJobs(reads, u.TenantID, threads, &latest)
	if err := reads.Run(ctx); err != nil {
		return err
	}
	runs := make([]runRef, len(jobs))
	for i, j := range jobs {
		runs[i] = runRef{j.Workflow, j.Subject}
	}
	subjects, err := s.describe(ctx, u.TenantID, runs)
	if err != nil {
		return err
	}
	v.Next, v.Prev = pg.older, pg.newer
	for _, j := range jobs {
		v.Rows = append(v.Rows, page.RunRow{Thread: threadRef(j.ThreadID, j.Subject, subjects[runRef{j.Workflow, j.Subject}]), JobID: j.ID,
			WorkflowTitle: s.workflowTitle(j.Workflow), Status: string(j.Status), RetryCount: j.RetryCount,
			Superseded: latest[j.ThreadID] != "" && latest[j.ThreadID] != j.ID, Created: j.CreatedAt, Updated: j.UpdatedAt})
	}
	if adminPartial(c) { // the list's refresh
		return render(c, http.StatusOK, page.RunsList(v))
	}
	m := s.meta(c, "Runs")
	m.Active = "runs"
	return render(c, http.StatusOK, page.RunsPage(m, v))
}

// keysetPage reads one page of a newest-first list paged by cursors: after the cursor after
// (the Older link's; "" for the newest page) with older, or just newer than before (the
// Newer link's, when not "") with newer, as the audit log pages; at is a row's cursor. A
// cursor that does not parse, or both, is errBadCursor.
func keysetPage[T any](after, before string, older, newer func(postgres.Cursor) ([]T, postgres.Cursor, error),
	at func(T) postgres.Cursor) ([]T, pageLinks, error) {
	var l pageLinks
	l.cursor = cmp.Or(before, after)
	cur, err := postgres.ParseCursor(l.cursor)
	if err != nil || before != "" && after != "" {
		return nil, l, errBadCursor
	}
	var rows []T
	var more postgres.Cursor
	if before != "" {
		if rows, more, err = newer(cur); err != nil {
			return nil, l, err
		}
		if !more.IsZero() {
			l.newer = more.String()
			l.older = at(rows[len(rows)-1]).String() // the page it came from, and what follows, are older
			return rows, l, nil
		}
		// It reaches the newest rows (or finds none: those newer than the link's left the
		// list, resolved or filtered out): that is the newest page, full, live where the list
		// refreshes itself, with its Older link.
		cur, l.cursor = postgres.Cursor{}, ""
	}
	if rows, more, err = older(cur); err != nil {
		return nil, l, err
	}
	l.older = more.String()
	if !cur.IsZero() && len(rows) > 0 { // the page it came from is newer
		l.newer = at(rows[0]).String()
	}
	return rows, l, nil
}

// pageLinks are a keyset page's cursors: its own (cursor: "" on the newest page), and those
// of the pages older and newer than it ("" for none).
type pageLinks struct{ cursor, older, newer string }

// errBadCursor: a page link's cursor is not one.
var errBadCursor = errors.New("bad page cursor")

// knownWorkflow refuses a workflow filter ("" is none) that names no registered workflow.
func (s *Server) knownWorkflow(name string) error {
	if _, ok := s.app.Registry.Get(name); name != "" && !ok {
		return badRequest(fmt.Sprintf("There is no workflow named %s: choose one from the list.", name))
	}
	return nil
}
