package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/labstack/echo/v4"

	"weft/internal/auth"
	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/runner"
	"weft/internal/workflow"
	"weft/web/component"
	"weft/web/page"
)

// The thread page: any workflow's thread, drawn and followed live.
//
//	GET  /threads/:id          the page (pm, reviewer, admin); ?before= pages the history
//	GET  /threads/:id/events   its live regions as SSE (graph, timeline, status, review)
//	POST /threads/:id/fork     fork from a checkpoint and re-run (admin)
func (s *Server) routesThreads(g *echo.Group) {
	view := requireRole(auth.PM, auth.Reviewer, auth.Admin)
	g.GET("/threads/:id", s.threadPage, view)
	g.GET("/threads/:id/events", s.threadEvents, view)
	g.POST("/threads/:id/fork", s.threadFork, requireRole(auth.Admin))
	g.POST("/threads/:id/follow-up", s.threadFollowUp, requireRole(auth.PM, auth.Admin))
	g.GET("/threads/:id/follow-up", s.threadPageAgain, view)
	// The fork's address opened (reloading a refused fork's answer) leads back to the thread,
	// for whoever may view it.
	g.GET("/threads/:id/fork", s.threadPageAgain, view)
}

// threadPageAgain leads the address of a thread's action, opened (reloading a refused
// answer), back to the thread, for whoever may view it.
func (s *Server) threadPageAgain(c echo.Context) error {
	if _, err := s.loadThread(c.Request().Context(), currentUser(c).TenantID, c.Param("id")); err != nil {
		return err // another tenant's thread is a 404
	}
	return c.Redirect(http.StatusSeeOther, page.ThreadPath(c.Param("id")))
}

// Thread page limits.
const (
	threadHistoryPage  = 20  // checkpoints per history page
	threadLineageLimit = 400 // checkpoints read to find the current run's path
	threadTimelineRows = 150 // node executions shown (the newest)
)

// threadData is what the page's regions are drawn from, read together.
type threadData struct {
	tenant, thread string
	jobs           []runner.Job // newest first
	job            runner.Job   // the newest
	entry          workflow.Definition
	started        bool // the thread has a checkpoint
	snap           graph.SnapshotJSON
	lineage        []graph.Checkpoint // head back to the current run's input, newest first
	execs          []runner.NodeExecution
	reviewedAt     []time.Time // when the newest job's pauses were answered, oldest first
}

// loadThread reads a tenant's thread: its jobs (none: 404, whoever owns
// it), its workflow, its head state, the current run's checkpoints and the
// node executions.
func (s *Server) loadThread(ctx context.Context, tenant, thread string) (*threadData, error) {
	jobs, err := s.app.Jobs.ThreadJobs(ctx, tenant, thread, 50)
	if err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return nil, notFound()
	}
	td := &threadData{tenant: tenant, thread: thread, jobs: jobs, job: jobs[0]}
	e, ok := s.app.Registry.Get(td.job.Workflow)
	if !ok {
		return nil, fmt.Errorf("thread %s: workflow %q is not registered", thread, td.job.Workflow)
	}
	td.entry = e
	td.snap, err = e.Graph.StateJSON(ctx, graph.Config{ThreadID: thread})
	switch {
	case errors.Is(err, graph.ErrNotFound):
	case err != nil:
		return nil, err
	default:
		td.started = true
		if td.lineage, err = currentRun(ctx, e.Graph, thread, td.snap.Checkpoint.ID); err != nil {
			return nil, err
		}
	}
	if td.execs, err = s.app.DB.ListNodeExecutions(ctx, tenant, thread); err != nil {
		return nil, err
	}
	ds, err := s.app.Jobs.ReviewDecisions(ctx, tenant, td.job.ID) // (for the waterfall's waits)
	if err != nil {
		return nil, err
	}
	for _, d := range ds {
		td.reviewedAt = append(td.reviewedAt, d.At)
	}
	return td, nil
}

// currentRun walks from the head back through its parents to the
// checkpoint where the current run's input was applied (forks followed to
// their branch point), newest first.
func currentRun(ctx context.Context, g graph.Runnable, thread, head string) ([]graph.Checkpoint, error) {
	byID := map[string]graph.Checkpoint{}
	before := ""
	var path []graph.Checkpoint
	for read := 0; read < threadLineageLimit; {
		cps, err := g.History(ctx, graph.Config{ThreadID: thread}, graph.ListOptions{Before: before, Limit: 100})
		if errors.Is(err, graph.ErrUnknownBefore) {
			break // pruned between two pages: the older checkpoints are gone, the path ends here
		}
		if err != nil {
			return nil, err
		}
		for _, cp := range cps {
			byID[cp.ID] = cp
		}
		read += len(cps)
		path = path[:0]
		complete := false
		for id := head; id != ""; {
			cp, ok := byID[id]
			if !ok {
				break
			}
			path = append(path, cp)
			if cp.Source == graph.SourceInput {
				complete = true
				break
			}
			id = cp.ParentID
			if id == "" {
				complete = true
			}
		}
		if complete || len(cps) < 100 {
			break
		}
		before = cps[len(cps)-1].ID
	}
	return path, nil
}

// nodeStates colours the graph: done (written by a checkpoint of the
// current run, or its latest execution succeeded), failed (its latest
// execution failed, its task holds an error, or the job's last error names
// it), interrupted (a pending interrupt), running (planned while the job
// runs), pending otherwise. It also returns the edges the run went along.
func (td *threadData) nodeStates() (map[string]string, map[[2]string]bool) {
	states := map[string]string{}
	taken := map[[2]string]bool{}
	if !td.started {
		if td.pruned() { // the node records of its last run are all that is left to show
			latest := map[string]runner.NodeExecution{}
			for _, ex := range td.execs {
				if prev, ok := latest[ex.Node]; ex.JobID == td.job.ID && (!ok || !ex.StartedAt.Before(prev.StartedAt)) {
					latest[ex.Node] = ex
				}
			}
			for n, ex := range latest {
				states[n] = component.StateDone
				if ex.ErrorCode != "" {
					states[n] = component.StateFailed
				}
			}
			states[graph.START] = component.StateDone
			if td.job.Status == runner.Succeeded {
				states[graph.END] = component.StateDone
			}
		}
		return states, taken
	}
	states[graph.START] = component.StateDone
	inRun := map[string]bool{}
	var runStart time.Time
	for _, cp := range td.lineage {
		runStart = cp.CreatedAt
		for _, n := range cp.Nodes {
			inRun[n] = true
			if n != graph.START {
				states[n] = component.StateDone
			}
		}
	}
	latest := map[string]runner.NodeExecution{}
	for _, ex := range td.execs {
		if ex.StartedAt.Before(runStart) || !inRun[ex.Node] && ex.JobID != td.job.ID {
			continue
		}
		if prev, ok := latest[ex.Node]; !ok || !ex.StartedAt.Before(prev.StartedAt) {
			latest[ex.Node] = ex
		}
	}
	for n, ex := range latest {
		if ex.ErrorCode != "" {
			states[n] = component.StateFailed
		} else if states[n] == "" {
			states[n] = component.StateDone
		}
	}
	switch td.job.Status {
	case runner.Failed, runner.DLQPending, runner.DLQRecorded, runner.RetryScheduled:
		if k := len(td.job.Errors); k > 0 && td.job.Errors[k-1].Node != "" {
			states[td.job.Errors[k-1].Node] = component.StateFailed
		}
	}
	// A pause is shown while the job waits (or is recording it); a failed job's thread may
	// still hold the interrupt of a pause nobody answered in time.
	paused := td.job.Status == runner.WaitingReview || td.job.Status == runner.Running
	for _, t := range td.snap.Tasks {
		switch {
		case t.Error != "":
			states[t.Node] = component.StateFailed
		case len(t.Interrupts) > 0 && paused:
			states[t.Node] = component.StateInterrupted
		case t.Done:
			states[t.Node] = component.StateDone
		case td.job.Status == runner.Running:
			states[t.Node] = component.StateRunning
		default:
			if states[t.Node] != component.StateFailed {
				states[t.Node] = component.StatePending
			}
		}
	}
	for _, it := range td.snap.Interrupts {
		if paused {
			states[it.Node] = component.StateInterrupted
		}
	}
	if len(td.snap.Next) == 0 {
		states[graph.END] = component.StateDone
	}
	// Edges: between the nodes of consecutive checkpoints of the run, then
	// into what runs next (or END).
	var prev []string
	for i := len(td.lineage) - 1; i >= 0; i-- {
		nodes := td.lineage[i].Nodes
		if len(nodes) == 0 {
			continue
		}
		for _, u := range prev {
			for _, v := range nodes {
				taken[[2]string{u, v}] = true
			}
		}
		prev = nodes
	}
	for _, u := range prev {
		if len(td.snap.Next) == 0 {
			taken[[2]string{u, graph.END}] = true
		}
		for _, t := range td.snap.Tasks {
			if states[t.Node] != component.StatePending {
				taken[[2]string{u, t.Node}] = true
			}
		}
	}
	return states, taken
}

// ended reports whether the thread's run is over: it reached the end, or its job failed
// for good (a failure that did not take the graph's error route leaves the failed node
// planned; the nodes after it were not run, unless an admin retries the job).
func (td *threadData) ended() bool {
	return td.started && (td.job.Status == runner.Failed || td.job.Status == runner.Succeeded && len(td.snap.Next) == 0)
}

// regions is the live part of the page.
type threadRegions struct {
	graph    component.GraphVM
	timeline page.ThreadTimelineVM
	status   page.ThreadStatusVM
	review   page.ThreadReviewWaitingVM
}

func (td *threadData) regions(u auth.User, now time.Time) threadRegions {
	states, taken := td.nodeStates()
	r := threadRegions{
		graph: drawGraph(td.entry.Graph.Structure(), drawing{Title: td.entry.Title + " graph", States: states, Taken: taken,
			Ended: td.ended()}),
		timeline: td.timeline(),
		status: page.ThreadStatusVM{JobID: td.job.ID, TraceID: td.job.TraceID, Status: string(td.job.Status), RetryCount: td.job.RetryCount,
			Updated: page.Ago(td.job.UpdatedAt, now), UpdatedAt: td.job.UpdatedAt},
	}
	if td.started {
		r.status.Head, r.status.Step, r.status.Next = page.ShortID(td.snap.Checkpoint.ID), td.snap.Checkpoint.Step, td.snap.Next
	}
	// The job waits, or its run has just paused (the job's status follows): a failed job's
	// thread may still hold the interrupt of a pause nobody answered in time, which no
	// review answers now.
	if td.job.Status == runner.WaitingReview || td.job.Status == runner.Running && len(td.snap.Interrupts) > 0 {
		var it graph.PendingInterrupt
		if len(td.snap.Interrupts) > 0 {
			it = td.snap.Interrupts[0]
		} else if len(td.job.Interrupts) > 0 {
			it = td.job.Interrupts[0]
		}
		r.review = reviewWaiting(td.entry, it, td.job.ID, u)
	}
	return r
}

// reviewWaiting is the notice for a pending interrupt (seed 001 §7:
// __interrupt__ → review waiting), linking reviewers to the review form.
func reviewWaiting(def workflow.Definition, it graph.PendingInterrupt, jobID string, u auth.User) page.ThreadReviewWaitingVM {
	vm := page.ThreadReviewWaitingVM{Waiting: true, Node: it.Node}
	if mayResume(u) {
		vm.Href = "/reviews/" + url.PathEscape(jobID)
		vm.Inline, vm.JobID = def.InlineReview, jobID
	}
	var p struct {
		Suggested []string `json:"suggested_actions"`
	}
	if len(it.Value) > 0 && json.Unmarshal(it.Value, &p) == nil {
		vm.Suggested = p.Suggested
	}
	vm.Reasons = payloadReasons(def, it.Value)
	return vm
}

func (td *threadData) timeline() page.ThreadTimelineVM {
	execs := td.execs
	var vm page.ThreadTimelineVM
	jobs := map[string]bool{}
	total, longest := 0.0, 0.0
	lastOfTask := map[string]int{}
	for i, ex := range execs {
		jobs[ex.JobID] = true
		total += ex.LatencyMS
		longest = max(longest, ex.LatencyMS)
		lastOfTask[ex.JobID+"/"+ex.TaskID] = i
	}
	// The job's error history names the code a node failed with (the
	// execution record keeps only what the error's text says).
	codes := map[string]string{}
	for _, j := range td.jobs {
		for _, e := range j.Errors {
			if e.Node != "" && e.Code != "" {
				codes[j.ID+"/"+e.Node] = e.Code
			}
		}
	}
	waiting := map[string]bool{}
	for _, t := range td.snap.Tasks {
		if len(t.Interrupts) > 0 {
			waiting[t.ID] = true
		}
	}
	from := max(0, len(execs)-threadTimelineRows)
	now := time.Now()
	var rowJobs []string // each row's job id
	for i, ex := range execs[from:] {
		i += from
		row := page.ThreadTimelineRow{Node: ex.Node, Job: page.ShortID(ex.JobID), Started: page.Clock(ex.StartedAt, now),
			StartedAt: page.When(ex.StartedAt), LatencyMS: ex.LatencyMS, MaxMS: max(longest, 0.001), InputSize: ex.InputSize,
			OutputSize: ex.OutputSize, Attempts: ex.Attempts, ErrorCode: ex.ErrorCode, Cached: ex.Cached, Outcome: component.StateDone}
		switch {
		case ex.ErrorCode != "":
			row.Outcome = component.StateFailed
			if c := codes[ex.JobID+"/"+ex.Node]; c != "" && ex.ErrorCode == fault.CodeUnknown {
				row.ErrorCode = c
			}
		case lastOfTask[ex.JobID+"/"+ex.TaskID] != i || waiting[ex.TaskID] && ex.JobID == td.job.ID:
			// A task runs again only after it paused (or failed): this run paused.
			row.Outcome = component.StateInterrupted
		}
		vm.Rows = append(vm.Rows, row)
		rowJobs = append(rowJobs, ex.JobID)
	}
	vm.MultiJob = len(jobs) > 1
	if vm.MultiJob {
		// Runs newest first (the current one on top), each run's nodes in the order they ran.
		var order []string
		byJob := map[string][]page.ThreadTimelineRow{}
		for i, r := range vm.Rows {
			if _, ok := byJob[rowJobs[i]]; !ok {
				order = append(order, rowJobs[i])
			}
			byJob[rowJobs[i]] = append(byJob[rowJobs[i]], r)
		}
		vm.Rows = vm.Rows[:0]
		for i := len(order) - 1; i >= 0; i-- {
			vm.Rows = append(vm.Rows, byJob[order[i]]...)
		}
	}
	vm.Total = fmt.Sprintf("%d node executions · %s of node time", len(execs), page.ThreadMillis(total))
	if vm.MultiJob {
		vm.Total += " · newest run first"
	}
	if from > 0 {
		vm.Total += fmt.Sprintf(" · the newest %d shown", threadTimelineRows)
	}
	vm.Waterfall = td.waterfall(now)
	return vm
}

func (s *Server) threadPage(c echo.Context) error {
	ctx := c.Request().Context()
	u := currentUser(c)
	thread := c.Param("id")
	before := c.QueryParam("before")
	if before != "" {
		if _, err := uuid.Parse(before); err != nil {
			return badRequest(unknownBeforeMsg)
		}
	}
	if isHTMX(c) && (before != "" || c.QueryParam("part") == "history") {
		td, err := s.loadThread(ctx, u.TenantID, thread)
		if err != nil {
			return err
		}
		hist, err := s.threadHistory(ctx, td, u, csrfToken(c), before, c.QueryParam("line"))
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, page.ThreadHistory(hist))
	}
	return s.renderThread(c, http.StatusOK, thread, func(td *threadData, vm *page.ThreadVM) { threadNotices(c, td, vm) })
}

// renderThread renders a tenant's thread page with status, as the request asks for it (its
// history page), after edit has its say on the view model.
func (s *Server) renderThread(c echo.Context, status int, thread string, edit func(*threadData, *page.ThreadVM)) error {
	ctx := c.Request().Context()
	u := currentUser(c)
	// The event id first: anything that happens while the page is read is
	// streamed again rather than missed.
	lastEvent, err := s.app.Events.LastThreadEventID(ctx, u.TenantID, thread)
	if err != nil {
		return err
	}
	td, err := s.loadThread(ctx, u.TenantID, thread)
	if err != nil {
		return err
	}
	vm, err := s.buildThreadVM(ctx, td, u, csrfToken(c), c.QueryParam("before"), c.QueryParam("line"))
	if err != nil {
		return err
	}
	vm.EventsURL = fmt.Sprintf("/threads/%s/events?last_event_id=%d", url.PathEscape(thread), lastEvent)
	edit(td, &vm)
	return render(c, status, page.ThreadPage(s.meta(c, vm.Heading), vm))
}

// threadNotices puts on the page the notice of the redirect that brought the user here.
func threadNotices(c echo.Context, td *threadData, vm *page.ThreadVM) {
	// A notice after a redirect names a job of this thread (another id shows nothing).
	if j, ok := td.jobByID(c.QueryParam("forked")); ok && j.RetryFrom != "" && len(j.Errors) == 0 { // a fork
		vm.Flash = fmt.Sprintf("Fork queued: job %s re-runs the thread from checkpoint %s.", page.ShortID(j.ID), page.ShortID(j.RetryFrom))
	}
	if j, ok := td.jobByID(c.QueryParam("decided")); ok && slices.ContainsFunc(vm.Jobs, func(r page.ThreadJobVM) bool {
		return r.ID == j.ID && len(r.Decisions) > 0 // recorded with the resume, before the redirect
	}) {
		vm.Flash = fmt.Sprintf("Decision recorded: job %s goes on from the review.", page.ShortID(j.ID))
	}
	if j, ok := td.jobByID(c.QueryParam("retried")); ok && j.RetryCount > 0 {
		vm.Flash = fmt.Sprintf("Retry queued: job %s goes back to the queue and goes on from its last checkpoint.", page.ShortID(j.ID))
	}
	if j, ok := td.jobByID(c.QueryParam("discarded")); ok && j.Status == runner.Failed {
		vm.Flash = fmt.Sprintf("Dead letter discarded: job %s stays failed.", page.ShortID(j.ID))
	}
	if j, ok := td.jobByID(c.QueryParam("started")); ok {
		vm.Flash = fmt.Sprintf("Run started: job %s of %s, on this new thread.", page.ShortID(j.ID), td.entry.Title)
		vm.DraftClear = workflowDraftKey(td.entry.Name)
	}
	if j, ok := td.jobByID(c.QueryParam("followed")); ok {
		vm.Flash = fmt.Sprintf("Run started: job %s of %s, on this thread.", page.ShortID(j.ID), td.entry.Title)
	}
}

// jobByID finds one of the thread's jobs by id ("" finds none).
func (td *threadData) jobByID(id string) (runner.Job, bool) {
	for _, j := range td.jobs {
		if id != "" && j.ID == id {
			return j, true
		}
	}
	return runner.Job{}, false
}

// buildThreadVM is the whole page's view model (the stream sends parts of
// it again when the run comes to rest).
func (s *Server) buildThreadVM(ctx context.Context, td *threadData, u auth.User, csrf, before, line string) (page.ThreadVM, error) {
	hist, err := s.threadHistory(ctx, td, u, csrf, before, line)
	if err != nil {
		return page.ThreadVM{}, err
	}
	reg := td.regions(u, time.Now())
	vm := page.ThreadVM{
		ThreadID: td.thread, Workflow: td.entry.Name, WorkflowTitle: td.entry.Title, Description: td.entry.Description,
		Heading: "Thread " + td.thread, Subject: td.job.Subject,
		Status: reg.status, Review: reg.review, Graph: reg.graph, Mermaid: td.entry.Graph.Mermaid(), Timeline: reg.timeline,
		History: hist, Jobs: td.jobVMs(),
	}
	if err := s.addDecisions(ctx, td, vm.Jobs); err != nil {
		return page.ThreadVM{}, err
	}
	if err := s.addDeadLetters(ctx, td, u, csrf, vm.Jobs); err != nil {
		return page.ThreadVM{}, err
	}
	if vm.WorkflowTitle == "" {
		vm.WorkflowTitle = td.entry.Name
	}
	if td.job.Subject != "" && td.entry.SubjectOf != nil { // a run named by its input (a tour's question)
		vm.Heading = td.job.Subject
	}
	if err := s.threadViews(ctx, td, u, &vm); err != nil {
		return page.ThreadVM{}, err
	}
	vm.FollowUp = td.followUpVM(u, csrf)
	if vm.Events, err = s.threadEventRows(ctx, td); err != nil {
		return page.ThreadVM{}, err
	}
	return vm, nil
}

// jobVMs lists the thread's jobs (its runs), newest first.
func (td *threadData) jobVMs() []page.ThreadJobVM {
	var out []page.ThreadJobVM
	for _, j := range td.jobs {
		jv := page.ThreadJobVM{ID: j.ID, Short: page.ShortID(j.ID), Status: string(j.Status), RetryCount: j.RetryCount,
			Created: page.When(j.CreatedAt)}
		switch {
		case j.RetryFrom != "" && len(j.Errors) == 0:
			jv.ForkFrom = page.ShortID(j.RetryFrom) // a fork (failures set RetryFrom with an error)
		case j.RetryFrom != "" && !j.Status.Terminal():
			jv.RetryFrom = page.ShortID(j.RetryFrom)
		}
		if j.RetryCount > 0 || j.Status != runner.Succeeded {
			for i, e := range j.Errors {
				ev := page.ThreadJobErrorVM{At: page.When(e.At), Node: e.Node, Class: string(e.Class), Code: e.Code,
					Message: fault.Detail(e.Code, e.Class, e.Message), RetryCount: e.RetryCount}
				if len(j.Errors) > 1 {
					ev.Nth = fmt.Sprintf("failure %d of %d", i+1, len(j.Errors))
				}
				jv.Errors = append(jv.Errors, ev)
			}
		}
		out = append(out, jv)
	}
	return out
}

// addDecisions puts on each of the thread's runs (jobs, as jobVMs lists them) the reviews its
// pauses got: who decided what, when, and why.
func (s *Server) addDecisions(ctx context.Context, td *threadData, jobs []page.ThreadJobVM) error {
	ids := make([]string, len(jobs))
	for i, j := range jobs {
		ids[i] = j.ID
	}
	decisions, err := s.app.Jobs.ReviewDecisionsOfJobs(ctx, td.tenant, ids)
	if err != nil {
		return err
	}
	names := s.userNames(ctx, td.tenant) // read once, when a decision first needs it
	for _, r := range decisions {
		v, ok := decisionOf(r)
		if !ok {
			continue
		}
		name := actorName(names(), r.Actor)
		d := page.ThreadDecisionVM{Decision: v.Decision, Reviewer: name, Comment: threadClip(v.Comment, decisionCommentClip), At: page.When(r.At)}
		if d.Comment != v.Comment {
			d.Full = v.Comment // the report and the audit log hold it too
		}
		for i := range jobs {
			if jobs[i].ID == r.JobID {
				jobs[i].Decisions = append(jobs[i].Decisions, d)
			}
		}
	}
	return nil
}

// addDeadLetters puts on each of the thread's failed runs (jobs, as jobVMs lists them) its
// newest dead-letter entry, with the dead-letter page's actions for an admin: Discard while
// the entry is recorded, and Retry too when the run is the thread's newest (the dead-letter
// page offers no retry of a superseded run either).
func (s *Server) addDeadLetters(ctx context.Context, td *threadData, u auth.User, csrf string, jobs []page.ThreadJobVM) error {
	ids := make([]string, 0, len(jobs))
	for _, j := range jobs {
		ids = append(ids, j.ID)
	}
	entries, err := s.app.Jobs.DLQOfJobs(ctx, td.tenant, ids)
	if err != nil || len(entries) == 0 {
		return err
	}
	names := s.userNames(ctx, td.tenant)
	entryVM := func(e postgres.DLQEntry, superseded bool) *page.ThreadDeadLetterVM {
		d := &page.ThreadDeadLetterVM{ID: e.ID, Status: e.Status, Class: string(e.Class), Code: e.Code, Recorded: page.When(e.CreatedAt), CSRF: csrf,
			Superseded: superseded}
		if e.ResolvedBy != "" {
			d.ResolvedBy, d.ResolvedAt = actorName(names(), e.ResolvedBy), page.When(e.ResolvedAt)
		}
		return d
	}
	for i := range jobs {
		es := entries[jobs[i].ID] // newest first
		if len(es) == 0 {
			continue
		}
		d := entryVM(es[0], i > 0) // jobs[0] is the thread's newest run
		if u.Role == auth.Admin && es[0].Status == postgres.DLQStatusRecorded {
			d.CanDiscard = true
			d.CanRetry = !d.Superseded
		}
		jobs[i].DeadLetter = d
		// The earlier entries (a retried run's), each beside the failure that left it: how it
		// was resolved (retried, mostly), which the run's newest entry alone does not say.
		for _, e := range es[1:] {
			for k := len(jobs[i].Errors) - 1; k >= 0; k-- { // the attempt's last error left it
				if jobs[i].Errors[k].RetryCount == e.RetryCount {
					jobs[i].Errors[k].DeadLetter = entryVM(e, i > 0)
					break
				}
			}
		}
	}
	return nil
}

// threadViews fills the workflow's parts of a thread's page: its domain panel, its report
// and its state, as the workflow's views build them (generic ones where it has none), and
// the files its runs made.
func (s *Server) threadViews(ctx context.Context, td *threadData, u auth.User, vm *page.ThreadVM) error {
	t, err := s.threadFor(ctx, u, td.job, td.entry.Graph)
	if err != nil {
		return err
	}
	vm.ThreadID = td.thread
	vm.State, vm.Report = td.genericState()
	if d := td.entry.Describe; d != nil && td.job.Subject != "" {
		named, err := d(ctx, td.tenant, []string{td.job.Subject})
		if err != nil {
			return err
		}
		if sub, ok := named[td.job.Subject]; ok && sub.Title != "" {
			vm.Heading = sub.Title
			if sub.Detail != "" {
				vm.Heading += " · " + sub.Detail
			}
		}
	}
	views := td.entry.Views
	if views.Panel != nil {
		if vm.Panel, err = views.Panel(ctx, t); err != nil {
			return err
		}
	}
	if views.Report != nil {
		blocks, err := views.Report(ctx, t)
		if err != nil {
			return err
		}
		if blocks != nil {
			vm.Report = page.ThreadReportVM{Kind: "blocks", Blocks: blocks, ThreadID: td.thread}
			if td.job.Status != runner.Succeeded && td.started {
				vm.Report.Message = "The report of the last completed run; the thread's current job is " + page.ThreadStatusWords(string(td.job.Status)) + "."
			}
		} else {
			vm.Report = page.ThreadReportVM{Kind: "none", Message: td.noReport(), Failed: td.failedRun()}
		}
	}
	if views.State != nil {
		v, err := views.State(ctx, t)
		if err != nil {
			return err
		}
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		vm.State = page.ThreadStateVM{Title: td.entry.Title + " state", JSON: displayJSON(b),
			Note: "The thread's state as the API's state call returns it: its latest checkpoint, its job's status and every error so far. Resume tokens are hidden."}
	}
	arts, err := s.app.Artifacts.List(ctx, td.tenant, td.thread)
	if err != nil {
		return err
	}
	for _, a := range arts {
		vm.Artifacts = append(vm.Artifacts, page.ThreadArtifactVM{Key: a.Key, Name: a.Name, ContentType: a.ContentType,
			Size: page.Bytes(a.Size), Version: a.Version, HTML: a.IsHTML(), Updated: page.When(a.UpdatedAt)})
	}
	return nil
}

// pruned: the thread ran (its nodes have records) but has no checkpoint left (weft prune
// dropped the finished thread's checkpoints).
func (td *threadData) pruned() bool {
	if td.started {
		return false
	}
	for _, ex := range td.execs {
		if ex.JobID == td.job.ID { // the current run ran (a run started again since has not yet)
			return true
		}
	}
	return false
}

// noReport says why there is no report yet.
func (td *threadData) noReport() string {
	switch td.job.Status {
	case runner.Queued:
		return "The run is queued; the report appears when it finishes."
	case runner.Running, runner.RetryScheduled:
		return "The run is in progress; the report appears when it finishes."
	case runner.WaitingReview:
		return "The thread waits for a reviewer; the report is written after the decision."
	case runner.Failed, runner.DLQPending, runner.DLQRecorded:
		msg := "No report: the run failed"
		if k := len(td.job.Errors); k > 0 {
			e := td.job.Errors[k-1]
			if e.Node != "" {
				msg += " at " + e.Node
			}
			msg += " (" + e.Code + "): " + fault.Detail(e.Code, e.Class, e.Message)
		}
		return msg + "."
	}
	if td.pruned() {
		return "No report to show: the thread's checkpoints, which held its final state, were pruned."
	}
	return "The run finished without a report."
}

// failedRun reports whether the thread's job failed (or is failing).
func (td *threadData) failedRun() bool {
	switch td.job.Status {
	case runner.Failed, runner.DLQPending, runner.DLQRecorded:
		return true
	}
	return false
}

// genericState is the state inspector and the final-state summary of any
// workflow.
func (td *threadData) genericState() (page.ThreadStateVM, page.ThreadReportVM) {
	if !td.started {
		note := "The thread has no checkpoint yet: its job is " + page.ThreadStatusWords(string(td.job.Status)) + "."
		if td.pruned() {
			note = "The thread's checkpoints were pruned: no state is left."
		}
		return page.ThreadStateVM{Title: "Thread state", JSON: "{}", Note: note},
			page.ThreadReportVM{Kind: "none", Message: td.noReport(), Failed: td.failedRun()}
	}
	st := page.ThreadStateVM{Title: "Thread state", JSON: displayJSON(td.snap.Values),
		Note: fmt.Sprintf("The channels at the head checkpoint %s (step %d).", page.ShortID(td.snap.Checkpoint.ID), td.snap.Checkpoint.Step)}
	if len(td.snap.Next) > 0 {
		return st, page.ThreadReportVM{Kind: "none", Message: td.noReport(), Failed: td.failedRun()}
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(td.snap.Values, &m)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	rep := page.ThreadReportVM{Kind: "summary", Message: "The run reached the end. Its final state:"}
	for _, k := range keys {
		v := threadClip(displayJSONLine(m[k]), 200)
		var s string
		if json.Unmarshal(m[k], &s) == nil && isResumeToken(k, s) {
			v = hiddenSecret
		}
		rep.Summary = append(rep.Summary, page.ThreadKV{Key: k, Value: v})
	}
	return st, rep
}

// threadHistory is one page of checkpoints (newest first), with the fork
// action for admins when the thread can be forked.
//
// Rows that are not ancestors of the head are marked as an earlier branch (a fork started
// the current run from before them): the head's line is followed through the rows by their
// parents, and an older page's link carries (line=) the line's next checkpoint, so that page
// goes on marking; a page opened without it marks nothing.
func (s *Server) threadHistory(ctx context.Context, td *threadData, u auth.User, csrf, before, line string) (page.ThreadHistoryVM, error) {
	base := "/threads/" + url.PathEscape(td.thread)
	vm := page.ThreadHistoryVM{ThreadID: td.thread, ForkURL: base + "/fork", CanFork: u.Role == auth.Admin, CSRF: csrf, Pruned: td.pruned()}
	if !td.started {
		return vm, nil
	}
	cps, err := td.entry.Graph.History(ctx, graph.Config{ThreadID: td.thread},
		graph.ListOptions{Before: before, Limit: threadHistoryPage + 1})
	if err != nil {
		return vm, err
	}
	if len(cps) > threadHistoryPage {
		cps = cps[:threadHistoryPage]
		vm.OlderHref = base + "?before=" + url.QueryEscape(cps[len(cps)-1].ID)
	}
	if before != "" {
		vm.NewerHref = base + "?part=history"
	}
	if before == "" {
		line = td.snap.Checkpoint.ID
	}
	known := line != ""
	retried := map[string]string{} // checkpoint a failed job's retry started from -> short job id
	for _, j := range td.jobs {
		for _, e := range j.Errors {
			if e.CheckpointID != "" {
				retried[e.CheckpointID] = page.ShortID(j.ID)
			}
		}
	}
	for _, cp := range cps {
		onLine := cp.ID == line
		if onLine {
			line = cp.ParentID
		}
		row := page.ThreadCheckpointRow{ID: cp.ID, Short: page.ShortID(cp.ID), Step: cp.Step, Source: cp.Source, Nodes: cp.Nodes,
			Created: page.When(cp.CreatedAt), ForkOf: cp.ForkOf, ForkOfShort: page.ShortID(cp.ForkOf),
			Head: cp.ID == td.snap.Checkpoint.ID, Forkable: len(cp.Next) > 0, EarlierBranch: known && !onLine,
		}
		if cp.Source == graph.SourceRetry {
			row.RetryOf = retried[cp.ForkOf]
		}
		switch {
		case cp.Source == graph.SourceResume && len(cp.Resume) > 0:
			row.Why = "review answer"
		case cp.Source == graph.SourceResume:
			row.Why = "run continued"
		}
		vm.Branches = vm.Branches || row.EarlierBranch
		for _, t := range cp.Next {
			row.Next = append(row.Next, t.Node)
		}
		vm.Rows = append(vm.Rows, row)
	}
	if vm.OlderHref != "" && known && line != "" {
		vm.OlderHref += "&line=" + url.QueryEscape(line)
	}
	if vm.CanFork {
		for _, j := range td.jobs {
			if !j.Status.Terminal() {
				vm.ForkReason = "Forking is possible once the thread's job has finished; it is " + page.ThreadStatusWords(string(j.Status)) + "."
				break
			}
		}
		if vm.ForkReason == "" {
			for _, n := range td.snap.Next {
				if !slices.Contains(td.entry.Graph.ErrorRoute(), n) {
					vm.ForkReason = "The thread stopped before " + n + "; retry its job from the dead letters instead of forking."
					break
				}
			}
		}
	}
	return vm, nil
}

// threadFork forks the thread from a checkpoint (admin; the form carries
// the CSRF token) and goes back to the page.
func (s *Server) threadFork(c echo.Context) error {
	u := currentUser(c)
	thread := c.Param("id")
	if _, err := s.loadThread(c.Request().Context(), u.TenantID, thread); err != nil {
		return err // another tenant's thread is a 404 before anything else is looked at
	}
	cp := strings.TrimSpace(c.FormValue("checkpoint_id"))
	if cp == "" {
		return badRequest("Choose the checkpoint to fork from.")
	}
	if _, err := uuid.Parse(cp); err != nil {
		return badRequest("That is not a checkpoint id.")
	}
	j, err := s.app.Fork(c.Request().Context(), u.TenantID, thread, cp, u.ID)
	if err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, page.ThreadPath(thread)+"?forked="+url.QueryEscape(j.ID))
}

// threadEvents streams the page's live regions: on every step of the run
// the graph, the timeline, the status badge and the review notice are
// rendered again by the components the page uses.
func (s *Server) threadEvents(c echo.Context) error {
	u := currentUser(c)
	csrf := csrfToken(c)
	thread := c.Param("id")
	first, err := s.loadThread(c.Request().Context(), u.TenantID, thread)
	if err != nil {
		return err
	}
	live := first.entry.Views.Live
	return s.stream(c, u.TenantID, thread, 0, func(ctx context.Context, ev postgres.StoredEvent) ([]sseMessage, error) {
		var named []sseMessage // the workflow's name for the event, a row of its events list
		if row, ok := namedEvent(first.entry, ev); ok {
			named = append(named, sseMessage{Event: "wf_event", HTML: page.ThreadEvent(row)})
		}
		switch ev.Kind {
		case graph.KindCustom: // the workflow's name for it, and what it shows of it live
			return append(named, liveMessages(live, thread, ev.Data)...), nil
		case graph.KindValues, graph.KindUpdates, graph.KindStep:
			return named, nil // the checkpoint and task events that follow carry the same change
		}
		td, err := s.loadThread(ctx, u.TenantID, thread)
		if err != nil {
			return nil, err
		}
		td = s.settle(ctx, td, ev.Kind == graph.KindInterrupt)
		reg := td.regions(u, time.Now())
		if ev.Kind == graph.KindInterrupt && !reg.review.Waiting {
			var it graph.PendingInterrupt
			if raw, ok := ev.Data.(json.RawMessage); ok {
				_ = json.Unmarshal(raw, &it)
			}
			if it.Node == "" {
				it.Node = ev.Node
			}
			reg.review = reviewWaiting(td.entry, it, td.job.ID, u)
		}
		msgs := append(named, []sseMessage{
			{Event: "graph", HTML: component.Graph(reg.graph)},
			{Event: "timeline", HTML: page.ThreadTimeline(reg.timeline)},
			{Event: "status", HTML: page.ThreadStatus(reg.status)},
			{Event: "review", HTML: page.ThreadReviewWaiting(reg.review)},
		}...)
		if panel := td.entry.Views.Panel; panel != nil { // the workflow's progress, on every step
			t, err := s.threadFor(ctx, u, td.job, td.entry.Graph)
			if err != nil {
				return nil, err
			}
			blocks, err := panel(ctx, t)
			if err != nil {
				return nil, err
			}
			msgs = append(msgs, sseMessage{Event: "panel", HTML: page.ThreadPanelUpdate(thread, blocks)})
		} else if live != nil { // no panel: the step still empties the live region
			msgs = append(msgs, sseMessage{Event: "panel", HTML: page.ThreadPanelUpdate(thread, nil)})
		}
		if td.job.Status != runner.Running || td.resting(false) {
			// At rest: the runs, the report, the history and the state
			// change too.
			vm, err := s.buildThreadVM(ctx, td, u, csrf, "", "")
			if err != nil {
				return nil, err
			}
			msgs = append(msgs,
				sseMessage{Event: "runs", HTML: page.ThreadJobs(vm.Jobs)},
				sseMessage{Event: "report", HTML: page.ThreadReport(vm.Report)},
				sseMessage{Event: "history", HTML: page.ThreadHistory(vm.History)},
				sseMessage{Event: "artifacts", HTML: page.ThreadArtifacts(thread, vm.Artifacts)},
				sseMessage{Event: "state", HTML: page.ThreadState(vm.State)},
				sseMessage{Event: "followup", HTML: page.ThreadFollowUp(vm.FollowUp)})
		}
		return msgs, nil
	})
}

// liveMessages draws a custom event as the workflow's Views.Live shows it (nothing without
// one), to be added below the panel.
func liveMessages(live func(json.RawMessage) []workflow.Block, thread string, data any) []sseMessage {
	if live == nil {
		return nil
	}
	raw, ok := data.(json.RawMessage)
	if !ok {
		b, err := json.Marshal(data)
		if err != nil {
			return nil
		}
		raw = b
	}
	blocks := live(raw)
	if len(blocks) == 0 {
		return nil
	}
	return []sseMessage{{Event: "live", HTML: component.Blocks(thread, blocks)}}
}

// settle waits briefly for the job to leave running when the run has come
// to rest (paused, failed or at the end): the runner records the job's new
// status just after the run's last step, and only then publishes its job
// event, which may be dropped (a full buffer) or lost with the process; the
// step's own render shows the status it leaves the job in.
func (s *Server) settle(ctx context.Context, td *threadData, interrupted bool) *threadData {
	if td.job.Status != runner.Running || !td.resting(interrupted) {
		return td
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case <-ctx.Done():
			return td
		case <-deadline:
			return td
		case <-tick.C:
		}
		j, err := s.app.Jobs.Job(ctx, td.tenant, td.job.ID)
		if err != nil || j.Status == runner.Running {
			continue
		}
		if fresh, err := s.loadThread(ctx, td.tenant, td.thread); err == nil {
			return fresh
		}
		return td
	}
}

// resting reports whether the run has nothing left to do by itself: it
// paused, failed or reached the end.
func (td *threadData) resting(interrupted bool) bool {
	resting := interrupted || td.started && len(td.snap.Next) == 0 || len(td.snap.Interrupts) > 0
	for _, t := range td.snap.Tasks {
		resting = resting || t.Error != ""
	}
	return resting
}

// decisionCommentClip is the most of a review comment the runs table shows (a comment may
// be 4,000 characters; the rest is in the cell's title).
const decisionCommentClip = 280

func threadClip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
