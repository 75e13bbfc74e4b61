package postgres

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"weft/db"
	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/runner"
)

// JobStore is the runner's durable Store (migrations/00003_jobs.sql): the job queue with
// leases, the dead-letter queue, resume tokens and reviewers' decisions.
//
// Every status change is checked by runner.CheckTransition before its SQL, and the SQL names
// the status it leaves (and, for a worker's change, the lease owner) in its WHERE clause: a
// worker that no longer holds a job's lease gets ErrLeaseLost and changes nothing. The
// jobs_guard trigger checks the machine a third time, for any writer.
type JobStore struct {
	db *DB
}

// NewJobStore returns a JobStore on d.
func NewJobStore(d *DB) *JobStore { return &JobStore{db: d} }

var _ runner.Store = (*JobStore)(nil)

// ErrLeaseLost: the worker no longer holds the job's lease (it expired and the job was
// requeued, or the job moved on), so its change was refused. Transient: the job runs again
// wherever it is claimed next. Errors wrap it: test with errors.Is.
var ErrLeaseLost = fault.New(fault.Transient, fault.CodeLeaseLost, "the worker no longer holds the job's lease")

// Audit actions JobStore writes.
const (
	ActionThreadResume = "thread.resume"
	ActionJobRetry     = "job.retry"
	ActionDLQDiscard   = "dlq.discard"
)

// DLQ entry statuses.
const (
	DLQStatusRecorded  = "recorded"
	DLQStatusRetried   = "retried"
	DLQStatusDiscarded = "discarded"
)

// CompactCountsEvery is how often App.RunWorkers folds the job counters.
const CompactCountsEvery = 2 * time.Second

// rescueBatch bounds the jobs one Rescue statement requeues (it loops until done).
const rescueBatch = 500

// jobCountsLockKey is the transaction-scoped advisory lock compactions of job_counts take.
const jobCountsLockKey int64 = 0x7765667440636e74 // "weft@cnt"

// Enqueue implements runner.Store. The job is queued; the insert wakes idle workers (NOTIFY
// weft_jobs from a statement-level trigger, delivered at commit).
func (s *JobStore) Enqueue(ctx context.Context, nj runner.NewJob) (runner.Job, error) {
	if nj.TenantID == "" || nj.Workflow == "" {
		return runner.Job{}, fault.New(fault.Validation, fault.CodeValidation, "a job needs a tenant and a workflow")
	}
	if len(nj.Input) > 0 && !json.Valid(nj.Input) {
		return runner.Job{}, fault.New(fault.Validation, fault.CodeValidation, "a job's input must be JSON")
	}
	id, err := uuid.NewV7()
	if err != nil {
		return runner.Job{}, fmt.Errorf("enqueue job: %w", err)
	}
	if nj.ThreadID == "" {
		nj.ThreadID = id.String()
	}
	if nj.TraceID == "" {
		nj.TraceID = strings.ReplaceAll(uuid.NewString(), "-", "")
	}
	var input []byte
	if len(nj.Input) > 0 {
		input = nj.Input
	}
	insert := func(q *db.Queries) (db.Job, error) {
		return q.JobInsert(ctx, db.JobInsertParams{ID: id, TenantID: nj.TenantID, Workflow: nj.Workflow,
			ThreadID: nj.ThreadID, TraceID: nj.TraceID, Subject: nj.Subject, Input: input, TraceParent: nj.TraceParent})
	}
	var row db.Job
	if nj.ThreadID == id.String() {
		row, err = insert(s.db.q) // a new thread: nothing else can run it
	} else {
		// A run on a named thread waits for the thread's unfinished job, if any: two clicks
		// on Start queue one run.
		err = s.db.inThreadTx(ctx, func(q *db.Queries) error {
			if err := lockIdleThread(ctx, q, nj.TenantID, nj.ThreadID); err != nil {
				return err
			}
			var err error
			row, err = insert(q)
			return err
		})
	}
	if err != nil {
		return runner.Job{}, fmt.Errorf("enqueue job of workflow %s: %w", nj.Workflow, translate(err))
	}
	return jobFromRow(row)
}

// Claim implements runner.Store: one statement leases up to limit runnable jobs (queued, or
// retry_scheduled and due), oldest run_after first, skipping rows other workers hold locked.
func (s *JobStore) Claim(ctx context.Context, worker string, limit int, lease time.Duration) ([]runner.Job, error) {
	if limit <= 0 {
		return nil, nil
	}
	if worker == "" || lease <= 0 {
		return nil, fault.New(fault.Validation, fault.CodeValidation, "a claim needs a worker and a positive lease")
	}
	for _, from := range []runner.Status{runner.Queued, runner.RetryScheduled} {
		if err := runner.CheckTransition(from, runner.Running); err != nil {
			return nil, err
		}
	}
	rows, err := s.db.q.JobClaim(ctx, db.JobClaimParams{Worker: worker, LeaseSeconds: lease.Seconds(),
		MaxJobs: int32(min(limit, math.MaxInt32))})
	if err != nil {
		return nil, fmt.Errorf("claim jobs: %w", translate(err))
	}
	// RETURNING has no order: give the claim order back.
	slices.SortFunc(rows, func(a, b db.Job) int {
		if c := a.RunAfter.Compare(b.RunAfter); c != 0 {
			return c
		}
		return strings.Compare(a.ID.String(), b.ID.String())
	})
	return jobsFromRows(rows)
}

// Heartbeat implements runner.Store: one statement extends both.
func (s *JobStore) Heartbeat(ctx context.Context, worker string, ids, settling []string, lease time.Duration) ([]string, error) {
	if len(ids) == 0 && len(settling) == 0 {
		return nil, nil
	}
	uids := parseIDs(ids)
	kept, err := s.db.q.JobHeartbeat(ctx, db.JobHeartbeatParams{LeaseSeconds: lease.Seconds(), Ids: uids,
		Settling: parseIDs(settling), Worker: worker})
	if err != nil {
		return nil, fmt.Errorf("heartbeat %d jobs: %w", len(ids)+len(settling), translate(err))
	}
	held := make(map[string]bool, len(kept))
	for _, id := range kept {
		held[id.String()] = true
	}
	var lost []string
	for _, id := range ids {
		if !held[id] {
			lost = append(lost, id)
		}
	}
	return lost, nil
}

// Rescue implements runner.Store: running jobs whose lease expired are queued again (and
// idle workers woken).
func (s *JobStore) Rescue(ctx context.Context) (int, error) {
	if err := runner.CheckTransition(runner.Running, runner.Queued); err != nil {
		return 0, err
	}
	total := 0
	for {
		ids, err := s.db.q.JobRescue(ctx, rescueBatch)
		total += len(ids)
		if err != nil {
			return total, fmt.Errorf("rescue expired leases: %w", translate(err))
		}
		if len(ids) < rescueBatch {
			return total, nil
		}
	}
}

// ExpirePauses implements runner.Store: up to limit jobs paused before pausedBefore move to
// running, leased to worker, and are dead-lettered with the error why gives each (it is told
// the node the job paused at), in one transaction: a job is never left moved but not
// dead-lettered.
func (s *JobStore) ExpirePauses(ctx context.Context, worker string, lease time.Duration, pausedBefore time.Time, limit int,
	why func(j runner.Job, node string) runner.JobError) ([]runner.Job, error) {
	if err := runner.CheckTransition(runner.WaitingReview, runner.Running); err != nil {
		return nil, err
	}
	var jobs []runner.Job
	err := s.db.inTx(ctx, func(q *db.Queries) error {
		jobs = jobs[:0]
		rows, err := q.JobExpirePauses(ctx, db.JobExpirePausesParams{PausedBefore: pausedBefore, MaxJobs: int32(min(limit, math.MaxInt32)),
			Worker: worker, LeaseSeconds: lease.Seconds()})
		if err != nil {
			return translate(err)
		}
		for _, r := range rows {
			j := runner.Job{ID: r.ID.String(), TenantID: r.TenantID, ThreadID: r.ThreadID, Workflow: r.Workflow, TraceID: r.TraceID,
				RetryCount: int(r.RetryCount), Status: runner.Failed}
			var ints []graph.PendingInterrupt
			node := ""
			if json.Unmarshal(r.PausedInterrupts, &ints) == nil && len(ints) > 0 {
				node = ints[0].Node
			}
			if _, err := s.deadLetterTx(ctx, q, r.ID, worker, why(j, node)); err != nil {
				return err
			}
			jobs = append(jobs, j)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("expire unanswered pauses: %w", err)
	}
	return jobs, nil
}

// Release implements runner.Store: the jobs worker still holds are queued again. Jobs it no
// longer holds are left alone.
func (s *JobStore) Release(ctx context.Context, worker string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	if err := runner.CheckTransition(runner.Running, runner.Queued); err != nil {
		return err
	}
	if _, err := s.db.q.JobRelease(ctx, db.JobReleaseParams{Ids: parseIDs(ids), Worker: worker}); err != nil {
		return fmt.Errorf("release %d jobs: %w", len(ids), translate(err))
	}
	return nil
}

// Succeed implements runner.Store.
func (s *JobStore) Succeed(ctx context.Context, id, worker string) error {
	return s.workerMove(ctx, id, worker, runner.Succeeded, func(uid uuid.UUID) (int64, error) {
		return s.db.q.JobSucceed(ctx, db.JobSucceedParams{ID: uid, Worker: worker})
	})
}

// Pause implements runner.Store.
func (s *JobStore) Pause(ctx context.Context, id, worker string, ints []graph.PendingInterrupt) error {
	if ints == nil {
		ints = []graph.PendingInterrupt{}
	}
	b, err := json.Marshal(ints)
	if err != nil {
		return fmt.Errorf("pause job %s: %w", id, err)
	}
	return s.workerMove(ctx, id, worker, runner.WaitingReview, func(uid uuid.UUID) (int64, error) {
		return s.db.q.JobPause(ctx, db.JobPauseParams{Interrupts: b, ID: uid, Worker: worker})
	})
}

// Retry implements runner.Store. The job's RetryFrom becomes e.CheckpointID (the latest
// failure's fork point; empty when the graph did not handle the failure).
func (s *JobStore) Retry(ctx context.Context, id, worker string, e runner.JobError, at time.Time) error {
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("retry job %s: %w", id, err)
	}
	return s.workerMove(ctx, id, worker, runner.RetryScheduled, func(uid uuid.UUID) (int64, error) {
		return s.db.q.JobRetry(ctx, db.JobRetryParams{Error: b, RunAfter: at, RetryFrom: optional(e.CheckpointID), ID: uid, Worker: worker})
	})
}

// Settling implements runner.Store.
func (s *JobStore) Settling(ctx context.Context, id, worker string, d time.Duration) error {
	uid, ok := parseID(id)
	if !ok {
		return fmt.Errorf("mark job %q settling: not a job id: %w", id, ErrLeaseLost)
	}
	n, err := s.db.q.JobSettling(ctx, db.JobSettlingParams{ID: uid, Worker: worker, LeaseSeconds: d.Seconds()})
	if err != nil {
		return fmt.Errorf("mark job %s settling: %w", id, translate(err))
	}
	if n == 0 {
		return s.leaseLost(ctx, s.db.q, uid, worker, runner.Running)
	}
	return nil
}

// Settled implements runner.Store.
func (s *JobStore) Settled(ctx context.Context, id, worker string) error {
	uid, ok := parseID(id)
	if !ok {
		return nil
	}
	if err := s.db.q.JobSettled(ctx, db.JobSettledParams{ID: uid, Worker: worker}); err != nil {
		return fmt.Errorf("end the settling of job %s: %w", id, translate(err))
	}
	return nil
}

// workerMove changes a running job held by worker to status to with exec (one guarded
// UPDATE returning the rows it changed).
func (s *JobStore) workerMove(ctx context.Context, id, worker string, to runner.Status, exec func(uuid.UUID) (int64, error)) error {
	if err := runner.CheckTransition(runner.Running, to); err != nil {
		return err
	}
	uid, ok := parseID(id)
	if !ok {
		return fmt.Errorf("move job %q to %s: not a job id: %w", id, to, ErrLeaseLost)
	}
	n, err := exec(uid)
	if err != nil {
		return fmt.Errorf("move job %s to %s: %w", id, to, translate(err))
	}
	if n == 0 {
		return s.leaseLost(ctx, s.db.q, uid, worker, to)
	}
	return nil
}

// leaseLost explains a worker's refused change.
func (s *JobStore) leaseLost(ctx context.Context, q *db.Queries, id uuid.UUID, worker string, to runner.Status) error {
	st, err := q.JobState(ctx, id)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("move job %s to %s: no such job: %w", id, to, ErrLeaseLost)
	case err != nil:
		return fmt.Errorf("move job %s to %s: %w", id, to, translate(err))
	}
	return lostError(id, worker, to, st.Status, st.LeaseOwner)
}

func lostError(id uuid.UUID, worker string, to runner.Status, status string, owner *string) error {
	held := "no worker"
	if owner != nil {
		held = fmt.Sprintf("worker %q", *owner)
	}
	return fmt.Errorf("move job %s to %s: it is %s and leased to %s, not running under worker %q: %w",
		id, to, status, held, worker, ErrLeaseLost)
}

// DeadLetter implements runner.Store. In one transaction: the error joins the history, the job
// walks running → dlq_pending → dlq_recorded → failed (each step checked) and the DLQ row is
// written, keyed by (job_id, retry_count). A replay for a job that already failed at this
// retry_count returns the recorded entry's id and changes nothing.
func (s *JobStore) DeadLetter(ctx context.Context, id, worker string, e runner.JobError) (string, error) {
	uid, ok := parseID(id)
	if !ok {
		return "", fmt.Errorf("dead-letter job %q: not a job id: %w", id, ErrLeaseLost)
	}
	var dlqID uuid.UUID
	err := s.db.inTx(ctx, func(q *db.Queries) error {
		var err error
		dlqID, err = s.deadLetterTx(ctx, q, uid, worker, e)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("dead-letter job %s: %w", id, err)
	}
	return dlqID.String(), nil
}

// deadLetterTx is DeadLetter in the transaction of q.
func (s *JobStore) deadLetterTx(ctx context.Context, q *db.Queries, uid uuid.UUID, worker string, e runner.JobError) (uuid.UUID, error) {
	for _, step := range [][2]runner.Status{{runner.Running, runner.DLQPending}, {runner.DLQPending, runner.DLQRecorded},
		{runner.DLQRecorded, runner.Failed}} {
		if err := runner.CheckTransition(step[0], step[1]); err != nil {
			return uuid.Nil, err
		}
	}
	if !slices.Contains(fault.Classes, e.Class) {
		e.Class = fault.Permanent
	}
	if e.Code == "" {
		e.Code = fault.CodeUnknown
	}
	errJSON, err := json.Marshal(e)
	if err != nil {
		return uuid.Nil, fmt.Errorf("encode the error: %w", err)
	}
	var dlqID uuid.UUID
	err = func() error {
		j, err := q.JobLockByID(ctx, uid)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("no such job: %w", ErrLeaseLost)
		}
		if err != nil {
			return translate(err)
		}
		if j.Status == string(runner.Failed) {
			row, err := q.DLQGetByAttempt(ctx, db.DLQGetByAttemptParams{JobID: uid, RetryCount: j.RetryCount})
			if err == nil {
				dlqID = row.ID // a replay: already recorded
				return nil
			}
			if !errors.Is(err, pgx.ErrNoRows) {
				return translate(err)
			}
		}
		if j.Status != string(runner.Running) || j.LeaseOwner == nil || *j.LeaseOwner != worker {
			return lostError(uid, worker, runner.DLQPending, j.Status, j.LeaseOwner)
		}
		j, err = q.JobDeadLetterStart(ctx, db.JobDeadLetterStartParams{Error: errJSON, RetryFrom: optional(e.CheckpointID),
			ID: uid, Worker: worker})
		if errors.Is(err, pgx.ErrNoRows) {
			return s.leaseLost(ctx, q, uid, worker, runner.DLQPending)
		}
		if err != nil {
			return translate(err)
		}
		newID, err := uuid.NewV7()
		if err != nil {
			return err
		}
		dlqID, err = q.DLQInsert(ctx, db.DLQInsertParams{ID: newID, TenantID: j.TenantID, JobID: uid, Workflow: j.Workflow,
			Class: string(e.Class), Code: e.Code, Message: e.Message, TraceID: firstNonEmpty(e.TraceID, j.TraceID),
			Node: e.Node, RetryCount: j.RetryCount})
		if errors.Is(err, pgx.ErrNoRows) { // (job_id, retry_count) already recorded
			row, gerr := q.DLQGetByAttempt(ctx, db.DLQGetByAttemptParams{JobID: uid, RetryCount: j.RetryCount})
			if gerr != nil {
				return translate(gerr)
			}
			dlqID, err = row.ID, nil
		}
		if err != nil {
			return translate(err)
		}
		if n, err := q.JobDeadLetterRecorded(ctx, db.JobDeadLetterRecordedParams{ID: uid, Worker: worker}); err != nil || n == 0 {
			return stepError(ctx, s, q, uid, worker, runner.DLQRecorded, err)
		}
		if n, err := q.JobDeadLetterFail(ctx, db.JobDeadLetterFailParams{ID: uid, Worker: worker}); err != nil || n == 0 {
			return stepError(ctx, s, q, uid, worker, runner.Failed, err)
		}
		return nil
	}()
	return dlqID, err
}

func stepError(ctx context.Context, s *JobStore, q *db.Queries, id uuid.UUID, worker string, to runner.Status, err error) error {
	if err != nil {
		return translate(err)
	}
	return s.leaseLost(ctx, q, id, worker, to)
}

// pruneTokensBatch bounds one delete of PruneTokens.
const pruneTokensBatch = 5000

// PruneTokens deletes the resume tokens that expired before cutoff (used or not: the review
// decisions and the audit log keep what was decided) and returns how many went. A link that
// old then reads as unknown rather than as used or expired.
func (s *JobStore) PruneTokens(ctx context.Context, cutoff time.Time) (int, error) {
	total := 0
	for {
		n, err := s.db.q.ResumeTokensPrune(ctx, db.ResumeTokensPruneParams{Cutoff: cutoff, MaxRows: pruneTokensBatch})
		total += int(n)
		if err != nil {
			return total, fmt.Errorf("prune expired resume tokens: %w", translate(err))
		}
		if n < pruneTokensBatch {
			return total, nil
		}
	}
}

// IssueToken implements runner.Store: the token is bound to the tenant's job and its thread,
// and to interruptID, which is pending (the job waits for review) or about to be raised (the
// job is running the node that pauses).
func (s *JobStore) IssueToken(ctx context.Context, tenantID, jobID, interruptID, tokenHash string, expiresAt time.Time) error {
	uid, ok := parseID(jobID)
	if !ok {
		return fmt.Errorf("issue resume token: job %q: %w", jobID, graph.ErrNotFound)
	}
	if tokenHash == "" || interruptID == "" {
		return fault.New(fault.Validation, fault.CodeInterruptResumeInvalid, "a resume token needs its hash and interrupt id")
	}
	n, err := s.db.q.ResumeTokenInsert(ctx, db.ResumeTokenInsertParams{Hash: tokenHash, InterruptID: interruptID,
		ExpiresAt: expiresAt, JobID: uid, TenantID: tenantID})
	if err != nil {
		return fmt.Errorf("issue resume token for job %s: %w", jobID, translate(err))
	}
	if n == 1 {
		return nil
	}
	j, err := s.db.q.JobGet(ctx, db.JobGetParams{ID: uid, TenantID: tenantID})
	if err != nil {
		return fmt.Errorf("issue resume token: job %s: %w", jobID, translate(err))
	}
	if j.Status != string(runner.WaitingReview) && j.Status != string(runner.Running) {
		return fault.New(fault.Validation, fault.CodeInterruptResumeInvalid,
			fmt.Sprintf("the thread is not waiting for review (the job is %s)", j.Status))
	}
	return fault.New(fault.Validation, fault.CodeInterruptResumeInvalid,
		fmt.Sprintf("interrupt %q is not pending on the thread", interruptID))
}

// ResumeJob implements runner.Store. In one transaction: the token is used up (unused, of
// the tenant, unexpired by p.Now), the job locked and checked (waiting for review, the
// token's thread, the token's interrupt pending), the decision recorded, the audit row
// written and the job moved waiting_review → running leased to p.Worker with resume =
// {interrupt id: decision}. Concurrent resumes with one token: one wins, the others find it
// used. Any refusal changes nothing.
func (s *JobStore) ResumeJob(ctx context.Context, p runner.ResumeParams) (runner.Job, error) {
	invalid := func(reason string) error {
		return fault.New(fault.Validation, fault.CodeInterruptResumeInvalid, reason)
	}
	if p.Actor == "" {
		return runner.Job{}, fault.New(fault.Security, fault.CodeInterruptResumeInvalid, "a resume needs the reviewer's identity")
	}
	if len(p.Decision) == 0 || !json.Valid(p.Decision) {
		return runner.Job{}, fault.New(fault.Validation, fault.CodeValidation, "the decision must be JSON")
	}
	if p.Worker == "" || p.Lease <= 0 {
		return runner.Job{}, fault.New(fault.Validation, fault.CodeValidation, "a resume needs a worker and a positive lease")
	}
	if err := runner.CheckTransition(runner.WaitingReview, runner.Running); err != nil {
		return runner.Job{}, err
	}
	now := p.Now
	if now.IsZero() {
		now = time.Now()
	}
	var out db.Job
	var pausedAt *time.Time // when the answered pause began
	err := s.db.inTx(ctx, func(q *db.Queries) error {
		tok, err := q.ResumeTokenConsume(ctx, db.ResumeTokenConsumeParams{Now: now, Actor: p.Actor, Hash: p.TokenHash, TenantID: p.TenantID})
		if errors.Is(err, pgx.ErrNoRows) {
			t, gerr := q.ResumeTokenGet(ctx, db.ResumeTokenGetParams{Hash: p.TokenHash, TenantID: p.TenantID})
			switch {
			case errors.Is(gerr, pgx.ErrNoRows):
				return invalid("unknown resume token")
			case gerr != nil:
				return translate(gerr)
			case t.UsedAt != nil:
				return invalid("the resume token was already used: its decision was recorded at " + t.UsedAt.UTC().Format(time.RFC3339))
			case !t.ExpiresAt.After(now):
				return invalid("the resume token expired at " + t.ExpiresAt.UTC().Format(time.RFC3339))
			}
			return invalid("the resume token cannot be used")
		}
		if err != nil {
			return translate(err)
		}
		if p.JobID != "" && tok.JobID.String() != p.JobID {
			// The decision was checked against another job's pause (its workflow's rules).
			if id, err := uuid.Parse(p.JobID); err == nil {
				if pj, err := q.JobLock(ctx, db.JobLockParams{ID: id, TenantID: p.TenantID}); err == nil && pj.ThreadID == tok.ThreadID {
					return invalid("the resume token belongs to an earlier run of this thread; its current review has a token of its own")
				}
			}
			return invalid("the resume token belongs to another thread's review")
		}
		j, err := q.JobLock(ctx, db.JobLockParams{ID: tok.JobID, TenantID: p.TenantID})
		if errors.Is(err, pgx.ErrNoRows) {
			return invalid("the resume token's job no longer exists")
		}
		if err != nil {
			return translate(err)
		}
		if j.Status != string(runner.WaitingReview) {
			return invalid(fmt.Sprintf("the thread is not waiting for review (the job is %s)", j.Status))
		}
		if j.ThreadID != tok.ThreadID {
			return invalid("the resume token belongs to another thread")
		}
		var ints []graph.PendingInterrupt
		if err := json.Unmarshal(j.Interrupts, &ints); err != nil {
			return fmt.Errorf("decode interrupts: %w", err)
		}
		if !slices.ContainsFunc(ints, func(it graph.PendingInterrupt) bool { return it.ID == tok.InterruptID }) {
			return invalid(fmt.Sprintf("interrupt %q is no longer pending on the thread", tok.InterruptID))
		}
		if err := q.ReviewDecisionInsert(ctx, db.ReviewDecisionInsertParams{TenantID: p.TenantID, JobID: j.ID,
			ThreadID: j.ThreadID, InterruptID: tok.InterruptID, TokenHash: p.TokenHash, Actor: p.Actor,
			Decision: p.Decision, At: now}); err != nil {
			return translate(err)
		}
		payload, err := json.Marshal(map[string]any{"job_id": j.ID.String(), "thread_id": j.ThreadID,
			"interrupt_id": tok.InterruptID, "decision": json.RawMessage(p.Decision)})
		if err != nil {
			return err
		}
		if _, err := appendEntry(ctx, q, Entry{TenantID: p.TenantID, Actor: p.Actor, Action: ActionThreadResume,
			Subject: j.ID.String(), Workflow: j.Workflow, Payload: payload, At: now}); err != nil {
			return err
		}
		resume, err := json.Marshal(map[string]json.RawMessage{tok.InterruptID: p.Decision})
		if err != nil {
			return err
		}
		out, err = q.JobResume(ctx, db.JobResumeParams{Worker: p.Worker, LeaseSeconds: p.Lease.Seconds(), Resume: resume, ID: j.ID,
			TraceParent: p.TraceParent})
		pausedAt = j.PausedAt
		if errors.Is(err, pgx.ErrNoRows) { // locked above: cannot happen
			return invalid("the thread is no longer waiting for review")
		}
		return translate(err)
	})
	if err != nil {
		return runner.Job{}, fmt.Errorf("resume thread: %w", err)
	}
	out.PausedAt = pausedAt
	return jobFromRow(out)
}

// Requeue implements runner.Store: an admin retry of a failed job of the tenant, in one
// transaction with its DLQ entry marked retried and the audit row. retry_count grows by one
// (an admin retry is a retry), so a later dead-lettering gets its own (job_id, retry_count)
// key and idempotency keys built from it never replay an earlier attempt's effects. A job
// whose DLQ entry was discarded is not retried.
func (s *JobStore) Requeue(ctx context.Context, tenantID, jobID, actor string) error {
	uid, ok := parseID(jobID)
	if !ok {
		return fmt.Errorf("retry job %q: %w", jobID, graph.ErrNotFound)
	}
	if actor == "" {
		return fault.New(fault.Security, fault.CodeForbidden, "an admin retry needs the actor's identity")
	}
	err := s.db.inThreadTx(ctx, func(q *db.Queries) error {
		j, err := q.JobLock(ctx, db.JobLockParams{ID: uid, TenantID: tenantID})
		if err != nil {
			return translate(err)
		}
		from := runner.Status(j.Status)
		if err := runner.CheckTransition(from, runner.Queued); err != nil {
			return err
		}
		if from != runner.Failed {
			return fault.New(fault.Business, fault.CodeIllegalTransition,
				fmt.Sprintf("only a failed job can be retried; this one is %s", from))
		}
		// Serialized with the forks and runs started on the thread: the check below sees one
		// that committed while this transaction waited.
		if err := q.JobThreadLock(ctx, db.JobThreadLockParams{TenantID: tenantID, ThreadID: j.ThreadID}); err != nil {
			return translate(err)
		}
		// A thread started again since this job failed has moved on: running this job again
		// would take the thread back to where it failed, over the newer run's work.
		latest, err := q.JobLatestByThread(ctx, db.JobLatestByThreadParams{TenantID: tenantID, ThreadID: j.ThreadID})
		if err != nil {
			return translate(err)
		}
		if latest.ID != j.ID {
			return fault.New(fault.Business, fault.CodeJobSuperseded, fmt.Sprintf(
				"the thread was started again since this job failed (its latest run: %s): retrying this older run would take the thread back to where it failed, so discard this entry instead",
				strings.ReplaceAll(latest.Status, "_", " ")))
		}
		entry, err := q.DLQGetByAttempt(ctx, db.DLQGetByAttemptParams{JobID: uid, RetryCount: j.RetryCount})
		if err != nil {
			return translate(err)
		}
		if entry.Status != DLQStatusRecorded {
			return fault.New(fault.Business, fault.CodeIllegalTransition,
				fmt.Sprintf("the job's DLQ entry %s is already %s", entry.ID, entry.Status))
		}
		if _, err := q.DLQResolve(ctx, db.DLQResolveParams{Status: DLQStatusRetried, Actor: actor, ID: entry.ID}); err != nil {
			return translate(err)
		}
		nj, err := q.JobRequeue(ctx, db.JobRequeueParams{ID: uid, TenantID: tenantID})
		if err != nil {
			return translate(err)
		}
		payload, err := json.Marshal(map[string]any{"dlq_id": entry.ID.String(), "retry_count": nj.RetryCount})
		if err != nil {
			return err
		}
		_, err = appendEntry(ctx, q, Entry{TenantID: tenantID, Actor: actor, Action: ActionJobRetry,
			Subject: jobID, Workflow: j.Workflow, Payload: payload})
		return err
	})
	if err != nil {
		return fmt.Errorf("retry job %s: %w", jobID, err)
	}
	return nil
}

// Discard implements runner.Store: the tenant's DLQ entry is marked discarded (the job stays
// failed) and audited. Discarding a discarded entry does nothing; a retried one cannot be.
func (s *JobStore) Discard(ctx context.Context, tenantID, dlqID, actor string) error {
	uid, ok := parseID(dlqID)
	if !ok {
		return fmt.Errorf("discard DLQ entry %q: %w", dlqID, graph.ErrNotFound)
	}
	if actor == "" {
		return fault.New(fault.Security, fault.CodeForbidden, "a discard needs the actor's identity")
	}
	err := s.db.inTx(ctx, func(q *db.Queries) error {
		entry, err := q.DLQLock(ctx, db.DLQLockParams{ID: uid, TenantID: tenantID})
		if err != nil {
			return translate(err)
		}
		switch entry.Status {
		case DLQStatusDiscarded:
			return nil
		case DLQStatusRetried:
			return fault.New(fault.Business, fault.CodeIllegalTransition, "the DLQ entry was retried; it cannot be discarded")
		}
		if _, err := q.DLQResolve(ctx, db.DLQResolveParams{Status: DLQStatusDiscarded, Actor: actor, ID: uid}); err != nil {
			return translate(err)
		}
		payload, err := json.Marshal(map[string]any{"job_id": entry.JobID.String(), "retry_count": entry.RetryCount})
		if err != nil {
			return err
		}
		_, err = appendEntry(ctx, q, Entry{TenantID: tenantID, Actor: actor, Action: ActionDLQDiscard,
			Subject: dlqID, Workflow: entry.Workflow, Payload: payload})
		return err
	})
	if err != nil {
		return fmt.Errorf("discard DLQ entry %s: %w", dlqID, err)
	}
	return nil
}

// Job implements runner.Store: another tenant's job is graph.ErrNotFound.
func (s *JobStore) Job(ctx context.Context, tenantID, jobID string) (runner.Job, error) {
	uid, ok := parseID(jobID)
	if !ok {
		return runner.Job{}, fmt.Errorf("load job %q: %w", jobID, graph.ErrNotFound)
	}
	row, err := s.db.q.JobGet(ctx, db.JobGetParams{ID: uid, TenantID: tenantID})
	if err != nil {
		return runner.Job{}, fmt.Errorf("load job %s: %w", jobID, translate(err))
	}
	return jobFromRow(row)
}

// PausedAt is when the tenant's job began waiting for review (zero when it is not waiting):
// resume tokens expire a TTL after it (runner.IssueToken's pausedAt).
func (s *JobStore) PausedAt(ctx context.Context, tenantID, jobID string) (time.Time, error) {
	uid, ok := parseID(jobID)
	if !ok {
		return time.Time{}, fmt.Errorf("load job %q: %w", jobID, graph.ErrNotFound)
	}
	row, err := s.db.q.JobGet(ctx, db.JobGetParams{ID: uid, TenantID: tenantID})
	if err != nil {
		return time.Time{}, fmt.Errorf("load job %s: %w", jobID, translate(err))
	}
	if row.PausedAt == nil {
		return time.Time{}, nil
	}
	return *row.PausedAt, nil
}

// TokenJob is the job and interrupt a resume token of the tenant was issued for (used,
// expired or not); found is false for a secret never issued to the tenant (or pruned a week
// after it expired).
func (s *JobStore) TokenJob(ctx context.Context, tenantID, secret string) (jobID, interruptID string, found bool, err error) {
	t, err := s.db.q.ResumeTokenGet(ctx, db.ResumeTokenGetParams{Hash: runner.HashToken(secret), TenantID: tenantID})
	if errors.Is(err, pgx.ErrNoRows) {
		return "", "", false, nil
	}
	if err != nil {
		return "", "", false, fmt.Errorf("look up a resume token: %w", translate(err))
	}
	return t.JobID.String(), t.InterruptID, true, nil
}

// Cursor is a position in a newest-first listing: the (created_at, id) of the last row of a
// page. The zero Cursor starts at the newest row. String and ParseCursor make it an opaque
// token for URLs.
type Cursor struct {
	CreatedAt time.Time
	ID        string
}

// IsZero reports whether c is the start of a listing.
func (c Cursor) IsZero() bool { return c.ID == "" }

// String encodes c for a URL; the zero Cursor is "".
func (c Cursor) String() string {
	if c.IsZero() {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte(c.CreatedAt.UTC().Format(time.RFC3339Nano) + "|" + c.ID))
}

// ParseCursor decodes String's output ("" is the zero Cursor).
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	bad := fault.New(fault.Validation, fault.CodeValidation, "invalid page cursor")
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, bad
	}
	at, id, ok := strings.Cut(string(b), "|")
	t, err := time.Parse(time.RFC3339Nano, at)
	if _, idOK := parseID(id); !ok || err != nil || !idOK {
		return Cursor{}, bad
	}
	return Cursor{CreatedAt: t, ID: id}, nil
}

// newerParams is the position a newer page starts after; the zero Cursor has none.
func (c Cursor) newerParams() (time.Time, uuid.UUID, error) {
	at, id := c.params()
	if id == nil {
		return time.Time{}, uuid.UUID{}, fault.New(fault.Validation, fault.CodeValidation, "a newer page needs a cursor")
	}
	return *at, *id, nil
}

func (c Cursor) params() (*time.Time, *uuid.UUID) {
	if c.IsZero() {
		return nil, nil
	}
	id, ok := parseID(c.ID)
	if !ok {
		return nil, nil
	}
	at := c.CreatedAt
	return &at, &id
}

// JobFilter narrows ListJobs; empty fields match everything.
type JobFilter struct {
	TenantID string // required
	Status   runner.Status
	Workflow string
}

// maxPage bounds a page.
const maxPage = 500

func pageSize(limit int) int32 {
	if limit <= 0 || limit > maxPage {
		limit = maxPage
	}
	return int32(limit)
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// ListJobs lists a tenant's jobs newest first, limit at a time, after the cursor. next is
// the cursor of the following page, zero on the last page.
func (s *JobStore) ListJobs(ctx context.Context, f JobFilter, after Cursor, limit int) (jobs []runner.Job, next Cursor, err error) {
	n := pageSize(limit)
	beforeAt, beforeID := after.params()
	rows, err := s.db.q.JobList(ctx, db.JobListParams{TenantID: f.TenantID, Status: optional(string(f.Status)),
		Workflow: optional(f.Workflow), BeforeAt: beforeAt, BeforeID: beforeID, MaxRows: n + 1})
	if err != nil {
		return nil, Cursor{}, fmt.Errorf("list jobs: %w", translate(err))
	}
	if len(rows) > int(n) {
		rows = rows[:n]
		last := rows[n-1]
		next = Cursor{CreatedAt: last.CreatedAt, ID: last.ID.String()}
	}
	if jobs, err = jobsFromRows(rows); err != nil {
		return nil, Cursor{}, err
	}
	return jobs, next, nil
}

// ListJobsNewer is ListJobs's page the other way: the limit jobs just newer than before
// (which must not be zero), newest first; newer is the first one's cursor when newer jobs
// still follow, zero when they reach the newest.
func (s *JobStore) ListJobsNewer(ctx context.Context, f JobFilter, before Cursor, limit int) (jobs []runner.Job, newer Cursor, err error) {
	n := pageSize(limit)
	at, id, err := before.newerParams()
	if err != nil {
		return nil, Cursor{}, err
	}
	rows, err := s.db.q.JobListNewer(ctx, db.JobListNewerParams{TenantID: f.TenantID, Status: optional(string(f.Status)),
		Workflow: optional(f.Workflow), AfterAt: at, AfterID: id, MaxRows: n + 1})
	if err != nil {
		return nil, Cursor{}, fmt.Errorf("list jobs: %w", translate(err))
	}
	rows, newer = newerPage(rows, n, func(r db.Job) Cursor { return Cursor{CreatedAt: r.CreatedAt, ID: r.ID.String()} })
	if jobs, err = jobsFromRows(rows); err != nil {
		return nil, Cursor{}, err
	}
	return jobs, newer, nil
}

// newerPage is a newer page from the rows just newer than its cursor, read oldest first (at
// most n+1, the last telling whether newer rows still follow): at most n rows, newest first,
// and the cursor of the page newer than it (zero when it reaches the newest row).
func newerPage[T any](rows []T, n int32, at func(T) Cursor) ([]T, Cursor) {
	more := len(rows) > int(n)
	rows = rows[:min(len(rows), int(n))]
	slices.Reverse(rows)
	if !more {
		return rows, Cursor{}
	}
	return rows, at(rows[0])
}

func jobsFromRows(rows []db.Job) ([]runner.Job, error) {
	jobs := make([]runner.Job, 0, len(rows))
	for _, r := range rows {
		j, err := jobFromRow(r)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

// JobQuery is one list: the jobs the filter matches, newest first, at most Limit of them
// (see ListJobs).
type JobQuery struct {
	Filter JobFilter
	Limit  int
}

// QueueListJobs adds to r the first page of q's list (as ListJobs returns it), written to
// *out.
func (s *JobStore) QueueListJobs(r *Reads, q JobQuery, out *[]runner.Job) {
	params := db.JobListParams{TenantID: q.Filter.TenantID, Status: optional(string(q.Filter.Status)),
		Workflow: optional(q.Filter.Workflow), MaxRows: pageSize(q.Limit)}
	r.add(func(ctx context.Context, dq *db.Queries) error {
		rows, err := dq.JobList(ctx, params)
		if err != nil {
			return fmt.Errorf("list jobs: %w", translate(err))
		}
		jobs, err := jobsFromRows(rows)
		if err == nil {
			*out = jobs
		}
		return err
	})
}

// DLQEntry is one dead-lettering of a job.
type DLQEntry struct {
	ID         string
	TenantID   string
	JobID      string
	Workflow   string
	Class      fault.Class
	Code       string
	Message    string
	TraceID    string
	Node       string
	RetryCount int
	Attempts   int    // retry_count + 1
	Status     string // DLQStatusRecorded, DLQStatusRetried or DLQStatusDiscarded
	CreatedAt  time.Time
	ResolvedAt time.Time // zero while recorded
	ResolvedBy string
}

func dlqFromRow(r db.Dlq) DLQEntry {
	e := DLQEntry{ID: r.ID.String(), TenantID: r.TenantID, JobID: r.JobID.String(), Workflow: r.Workflow,
		Class: fault.Class(r.Class), Code: r.Code, Message: r.Message, TraceID: r.TraceID, Node: r.Node,
		RetryCount: int(r.RetryCount), Attempts: int(r.Attempts), Status: r.Status, CreatedAt: r.CreatedAt}
	if r.ResolvedAt != nil {
		e.ResolvedAt = *r.ResolvedAt
	}
	if r.ResolvedBy != nil {
		e.ResolvedBy = *r.ResolvedBy
	}
	return e
}

// DLQ loads one DLQ entry of a tenant (graph.ErrNotFound for another tenant's id).
func (s *JobStore) DLQ(ctx context.Context, tenantID, dlqID string) (DLQEntry, error) {
	uid, ok := parseID(dlqID)
	if !ok {
		return DLQEntry{}, fmt.Errorf("load DLQ entry %q: %w", dlqID, graph.ErrNotFound)
	}
	row, err := s.db.q.DLQGet(ctx, db.DLQGetParams{ID: uid, TenantID: tenantID})
	if err != nil {
		return DLQEntry{}, fmt.Errorf("load DLQ entry %s: %w", dlqID, translate(err))
	}
	return dlqFromRow(row), nil
}

// DLQOfJobs returns the DLQ entries of some of a tenant's jobs by job id, newest first per
// job (other tenants' and unknown ids have none).
func (s *JobStore) DLQOfJobs(ctx context.Context, tenantID string, jobIDs []string) (map[string][]DLQEntry, error) {
	out := map[string][]DLQEntry{}
	ids := parseIDs(jobIDs)
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.db.q.DLQOfJobs(ctx, db.DLQOfJobsParams{TenantID: tenantID, JobIds: ids})
	if err != nil {
		return nil, fmt.Errorf("load the DLQ entries of jobs: %w", translate(err))
	}
	for _, r := range rows {
		e := dlqFromRow(r)
		out[e.JobID] = append(out[e.JobID], e)
	}
	return out, nil
}

// ListDLQ lists a tenant's DLQ entries newest first (status "" for all), limit at a time,
// after the cursor; next is zero on the last page.
func (s *JobStore) ListDLQ(ctx context.Context, tenantID, status string, after Cursor, limit int) (entries []DLQEntry, next Cursor, err error) {
	n := pageSize(limit)
	beforeAt, beforeID := after.params()
	rows, err := s.db.q.DLQList(ctx, db.DLQListParams{TenantID: tenantID, Status: optional(status),
		BeforeAt: beforeAt, BeforeID: beforeID, MaxRows: n + 1})
	if err != nil {
		return nil, Cursor{}, fmt.Errorf("list DLQ entries: %w", translate(err))
	}
	if len(rows) > int(n) {
		rows = rows[:n]
		last := rows[n-1]
		next = Cursor{CreatedAt: last.CreatedAt, ID: last.ID.String()}
	}
	entries = make([]DLQEntry, 0, len(rows))
	for _, r := range rows {
		entries = append(entries, dlqFromRow(r))
	}
	return entries, next, nil
}

// ListDLQNewer is ListDLQ's page the other way: the limit entries just newer than before
// (which must not be zero), newest first; newer is the first one's cursor when newer entries
// still follow, zero when they reach the newest.
func (s *JobStore) ListDLQNewer(ctx context.Context, tenantID, status string, before Cursor, limit int) (entries []DLQEntry, newer Cursor, err error) {
	n := pageSize(limit)
	at, id, err := before.newerParams()
	if err != nil {
		return nil, Cursor{}, err
	}
	rows, err := s.db.q.DLQListNewer(ctx, db.DLQListNewerParams{TenantID: tenantID, Status: optional(status),
		AfterAt: at, AfterID: id, MaxRows: n + 1})
	if err != nil {
		return nil, Cursor{}, fmt.Errorf("list DLQ entries: %w", translate(err))
	}
	rows, newer = newerPage(rows, n, func(r db.Dlq) Cursor { return Cursor{CreatedAt: r.CreatedAt, ID: r.ID.String()} })
	entries = make([]DLQEntry, 0, len(rows))
	for _, r := range rows {
		entries = append(entries, dlqFromRow(r))
	}
	return entries, newer, nil
}

// JobCount is how many of a tenant's jobs of one workflow are in one status.
type JobCount struct {
	Workflow string
	Status   runner.Status
	N        int64
}

// CountJobs returns a tenant's job counts per (workflow, status), nonzero ones only, from
// job_counts (kept by triggers), never counting the jobs table: one read-only statement
// summing the tenant's counter rows, which CompactCounts keeps few.
func (s *JobStore) CountJobs(ctx context.Context, tenantID string) ([]JobCount, error) {
	var out []JobCount
	r := s.db.Reads()
	s.QueueCountJobs(r, tenantID, &out)
	return out, r.Run(ctx)
}

// QueueCountJobs adds CountJobs to r, written to *out.
func (s *JobStore) QueueCountJobs(r *Reads, tenantID string, out *[]JobCount) {
	r.add(func(ctx context.Context, q *db.Queries) error {
		rows, err := q.JobCountsList(ctx, tenantID)
		if err != nil {
			return fmt.Errorf("count jobs: %w", translate(err))
		}
		counts := make([]JobCount, 0, len(rows))
		for _, r := range rows {
			counts = append(counts, JobCount{Workflow: r.Workflow, Status: runner.Status(r.Status), N: r.N})
		}
		*out = counts
		return nil
	})
}

// CompactCounts folds every tenant's job_counts rows into one per (workflow, status). The
// workers run it every CompactCountsEvery (App.RunWorkers): the triggers add a row with
// every status change.
// It does nothing while another compaction runs.
//
// A compaction that removed rows then vacuums job_counts. Every fold leaves the rows it
// removed as dead tuples, and their index entries, which every CountJobs reads past until a
// vacuum clears them: under steady work, thousands within minutes, and the dashboard's count
// slows with them. Autovacuum visits a database at most once a minute, or never where it is
// off; the table is a few pages, so vacuuming it costs a millisecond or a few. It never
// truncates the table (migration 00024: the lock that takes would stall every status change).
// Only a role that owns the table (or the database) may vacuum it: connected as another (a
// member of weft_app, say), the store does not try, where PostgreSQL would skip it with a
// warning in the server's log every couple of seconds, and the dead rows wait for autovacuum.
// A vacuum also updates the table's statistics, so each connection plans its statements on
// job_counts again (the count, the triggers' insert): a fraction of a millisecond each.
func (s *JobStore) CompactCounts(ctx context.Context) error {
	var fold db.JobCountsCompactRow
	err := s.db.inTx(ctx, func(q *db.Queries) error {
		locked, err := q.JobCountsTryLock(ctx, jobCountsLockKey)
		if err != nil || !locked {
			return err
		}
		fold, err = q.JobCountsCompact(ctx)
		return err
	})
	if err != nil {
		return fmt.Errorf("compact job counts: %w", translate(err))
	}
	if fold.Removed == 0 || !fold.MayVacuum {
		return nil
	}
	// SKIP_LOCKED: a vacuum already under way (autovacuum's) is left to it.
	if _, err := s.db.pool.Exec(ctx, "VACUUM (SKIP_LOCKED) job_counts"); err != nil {
		return fmt.Errorf("vacuum job counts: %w", translate(err))
	}
	return nil
}

// jobFromRow maps a row to the runner's Job.
func jobFromRow(r db.Job) (runner.Job, error) {
	j := runner.Job{ID: r.ID.String(), TenantID: r.TenantID, Workflow: r.Workflow, ThreadID: r.ThreadID,
		TraceID: r.TraceID, Subject: r.Subject, Status: runner.Status(r.Status), RetryCount: int(r.RetryCount),
		Rescues: int(r.Rescues), Input: r.Input, Resume: r.Resume, RunAfter: r.RunAfter, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt,
		TraceParent: r.TraceParent}
	if r.PausedAt != nil {
		j.PausedAt = *r.PausedAt
	}
	if r.RetryFrom != nil {
		j.RetryFrom = *r.RetryFrom
	}
	if r.BaseCheckpoint != nil {
		j.BaseCheckpoint = r.BaseCheckpoint.String()
	}
	if r.LeaseOwner != nil {
		j.LeaseOwner = *r.LeaseOwner
	}
	if r.LeaseUntil != nil {
		j.LeaseUntil = *r.LeaseUntil
	}
	if err := json.Unmarshal(r.Errors, &j.Errors); err != nil {
		return runner.Job{}, fmt.Errorf("job %s: decode errors: %w", r.ID, err)
	}
	if err := json.Unmarshal(r.Interrupts, &j.Interrupts); err != nil {
		return runner.Job{}, fmt.Errorf("job %s: decode interrupts: %w", r.ID, err)
	}
	if len(j.Interrupts) == 0 {
		j.Interrupts = nil
	}
	if len(j.Errors) == 0 {
		j.Errors = nil
	}
	return j, nil
}

// parseIDs parses job ids, dropping those that are not (no job has them).
func parseIDs(ids []string) []uuid.UUID {
	out := make([]uuid.UUID, 0, len(ids))
	for _, s := range ids {
		if id, ok := parseID(s); ok {
			out = append(out, id)
		}
	}
	return out
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
