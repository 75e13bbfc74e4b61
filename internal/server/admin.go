package server

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"weft/internal/auth"
	"weft/internal/fault"
	"weft/internal/postgres"
	"weft/internal/runner"
	"weft/web/page"
)

// The admin pages: the audit log (the auditor's view, with a CSV export) and
// the dead-letter queue with Retry and Discard. Admins only.
func (s *Server) routesAdmin(g *echo.Group) {
	admin := requireRole(auth.Admin)
	g.GET("/audit", s.auditPage, admin)
	g.GET("/audit.csv", s.auditCSV, admin)
	g.GET("/dlq", s.dlqPage, admin)
	g.GET("/dlq/:id/status", s.dlqStatus, admin)
	g.POST("/dlq/:id/retry", s.dlqRetry, admin)
	g.POST("/dlq/:id/discard", s.dlqDiscard, admin)
	g.POST("/dlq/bulk", s.dlqBulk, admin)
	// Their addresses opened (reloading a refused form's answer, a typed link) lead back to
	// the list, as long as the entry is the tenant's.
	toDLQ := func(c echo.Context) error {
		if id := c.Param("id"); id != "" {
			if _, err := s.app.Jobs.DLQ(c.Request().Context(), currentUser(c).TenantID, id); err != nil {
				return err
			}
		}
		return c.Redirect(http.StatusSeeOther, "/dlq")
	}
	g.GET("/dlq/:id/retry", toDLQ, admin)
	g.GET("/dlq/:id/discard", toDLQ, admin)
	g.GET("/dlq/bulk", toDLQ, admin)
}

const (
	auditPageSize     = 50
	auditCSVPage      = 500 // rows per query while exporting
	dlqPageSize       = 25
	auditMaxFilterLen = 200
)

// dlqCountLimit is where the status tabs stop counting ("1000+"): a count reads an index range
// as long as it.
const dlqCountLimit = 1000

// auditMaxActors bounds the actors an actor filter may stand for (a user by part of their
// name, with what they did through each token): each is an index probe.
const auditMaxActors = 200

// auditActions are the platform's audit actions; the action filter suggests them and those
// of the registered workflows (auditActionOptions).
var auditActions = []string{"run.start", postgres.ActionThreadResume, "thread.fork", postgres.ActionJobRetry,
	postgres.ActionDLQDiscard, postgres.ActionTokenCreate, postgres.ActionTokenRevoke, auth.ActionTenantCreate, auth.ActionUserCreate,
	auth.ActionUserRole, auth.ActionUserDeactivate, auth.ActionUserReactivate, auth.ActionPasswordLink, auth.ActionPasswordSet,
	auth.ActionPasswordChange}

// auditActionOptions are the actions the action filter suggests: the workflows' (by title),
// then the platform's.
func (s *Server) auditActionOptions() []string {
	var out []string
	for _, e := range s.app.Registry.All() {
		for _, a := range e.AuditActions {
			if !slices.Contains(out, a) {
				out = append(out, a)
			}
		}
	}
	return append(out, auditActions...)
}

// auditQuery is a parsed audit filter: as typed (for the form and links)
// and for the store.
type auditQuery struct {
	vm     page.AuditFilterVM
	filter postgres.AuditFilter
	before int64 // the page older than this entry (0: the newest page)
	after  int64 // or the page newer than this one ("← Newer")
}

// datetime-local sends minutes (seconds with step); dates and RFC 3339 are
// accepted too, for hand-made links. All are UTC. Each layout's span is how long
// a time written in it lasts: a To time takes in its whole span (To 09:30 is
// up to 09:30:59), so From and To the same minute is that minute.
var auditTimeLayouts = []struct {
	layout string
	span   time.Duration
}{{"2006-01-02T15:04", time.Minute}, {"2006-01-02T15:04:05", time.Second}, {"2006-01-02T15:04:05.999999999", time.Nanosecond},
	{"2006-01-02", 24 * time.Hour}, {time.RFC3339Nano, time.Nanosecond}}

func auditParseTime(label, v string) (t time.Time, span time.Duration, err error) {
	if i := strings.LastIndexByte(v, ' '); i > 0 && strings.Contains(v[:i], "T") {
		// A hand-made link's "+01:00" arrives as " 01:00" (a + in a query is a space).
		v = v[:i] + "+" + v[i+1:]
	}
	for _, l := range auditTimeLayouts {
		if t, err := time.ParseInLocation(l.layout, v, time.UTC); err == nil {
			// Times are read to the second (the inputs hold no less): a time written with a
			// fraction, zoned or not, is the second it falls in.
			return t.UTC().Truncate(time.Second), max(l.span, time.Second), nil
		}
	}
	return time.Time{}, 0, badRequest(fmt.Sprintf("The %s time %q is not a date and time: use YYYY-MM-DDTHH:MM in UTC, for example 2026-03-01T09:30.", label, v))
}

// auditInputTime writes a time that lasts span (as parsed: a second at least) for the form's
// datetime-local inputs, which take minutes or seconds: the minute or second that starts at
// start. A date is its first minute for From, its last for To: the caller passes the start of
// that minute.
func auditInputTime(start time.Time, span time.Duration) string {
	if span >= time.Minute {
		return start.Format("2006-01-02T15:04")
	}
	return start.Format("2006-01-02T15:04:05")
}

// parseAuditQuery reads the audit filter from the query string. Bad input is
// a 400 with a message that says what to fix. An actor may be typed as a
// user's id, email or name; a subject that is a thread also matches the
// entries about the jobs that ran it (a retry, a resume).
func (s *Server) parseAuditQuery(c echo.Context) (auditQuery, error) {
	q := auditQuery{}
	q.filter.TenantID = currentUser(c).TenantID
	get := func(name string) string { return strings.TrimSpace(c.QueryParam(name)) }
	q.vm = page.AuditFilterVM{Actor: get("actor"), Action: get("action"), Subject: get("subject"),
		Workflow: get("workflow"), From: get("from"), To: get("to")}
	for _, v := range []string{q.vm.Actor, q.vm.Action, q.vm.Subject, q.vm.Workflow, q.vm.From, q.vm.To} {
		if utf8.RuneCountInString(v) > auditMaxFilterLen {
			return q, badRequest(fmt.Sprintf("A filter value is longer than %d characters.", auditMaxFilterLen))
		}
	}
	q.filter.Actor, q.filter.Action, q.filter.Subject, q.filter.Workflow = q.vm.Actor, q.vm.Action, q.vm.Subject, q.vm.Workflow
	q.filter.Action = strings.ToLower(q.filter.Action) // actions are lower case: JOB.RETRY finds job.retry
	if err := s.knownWorkflow(q.vm.Workflow); err != nil {
		return q, err
	}
	// A hand-made link's times (a date, RFC 3339 with a zone) go back into the form as the
	// inputs write them, so the next Apply keeps the range; the meaning is the same.
	typedFrom := q.vm.From
	if q.vm.From != "" {
		from, span, err := auditParseTime("From", q.vm.From)
		if err != nil {
			return q, err
		}
		q.filter.From, q.vm.From = from, auditInputTime(from, span)
	}
	if q.vm.To != "" {
		to, span, err := auditParseTime("To", q.vm.To)
		if err != nil {
			return q, err
		}
		q.filter.To = to.Add(span) // the filter's To is exclusive: To takes in its whole minute (or day, or second)
		if !q.filter.From.IsZero() && !q.filter.From.Before(q.filter.To) {
			return q, badRequest(fmt.Sprintf("The From time (%s) is after the To time (%s), so nothing can match. Swap them or clear one.",
				typedFrom, q.vm.To)) // both as typed
		}
		last := to // the To input's value: the last minute (or second) the filter takes in
		if span >= time.Minute {
			last = q.filter.To.Add(-time.Minute)
		}
		q.vm.To = auditInputTime(last, span)
	}
	for _, cur := range []struct {
		name string
		to   *int64
	}{{"before", &q.before}, {"after", &q.after}} {
		if b := c.QueryParam(cur.name); b != "" {
			n, err := strconv.ParseInt(b, 10, 64)
			if err != nil || n <= 0 || q.before > 0 {
				return q, badRequest("The page link is not valid. Start again from the newest entries.")
			}
			*cur.to = n
		}
	}
	ctx, tenant := c.Request().Context(), q.filter.TenantID
	if q.filter.Actor != "" {
		ids, err := s.auth.Actors(ctx, tenant, q.filter.Actor)
		if err != nil {
			return q, err
		}
		// "system" and "cli" stand for every actor of that kind recorded: "system:demo",
		// "system:persist_result", "cli:root"; one of them is found in any case.
		typed := strings.TrimSpace(q.filter.Actor)
		if kind, one, _ := strings.Cut(strings.TrimSuffix(strings.ToLower(typed), ":"), ":"); kind == "system" || kind == "cli" {
			recorded, err := s.app.Audit.ActorsOfKind(ctx, tenant, kind, auditMaxActors+1)
			if err != nil {
				return q, err
			}
			for _, a := range recorded {
				if one == "" || strings.EqualFold(a, typed) {
					ids = append(ids, a)
				}
			}
		}
		if len(ids) > auditMaxActors {
			// Recorded system and cli names are read up to one past the limit: say "more than".
			return q, badRequest(fmt.Sprintf("The actor %q matches more than %d actors (users, their API tokens, system and cli names): type more of the name, or an email or id.", q.filter.Actor, auditMaxActors))
		}
		q.filter.ActorIn = ids
	}
	if q.filter.Subject != "" {
		// A thread takes in its jobs and their DLQ entries; a job its DLQ entries, and an
		// entry its job (a retry is recorded on the job, a discard on the entry).
		ids, err := s.app.Jobs.ThreadAuditSubjects(ctx, tenant, q.filter.Subject, auditThreadSubjects)
		if err == nil && len(ids) == 0 {
			ids, err = s.app.Jobs.JobAuditSubjects(ctx, tenant, q.filter.Subject)
		}
		if err != nil {
			return q, err
		}
		if len(ids) > 0 {
			q.filter.SubjectIn = append([]string{q.filter.Subject}, ids...)
		}
	}
	return q, nil
}

// auditThreadSubjects bounds the job and DLQ ids of a thread a subject filter takes in.
const auditThreadSubjects = 400

func (s *Server) auditPage(c echo.Context) error {
	m := s.meta(c, "Audit log")
	m.Active = "audit"
	vm := page.AuditVM{Workflows: s.adminWorkflowOptions(), Actions: s.auditActionOptions()}
	q, err := s.parseAuditQuery(c)
	vm.Filter = q.vm
	if err != nil {
		he := classify(err, false)
		if he.status != http.StatusBadRequest {
			return err
		}
		// The page again with the form as typed and the message where the
		// table was; htmx's partial goes out as 200: the region it swaps in is the answer.
		if adminPartial(c) {
			return render(c, http.StatusOK, page.AuditTable(page.AuditTableVM{Filter: q.vm}, he.msg))
		}
		vm.Error = he.msg
		return render(c, http.StatusBadRequest, page.AuditPage(m, vm))
	}
	vm.Table, err = s.auditTable(c.Request().Context(), q)
	if err != nil {
		return err
	}
	if adminPartial(c) {
		return render(c, http.StatusOK, page.AuditTable(vm.Table, ""))
	}
	return render(c, http.StatusOK, page.AuditPage(m, vm))
}

// auditTable loads one page of entries with their subjects' thread links.
func (s *Server) auditTable(ctx context.Context, q auditQuery) (page.AuditTableVM, error) {
	var entries []postgres.Entry
	var next, newer int64
	var err error
	if q.after > 0 {
		entries, newer, err = s.app.Audit.BrowseNewer(ctx, q.filter, q.after, auditPageSize)
		if err != nil {
			return page.AuditTableVM{}, err
		}
		if newer == 0 && len(entries) > 0 { // it reaches the newest entries: the newest page is that
			q.after = 0
		} else if len(entries) > 0 {
			next = entries[len(entries)-1].ID // the entry after came before them
		}
	}
	if q.after == 0 {
		if entries, next, err = s.app.Audit.Browse(ctx, q.filter, q.before, auditPageSize); err != nil {
			return page.AuditTableVM{}, err
		}
		if q.before > 0 && len(entries) > 0 { // the entry before, at least, is newer
			newer = entries[0].ID
		}
	}
	subjects := make([]string, 0, len(entries))
	for _, e := range entries {
		subjects = append(subjects, e.Subject)
	}
	threads, err := s.app.Audit.SubjectThreads(ctx, q.filter.TenantID, subjects)
	if err != nil {
		return page.AuditTableVM{}, err
	}
	names, err := s.auth.UserNames(ctx, q.filter.TenantID)
	if err != nil {
		return page.AuditTableVM{}, err
	}
	titles := s.adminWorkflowTitles()
	now := time.Now()
	t := page.AuditTableVM{Filter: q.vm, Before: q.before, After: q.after, Next: next, Prev: newer, Rows: make([]page.AuditRow, 0, len(entries))}
	for _, e := range entries {
		r := page.AuditRow{ID: e.ID, At: e.At.UTC().Format("2006-01-02 15:04:05"), Ago: page.Ago(e.At, now),
			Actor: e.Actor, ActorName: actorName(names, e.Actor), Action: e.Action, Subject: e.Subject, Workflow: e.Workflow, WorkflowTitle: e.Workflow,
			Payload: auditCompactJSON(e.Payload), PayloadPretty: auditPrettyJSON(e.Payload)}
		if title, ok := titles[e.Workflow]; ok {
			r.WorkflowTitle = title
		}
		if th, ok := threads[e.Subject]; ok {
			r.SubjectHref = page.ThreadPath(th)
		}
		t.Rows = append(t.Rows, r)
	}
	return t, nil
}

// auditCSV exports the filtered entries (all pages, newest first), streamed
// a page at a time.
func (s *Server) auditCSV(c echo.Context) error {
	q, err := s.parseAuditQuery(c)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	entries, next, err := s.app.Audit.Browse(ctx, q.filter, q.before, auditCSVPage)
	if err != nil {
		return err
	}
	names, err := s.auth.UserNames(ctx, q.filter.TenantID)
	if err != nil {
		return err
	}
	res := c.Response()
	name := fmt.Sprintf("audit-%s-%s.csv", auditFileName(q.filter.TenantID), time.Now().UTC().Format("20060102T150405Z"))
	res.Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8")
	res.Header().Set(echo.HeaderContentDisposition, `attachment; filename="`+name+`"`)
	res.Header().Set("Cache-Control", "no-store")
	res.WriteHeader(http.StatusOK)
	w := csv.NewWriter(res)
	// actor is as recorded (a user id, token:<name>, system:<what>); actor_name, last so that
	// the columns before keep their places, is whom it stands for, as the page shows it.
	if err := w.Write([]string{"id", "time_utc", "actor", "action", "subject", "workflow", "payload", "actor_name"}); err != nil {
		return nil // the client went away
	}
	for {
		for _, e := range entries {
			rec := []string{strconv.FormatInt(e.ID, 10), e.At.UTC().Format(time.RFC3339Nano), e.Actor, e.Action,
				e.Subject, e.Workflow, auditCompactJSON(e.Payload), actorName(names, e.Actor)}
			for i := range rec {
				rec[i] = auditCSVCell(rec[i])
			}
			if err := w.Write(rec); err != nil {
				return nil
			}
		}
		w.Flush()
		if w.Error() != nil {
			return nil
		}
		res.Flush()
		if next == 0 {
			return nil
		}
		if entries, next, err = s.app.Audit.Browse(ctx, q.filter, next, auditCSVPage); err != nil {
			// The status line is gone: log it; the file ends early.
			s.log.Error("audit export failed", "err", err, "tenant_id", q.filter.TenantID)
			return nil
		}
	}
}

// auditCSVCell defuses spreadsheet formulas (CSV injection): a cell that starts
// with = + - @ (or a tab or carriage return) gets a leading single quote.
func auditCSVCell(v string) string {
	if v != "" && strings.ContainsRune("=+-@\t\r", rune(v[0])) {
		return "'" + v
	}
	return v
}

func auditFileName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

func auditCompactJSON(b []byte) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return string(b)
	}
	return buf.String()
}

func auditPrettyJSON(b []byte) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, b, "", "  "); err != nil {
		return string(b)
	}
	return buf.String()
}

func (s *Server) adminWorkflowOptions() []page.AdminOption {
	var out []page.AdminOption
	for _, e := range s.app.Registry.All() {
		out = append(out, page.AdminOption{Value: e.Name, Label: e.Title})
	}
	return out
}

func (s *Server) adminWorkflowTitles() map[string]string {
	out := map[string]string{}
	for _, e := range s.app.Registry.All() {
		out[e.Name] = e.Title
	}
	return out
}

// --- Dead letters ---

var dlqStatuses = []page.AdminOption{{Value: "", Label: "All"}, {Value: postgres.DLQStatusRecorded, Label: "Recorded"},
	{Value: postgres.DLQStatusRetried, Label: "Retried"}, {Value: postgres.DLQStatusDiscarded, Label: "Discarded"}}

// dlqOutcomes describe what each action did, by its ?done= name: the notice after one entry,
// and the verb of a bulk action's count.
var dlqOutcomes = map[string]struct{ notice, verb string }{
	"retried":   {"The job went back to the queue. Its row below follows it until the run ends, completed or failed again.", "Retried"},
	"discarded": {"The entry is discarded. The job stays failed.", "Discarded"},
}

// dlqNotice is the message after an action: done is what it did ("" or unknown: none); a
// bulk action says how many entries (n) took it.
func dlqNotice(done string, bulk bool, n int) string {
	o, ok := dlqOutcomes[done]
	if !ok || !bulk {
		return o.notice
	}
	if n <= 0 || n > dlqBulkMax {
		return ""
	}
	return fmt.Sprintf("%s %s.", o.verb, page.Plural(int64(n), "selected entry", "selected entries"))
}

func parseDLQStatus(v string) (string, error) {
	switch v {
	case "", "all":
		return "", nil
	case postgres.DLQStatusRecorded, postgres.DLQStatusRetried, postgres.DLQStatusDiscarded:
		return v, nil
	}
	return "", badRequest(fmt.Sprintf("Unknown entry status %q: use recorded, retried, discarded or all.", v))
}

func (s *Server) dlqPage(c echo.Context) error {
	status, err := parseDLQStatus(c.QueryParam("status"))
	var t page.DLQTableVM
	if err == nil {
		t, err = s.dlqTable(c, status, c.QueryParam("after"), c.QueryParam("before"))
	}
	if he := classify(err, false); err != nil && he.status == http.StatusBadRequest {
		// A filter or page link that is not right: every entry's newest page, with the
		// message above it (as the audit log answers a filter it cannot take).
		if t, err = s.dlqTable(c, "", "", ""); err != nil {
			return err
		}
		t.Error = he.msg
		return s.renderDLQ(c, http.StatusBadRequest, t)
	}
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(c.QueryParam("count")) // a bulk action's (after its redirect)
	t.Notice = dlqNotice(c.QueryParam("done"), err == nil, n)
	return s.renderDLQ(c, http.StatusOK, t)
}

// renderDLQ answers with the entries: the table alone for htmx (200: the region is the
// answer), else the whole page with status.
func (s *Server) renderDLQ(c echo.Context, status int, t page.DLQTableVM) error {
	if adminPartial(c) {
		if c.QueryParam("part") == "list" && t.Error == "" { // the list's own refresh: its notices stay
			return render(c, http.StatusOK, page.DLQListRefresh(t))
		}
		return render(c, http.StatusOK, page.DLQTable(t))
	}
	m := s.meta(c, "Dead letters")
	m.Active = "dlq"
	return render(c, status, page.DLQPage(m, page.DLQVM{Table: t}))
}

// dlqTable loads one page of the tenant's entries with their jobs: the newest, or the one
// after the cursor after (Older) or just before the cursor before (Newer).
func (s *Server) dlqTable(c echo.Context, status, after, before string) (page.DLQTableVM, error) {
	ctx := c.Request().Context()
	tenant := currentUser(c).TenantID
	entries, pg, err := keysetPage(after, before,
		func(after postgres.Cursor) ([]postgres.DLQEntry, postgres.Cursor, error) {
			return s.app.Jobs.ListDLQ(ctx, tenant, status, after, dlqPageSize)
		},
		func(before postgres.Cursor) ([]postgres.DLQEntry, postgres.Cursor, error) {
			return s.app.Jobs.ListDLQNewer(ctx, tenant, status, before, dlqPageSize)
		},
		func(e postgres.DLQEntry) postgres.Cursor { return postgres.Cursor{CreatedAt: e.CreatedAt, ID: e.ID} })
	if errors.Is(err, errBadCursor) {
		return page.DLQTableVM{}, badRequest("The page link is not valid. Start again from the newest entries.")
	}
	if err != nil {
		return page.DLQTableVM{}, err
	}
	ids := make([]string, 0, len(entries))
	for _, e := range entries {
		ids = append(ids, e.ID)
	}
	jobs, err := s.app.Jobs.DLQJobs(ctx, tenant, ids)
	if err != nil {
		return page.DLQTableVM{}, err
	}
	runs := make([]runRef, 0, len(entries))
	for _, e := range entries {
		runs = append(runs, runRef{e.Workflow, jobs[e.ID].Subject})
	}
	subjects, err := s.describe(ctx, tenant, runs)
	if err != nil {
		return page.DLQTableVM{}, err
	}
	names, err := s.auth.UserNames(ctx, tenant)
	if err != nil {
		return page.DLQTableVM{}, err
	}
	counts, err := s.app.Jobs.CountDLQ(ctx, tenant, dlqCountLimit)
	if err != nil {
		return page.DLQTableVM{}, err
	}
	titles := s.adminWorkflowTitles()
	now := time.Now()
	t := page.DLQTableVM{Status: status, Statuses: dlqStatuses, Cursor: pg.cursor, Next: pg.older, Prev: pg.newer, CSRF: csrfToken(c),
		Rows: make([]page.DLQRow, 0, len(entries)), Counts: counts, CountLimit: dlqCountLimit}
	for _, e := range entries {
		j, ok := jobs[e.ID]
		r := page.DLQRow{ID: e.ID, Workflow: e.Workflow, WorkflowTitle: e.Workflow, Subject: j.Subject, JobID: e.JobID,
			Class: string(e.Class), Code: e.Code, Message: fault.Detail(e.Code, e.Class, e.Message), TraceID: e.TraceID, Node: e.Node, Attempts: e.Attempts,
			Status: e.Status, ResolvedBy: actorName(names, e.ResolvedBy), Created: page.When(e.CreatedAt), CreatedAgo: page.Ago(e.CreatedAt, now),
			Job: dlqJobStatus(e, j, ok), Superseded: ok && j.SupersededBy != ""}
		if !e.ResolvedAt.IsZero() {
			r.ResolvedAt = page.When(e.ResolvedAt)
		}
		if title, ok := titles[e.Workflow]; ok {
			r.WorkflowTitle = title
		}
		if ok && j.ThreadID != "" {
			r.ThreadHref = page.ThreadPath(j.ThreadID)
		}
		if ok {
			r.Thread = threadRef(j.ThreadID, "", subjects[runRef{e.Workflow, j.Subject}])
		}
		t.Rows = append(t.Rows, r)
	}
	return t, nil
}

// dlqRefreshEvent makes the DLQ table reload itself (page.DLQTable listens for it).
const dlqRefreshEvent = "dlq-refresh"

func dlqJobStatus(e postgres.DLQEntry, j postgres.DLQJob, found bool) page.DLQJobStatusVM {
	vm := page.DLQJobStatusVM{DLQID: e.ID}
	if !found {
		return vm
	}
	vm.Status = string(j.Status)
	vm.Retried = j.RetryCount > e.RetryCount
	vm.FailedAgain = vm.Retried && j.Status == runner.Failed
	return vm
}

// dlqStatus is an entry's job status region (polled every second while the
// job moves).
func (s *Server) dlqStatus(c echo.Context) error {
	ctx := c.Request().Context()
	tenant := currentUser(c).TenantID
	e, err := s.app.Jobs.DLQ(ctx, tenant, c.Param("id"))
	if err != nil {
		return err
	}
	jobs, err := s.app.Jobs.DLQJobs(ctx, tenant, []string{e.ID})
	if err != nil {
		return err
	}
	j, ok := jobs[e.ID]
	c.Response().Header().Set("Cache-Control", "no-store")
	vm := dlqJobStatus(e, j, ok)
	if vm.FailedAgain {
		// The rerun failed and recorded a new entry: the table reloads to show it.
		c.Response().Header().Set("HX-Trigger", dlqRefreshEvent)
	}
	return render(c, http.StatusOK, page.DLQJobStatus(vm))
}

// dlqRetry puts a recorded entry's failed job back in the queue (the store
// marks the entry retried and audits it in one transaction).
func (s *Server) dlqRetry(c echo.Context) error { return s.dlqAct(c, "retry") }

// dlqDiscard closes a recorded entry; the job stays failed.
func (s *Server) dlqDiscard(c echo.Context) error { return s.dlqAct(c, "discard") }

// dlqAct applies action (retry or discard) to the entry of the route's id.
func (s *Server) dlqAct(c echo.Context, action string) error {
	ctx := c.Request().Context()
	u := currentUser(c)
	e, err := s.app.Jobs.DLQ(ctx, u.TenantID, c.Param("id"))
	if err != nil {
		return err
	}
	err = s.dlqApply(ctx, u, e, action, s.userNames(ctx, u.TenantID))
	if c.FormValue("from") == "thread" { // the thread page's buttons: back to it
		return s.dlqBackToThread(c, e, action, err)
	}
	if err != nil {
		return s.dlqRefused(c, err)
	}
	return s.dlqDone(c, dlqDoneOf[action], false, 1)
}

// dlqBackToThread answers an action taken from the thread page: done, back to the thread with
// its notice; refused (already resolved, say), the thread page again with the refusal on top,
// with the refusal's status. The thread is the entry's, never one named by the form.
func (s *Server) dlqBackToThread(c echo.Context, e postgres.DLQEntry, action string, err error) error {
	ctx := c.Request().Context()
	u := currentUser(c)
	j, jerr := s.app.Jobs.Job(ctx, u.TenantID, e.JobID)
	if jerr != nil {
		return errors.Join(err, jerr)
	}
	if err == nil {
		q := url.Values{dlqDoneOf[action]: {j.ID}}
		return c.Redirect(http.StatusSeeOther, page.ThreadPath(j.ThreadID)+"?"+q.Encode())
	}
	he := classify(err, false)
	if he.status >= 500 || he.status == http.StatusNotFound {
		return err
	}
	return s.renderThread(c, he.status, j.ThreadID, func(_ *threadData, vm *page.ThreadVM) { vm.Error = he.msg })
}

// dlqDoneOf names what an action did (the ?done= of its outcome).
var dlqDoneOf = map[string]string{"retry": "retried", "discard": "discarded"}

// dlqApply retries (requeues the job, from its last checkpoint) or discards (closes the
// entry; the job stays failed) the tenant's entry e, as u; the store writes the audit row.
// An entry already resolved is refused with a 409 saying by whom (names: the tenant's user
// names, for the message).
func (s *Server) dlqApply(ctx context.Context, u auth.User, e postgres.DLQEntry, action string, names func() map[string]string) error {
	// resolved refuses the action on an entry another admin resolved already.
	resolved := func(e postgres.DLQEntry) error {
		if e.Status == postgres.DLQStatusRecorded {
			return nil
		}
		by := ""
		if e.ResolvedBy != "" {
			by = " by " + actorName(names(), e.ResolvedBy) + " at " + page.When(e.ResolvedAt)
		}
		msg := fmt.Sprintf("This entry was already %s%s. Only a recorded entry can be retried.", e.Status, by)
		if action == "discard" {
			msg = fmt.Sprintf("This entry was already %s%s, so it cannot be discarded.", e.Status, by)
		}
		return &httpError{status: http.StatusConflict, code: fault.CodeIllegalTransition, msg: msg}
	}
	if err := resolved(e); err != nil {
		return err
	}
	var err error
	switch action {
	case "retry":
		err = s.app.Jobs.Requeue(ctx, u.TenantID, e.JobID, u.ID)
	case "discard":
		err = s.app.Jobs.Discard(ctx, u.TenantID, e.ID, u.ID)
	default:
		return badRequest("Choose Retry or Discard.")
	}
	// Two admins (or one double click) at once: the one that lost reads the entry again and
	// is told who resolved it, not how the store refused.
	if _, code := fault.Classify(err); err != nil && code == fault.CodeIllegalTransition {
		if now, rerr := s.app.Jobs.DLQ(ctx, u.TenantID, e.ID); rerr == nil && resolved(now) != nil {
			return resolved(now)
		}
	}
	return err
}

// userNames loads the tenant's user names once, when first asked for (nil when they cannot
// be read: ids then say who).
func (s *Server) userNames(ctx context.Context, tenantID string) func() map[string]string {
	return sync.OnceValue(func() map[string]string {
		names, _ := s.auth.UserNames(ctx, tenantID)
		return names
	})
}

// dlqBulkMax bounds the entries one bulk action takes (a page of the list).
const dlqBulkMax = 100

// dlqBulk applies Retry or Discard (the form's action) to the entries ticked in the list
// (its id values, each taken once), each as its own action with its own audit row. An entry
// that cannot take it (resolved since, a superseded run) is left as it is, and the answer
// says which and why. Any id that is not one of the tenant's entries is a 404, and then
// nothing is done. A failure of the server part-way stops there, and the answer says what
// was done before it.
func (s *Server) dlqBulk(c echo.Context) error {
	ctx := c.Request().Context()
	u := currentUser(c)
	action := c.FormValue("action")
	if _, ok := dlqDoneOf[action]; !ok {
		return s.dlqRefused(c, badRequest("Choose Retry or Discard."))
	}
	form, err := c.FormParams()
	if err != nil {
		return badRequest("The form could not be read.")
	}
	var ids []string
	for _, id := range form["id"] {
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	switch {
	case len(ids) == 0:
		return s.dlqRefused(c, badRequest("Select the entries first: tick their boxes in the list."))
	case len(ids) > dlqBulkMax:
		return s.dlqRefused(c, badRequest(fmt.Sprintf("Select at most %d entries at once.", dlqBulkMax)))
	}
	entries := make([]postgres.DLQEntry, 0, len(ids))
	for _, id := range ids {
		e, err := s.app.Jobs.DLQ(ctx, u.TenantID, id)
		if err != nil {
			return err
		}
		entries = append(entries, e)
	}
	names := s.userNames(ctx, u.TenantID)
	done := 0
	var refused []string
	var why refusals
	for i, e := range entries {
		if err := s.dlqApply(ctx, u, e, action, names); err != nil {
			if he := classify(err, false); he.status < 500 {
				// Named as the list shows it: by its job, and when it was recorded (a job's
				// entries share the job).
				reason := he.msg
				if he.code == fault.CodeJobSuperseded {
					// Its own message names the thread's latest run, which the same action
					// may have just started: entries of one thread share one reason.
					reason = supersededReason
				}
				why.add(fmt.Sprintf("job %s (recorded %s)", page.ShortID(e.JobID), e.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC")), reason)
				continue
			}
			s.app.Log.ErrorContext(ctx, "bulk dead-letter action failed", "action", action, "dlq_id", e.ID, "err", err)
			refused = append(refused, fmt.Sprintf("The server failed at entry %s (see its log); the %d after it were not tried.",
				page.ShortID(e.ID), len(entries)-i-1))
			break
		}
		done++
	}
	return s.dlqDone(c, dlqDoneOf[action], true, done, append(why.sentences(), refused...)...)
}

// supersededReason stands for the refusal of an entry whose thread was started again since
// its job failed; refusals.sentences words it for one entry or several.
const supersededReason = "\x00superseded"

// refusals gathers the entries a bulk action left as they were, by reason: entries refused
// for the same reason (the superseded runs of one thread) are named together, once.
type refusals struct {
	reasons []string
	ids     map[string][]string
}

func (r *refusals) add(id, reason string) {
	reason = strings.TrimSuffix(reason, ".") // the same reason, whether or not it ends a sentence
	if r.ids == nil {
		r.ids = map[string][]string{}
	}
	if _, ok := r.ids[reason]; !ok {
		r.reasons = append(r.reasons, reason)
	}
	r.ids[reason] = append(r.ids[reason], id)
}

// sentences says, per reason in the order first met, which entries it kept and why, as
// sentences: "The entry of job …a1 (…): this entry was already retried by Ada Admin."
func (r *refusals) sentences() []string {
	out := make([]string, 0, len(r.reasons))
	for _, reason := range r.reasons {
		ids := r.ids[reason]
		which := "The entry of " + ids[0]
		if len(ids) > 1 {
			which = "The entries of " + strings.Join(ids[:len(ids)-1], ", ") + " and " + ids[len(ids)-1]
		}
		switch {
		case reason == supersededReason && len(ids) == 1:
			reason = "its thread was started again since the job failed, and retrying this older run would take the thread back to where it failed; discard this entry instead"
		case reason == supersededReason:
			reason = "their threads were started again since the jobs failed, and retrying these older runs would take the threads back to where they failed; discard these entries instead"
		default:
			reason = lowerFirst(reason)
		}
		out = append(out, which+": "+reason+".")
	}
	return out
}

// lowerFirst lowers s's first letter, so a sentence can follow a colon.
func lowerFirst(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToLower(r)) + s[n:]
}

// dlqDone answers a successful action: htmx gets the table with the notice, a plain form
// post a redirect back to the list. A bulk action's answer says how many entries (n) took
// it; when some did not, the list comes with why (refused), for a plain post too.
func (s *Server) dlqDone(c echo.Context, done string, bulk bool, n int, refused ...string) error {
	status, _ := parseDLQStatus(c.FormValue("status"))
	if adminPartial(c) || len(refused) > 0 {
		t, err := s.dlqTable(c, status, "", "")
		if err != nil {
			return err
		}
		t.Notice = dlqNotice(done, bulk, n)
		if len(refused) > 0 {
			t.Error, t.Details = "Left as they were:", refused
		}
		return s.renderDLQ(c, http.StatusOK, t)
	}
	q := url.Values{"done": {done}}
	if bulk {
		q.Set("count", strconv.Itoa(n))
	}
	if status != "" {
		q.Set("status", status)
	}
	return c.Redirect(http.StatusSeeOther, "/dlq?"+q.Encode())
}

// dlqRefused answers a refused action with the list and the message on top: htmx gets the
// table to swap in (200: the region is the answer); a plain form post the whole page with the
// refusal's status (409), so the admin stays on the list without JavaScript too.
func (s *Server) dlqRefused(c echo.Context, err error) error {
	he := classify(err, false)
	if he.status >= 500 || he.status == http.StatusNotFound {
		return err
	}
	status, _ := parseDLQStatus(c.FormValue("status"))
	t, terr := s.dlqTable(c, status, "", "")
	if terr != nil {
		return errors.Join(err, terr)
	}
	t.Error = he.msg
	return s.renderDLQ(c, he.status, t)
}

// adminPartial: the request wants the region only. A history restore (htmx
// reloading a pushed URL it has no snapshot of) wants the whole page.
func adminPartial(c echo.Context) bool {
	return isHTMX(c) && c.Request().Header.Get("HX-History-Restore-Request") != "true"
}

// actorName is who an actor id stands for: a user's name, an API token by its name ("API token
// ci"), or the id itself (system actors, users since removed). An API resume records
// "reviewer via token:name", which reads "Ravi Rao via API token name", as everywhere.
func actorName(names map[string]string, id string) string {
	if n, ok := names[id]; ok {
		return n
	}
	if who, via, ok := strings.Cut(id, " via "); ok {
		return actorName(names, who) + " via " + actorName(names, via)
	}
	if tok, ok := strings.CutPrefix(id, "token:"); ok {
		return "API token " + tok
	}
	return id
}
