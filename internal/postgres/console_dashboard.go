package postgres

import (
	"context"
	"fmt"

	"weft/db"
	"weft/internal/runner"
)

// What the console's dashboard and list pages read (internal/server). Every read is scoped
// to a tenant.

// QueueLatestJobs adds to r the newest job of each of a tenant's threads among threadIDs
// (thread id → job id), written to *out: a listed job that is not its thread's newest was
// started again since. Other tenants' threads are left out.
func (s *JobStore) QueueLatestJobs(r *Reads, tenantID string, threadIDs []string, out *map[string]string) {
	*out = map[string]string{}
	if len(threadIDs) == 0 {
		return
	}
	r.add(func(ctx context.Context, q *db.Queries) error {
		rows, err := q.JobLatestOfThreads(ctx, db.JobLatestOfThreadsParams{TenantID: tenantID, ThreadIds: threadIDs})
		if err != nil {
			return fmt.Errorf("find the threads' latest jobs: %w", translate(err))
		}
		for _, row := range rows {
			(*out)[row.ThreadID] = row.ID.String()
		}
		return nil
	})
}

// DashboardList is one list of the dashboard: the newest of a tenant's jobs of one workflow
// in one status, at most Limit of them; with LongestWaiting (and Status waiting_review), the
// reviews that have waited longest, as the inbox lists them.
type DashboardList struct {
	Workflow       string
	Status         runner.Status
	Limit          int
	LongestWaiting bool
}

// DashboardJob is a job in a dashboard list, with how far it got.
type DashboardJob struct {
	runner.Job
	// NodesDone are the distinct nodes the job's runs completed without error (jobs that run
	// or wait to retry only), from the node execution records. Records are written in
	// batches shortly after each node ends, so the newest node may show up a moment late.
	NodesDone []string
}

// QueueDashboardLists adds the tenant's lists to r as one statement, written to *out:
// (*out)[i] is lists[i]'s jobs, newest first (longest waiting first with LongestWaiting). Each list
// reads one range of an index, so it costs the same however many jobs the tenant has.
func (s *JobStore) QueueDashboardLists(r *Reads, tenantID string, lists []DashboardList, out *[][]DashboardJob) {
	*out = make([][]DashboardJob, len(lists))
	if len(lists) == 0 {
		return
	}
	p := db.JobDashboardListsParams{TenantID: tenantID}
	for _, l := range lists {
		p.Workflows, p.Statuses = append(p.Workflows, l.Workflow), append(p.Statuses, string(l.Status))
		p.Limits = append(p.Limits, pageSize(l.Limit))
		p.LongestWaiting = append(p.LongestWaiting, l.LongestWaiting && l.Status == runner.WaitingReview)
	}
	r.add(func(ctx context.Context, q *db.Queries) error {
		rows, err := q.JobDashboardLists(ctx, p)
		if err != nil {
			return fmt.Errorf("list dashboard jobs: %w", translate(err))
		}
		for _, row := range rows {
			j, err := jobFromRow(row.Job)
			if err != nil {
				return err
			}
			dj := DashboardJob{Job: j, NodesDone: row.NodesDone}
			k := int(row.List) - 1 // SQL counts from 1
			(*out)[k] = append((*out)[k], dj)
		}
		return nil
	})
}

// JobsByID loads those of ids that are the tenant's jobs (job id → job).
func (s *JobStore) JobsByID(ctx context.Context, tenantID string, ids []string) (map[string]runner.Job, error) {
	out := map[string]runner.Job{}
	uids := parseIDs(ids)
	if len(uids) == 0 {
		return out, nil
	}
	rows, err := s.db.q.JobListByIDs(ctx, db.JobListByIDsParams{TenantID: tenantID, Ids: uids})
	if err != nil {
		return nil, fmt.Errorf("load jobs: %w", translate(err))
	}
	for _, r := range rows {
		j, err := jobFromRow(r)
		if err != nil {
			return nil, err
		}
		out[j.ID] = j
	}
	return out, nil
}

// LatestID is where a page of a tenant rendered now streams from, without replaying the
// tenant's history: the newest stored event id (of any tenant; ids are one sequence, so
// every later event of the tenant is after it).
func (b *EventBus) LatestID(ctx context.Context, tenantID string) (int64, error) {
	var id int64
	r := b.db.Reads()
	b.QueueLatestID(r, tenantID, &id)
	return id, r.Run(ctx)
}

// QueueLatestID adds LatestID to r, written to *out.
func (b *EventBus) QueueLatestID(r *Reads, tenantID string, out *int64) {
	r.add(func(ctx context.Context, q *db.Queries) error {
		id, err := q.EventsMaxID(ctx) // any tenant's: ids are one sequence
		if err != nil {
			return fmt.Errorf("latest event id: %w", translate(err))
		}
		*out = id
		return nil
	})
}
