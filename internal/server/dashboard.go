package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"weft/internal/auth"
	"weft/internal/postgres"
	"weft/internal/runner"
	"weft/internal/workflow/registry"
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
var dashboardCounted = []runner.Status{runner.Queued, runner.Running, runner.WaitingReview, runner.RetryScheduled,
	runner.Failed, runner.Succeeded}

func (s *Server) routesDashboard(g *echo.Group) {
	pm := requireRole(auth.PM, auth.Admin)
	g.GET("/dashboard", s.dashboard, pm)
	g.GET("/dashboard/events", s.dashboardEvents, pm)
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
	var projects []postgres.Project
	live, err := s.dashboardLive(ctx, u, func(r *postgres.Reads) {
		s.app.Events.QueueLatestID(r, u.TenantID, &latest)
		s.app.Evaluations.QueueProjects(r, u.TenantID, &projects)
	})
	if err != nil {
		return err
	}
	v := page.DashboardVM{Live: live, StreamURL: "/dashboard/events?last_event_id=" + strconv.FormatInt(latest, 10)}
	for _, p := range projects {
		v.Projects = append(v.Projects, page.DashProjectVM{ID: p.ID, Name: p.Name, Budget: page.Money(p.Budget, p.Currency),
			Evaluations: p.Evaluations, Done: p.Completed, Created: p.CreatedAt})
	}
	m := s.meta(c, "Dashboard")
	m.Active = "dashboard"
	return render(c, http.StatusOK, page.Dashboard(m, v))
}

// dashboardEvents streams the live region, re-rendered when the tenant's
// runs publish events (at most once per dashboardThrottle).
func (s *Server) dashboardEvents(c echo.Context) error {
	u := currentUser(c)
	var last time.Time
	return s.stream(c, u.TenantID, "", func(ctx context.Context, _ postgres.StoredEvent) ([]sseMessage, error) {
		if time.Since(last) < dashboardThrottle {
			return nil, nil
		}
		live, err := s.dashboardLive(ctx, u, nil)
		if err != nil {
			return nil, err
		}
		last = time.Now()
		return []sseMessage{{Event: "dashboard", HTML: page.DashboardLive(live)}}, nil
	})
}

// dashboardLive reads the live region: per registered workflow, its job
// counts (from the maintained counters), and the jobs behind the counts
// that need attention. A list is read only when its counter is nonzero.
// It waits for the database three times (postgres.Reads): the counts, with
// whatever first queues beside them; the lists; their labels and progress.
func (s *Server) dashboardLive(ctx context.Context, u auth.User, first func(*postgres.Reads)) (page.DashboardLiveVM, error) {
	tenant := u.TenantID
	v := page.DashboardLiveVM{Now: time.Now(), CanReview: u.Role == auth.Reviewer || u.Role == auth.Admin}
	var counts []postgres.JobCount
	reads := s.app.DB.Reads()
	if first != nil {
		first(reads)
	}
	s.app.Jobs.QueueCountJobs(reads, tenant, &counts)
	if err := reads.Run(ctx); err != nil {
		return v, err
	}
	byWorkflow := map[string]map[runner.Status]int64{}
	for _, c := range counts {
		if byWorkflow[c.Workflow] == nil {
			byWorkflow[c.Workflow] = map[runner.Status]int64{}
		}
		byWorkflow[c.Workflow][c.Status] += c.N
	}
	// Every list behind a nonzero counter, read in one round trip; entryOf[k] is the
	// registry entry of queries[k].
	var queries []postgres.JobQuery
	var entryOf []int
	entries := s.app.Registry.All()
	for i, e := range entries {
		for _, st := range []runner.Status{runner.Running, runner.RetryScheduled, runner.WaitingReview, runner.Failed} {
			if byWorkflow[e.Name][st] == 0 {
				continue
			}
			limit := dashboardListed
			if st == runner.Failed {
				limit = dashboardFailures
			}
			entryOf = append(entryOf, i)
			queries = append(queries, postgres.JobQuery{Filter: postgres.JobFilter{TenantID: tenant, Status: st, Workflow: e.Name}, Limit: limit})
		}
	}
	results, err := s.app.Jobs.ListJobsMany(ctx, queries)
	if err != nil {
		return v, err
	}
	type lists struct{ running, waiting, failed []runner.Job }
	found := make([]lists, len(entries))
	for k, q := range queries {
		l := &found[entryOf[k]]
		switch q.Filter.Status {
		case runner.Running, runner.RetryScheduled: // running first, then those waiting to retry
			l.running = append(l.running, results[k][:min(len(results[k]), dashboardListed-len(l.running))]...)
		case runner.WaitingReview:
			l.waiting = results[k]
		case runner.Failed:
			l.failed = results[k]
		}
	}
	var threads []string
	var active []runner.Job
	for _, l := range found {
		active = append(active, l.running...)
		for _, js := range [][]runner.Job{l.running, l.waiting, l.failed} {
			for _, j := range js {
				threads = append(threads, j.ThreadID)
			}
		}
	}
	var labels map[string]postgres.EvaluationLabel
	var done map[string][]string
	reads = s.app.DB.Reads()
	s.app.Evaluations.QueueEvaluationLabels(reads, tenant, threads, &labels)
	s.app.Jobs.QueueNodesDone(reads, tenant, active, &done)
	if err := reads.Run(ctx); err != nil {
		return v, err
	}
	ref := func(j runner.Job) page.DashThreadVM {
		t := page.DashThreadVM{ThreadID: j.ThreadID, Label: j.Subject}
		if l, ok := labels[j.ThreadID]; ok {
			t.Label, t.Context, t.Href = l.Supplier, l.Project, "/projects/"+url.PathEscape(l.ProjectID)
		}
		return t
	}
	for i, e := range entries {
		n, l := byWorkflow[e.Name], found[i]
		w := page.DashWorkflowVM{Name: e.Name, Title: e.Title, Description: e.Description, PathLen: len(e.Path)}
		for _, st := range runner.Statuses {
			if slices.Contains(dashboardCounted, st) || n[st] != 0 {
				w.Counts = append(w.Counts, page.DashCountVM{Status: string(st), N: n[st]})
			}
			w.Total += n[st]
		}
		for _, j := range l.running {
			w.Running = append(w.Running, page.DashRunningVM{Thread: ref(j), JobID: j.ID, Status: string(j.Status),
				Done: pathDone(e, done[j.ID]), Of: len(e.Path), RetryCount: j.RetryCount, Since: j.CreatedAt})
		}
		w.MoreRunning = n[runner.Running] + n[runner.RetryScheduled] - int64(len(l.running))
		for _, j := range l.waiting {
			// updated_at is paused_at while a job waits: the pause was its last change.
			w.Waiting = append(w.Waiting, page.DashWaitingVM{Thread: ref(j), JobID: j.ID, Since: j.UpdatedAt})
		}
		w.MoreWaiting = n[runner.WaitingReview] - int64(len(l.waiting))
		for _, j := range l.failed {
			f := page.DashFailureVM{Thread: ref(j), JobID: j.ID, Code: "WF_UNKNOWN", At: j.UpdatedAt}
			if len(j.Errors) > 0 {
				je := j.Errors[len(j.Errors)-1]
				f.Code, f.Class, f.Node, f.At = je.Code, string(je.Class), je.Node, je.At
				// Messages often repeat the code and class the panel shows already.
				f.Message = strings.TrimPrefix(je.Message, fmt.Sprintf("%s (%s): ", je.Code, je.Class))
			}
			w.Failures = append(w.Failures, f)
		}
		slices.SortStableFunc(w.Failures, func(a, b page.DashFailureVM) int { return b.At.Compare(a.At) })
		w.MoreFailures = n[runner.Failed] - int64(len(l.failed))
		v.Workflows = append(v.Workflows, w)
	}
	return v, nil
}

// pathDone counts the nodes of the workflow's main path among done.
func pathDone(e registry.Entry, done []string) int {
	k := 0
	for _, node := range e.Path {
		if slices.Contains(done, node) {
			k++
		}
	}
	return k
}
