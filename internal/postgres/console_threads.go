package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/google/uuid"

	"weft/db"
	"weft/internal/fault"
	"weft/internal/runner"
)

// ThreadJobs lists a tenant's jobs of one thread, newest first (at most limit; limit <= 0
// means 100). Another tenant's thread has none.
func (s *JobStore) ThreadJobs(ctx context.Context, tenantID, threadID string, limit int) ([]runner.Job, error) {
	if limit <= 0 {
		limit = 100
	}
	rows, err := s.db.q.JobListByThread(ctx, db.JobListByThreadParams{TenantID: tenantID, ThreadID: threadID,
		MaxRows: int32(min(limit, math.MaxInt32))})
	if err != nil {
		return nil, fmt.Errorf("list jobs of thread %s: %w", threadID, translate(err))
	}
	return jobsFromRows(rows)
}

// CodeThreadBusy is the code of ErrThreadBusy.
const CodeThreadBusy = "WF_THREAD_BUSY"

// ErrThreadBusy refuses a new job (a fork, a run on a named thread) for a thread with a job
// that has not finished (queued, running, waiting for review, …), such as the one a
// moment-earlier click queued, or whose last run is still writing its last step (settling).
var ErrThreadBusy = fault.New(fault.Business, CodeThreadBusy,
	"the thread has a job that has not finished (queued, running or waiting for review, or its run is still writing its last step); try again once it has (its page shows where it stands)")

// lockIdleThread serializes, until the transaction ends, the transactions that start a job on
// a tenant's thread, and refuses (ErrThreadBusy) when the thread has an unfinished job. The
// check is a statement of its own after the lock: under READ COMMITTED (set explicitly by
// inThreadTx) its snapshot includes what another such transaction committed meanwhile.
func lockIdleThread(ctx context.Context, q *db.Queries, tenantID, threadID string) error {
	if err := q.JobThreadLock(ctx, db.JobThreadLockParams{TenantID: tenantID, ThreadID: threadID}); err != nil {
		return err
	}
	n, err := q.JobThreadActive(ctx, db.JobThreadActiveParams{TenantID: tenantID, ThreadID: threadID, Terminal: terminalStatuses})
	if err != nil {
		return err
	}
	if n > 0 {
		return ErrThreadBusy
	}
	return nil
}

// terminalStatuses are the statuses a job rests in for good.
var terminalStatuses = func() []string {
	var out []string
	for _, st := range runner.Statuses {
		if st.Terminal() {
			out = append(out, string(st))
		}
	}
	return out
}()

// EnqueueFork queues a job that forks its thread from the checkpoint retryFrom (the runner
// starts a job with RetryFrom set from that checkpoint when the thread has nothing left to
// run). The insert and the mark are one transaction, so no worker can claim the job before
// it is marked; the insert wakes idle workers at commit.
func (s *JobStore) EnqueueFork(ctx context.Context, nj runner.NewJob, retryFrom string) (runner.Job, error) {
	if nj.TenantID == "" || nj.Workflow == "" || nj.ThreadID == "" || retryFrom == "" {
		return runner.Job{}, fault.New(fault.Validation, fault.CodeValidation, "a fork needs a tenant, a workflow, a thread and a checkpoint")
	}
	if len(nj.Input) > 0 {
		// Input starts a new run (Runner.command), which would override the fork.
		return runner.Job{}, fault.New(fault.Validation, fault.CodeValidation, "a fork continues from its checkpoint and takes no input")
	}
	id, err := uuid.NewV7()
	if err != nil {
		return runner.Job{}, fmt.Errorf("enqueue fork: %w", err)
	}
	if nj.TraceID == "" {
		nj.TraceID = strings.ReplaceAll(uuid.NewString(), "-", "")
	}
	var row db.Job
	err = s.db.inThreadTx(ctx, func(q *db.Queries) error {
		// One fork at a time per thread, and none while a job of it is unfinished: two
		// confirmations sent at once (a double click) queue one fork, not two.
		if err := lockIdleThread(ctx, q, nj.TenantID, nj.ThreadID); err != nil {
			return err
		}
		var err error
		row, err = q.JobInsert(ctx, db.JobInsertParams{ID: id, TenantID: nj.TenantID, Workflow: nj.Workflow,
			ThreadID: nj.ThreadID, TraceID: nj.TraceID, Subject: nj.Subject})
		if err != nil {
			return err
		}
		marked, err := q.JobSetRetryFrom(ctx, db.JobSetRetryFromParams{RetryFrom: retryFrom, ID: id, TenantID: nj.TenantID})
		if err != nil {
			return err
		}
		if marked != 1 {
			return fmt.Errorf("mark job %s as a fork: not queued", id)
		}
		row.RetryFrom = &retryFrom
		return nil
	})
	if err != nil {
		return runner.Job{}, fmt.Errorf("enqueue fork of thread %s: %w", nj.ThreadID, translate(err))
	}
	return jobFromRow(row)
}

// LastThreadEventID is where a page of a tenant's thread rendered now streams live updates
// from, missing and repeating nothing: LatestID (the thread's own newest id would need a
// search of its rows, and every later event of it comes after LatestID).
func (b *EventBus) LastThreadEventID(ctx context.Context, tenantID, threadID string) (int64, error) {
	id, err := b.LatestID(ctx, tenantID)
	if err != nil {
		return 0, fmt.Errorf("last event of thread %s: %w", threadID, err)
	}
	return id, nil
}

// ReviewDecision is a decision recorded for a job's pause: who resumed it, with what value, when.
type ReviewDecision struct {
	JobID       string
	InterruptID string // the pause it answered
	Actor       string
	Decision    json.RawMessage
	At          time.Time
}

// ReviewDecisions lists the decisions recorded for a tenant's job, oldest first. Another
// tenant's job has none.
func (s *JobStore) ReviewDecisions(ctx context.Context, tenantID, jobID string) ([]ReviewDecision, error) {
	return s.ReviewDecisionsOfJobs(ctx, tenantID, []string{jobID})
}

// ReviewDecisionsOfJobs lists the decisions recorded for a tenant's jobs (a thread's runs),
// oldest first. Other tenants' jobs, and ids that are not job ids, have none.
func (s *JobStore) ReviewDecisionsOfJobs(ctx context.Context, tenantID string, jobIDs []string) ([]ReviewDecision, error) {
	ids := make([]uuid.UUID, 0, len(jobIDs))
	for _, id := range jobIDs {
		if uid, ok := parseID(id); ok {
			ids = append(ids, uid)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	rows, err := s.db.q.ReviewDecisionListJobs(ctx, db.ReviewDecisionListJobsParams{TenantID: tenantID, JobIds: ids})
	if err != nil {
		return nil, fmt.Errorf("review decisions of %d jobs: %w", len(ids), translate(err))
	}
	out := make([]ReviewDecision, len(rows))
	for i, r := range rows {
		out[i] = ReviewDecision{JobID: r.JobID.String(), InterruptID: r.InterruptID, Actor: r.Actor, Decision: r.Decision, At: r.At}
	}
	return out, nil
}
