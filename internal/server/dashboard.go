package server

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"weft/internal/auth"
	"weft/internal/fault"
	"weft/internal/postgres"
	"weft/internal/runner"
	"weft/internal/workflow"
	"weft/web/page"
)

// Dashboard tuning.
const (
	// dashboardThrottle is the least time between two re-renders of one
	// live dashboard: a run publishes many events per step.
	dashboardThrottle = 300 * time.Millisecond
	// dashboardListed bounds each list of a workflow's panel (the counts
	// say how many more there are).
	dashboardListed = 8
	// dashboardFailures bounds the recent failures listed per workflow.
	dashboardFailures = 5
)

// dashboardCounted are the statuses every workflow's counts show, zero or
// not; the others (the DLQ subflow's) show only while some job is in them.
var dashboardCounted = runner.Lasting

func (s *Server) routesDashboard(g *echo.Group) {
	pm := requireRole(auth.PM, auth.Admin)
	g.GET("/dashboard", s.dashboard, pm)
	g.GET("/dashboard/events", s.dashboardEvents, pm)
	g.GET("/workflows/:name/start", s.workflowStartForm, pm)
	g.POST(startFormPath, s.workflowStart, pm)
}

// dashboard is the PM's start page; as an htmx partial (the live region's
// periodic refresh) it is the live region alone.
func (s *Server) dashboard(c echo.Context) error {
	ctx := c.Request().Context()
	u := currentUser(c)
	if isHTMX(c) {
		live, err := s.dashboardLive(ctx, u, nil)
		if err != nil {
			return err
		}
		return render(c, http.StatusOK, page.DashboardLive(live))
	}
	// The stream starts after the newest event seen before the data is
	// read (the pipeline's statements run in order), so nothing that
	// happens while the page renders is missed.
	var latest int64
	live, err := s.dashboardLive(ctx, u, func(r *postgres.Reads) {
		s.app.Events.QueueLatestID(r, u.TenantID, &latest)
	})
	if err != nil {
		return err
	}
	v := page.DashboardVM{Live: live, StreamURL: "/dashboard/events?last_event_id=" + strconv.FormatInt(latest, 10)}
	m := s.meta(c, "Dashboard")
	m.Active = "dashboard"
	return render(c, http.StatusOK, page.Dashboard(m, v))
}

// dashboardEvents streams the live region, re-rendered when the tenant's
// runs publish events (at most once per dashboardThrottle).
func (s *Server) dashboardEvents(c echo.Context) error {
	u := currentUser(c)
	return s.stream(c, u.TenantID, "", dashboardThrottle, func(ctx context.Context, _ postgres.StoredEvent) ([]sseMessage, error) {
		live, err := s.dashboardLive(ctx, u, nil)
		if err != nil {
			return nil, err
		}
		return []sseMessage{{Event: "dashboard", HTML: page.DashboardLive(live)}}, nil
	})
}

// dashboardLive reads the live region: per registered workflow, its job
// counts (from the maintained counters), and the jobs behind the counts
// that need attention, with their progress and what they are about (each
// workflow's Describe), then the workflows' own parts of the dashboard
// (Views.Dashboard: bid evaluation's tenders). The counts, every list (an
// empty one costs an index probe) and whatever first queues beside them are
// one wait for the database (postgres.Reads).
func (s *Server) dashboardLive(ctx context.Context, u auth.User, first func(*postgres.Reads)) (page.DashboardLiveVM, error) {
	tenant := u.TenantID
	v := page.DashboardLiveVM{Now: time.Now(), CanReview: mayResume(u)}
	entries := s.app.Registry.All()
	// Per workflow, in this order: running, retry_scheduled, waiting_review, failed.
	listed := []runner.Status{runner.Running, runner.RetryScheduled, runner.WaitingReview, runner.Failed}
	var lists []postgres.DashboardList
	for _, e := range entries {
		for _, st := range listed {
			limit := dashboardListed
			if st == runner.Failed {
				limit = dashboardFailures
			}
			// Reviews are listed as the inbox lists them: the longest waiting first.
			lists = append(lists, postgres.DashboardList{Workflow: e.Name, Status: st, Limit: limit, LongestWaiting: st == runner.WaitingReview})
		}
	}
	var counts []postgres.JobCount
	var results [][]postgres.DashboardJob
	reads := s.app.DB.Reads()
	if first != nil {
		first(reads)
	}
	s.app.Jobs.QueueCountJobs(reads, tenant, &counts)
	s.app.Jobs.QueueDashboardLists(reads, tenant, lists, &results)
	if err := reads.Run(ctx); err != nil {
		return v, err
	}
	var runs []runRef
	for _, js := range results {
		for _, j := range js {
			runs = append(runs, runRef{j.Workflow, j.Subject})
		}
	}
	subjects, err := s.describe(ctx, tenant, runs)
	if err != nil {
		return v, err
	}
	byWorkflow := map[string]map[runner.Status]int64{}
	for _, c := range counts {
		if byWorkflow[c.Workflow] == nil {
			byWorkflow[c.Workflow] = map[runner.Status]int64{}
		}
		byWorkflow[c.Workflow][c.Status] += c.N
	}
	type found struct{ running, waiting, failed []postgres.DashboardJob }
	for i, e := range entries {
		var l found
		for k, st := range listed {
			js := results[i*len(listed)+k]
			switch st {
			case runner.Running, runner.RetryScheduled: // running first, then those waiting to retry
				l.running = append(l.running, js[:min(len(js), dashboardListed-len(l.running))]...)
			case runner.WaitingReview:
				l.waiting = js
			case runner.Failed:
				l.failed = js
			}
		}
		v.Workflows = append(v.Workflows, dashboardWorkflow(e, byWorkflow[e.Name], subjects, l.running, l.waiting, l.failed))
	}
	reader := workflow.Person{ID: u.ID, Name: u.Name, Role: string(u.Role)}
	for _, e := range entries {
		if e.Views.Dashboard == nil {
			continue
		}
		blocks, err := e.Views.Dashboard(ctx, tenant, reader)
		if err != nil {
			return v, fmt.Errorf("the dashboard of %s: %w", e.Name, err)
		}
		if len(blocks) > 0 {
			v.Views = append(v.Views, page.DashViewVM{Workflow: e.Name, Blocks: blocks})
		}
	}
	return v, nil
}

// dashboardWorkflow is a workflow's panel: n its counts, and the jobs listed (named by
// subjects, as described).
func dashboardWorkflow(e workflow.Definition, n map[runner.Status]int64, subjects map[runRef]workflow.Subject,
	running, waiting, failed []postgres.DashboardJob) page.DashWorkflowVM {
	ref := func(j postgres.DashboardJob) page.DashThreadVM {
		return threadRef(j.ThreadID, j.Subject, subjects[runRef{j.Workflow, j.Subject}])
	}
	w := page.DashWorkflowVM{Name: e.Name, Title: e.Title, Description: e.Description, PathLen: len(e.Path)}
	if e.Startable() {
		w.StartHref = workflowStartPath(e.Name)
	}
	for _, st := range runner.Statuses {
		if slices.Contains(dashboardCounted, st) || n[st] != 0 {
			w.Counts = append(w.Counts, page.DashCountVM{Status: string(st), N: n[st]})
		}
		w.Total += n[st]
	}
	for _, j := range running {
		w.Running = append(w.Running, page.DashRunningVM{Thread: ref(j), JobID: j.ID, Status: string(j.Status),
			Done: pathDone(e, j.NodesDone), Of: len(e.Path), RetryCount: j.RetryCount, Since: j.CreatedAt})
	}
	w.MoreRunning = n[runner.Running] + n[runner.RetryScheduled] - int64(len(running))
	w.RunningStatus = string(runner.Running)
	if n[runner.RetryScheduled] > 0 { // the runs page filters one status: show them all
		w.RunningStatus = ""
	}
	for _, j := range waiting {
		// updated_at is paused_at while a job waits: the pause was its last change.
		w.Waiting = append(w.Waiting, page.DashWaitingVM{Thread: ref(j), JobID: j.ID, Since: j.UpdatedAt})
	}
	w.MoreWaiting = n[runner.WaitingReview] - int64(len(waiting))
	for _, j := range failed {
		f := page.DashFailureVM{Thread: ref(j), JobID: j.ID, Code: "WF_UNKNOWN", At: j.UpdatedAt}
		if len(j.Errors) > 0 {
			je := j.Errors[len(j.Errors)-1]
			f.Code, f.Class, f.Node, f.At = je.Code, string(je.Class), je.Node, je.At
			// Messages often repeat the code and class the panel shows already.
			f.Message = fault.Detail(je.Code, je.Class, je.Message)
		}
		w.Failures = append(w.Failures, f)
	}
	slices.SortStableFunc(w.Failures, func(a, b page.DashFailureVM) int { return b.At.Compare(a.At) })
	// Failed jobs whose thread was started again are counted but not listed: a short list
	// is every current failure.
	if len(failed) == dashboardFailures {
		w.MoreFailures = n[runner.Failed] - int64(len(failed))
	}
	return w
}

// pathDone counts the nodes of the workflow's main path among done.
func pathDone(e workflow.Definition, done []string) int {
	k := 0
	for _, node := range e.Path {
		if slices.Contains(done, node) {
			k++
		}
	}
	return k
}

// threadRef names a thread for people: as its workflow describes its run's subject (a bid
// evaluation by its supplier, with its tender, linked, as context), else by label (the job's
// subject, "" for the thread id).
func threadRef(threadID, label string, d workflow.Subject) page.DashThreadVM {
	t := page.DashThreadVM{ThreadID: threadID, Label: label}
	if d.Title != "" {
		t.Label, t.Context, t.Href = d.Title, d.Detail, d.Href
	}
	return t
}

// runRef is a run's workflow and subject: what its workflow describes it by.
type runRef struct{ workflow, subject string }

// describe names runs by their subjects through their workflows' Describe, one call per
// workflow among runs that has one; a run it does not know is left out of the map.
func (s *Server) describe(ctx context.Context, tenantID string, runs []runRef) (map[runRef]workflow.Subject, error) {
	out := map[runRef]workflow.Subject{}
	bySubject := map[string][]string{}
	for _, r := range runs {
		if r.subject != "" && !slices.Contains(bySubject[r.workflow], r.subject) {
			bySubject[r.workflow] = append(bySubject[r.workflow], r.subject)
		}
	}
	for name, subjects := range bySubject {
		e, ok := s.app.Registry.Get(name)
		if !ok || e.Describe == nil {
			continue
		}
		found, err := e.Describe(ctx, tenantID, subjects)
		if err != nil {
			return nil, fmt.Errorf("describe the runs of %s: %w", name, err)
		}
		for subject, d := range found {
			out[runRef{name, subject}] = d
		}
	}
	return out, nil
}
