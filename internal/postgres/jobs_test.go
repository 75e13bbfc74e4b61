package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
)

// jobBundle is one test's database and job store.
type jobBundle struct {
	db    *postgres.DB
	store *postgres.JobStore
	pool  *pgxpool.Pool
	ctx   context.Context
}

func setupJobs(t *testing.T) jobBundle {
	t.Helper()
	d := pgtest.DB(t)
	return jobBundle{db: d, store: postgres.NewJobStore(d), pool: d.Pool(), ctx: context.Background()}
}

const (
	tenantA = "tenant-a"
	tenantB = "tenant-b"
	w1      = "worker-1"
	w2      = "worker-2"
)

var reviewInterrupt = graph.PendingInterrupt{ID: "int-1", Node: "human_review", TaskID: "task-1", When: graph.InterruptDuring,
	Value: json.RawMessage(`{"type":"human_review"}`)}

func (b jobBundle) enqueue(t *testing.T, tenant, workflow string) runner.Job {
	t.Helper()
	j, err := b.store.Enqueue(b.ctx, runner.NewJob{TenantID: tenant, Workflow: workflow, Subject: "ev_1",
		Input: json.RawMessage(`{"query":"q"}`)})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// claimOne claims exactly one job for worker.
func (b jobBundle) claimOne(t *testing.T, worker string) runner.Job {
	t.Helper()
	jobs, err := b.store.Claim(b.ctx, worker, 1, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 {
		t.Fatalf("claimed %d jobs, want 1", len(jobs))
	}
	return jobs[0]
}

func (b jobBundle) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := b.pool.Exec(b.ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func (b jobBundle) count(t *testing.T, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := b.pool.QueryRow(b.ctx, sql, args...).Scan(&n); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// snapshot is a job's whole row, to tell that a refused change changed nothing.
func (b jobBundle) snapshot(t *testing.T, id string) string {
	t.Helper()
	var s string
	if err := b.pool.QueryRow(b.ctx, `SELECT to_jsonb(j)::text FROM jobs j WHERE id = $1`, id).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

func (b jobBundle) status(t *testing.T, id string) runner.Status {
	t.Helper()
	var s string
	if err := b.pool.QueryRow(b.ctx, `SELECT status FROM jobs WHERE id = $1`, id).Scan(&s); err != nil {
		t.Fatal(err)
	}
	return runner.Status(s)
}

// force moves a queued job to status along legal transitions with plain SQL (the jobs_guard
// trigger checks each step), leased to w1 where the status is leased.
func (b jobBundle) force(t *testing.T, id string, s runner.Status) {
	t.Helper()
	ints, _ := json.Marshal([]graph.PendingInterrupt{reviewInterrupt})
	run := `UPDATE jobs SET status = 'running', lease_owner = '` + w1 + `', lease_until = now() + interval '1 hour' WHERE id = $1`
	steps := map[runner.Status][]string{
		runner.Queued:  nil,
		runner.Running: {run},
		runner.WaitingReview: {run, `UPDATE jobs SET status = 'waiting_review', lease_owner = NULL, lease_until = NULL,
			paused_at = now(), interrupts = '` + string(ints) + `' WHERE id = $1`},
		runner.RetryScheduled: {run, `UPDATE jobs SET status = 'retry_scheduled', lease_owner = NULL, lease_until = NULL,
			retry_count = retry_count + 1, run_after = now() - interval '1 second' WHERE id = $1`},
		runner.DLQPending:  {run, `UPDATE jobs SET status = 'dlq_pending' WHERE id = $1`},
		runner.DLQRecorded: {run, `UPDATE jobs SET status = 'dlq_pending' WHERE id = $1`, `UPDATE jobs SET status = 'dlq_recorded' WHERE id = $1`},
		runner.Failed: {run, `UPDATE jobs SET status = 'dlq_pending' WHERE id = $1`, `UPDATE jobs SET status = 'dlq_recorded' WHERE id = $1`,
			`INSERT INTO dlq (id, tenant_id, job_id, workflow, class, code, message, trace_id, retry_count)
			 SELECT gen_random_uuid(), tenant_id, id, workflow, 'permanent', 'X', 'boom', trace_id, retry_count FROM jobs WHERE id = $1`,
			`UPDATE jobs SET status = 'failed', lease_owner = NULL, lease_until = NULL WHERE id = $1`},
		runner.Succeeded: {run, `UPDATE jobs SET status = 'succeeded', lease_owner = NULL, lease_until = NULL WHERE id = $1`},
	}
	for _, sql := range steps[s] {
		b.exec(t, sql, id)
	}
	if got := b.status(t, id); got != s {
		t.Fatalf("forced job to %s, it is %s", s, got)
	}
}

func wantFault(t *testing.T, err error, class fault.Class, code string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %s (%s)", code, class)
	}
	if c, k := fault.Classify(err); c != class || k != code {
		t.Fatalf("error %q classified %s/%s, want %s/%s", err, c, k, class, code)
	}
}

func wantLeaseLost(t *testing.T, err error) {
	t.Helper()
	if !errors.Is(err, postgres.ErrLeaseLost) {
		t.Fatalf("error %v, want ErrLeaseLost", err)
	}
	wantFault(t, err, fault.Transient, fault.CodeLeaseLost)
}

func jobError(code string, retry int) runner.JobError {
	return runner.JobError{At: time.Now().UTC().Truncate(time.Microsecond), Class: fault.Transient, Code: code,
		Message: "boom " + code, Node: "score_with_llm", TraceID: "trace-1", RetryCount: retry}
}

// TestJobTransitionsMatchRunner: the database's copy of the status machine is the runner's.
func TestJobTransitionsMatchRunner(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	rows, err := b.pool.Query(b.ctx, `SELECT from_status, to_status FROM job_transitions`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var f, to string
		if err := rows.Scan(&f, &to); err != nil {
			t.Fatal(err)
		}
		got = append(got, f+"→"+to)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range runner.AllowedTransitions() {
		want = append(want, string(p[0])+"→"+string(p[1]))
	}
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Fatalf("job_transitions = %v\nrunner allows  %v", got, want)
	}
}

// TestDatabaseGuardsTransitions: plain SQL cannot make an illegal status change either (all
// 56 pairs of distinct statuses), nor fail a job without a DLQ row, nor change a job's
// immutable fields.
func TestDatabaseGuardsTransitions(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	for _, from := range runner.Statuses {
		for _, to := range runner.Statuses {
			if from == to {
				continue
			}
			j := b.enqueue(t, tenantA, "wf")
			b.force(t, j.ID, from)
			if from != runner.Failed { // a DLQ row for the target retry_count, so only the machine decides
				b.exec(t, `INSERT INTO dlq (id, tenant_id, job_id, workflow, class, code, message, trace_id, retry_count)
					SELECT gen_random_uuid(), tenant_id, id, workflow, 'permanent', 'X', 'm', trace_id, retry_count FROM jobs WHERE id = $1`, j.ID)
			}
			leased := to == runner.Running || to == runner.DLQPending || to == runner.DLQRecorded
			_, err := b.pool.Exec(b.ctx, `UPDATE jobs SET status = $2,
				lease_owner = CASE WHEN $3 THEN 'w' END, lease_until = CASE WHEN $3 THEN now() END,
				paused_at = CASE WHEN $2 = 'waiting_review' THEN now() END WHERE id = $1`, j.ID, string(to), leased)
			legal := runner.CheckTransition(from, to) == nil
			switch {
			case legal && err != nil:
				t.Errorf("%s → %s: %v", from, to, err)
			case !legal && (err == nil || !strings.Contains(err.Error(), fault.CodeIllegalTransition)):
				t.Errorf("%s → %s: err %v, want %s", from, to, err, fault.CodeIllegalTransition)
			}
		}
	}
	j := b.enqueue(t, tenantA, "wf")
	b.force(t, j.ID, runner.DLQRecorded)
	_, err := b.pool.Exec(b.ctx, `UPDATE jobs SET status = 'failed', lease_owner = NULL, lease_until = NULL WHERE id = $1`, j.ID)
	if err == nil || !strings.Contains(err.Error(), "without a DLQ row") {
		t.Errorf("failing a job without a DLQ row: %v", err)
	}
	for _, set := range []string{"tenant_id = 'other'", "thread_id = 'other'", "workflow = 'other'"} {
		_, err := b.pool.Exec(b.ctx, `UPDATE jobs SET `+set+` WHERE id = $1`, j.ID)
		if err == nil || !strings.Contains(err.Error(), fault.CodeImmutableField) {
			t.Errorf("SET %s: %v, want %s", set, err, fault.CodeImmutableField)
		}
	}
	_, err = b.pool.Exec(b.ctx, `INSERT INTO jobs (id, tenant_id, workflow, thread_id, trace_id, status)
		VALUES (gen_random_uuid(), 't', 'wf', 'th', 'tr', 'running')`)
	if err == nil {
		t.Error("inserted a job that is not queued")
	}
}

// TestJobLifecycle walks the happy path with an interrupt: enqueue, claim, heartbeat, pause,
// token, resume, succeed.
func TestJobLifecycle(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	j := b.enqueue(t, tenantA, "wf")
	if j.Status != runner.Queued || j.ThreadID != j.ID || j.TraceID == "" || j.Subject != "ev_1" || j.RetryCount != 0 {
		t.Fatalf("enqueued %+v", j)
	}
	if string(j.Input) != `{"query": "q"}` {
		t.Fatalf("input %s", j.Input)
	}
	c := b.claimOne(t, w1)
	if c.ID != j.ID || c.Status != runner.Running || c.LeaseOwner != w1 || time.Until(c.LeaseUntil) < 50*time.Second {
		t.Fatalf("claimed %+v", c)
	}
	if more, err := b.store.Claim(b.ctx, w2, 10, time.Minute); err != nil || len(more) != 0 {
		t.Fatalf("second claim: %v, %d jobs", err, len(more))
	}
	lost, err := b.store.Heartbeat(b.ctx, w1, []string{j.ID, "not-a-uuid"}, nil, time.Hour)
	if err != nil || !slices.Equal(lost, []string{"not-a-uuid"}) {
		t.Fatalf("heartbeat: lost %v, err %v", lost, err)
	}
	got, err := b.store.Job(b.ctx, tenantA, j.ID)
	if err != nil || time.Until(got.LeaseUntil) < 59*time.Minute {
		t.Fatalf("lease after heartbeat: %v (%v)", got.LeaseUntil, err)
	}

	if err := b.store.Pause(b.ctx, j.ID, w1, []graph.PendingInterrupt{reviewInterrupt}); err != nil {
		t.Fatal(err)
	}
	got, _ = b.store.Job(b.ctx, tenantA, j.ID)
	if got.Status != runner.WaitingReview || got.LeaseOwner != "" || len(got.Interrupts) != 1 || got.Interrupts[0].ID != "int-1" {
		t.Fatalf("paused %+v", got)
	}
	pausedAt, err := b.store.PausedAt(b.ctx, tenantA, j.ID)
	if err != nil || pausedAt.IsZero() {
		t.Fatalf("paused at %v, %v", pausedAt, err)
	}
	now := time.Now()
	if err := b.store.IssueToken(b.ctx, tenantA, j.ID, "int-1", runner.HashToken("rt_secret"), now.Add(runner.DefaultTokenTTL)); err != nil {
		t.Fatal(err)
	}
	resumed, err := b.store.ResumeJob(b.ctx, runner.ResumeParams{TenantID: tenantA, TokenHash: runner.HashToken("rt_secret"),
		Actor: "u_reviewer", Decision: json.RawMessage(`{"decision":"approve"}`), Worker: w2, Lease: time.Minute, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if resumed.Status != runner.Running || resumed.LeaseOwner != w2 || resumed.Interrupts != nil ||
		string(resumed.Resume) != `{"int-1": {"decision": "approve"}}` {
		t.Fatalf("resumed %+v (resume %s)", resumed, resumed.Resume)
	}
	if n := b.count(t, `SELECT count(*) FROM review_decisions WHERE job_id = $1 AND actor = 'u_reviewer' AND interrupt_id = 'int-1'
		AND decision = '{"decision":"approve"}'`, j.ID); n != 1 {
		t.Fatalf("%d review decisions", n)
	}
	if n := b.count(t, `SELECT count(*) FROM resume_tokens WHERE used_by = 'u_reviewer' AND used_at IS NOT NULL`); n != 1 {
		t.Fatalf("%d used tokens", n)
	}
	entries, _, err := postgres.NewAudit(b.db).List(b.ctx, postgres.AuditFilter{TenantID: tenantA, Action: postgres.ActionThreadResume}, 0, 10)
	if err != nil || len(entries) != 1 || entries[0].Actor != "u_reviewer" || entries[0].Subject != j.ID || entries[0].Workflow != "wf" {
		t.Fatalf("audit %+v, %v", entries, err)
	}
	if err := b.store.Succeed(b.ctx, j.ID, w1); err == nil {
		t.Fatal("the old worker completed a job resumed on another")
	}
	if err := b.store.Succeed(b.ctx, j.ID, w2); err != nil {
		t.Fatal(err)
	}
	got, _ = b.store.Job(b.ctx, tenantA, j.ID)
	if got.Status != runner.Succeeded || got.LeaseOwner != "" || !got.LeaseUntil.IsZero() {
		t.Fatalf("succeeded %+v", got)
	}
}

func TestEnqueueValidates(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	for _, nj := range []runner.NewJob{{Workflow: "wf"}, {TenantID: tenantA}, {TenantID: tenantA, Workflow: "wf", Input: json.RawMessage(`{`)}} {
		_, err := b.store.Enqueue(b.ctx, nj)
		wantFault(t, err, fault.Validation, fault.CodeValidation)
	}
	j, err := b.store.Enqueue(b.ctx, runner.NewJob{TenantID: tenantA, Workflow: "wf", ThreadID: "thread-7", TraceID: "trace-7"})
	if err != nil || j.ThreadID != "thread-7" || j.TraceID != "trace-7" || j.Input != nil {
		t.Fatalf("%+v, %v", j, err)
	}
}

// A fork needs its checkpoint and takes no input (input would start a new run instead of
// the fork); a refused fork queues nothing.
func TestEnqueueForkValidates(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	fork := runner.NewJob{TenantID: tenantA, Workflow: "wf", ThreadID: "thread-f"}
	_, err := b.store.EnqueueFork(b.ctx, fork, "")
	wantFault(t, err, fault.Validation, fault.CodeValidation)
	withInput := fork
	withInput.Input = json.RawMessage(`{"query":"q"}`)
	_, err = b.store.EnqueueFork(b.ctx, withInput, "0190c1f5-0000-7000-8000-000000000001")
	wantFault(t, err, fault.Validation, fault.CodeValidation)
	var n int
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM jobs WHERE thread_id = 'thread-f'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d jobs queued for refused forks (%v)", n, err)
	}
}

// TestEnqueueForkOnce: confirmations of one fork sent at once (a double click, two admins),
// and starts of a new run on the thread beside them, queue one job; the others are refused
// as busy, because that job has not finished.
func TestEnqueueForkOnce(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	done := b.enqueue(t, tenantA, "wf")
	b.force(t, done.ID, runner.Succeeded)
	fork := runner.NewJob{TenantID: tenantA, Workflow: "wf", ThreadID: done.ThreadID}
	const at = 8
	errs := make(chan error, at)
	var wg sync.WaitGroup
	for i := range at {
		wg.Go(func() {
			var err error
			if i%2 == 0 {
				_, err = b.store.EnqueueFork(b.ctx, fork, "0190c1f5-0000-7000-8000-000000000001")
			} else {
				_, err = b.store.Enqueue(b.ctx, runner.NewJob{TenantID: tenantA, Workflow: "wf", ThreadID: done.ThreadID, Input: json.RawMessage(`{}`)})
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	queued := 0
	for err := range errs {
		if err == nil {
			queued++
		} else {
			wantFault(t, err, fault.Business, postgres.CodeThreadBusy)
		}
	}
	var n int
	if err := b.pool.QueryRow(b.ctx, `SELECT count(*) FROM jobs WHERE thread_id = $1 AND status = 'queued'`, done.ThreadID).Scan(&n); err != nil || queued != 1 || n != 1 {
		t.Fatalf("%d forks and runs accepted, %d queued (%v); want one", queued, n, err)
	}
}

// TestClaimConcurrentWorkers: workers claiming at once take disjoint jobs, and together all
// of them; claim order is run_after, id.
func TestClaimConcurrentWorkers(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	const jobs, workers = 60, 6
	for range jobs {
		b.enqueue(t, tenantA, "wf")
	}
	var mu sync.Mutex
	seen := map[string]string{}
	var wg sync.WaitGroup
	start := time.Now()
	for w := range workers {
		wg.Go(func() {
			worker := fmt.Sprintf("w%d", w)
			for {
				got, err := b.store.Claim(b.ctx, worker, 4, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				for i, j := range got {
					if i > 0 && got[i-1].RunAfter.After(j.RunAfter) {
						t.Errorf("claim order: %v after %v", j.RunAfter, got[i-1].RunAfter)
					}
				}
				mu.Lock()
				for _, j := range got {
					if prev, dup := seen[j.ID]; dup {
						t.Errorf("job %s claimed by %s and %s", j.ID, prev, worker)
					}
					seen[j.ID] = worker
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != jobs {
		t.Fatalf("claimed %d of %d jobs", len(seen), jobs)
	}
	t.Logf("%d workers claimed %d jobs in %v", workers, jobs, time.Since(start))
}

func TestClaimRetryScheduledWhenDue(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	j := b.enqueue(t, tenantA, "wf")
	b.claimOne(t, w1)
	if err := b.store.Retry(b.ctx, j.ID, w1, jobError("E1", 0), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if got, _ := b.store.Claim(b.ctx, w1, 10, time.Minute); len(got) != 0 {
		t.Fatalf("claimed a retry that is not due: %+v", got)
	}
	b.exec(t, `UPDATE jobs SET run_after = now() - interval '1 second' WHERE id = $1`, j.ID)
	c := b.claimOne(t, w2)
	if c.ID != j.ID || c.RetryCount != 1 {
		t.Fatalf("claimed %+v", c)
	}
}

// TestLeaseLost: a worker whose lease expired and whose job was rescued can change nothing.
func TestLeaseLost(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	j := b.enqueue(t, tenantA, "wf")
	b.claimOne(t, w1)
	if n, err := b.store.Rescue(b.ctx); err != nil || n != 0 {
		t.Fatalf("rescued %d live leases (%v)", n, err)
	}
	b.exec(t, `UPDATE jobs SET lease_until = now() - interval '1 second' WHERE id = $1`, j.ID)
	if n, err := b.store.Rescue(b.ctx); err != nil || n != 1 {
		t.Fatalf("rescued %d, %v", n, err)
	}
	got, _ := b.store.Job(b.ctx, tenantA, j.ID)
	if got.Status != runner.Queued || got.LeaseOwner != "" {
		t.Fatalf("rescued job %+v", got)
	}
	lost, err := b.store.Heartbeat(b.ctx, w1, []string{j.ID}, nil, time.Minute)
	if err != nil || !slices.Equal(lost, []string{j.ID}) {
		t.Fatalf("heartbeat lost %v, %v", lost, err)
	}
	before := b.snapshot(t, j.ID)
	wantLeaseLost(t, b.store.Succeed(b.ctx, j.ID, w1))
	wantLeaseLost(t, b.store.Pause(b.ctx, j.ID, w1, []graph.PendingInterrupt{reviewInterrupt}))
	wantLeaseLost(t, b.store.Retry(b.ctx, j.ID, w1, jobError("E", 0), time.Now()))
	_, err = b.store.DeadLetter(b.ctx, j.ID, w1, jobError("E", 0))
	wantLeaseLost(t, err)
	if after := b.snapshot(t, j.ID); after != before {
		t.Fatalf("a lost lease changed the job:\n%s\n%s", before, after)
	}
	b.claimOne(t, w2)
	wantLeaseLost(t, b.store.Succeed(b.ctx, j.ID, w1))
	if err := b.store.Succeed(b.ctx, j.ID, w2); err != nil {
		t.Fatal(err)
	}
	wantLeaseLost(t, b.store.Succeed(b.ctx, "not-a-uuid", w2))
}

func TestRelease(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	a, c := b.enqueue(t, tenantA, "wf"), b.enqueue(t, tenantA, "wf")
	if got, err := b.store.Claim(b.ctx, w1, 2, time.Minute); err != nil || len(got) != 2 {
		t.Fatalf("claim: %d, %v", len(got), err)
	}
	if err := b.store.Release(b.ctx, w2, []string{a.ID, c.ID}); err != nil {
		t.Fatal(err)
	}
	if b.status(t, a.ID) != runner.Running {
		t.Fatal("another worker released w1's job")
	}
	if err := b.store.Release(b.ctx, w1, []string{a.ID, c.ID, "junk"}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{a.ID, c.ID} {
		if s := b.status(t, id); s != runner.Queued {
			t.Fatalf("released job is %s", s)
		}
	}
}

// TestRetryAndDeadLetter: retries keep the whole error history; the dead-lettering walks to
// failed with its DLQ row; a replay returns the same entry.
func TestRetryAndDeadLetter(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	j := b.enqueue(t, tenantA, "wf")
	for i, fork := range []string{"cp-0", ""} { // a failure on the graph's error route, then one outside it
		b.claimOne(t, w1)
		e := jobError(fmt.Sprintf("E%d", i), i)
		e.CheckpointID = fork
		if err := b.store.Retry(b.ctx, j.ID, w1, e, time.Now().Add(-time.Second)); err != nil {
			t.Fatal(err)
		}
		got, _ := b.store.Job(b.ctx, tenantA, j.ID)
		if got.Status != runner.RetryScheduled || got.RetryCount != i+1 || len(got.Errors) != i+1 || got.RetryFrom != fork {
			t.Fatalf("after retry %d: %+v", i, got)
		}
	}
	b.claimOne(t, w1)
	e := jobError("LLM_PERMANENT", 2)
	e.Class = fault.Permanent
	e.CheckpointID = "cp-2"
	dlqID, err := b.store.DeadLetter(b.ctx, j.ID, w1, e)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := b.store.Job(b.ctx, tenantA, j.ID)
	if got.Status != runner.Failed || got.LeaseOwner != "" || len(got.Errors) != 3 || got.RetryFrom != "cp-2" {
		t.Fatalf("dead-lettered %+v", got)
	}
	if got.Errors[0].Code != "E0" || got.Errors[1].Code != "E1" || got.Errors[2] != e {
		t.Fatalf("error history %+v", got.Errors)
	}
	entry, err := b.store.DLQ(b.ctx, tenantA, dlqID)
	if err != nil {
		t.Fatal(err)
	}
	if entry.JobID != j.ID || entry.RetryCount != 2 || entry.Attempts != 3 || entry.Class != fault.Permanent ||
		entry.Code != "LLM_PERMANENT" || entry.Node != "score_with_llm" || entry.TraceID != "trace-1" ||
		entry.Status != postgres.DLQStatusRecorded || entry.Workflow != "wf" {
		t.Fatalf("DLQ entry %+v", entry)
	}
	again, err := b.store.DeadLetter(b.ctx, j.ID, w1, e)
	if err != nil || again != dlqID {
		t.Fatalf("replay: %s, %v; want %s", again, err, dlqID)
	}
	if n := b.count(t, `SELECT count(*) FROM dlq`); n != 1 {
		t.Fatalf("%d DLQ rows after a replay", n)
	}
	if n := b.count(t, `SELECT count(*) FROM jobs j WHERE status = 'failed'
		AND NOT EXISTS (SELECT 1 FROM dlq d WHERE d.job_id = j.id AND d.retry_count = j.retry_count)`); n != 0 {
		t.Fatalf("%d failed jobs without a DLQ row", n)
	}
}

// TestRequeueAndDiscard: the admin retry and discard, tenant-scoped and audited.
func TestRequeueAndDiscard(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	audit := postgres.NewAudit(b.db)
	j := b.enqueue(t, tenantA, "wf")
	b.claimOne(t, w1)
	first, err := b.store.DeadLetter(b.ctx, j.ID, w1, jobError("E", 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.store.Requeue(b.ctx, tenantB, j.ID, "admin-b"); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("another tenant's requeue: %v", err)
	}
	if err := b.store.Discard(b.ctx, tenantB, first, "admin-b"); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("another tenant's discard: %v", err)
	}
	if err := b.store.Requeue(b.ctx, tenantA, j.ID, "admin"); err != nil {
		t.Fatal(err)
	}
	got, _ := b.store.Job(b.ctx, tenantA, j.ID)
	if got.Status != runner.Queued || got.RetryCount != 1 || got.LeaseOwner != "" || len(got.Errors) != 1 {
		t.Fatalf("requeued %+v", got)
	}
	entry, _ := b.store.DLQ(b.ctx, tenantA, first)
	if entry.Status != postgres.DLQStatusRetried || entry.ResolvedBy != "admin" || entry.ResolvedAt.IsZero() {
		t.Fatalf("DLQ entry after retry %+v", entry)
	}
	wantFault(t, b.store.Requeue(b.ctx, tenantA, j.ID, "admin"), fault.Business, fault.CodeIllegalTransition)
	wantFault(t, b.store.Discard(b.ctx, tenantA, first, "admin"), fault.Business, fault.CodeIllegalTransition)

	// It fails again: a DLQ entry of its own (job_id, retry_count).
	b.claimOne(t, w2)
	second, err := b.store.DeadLetter(b.ctx, j.ID, w2, jobError("E", 1))
	if err != nil || second == first {
		t.Fatalf("second dead-lettering: %s, %v", second, err)
	}
	if err := b.store.Discard(b.ctx, tenantA, second, "admin"); err != nil {
		t.Fatal(err)
	}
	if err := b.store.Discard(b.ctx, tenantA, second, "admin"); err != nil {
		t.Fatalf("discarding again: %v", err)
	}
	if s := b.status(t, j.ID); s != runner.Failed {
		t.Fatalf("a discarded job is %s", s)
	}
	wantFault(t, b.store.Requeue(b.ctx, tenantA, j.ID, "admin"), fault.Business, fault.CodeIllegalTransition)
	entries, _, err := audit.List(b.ctx, postgres.AuditFilter{TenantID: tenantA, Actor: "admin"}, 0, 10)
	if err != nil || len(entries) != 2 || entries[0].Action != postgres.ActionDLQDiscard || entries[0].Subject != second ||
		entries[1].Action != postgres.ActionJobRetry || entries[1].Subject != j.ID {
		t.Fatalf("audit %+v, %v", entries, err)
	}
	if entries, _, _ := audit.List(b.ctx, postgres.AuditFilter{TenantID: tenantB}, 0, 10); len(entries) != 0 {
		t.Fatalf("refused actions audited: %+v", entries)
	}
}

// TestTenantIsolation: another tenant's ids are not found anywhere.
func TestTenantIsolation(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	j := b.enqueue(t, tenantA, "wf")
	b.claimOne(t, w1)
	if err := b.store.Pause(b.ctx, j.ID, w1, []graph.PendingInterrupt{reviewInterrupt}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.Job(b.ctx, tenantB, j.ID); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("Job: %v", err)
	}
	if _, err := b.store.Job(b.ctx, tenantA, "junk"); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("Job(junk): %v", err)
	}
	if err := b.store.IssueToken(b.ctx, tenantB, j.ID, "int-1", "h-b", time.Now().Add(time.Hour)); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("IssueToken: %v", err)
	}
	if err := b.store.IssueToken(b.ctx, tenantA, j.ID, "int-1", "h-a", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	_, err := b.store.ResumeJob(b.ctx, runner.ResumeParams{TenantID: tenantB, TokenHash: "h-a", Actor: "u", Decision: json.RawMessage(`1`),
		Worker: w1, Lease: time.Minute, Now: time.Now()})
	wantFault(t, err, fault.Validation, fault.CodeInterruptResumeInvalid)
	if jobs, _, err := b.store.ListJobs(b.ctx, postgres.JobFilter{TenantID: tenantB}, postgres.Cursor{}, 10); err != nil || len(jobs) != 0 {
		t.Fatalf("ListJobs: %d, %v", len(jobs), err)
	}
	if counts, err := b.store.CountJobs(b.ctx, tenantB); err != nil || len(counts) != 0 {
		t.Fatalf("CountJobs: %+v, %v", counts, err)
	}
	if _, err := b.store.DLQ(b.ctx, tenantB, j.ID); !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("DLQ: %v", err)
	}
	if s := b.status(t, j.ID); s != runner.WaitingReview {
		t.Fatalf("job is %s", s)
	}
}

// TestIllegalTransitionsExhaustive runs every store operation on a job in every status: it
// changes the job only from the status it leaves, and otherwise changes nothing.
func TestIllegalTransitionsExhaustive(t *testing.T) {
	t.Parallel()
	type op struct {
		name string
		from []runner.Status
		to   runner.Status
		// run returns the error; checkErr checks a refusal's class.
		run      func(t *testing.T, b jobBundle, id string) error
		checkErr func(t *testing.T, err error)
	}
	ops := []op{
		{"Succeed", []runner.Status{runner.Running}, runner.Succeeded,
			func(t *testing.T, b jobBundle, id string) error { return b.store.Succeed(b.ctx, id, w1) }, wantLeaseLost},
		{"Pause", []runner.Status{runner.Running}, runner.WaitingReview,
			func(t *testing.T, b jobBundle, id string) error {
				return b.store.Pause(b.ctx, id, w1, []graph.PendingInterrupt{reviewInterrupt})
			}, wantLeaseLost},
		{"Retry", []runner.Status{runner.Running}, runner.RetryScheduled,
			func(t *testing.T, b jobBundle, id string) error {
				return b.store.Retry(b.ctx, id, w1, jobError("E", 0), time.Now().Add(time.Hour))
			}, wantLeaseLost},
		{"DeadLetter", []runner.Status{runner.Running}, runner.Failed,
			func(t *testing.T, b jobBundle, id string) error {
				_, err := b.store.DeadLetter(b.ctx, id, w1, jobError("E", 0))
				return err
			}, wantLeaseLost},
		{"ResumeJob", []runner.Status{runner.WaitingReview}, runner.Running,
			func(t *testing.T, b jobBundle, id string) error {
				hash := "hash-" + id
				if _, err := b.pool.Exec(b.ctx, `INSERT INTO resume_tokens (hash, tenant_id, job_id, thread_id, interrupt_id, expires_at)
					SELECT $2, tenant_id, id, thread_id, 'int-1', now() + interval '1 hour' FROM jobs WHERE id = $1`, id, hash); err != nil {
					return err
				}
				_, err := b.store.ResumeJob(b.ctx, runner.ResumeParams{TenantID: tenantA, TokenHash: hash, Actor: "u",
					Decision: json.RawMessage(`"ok"`), Worker: w2, Lease: time.Minute, Now: time.Now()})
				return err
			}, func(t *testing.T, err error) { wantFault(t, err, fault.Validation, fault.CodeInterruptResumeInvalid) }},
		{"Requeue", []runner.Status{runner.Failed}, runner.Queued,
			func(t *testing.T, b jobBundle, id string) error { return b.store.Requeue(b.ctx, tenantA, id, "admin") },
			func(t *testing.T, err error) { wantFault(t, err, fault.Business, fault.CodeIllegalTransition) }},
		{"Release", []runner.Status{runner.Running}, runner.Queued,
			func(t *testing.T, b jobBundle, id string) error { return b.store.Release(b.ctx, w1, []string{id}) }, nil},
		{"Heartbeat", []runner.Status{runner.Running}, runner.Running,
			func(t *testing.T, b jobBundle, id string) error {
				lost, err := b.store.Heartbeat(b.ctx, w1, []string{id}, nil, time.Hour)
				if err == nil && len(lost) > 0 {
					return ErrLost
				}
				return err
			}, func(t *testing.T, err error) {
				if !errors.Is(err, ErrLost) {
					t.Fatalf("heartbeat: %v", err)
				}
			}},
		{"Rescue", []runner.Status{runner.Running}, runner.Queued,
			func(t *testing.T, b jobBundle, id string) error {
				_, err := b.store.Rescue(b.ctx)
				return err
			}, nil},
		// Claim runs last: it claims every runnable job of the database.
		{"Claim", []runner.Status{runner.Queued, runner.RetryScheduled}, runner.Running,
			func(t *testing.T, b jobBundle, id string) error {
				got, err := b.store.Claim(b.ctx, w2, 100, time.Minute)
				if err == nil && !slices.ContainsFunc(got, func(j runner.Job) bool { return j.ID == id }) {
					return ErrLost
				}
				return err
			}, func(t *testing.T, err error) {
				if !errors.Is(err, ErrLost) {
					t.Fatalf("claim: %v", err)
				}
			}},
	}
	for _, from := range runner.Statuses {
		t.Run(string(from), func(t *testing.T) {
			t.Parallel()
			b := setupJobs(t)
			ids := make([]string, len(ops))
			for i := range ops {
				ids[i] = b.enqueue(t, tenantA, "wf").ID
				b.force(t, ids[i], from)
			}
			for i, o := range ops {
				if o.name == "Rescue" { // its lease expired (where it has one)
					b.exec(t, `UPDATE jobs SET lease_until = now() - interval '1 second' WHERE id = $1 AND lease_until IS NOT NULL`, ids[i])
				}
				before := b.snapshot(t, ids[i])
				err := o.run(t, b, ids[i])
				legal := slices.Contains(o.from, from)
				if o.name == "DeadLetter" && from == runner.Failed {
					legal = false // a replay: the recorded entry, nothing changes
					if err != nil {
						t.Errorf("DeadLetter replay on a failed job: %v", err)
					}
					err = ErrLost
				}
				after := b.snapshot(t, ids[i])
				switch {
				case legal && err != nil:
					t.Errorf("%s from %s: %v", o.name, from, err)
				case legal:
					if s := b.status(t, ids[i]); s != o.to {
						t.Errorf("%s from %s: job is %s, want %s", o.name, from, s, o.to)
					}
				default:
					if after != before {
						t.Errorf("%s from %s changed the job:\n%s\n%s", o.name, from, before, after)
					}
					if o.checkErr != nil && err != ErrLost {
						o.checkErr(t, err)
					}
				}
			}
		})
	}
}

// ErrLost marks an operation that reported no change without an error.
var ErrLost = errors.New("no change")

// TestResumeRefusals: an unknown, used, expired or mismatched token changes nothing.
func TestResumeRefusals(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	j := b.enqueue(t, tenantA, "wf")
	b.claimOne(t, w1)
	if err := b.store.Pause(b.ctx, j.ID, w1, []graph.PendingInterrupt{reviewInterrupt}); err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	if err := b.store.IssueToken(b.ctx, tenantA, j.ID, "int-1", "h-valid", clock.Add(runner.DefaultTokenTTL)); err != nil {
		t.Fatal(err)
	}
	// Issuing for an interrupt that is not pending, or twice with one hash, is refused.
	wantFault(t, b.store.IssueToken(b.ctx, tenantA, j.ID, "int-9", "h-x", clock.Add(time.Hour)), fault.Validation, fault.CodeInterruptResumeInvalid)
	if err := b.store.IssueToken(b.ctx, tenantA, j.ID, "int-1", "h-valid", clock.Add(time.Hour)); !errors.Is(err, graph.ErrConflict) {
		t.Fatalf("a duplicate token hash: %v", err)
	}
	// A token for an interrupt that is no longer pending (the thread paused elsewhere since).
	b.exec(t, `INSERT INTO resume_tokens (hash, tenant_id, job_id, thread_id, interrupt_id, expires_at)
		VALUES ('h-stale', $1, $2, $3, 'int-old', $4)`, tenantA, j.ID, j.ThreadID, clock.Add(time.Hour))
	resume := func(hash string, now time.Time) error {
		_, err := b.store.ResumeJob(b.ctx, runner.ResumeParams{TenantID: tenantA, TokenHash: hash, Actor: "u_1",
			Decision: json.RawMessage(`{"decision":"approve"}`), Worker: w2, Lease: time.Minute, Now: now})
		return err
	}
	before := b.snapshot(t, j.ID)
	for _, c := range []struct {
		name, hash string
		now        time.Time
		reason     string
	}{
		{"unknown", "h-nope", clock, "unknown resume token"},
		{"expired", "h-valid", clock.Add(runner.DefaultTokenTTL), "expired"},
		{"long expired", "h-valid", clock.Add(48 * time.Hour), "expired"},
		{"stale interrupt", "h-stale", clock, "no longer pending"},
	} {
		err := resume(c.hash, c.now)
		wantFault(t, err, fault.Validation, fault.CodeInterruptResumeInvalid)
		if !strings.Contains(err.Error(), c.reason) {
			t.Errorf("%s: %v, want %q", c.name, err, c.reason)
		}
	}
	if after := b.snapshot(t, j.ID); after != before {
		t.Fatalf("a refused resume changed the job")
	}
	if n := b.count(t, `SELECT count(*) FROM resume_tokens WHERE used_at IS NOT NULL`); n != 0 {
		t.Fatalf("%d tokens used by refused resumes", n)
	}
	if n := b.count(t, `SELECT (SELECT count(*) FROM review_decisions) + (SELECT count(*) FROM audit_log)`); n != 0 {
		t.Fatalf("%d decisions or audit rows from refused resumes", n)
	}
	_, err := b.store.ResumeJob(b.ctx, runner.ResumeParams{TenantID: tenantA, TokenHash: "h-valid", Decision: json.RawMessage(`1`),
		Worker: w2, Lease: time.Minute, Now: clock})
	wantFault(t, err, fault.Security, fault.CodeInterruptResumeInvalid)
	// Valid just before expiry; then used.
	if err := resume("h-valid", clock.Add(runner.DefaultTokenTTL-time.Second)); err != nil {
		t.Fatal(err)
	}
	err = resume("h-valid", clock)
	wantFault(t, err, fault.Validation, fault.CodeInterruptResumeInvalid)
	if !strings.Contains(err.Error(), "already used: its decision was recorded at 2026-03-02T11:59:59Z") {
		t.Fatalf("reuse: %v", err)
	}
	// A token checked against another job's pause: of another thread, or of an earlier run
	// of the same thread (its current review has its own token).
	other := b.enqueue(t, tenantA, "wf")
	// (A thread has one unfinished job at a time, so the other job of j's thread is made here
	// as it would be after j ended and the thread was forked.)
	if _, err := b.store.Enqueue(b.ctx, runner.NewJob{TenantID: tenantA, Workflow: "wf", ThreadID: j.ThreadID}); !errors.Is(err, postgres.ErrThreadBusy) {
		t.Fatalf("a second job on a thread whose job waits for review: %v", err)
	}
	again := runner.Job{ID: "0190c1f5-0000-7000-8000-0000000000aa"}
	b.exec(t, `INSERT INTO jobs (id, tenant_id, workflow, thread_id, trace_id, subject) VALUES ($1, $2, 'wf', $3, 't', '')`,
		again.ID, tenantA, j.ThreadID)
	b.exec(t, `INSERT INTO resume_tokens (hash, tenant_id, job_id, thread_id, interrupt_id, expires_at)
		VALUES ('h-mismatch', $1, $2, $3, 'int-1', $4)`, tenantA, j.ID, j.ThreadID, clock.Add(time.Hour))
	for _, c := range []struct{ job, reason string }{
		{other.ID, "belongs to another thread's review"},
		{again.ID, "belongs to an earlier run of this thread"},
	} {
		_, err := b.store.ResumeJob(b.ctx, runner.ResumeParams{TenantID: tenantA, JobID: c.job, TokenHash: "h-mismatch", Actor: "u_1",
			Decision: json.RawMessage(`{"decision":"approve"}`), Worker: w2, Lease: time.Minute, Now: clock})
		wantFault(t, err, fault.Validation, fault.CodeInterruptResumeInvalid)
		if !strings.Contains(err.Error(), c.reason) {
			t.Errorf("token of job %s checked against job %s: %v, want %q", j.ID, c.job, err, c.reason)
		}
	}
	// A token of a job that is no longer waiting for review.
	b.exec(t, `INSERT INTO resume_tokens (hash, tenant_id, job_id, thread_id, interrupt_id, expires_at)
		VALUES ('h-late', $1, $2, $3, 'int-1', $4)`, tenantA, j.ID, j.ThreadID, clock.Add(time.Hour))
	err = resume("h-late", clock)
	wantFault(t, err, fault.Validation, fault.CodeInterruptResumeInvalid)
	if !strings.Contains(err.Error(), "not waiting for review") {
		t.Fatalf("running job: %v", err)
	}
}

// TestResumeConcurrent: 100 concurrent resumes with one token; exactly one wins.
func TestResumeConcurrent(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	j := b.enqueue(t, tenantA, "wf")
	b.claimOne(t, w1)
	if err := b.store.Pause(b.ctx, j.ID, w1, []graph.PendingInterrupt{reviewInterrupt}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := b.store.IssueToken(b.ctx, tenantA, j.ID, "int-1", "h", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	const n = 100
	var wins, refusals atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Go(func() {
			_, err := b.store.ResumeJob(b.ctx, runner.ResumeParams{TenantID: tenantA, TokenHash: "h", Actor: fmt.Sprintf("u_%d", i),
				Decision: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), Worker: fmt.Sprintf("w%d", i), Lease: time.Minute, Now: now})
			if err == nil {
				wins.Add(1)
				return
			}
			if _, code := fault.Classify(err); code != fault.CodeInterruptResumeInvalid {
				t.Errorf("resume %d: %v", i, err)
			}
			refusals.Add(1)
		})
	}
	wg.Wait()
	if wins.Load() != 1 || refusals.Load() != n-1 {
		t.Fatalf("%d wins, %d refusals", wins.Load(), refusals.Load())
	}
	t.Logf("%d concurrent resumes of one token: 1 won, %d refused, in %v", n, n-1, time.Since(start))
	if c := b.count(t, `SELECT (SELECT count(*) FROM review_decisions) * 100 + (SELECT count(*) FROM audit_log)`); c != 101 {
		t.Fatalf("decisions*100 + audit rows = %d, want 101", c)
	}
	var actor string
	if err := b.pool.QueryRow(b.ctx, `SELECT used_by FROM resume_tokens`).Scan(&actor); err != nil {
		t.Fatal(err)
	}
	got, _ := b.store.Job(b.ctx, tenantA, j.ID)
	if got.Status != runner.Running || got.LeaseOwner != "w"+strings.TrimPrefix(actor, "u_") {
		t.Fatalf("job %+v resumed by %s", got, actor)
	}
}

// TestJobCounts: the trigger-kept counts equal a count of the jobs table, under concurrent
// changes, before and after compaction.
func TestJobCounts(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	for i := range 30 {
		b.enqueue(t, []string{tenantA, tenantB}[i%2], []string{"wf1", "wf2", "wf3"}[i%3])
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			worker := fmt.Sprintf("w%d", w)
			for k := 0; ; k++ {
				got, err := b.store.Claim(b.ctx, worker, 2, time.Minute)
				if err != nil {
					t.Error(err)
					return
				}
				if len(got) == 0 {
					return
				}
				for _, j := range got {
					var err error
					switch k % 3 {
					case 0:
						err = b.store.Succeed(b.ctx, j.ID, worker)
					case 1:
						_, err = b.store.DeadLetter(b.ctx, j.ID, worker, jobError("E", j.RetryCount))
					default:
						err = b.store.Pause(b.ctx, j.ID, worker, []graph.PendingInterrupt{reviewInterrupt})
					}
					if err != nil {
						t.Error(err)
					}
				}
				if err := b.store.CompactCounts(b.ctx); err != nil { // compactions race the triggers
					t.Error(err)
				}
				if _, err := b.store.CountJobs(b.ctx, tenantA); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	check := func() {
		t.Helper()
		for _, tenant := range []string{tenantA, tenantB} {
			checkCounts(t, b, tenant)
		}
	}
	check()
	if err := b.store.CompactCounts(b.ctx); err != nil {
		t.Fatal(err)
	}
	check()
	if n := b.count(t, `SELECT count(*) FROM (SELECT 1 FROM job_counts GROUP BY tenant_id, workflow, status HAVING count(*) > 1) d`); n != 0 {
		t.Fatalf("%d keys with several rows after compaction", n)
	}
	b.exec(t, `DELETE FROM jobs WHERE tenant_id = $1`, tenantB)
	if counts, _ := b.store.CountJobs(b.ctx, tenantB); len(counts) != 0 {
		t.Fatalf("counts after deleting the jobs: %+v", counts)
	}
}

// TestJobCountsStaySmall: every compaction leaves the counter rows it folded as dead
// tuples, which every dashboard's count reads past until a vacuum removes them; CompactCounts
// vacuums after itself, so the count reads a few pages under steady work even where
// autovacuum is off or has not come by yet.
func TestJobCountsStaySmall(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	workflows := []string{"wf1", "wf2", "wf3", "wf4"}
	for range 150 {
		for _, wf := range workflows {
			b.enqueue(t, tenantA, wf)
			b.enqueue(t, tenantB, wf)
		}
		b.claimOne(t, w1)
		checkCounts(t, b, tenantA)
		if err := b.store.CompactCounts(b.ctx); err != nil {
			t.Fatal(err)
		}
	}
	checkCounts(t, b, tenantA)
	var plan []map[string]any
	if err := b.pool.QueryRow(b.ctx, `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)
		SELECT workflow, status, sum(n) FROM job_counts WHERE tenant_id = $1 GROUP BY 1, 2`, tenantA).Scan(&plan); err != nil {
		t.Fatal(err)
	}
	top := plan[0]["Plan"].(map[string]any)
	pages := top["Shared Hit Blocks"].(float64) + top["Shared Read Blocks"].(float64)
	if pages > 5 {
		t.Fatalf("counting one tenant's jobs read %v pages after 150 compactions", pages)
	}
}

// TestCompactCountsAsAppRole: connected as the application role, which does not own
// job_counts, compactions fold the counters as ever and leave the vacuum to autovacuum
// instead of asking for one PostgreSQL refuses, which would put a warning in the server's
// log (and, through the pool's notice handler, the app's) every couple of seconds.
func TestCompactCountsAsAppRole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	u := pgtest.AdminURL(t, pgtest.URL(t))
	sep := "?"
	if strings.Contains(u, "?") {
		sep = "&"
	}
	var logged pgtest.LogBuffer
	d, err := postgres.Open(ctx, u+sep+"options="+url.QueryEscape("-c role="+pgtest.AppRole),
		postgres.WithLogger(slog.New(slog.NewTextHandler(&logged, nil))))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	var role string
	if err := d.Pool().QueryRow(ctx, `SELECT current_user`).Scan(&role); err != nil || role != pgtest.AppRole {
		t.Fatalf("connected as %q (%v), want %s", role, err, pgtest.AppRole)
	}
	app := jobBundle{db: d, store: postgres.NewJobStore(d), pool: d.Pool(), ctx: ctx}
	for range 3 {
		app.enqueue(t, tenantA, "wf1")
		if err := app.store.CompactCounts(app.ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := checkCounts(t, app, tenantA)["wf1/queued"]; got != 3 {
		t.Fatalf("counted %d queued jobs, want 3", got)
	}
	if n := app.count(t, `SELECT count(*) FROM job_counts`); n != 1 {
		t.Fatalf("%d counter rows after the compactions, want 1 (folded)", n)
	}
	if strings.Contains(logged.String(), "database warning") {
		t.Fatalf("the compactions drew warnings from the database:\n%s", logged.String())
	}
}

func TestListJobsPages(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	var all []string
	for i := range 23 {
		all = append(all, b.enqueue(t, tenantA, []string{"wf1", "wf2"}[i%2]).ID)
	}
	b.enqueue(t, tenantB, "wf1")
	slices.Reverse(all) // newest first (UUIDv7 ids, one transaction each)
	var got []string
	cur := postgres.Cursor{}
	pages := 0
	for {
		jobs, next, err := b.store.ListJobs(b.ctx, postgres.JobFilter{TenantID: tenantA}, cur, 10)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, j := range jobs {
			got = append(got, j.ID)
		}
		if next.IsZero() {
			break
		}
		if cur, err = postgres.ParseCursor(next.String()); err != nil || cur.ID != next.ID || !cur.CreatedAt.Equal(next.CreatedAt) {
			t.Fatalf("cursor round trip: %+v → %+v, %v", next, cur, err)
		}
	}
	if pages != 3 || !slices.Equal(got, all) {
		t.Fatalf("%d pages: %v\nwant %v", pages, got, all)
	}
	jobs, _, err := b.store.ListJobs(b.ctx, postgres.JobFilter{TenantID: tenantA, Workflow: "wf2", Status: runner.Queued}, postgres.Cursor{}, 100)
	if err != nil || len(jobs) != 11 {
		t.Fatalf("filtered: %d, %v", len(jobs), err)
	}
	if _, err := postgres.ParseCursor("!!"); err == nil {
		t.Fatal("parsed a bad cursor")
	}
}

// QueueDashboardLists reads, in one statement, each list as ListJobs reads it for the same
// workflow and status, within the tenant and the list's limit, with the progress of jobs
// that run.
func TestDashboardLists(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	var jobs []runner.Job
	for i := range 9 {
		jobs = append(jobs, b.enqueue(t, tenantA, []string{"wf1", "wf2", "wf3"}[i%3]))
	}
	other := b.enqueue(t, tenantB, "wf1")
	running, waiting := jobs[0], jobs[3] // both wf1
	b.force(t, running.ID, runner.Running)
	b.force(t, waiting.ID, runner.WaitingReview)
	// The running job completed n1 twice (two runs) and n2; n3 failed. The waiting job's
	// records are not read: only jobs that run show progress.
	recs := postgres.NewNodeRecords(b.db, postgres.BatchOptions{})
	for _, r := range []runner.NodeExecution{
		{JobID: running.ID, ThreadID: running.ThreadID, Node: "n1"}, {JobID: running.ID, ThreadID: running.ThreadID, Node: "n1"},
		{JobID: running.ID, ThreadID: running.ThreadID, Node: "n2"},
		{JobID: running.ID, ThreadID: running.ThreadID, Node: "n3", ErrorCode: "WF_NODE_TIMEOUT"},
		{JobID: waiting.ID, ThreadID: waiting.ThreadID, Node: "n1"},
	} {
		r.TenantID, r.Workflow, r.StartedAt, r.EndedAt = tenantA, "wf1", time.Now(), time.Now()
		recs.RecordNode(b.ctx, r)
	}
	if err := recs.Close(b.ctx); err != nil {
		t.Fatal(err)
	}
	lists := []postgres.DashboardList{
		{Workflow: "wf1", Status: runner.Queued, Limit: 10},
		{Workflow: "wf2", Status: runner.Queued, Limit: 2},
		{Workflow: "wf3", Status: runner.Failed, Limit: 10},
		{Workflow: "wf1", Status: runner.Running, Limit: 8},
		{Workflow: "wf1", Status: runner.WaitingReview, Limit: 8},
		{Workflow: "nope", Status: runner.Queued, Limit: 8},
	}
	var got [][]postgres.DashboardJob
	r := b.db.Reads()
	b.store.QueueDashboardLists(r, tenantA, lists, &got)
	if err := r.Run(b.ctx); err != nil || len(got) != len(lists) {
		t.Fatalf("%d lists, %v", len(got), err)
	}
	for i, l := range lists {
		want, _, err := b.store.ListJobs(b.ctx, postgres.JobFilter{TenantID: tenantA, Workflow: l.Workflow, Status: l.Status},
			postgres.Cursor{}, l.Limit)
		if err != nil {
			t.Fatal(err)
		}
		var ids, wantIDs []string
		for _, j := range got[i] {
			ids = append(ids, j.ID)
		}
		for _, j := range want {
			wantIDs = append(wantIDs, j.ID)
		}
		if !slices.Equal(ids, wantIDs) {
			t.Fatalf("list %d (%+v): %v, want %v", i, l, ids, wantIDs)
		}
	}
	if len(got[0]) != 1 || len(got[1]) != 2 || len(got[2]) != 0 || len(got[5]) != 0 || slices.ContainsFunc(got[0],
		func(j postgres.DashboardJob) bool { return j.ID == other.ID }) {
		t.Fatalf("list sizes %d %d %d %d, or another tenant's job listed", len(got[0]), len(got[1]), len(got[2]), len(got[5]))
	}
	if run := got[3][0]; !slices.Equal(run.NodesDone, []string{"n1", "n2"}) {
		t.Fatalf("running job: nodes done %v", run.NodesDone)
	}
	if w := got[4][0]; w.ID != waiting.ID || len(w.NodesDone) != 0 {
		t.Fatalf("waiting job %s: nodes done %v; want %s and none", w.ID, w.NodesDone, waiting.ID)
	}
	// Another tenant's lists hold its own job alone.
	r = b.db.Reads()
	b.store.QueueDashboardLists(r, tenantB, lists[:1], &got)
	if err := r.Run(b.ctx); err != nil || len(got[0]) != 1 || got[0][0].ID != other.ID {
		t.Fatalf("tenant B: %v %v", got, err)
	}
	// A failure whose thread was started again is not listed; the new job is.
	failed := b.enqueue(t, tenantA, "wf3")
	b.force(t, failed.ID, runner.Failed)
	r = b.db.Reads()
	b.store.QueueDashboardLists(r, tenantA, lists[2:3], &got)
	if err := r.Run(b.ctx); err != nil || len(got[0]) != 1 || got[0][0].ID != failed.ID {
		t.Fatalf("failed wf3 jobs: %v %v, want %s", got, err, failed.ID)
	}
	again, err := b.store.Enqueue(b.ctx, runner.NewJob{TenantID: tenantA, Workflow: "wf3", ThreadID: failed.ThreadID,
		Subject: "ev_1", Input: json.RawMessage(`{"query":"q"}`)})
	if err != nil {
		t.Fatal(err)
	}
	r = b.db.Reads()
	b.store.QueueDashboardLists(r, tenantA, []postgres.DashboardList{lists[2], {Workflow: "wf3", Status: runner.Queued, Limit: 10}}, &got)
	if err := r.Run(b.ctx); err != nil || len(got[0]) != 0 || !slices.ContainsFunc(got[1],
		func(j postgres.DashboardJob) bool { return j.ID == again.ID }) {
		t.Fatalf("after a restart of the failed thread: failures %v, queued %v (%v)", got[0], got[1], err)
	}
	r = b.db.Reads()
	b.store.QueueDashboardLists(r, tenantA, nil, &got)
	if r.Len() != 0 || len(got) != 0 {
		t.Fatalf("no lists: %d statements queued, %d lists", r.Len(), len(got))
	}
}

func TestListDLQ(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	for range 5 {
		b.enqueue(t, tenantA, "wf")
	}
	jobs, err := b.store.Claim(b.ctx, w1, 5, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, j := range jobs {
		id, err := b.store.DeadLetter(b.ctx, j.ID, w1, jobError("E", 0))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := b.store.Discard(b.ctx, tenantA, ids[0], "admin"); err != nil {
		t.Fatal(err)
	}
	var got []string
	cur := postgres.Cursor{}
	for {
		entries, next, err := b.store.ListDLQ(b.ctx, tenantA, postgres.DLQStatusRecorded, cur, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			got = append(got, e.ID)
		}
		if cur = next; cur.IsZero() {
			break
		}
	}
	want := slices.Clone(ids[1:])
	slices.Reverse(want)
	if !slices.Equal(got, want) {
		t.Fatalf("recorded entries %v, want %v", got, want)
	}
	if entries, _, _ := b.store.ListDLQ(b.ctx, tenantB, "", postgres.Cursor{}, 10); len(entries) != 0 {
		t.Fatalf("another tenant lists %d entries", len(entries))
	}
	// The page's tabs count the entries per status, up to a limit (3: the 4 recorded read 3).
	for _, c := range []struct {
		tenant string
		limit  int
		want   map[string]int64
	}{
		{tenantA, 100, map[string]int64{postgres.DLQStatusRecorded: 4, postgres.DLQStatusRetried: 0, postgres.DLQStatusDiscarded: 1}},
		{tenantA, 3, map[string]int64{postgres.DLQStatusRecorded: 3, postgres.DLQStatusRetried: 0, postgres.DLQStatusDiscarded: 1}},
		{tenantB, 100, map[string]int64{postgres.DLQStatusRecorded: 0, postgres.DLQStatusRetried: 0, postgres.DLQStatusDiscarded: 0}},
	} {
		if got, err := b.store.CountDLQ(b.ctx, c.tenant, c.limit); err != nil || fmt.Sprint(got) != fmt.Sprint(c.want) { // fmt sorts map keys
			t.Errorf("CountDLQ(%s, %d) = %v %v, want %v", c.tenant, c.limit, got, err, c.want)
		}
	}
}

// TestTokenIssuedInRun: a running node may issue the token of the interrupt it is about to
// raise (runner.IssueTokenInRun); it can be used once the job has paused there.
func TestTokenIssuedInRun(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	j := b.enqueue(t, tenantA, "wf")
	b.claimOne(t, w1)
	now := time.Now()
	if err := b.store.IssueToken(b.ctx, tenantA, j.ID, "int-1", "h-run", now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	p := runner.ResumeParams{TenantID: tenantA, TokenHash: "h-run", Actor: "u", Decision: json.RawMessage(`"approve"`),
		Worker: w2, Lease: time.Minute, Now: now}
	_, err := b.store.ResumeJob(b.ctx, p)
	wantFault(t, err, fault.Validation, fault.CodeInterruptResumeInvalid)
	if err := b.store.Pause(b.ctx, j.ID, w1, []graph.PendingInterrupt{reviewInterrupt}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.ResumeJob(b.ctx, p); err != nil {
		t.Fatal(err)
	}
	// Not for a queued or finished job.
	q := b.enqueue(t, tenantA, "wf")
	wantFault(t, b.store.IssueToken(b.ctx, tenantA, q.ID, "int-1", "h-q", now.Add(time.Hour)), fault.Validation, fault.CodeInterruptResumeInvalid)
}

// checkCounts checks that CountJobs gives a tenant's jobs by (workflow, status) as the jobs
// table has them, and returns the counts.
func checkCounts(t *testing.T, b jobBundle, tenant string) map[string]int64 {
	t.Helper()
	counts, err := b.store.CountJobs(b.ctx, tenant)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, c := range counts {
		got[c.Workflow+"/"+string(c.Status)] = c.N
	}
	rows, err := b.pool.Query(b.ctx, `SELECT workflow || '/' || status, count(*) FROM jobs WHERE tenant_id = $1 GROUP BY 1`, tenant)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{}
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			t.Fatal(err)
		}
		want[k] = n
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("%s: counts %v, want %v", tenant, got, want)
	}
	return got
}

// ExpirePauses dead-letters jobs paused before the cutoff, at the node they paused at, and
// leaves younger pauses alone; when the dead-lettering cannot finish, nothing moves (the job
// still waits, with its pause time and interrupts): a job is never left running unowned.
func TestJobExpirePauses(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	pause := func() runner.Job {
		t.Helper()
		j := b.enqueue(t, tenantA, "wf")
		b.claimOne(t, w1)
		if err := b.store.Pause(b.ctx, j.ID, w1, []graph.PendingInterrupt{reviewInterrupt}); err != nil {
			t.Fatal(err)
		}
		return j
	}
	old, young := pause(), pause()
	if _, err := b.pool.Exec(b.ctx, `UPDATE jobs SET paused_at = now() - interval '25 hours' WHERE id = $1`, old.ID); err != nil {
		t.Fatal(err)
	}
	why := func(j runner.Job, node string) runner.JobError {
		return runner.JobError{Class: fault.Business, Code: fault.CodeReviewExpired, Message: "too late", Node: node, RetryCount: j.RetryCount}
	}
	cutoff := time.Now().Add(-24 * time.Hour)

	// The DLQ table is held by another transaction: the sweep gives up, and rolls back.
	tx, err := b.pool.Begin(b.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(b.ctx, `LOCK TABLE dlq IN EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(b.ctx, 300*time.Millisecond)
	if jobs, err := b.store.ExpirePauses(short, w1, time.Minute, cutoff, 10, why); err == nil || len(jobs) != 0 {
		t.Fatalf("a sweep that cannot dead-letter: %d jobs, %v", len(jobs), err)
	}
	cancel()
	_ = tx.Rollback(b.ctx)
	if got, _ := b.store.Job(b.ctx, tenantA, old.ID); got.Status != runner.WaitingReview || len(got.Interrupts) != 1 {
		t.Fatalf("after the failed sweep the job is %s with %d interrupts, want waiting with its pause", got.Status, len(got.Interrupts))
	}

	// The cancelled sweep's session may hold the job's row a moment longer (it is skipped
	// while locked), so the next sweep is tried until it finds the job.
	var jobs []runner.Job
	for deadline := time.Now().Add(10 * time.Second); len(jobs) == 0 && err == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		jobs, err = b.store.ExpirePauses(b.ctx, w1, time.Minute, cutoff, 10, why)
	}
	if err != nil || len(jobs) != 1 || jobs[0].ID != old.ID {
		t.Fatalf("sweep: %+v %v, want the old pause only", jobs, err)
	}
	got, _ := b.store.Job(b.ctx, tenantA, old.ID)
	if got.Status != runner.Failed || len(got.Interrupts) != 0 || got.Errors[len(got.Errors)-1].Code != fault.CodeReviewExpired {
		t.Fatalf("the swept job: %+v", got)
	}
	if n := b.count(t, `SELECT count(*) FROM dlq WHERE job_id = $1 AND code = 'WF_REVIEW_EXPIRED' AND node = 'human_review' AND class = 'business'`, old.ID); n != 1 {
		t.Fatalf("%d DLQ rows for the swept job", n)
	}
	if got, _ := b.store.Job(b.ctx, tenantA, young.ID); got.Status != runner.WaitingReview {
		t.Fatalf("the young pause is %s", got.Status)
	}
	if jobs, err := b.store.ExpirePauses(b.ctx, w1, time.Minute, cutoff, 10, why); err != nil || len(jobs) != 0 {
		t.Fatalf("a second sweep: %d jobs, %v", len(jobs), err)
	}
}

// PruneTokens deletes the resume tokens that expired before the cutoff, and only those.
func TestJobPruneTokens(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	j := b.enqueue(t, tenantA, "wf")
	b.claimOne(t, w1)
	if err := b.store.Pause(b.ctx, j.ID, w1, []graph.PendingInterrupt{reviewInterrupt}); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for secret, exp := range map[string]time.Time{"rt_long_ago": now.Add(-10 * 24 * time.Hour), "rt_lately": now.Add(-time.Hour), "rt_live": now.Add(time.Hour)} {
		if err := b.store.IssueToken(b.ctx, tenantA, j.ID, "int-1", runner.HashToken(secret), exp); err != nil {
			t.Fatal(err)
		}
	}
	n, err := b.store.PruneTokens(b.ctx, now.Add(-7*24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("pruned %d tokens (%v), want 1", n, err)
	}
	if left := b.count(t, `SELECT count(*) FROM resume_tokens WHERE job_id = $1 AND hash <> $2`, j.ID, runner.HashToken("rt_long_ago")); left != 2 {
		t.Fatalf("%d tokens left besides the pruned one, want 2", left)
	}
	if gone := b.count(t, `SELECT count(*) FROM resume_tokens WHERE hash = $1`, runner.HashToken("rt_long_ago")); gone != 0 {
		t.Fatal("the long-expired token is still there")
	}
}

// Prune's finished threads leave out a thread whose latest job's dead letter waits for an
// admin (a retry goes on from its last checkpoint), but not one whose waiting entry is an
// older run's (it can only be discarded: the thread was started again since).
func TestFinishedThreadsAndDeadLetters(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	run := func(thread string, fail bool) {
		t.Helper()
		j, err := b.store.Enqueue(b.ctx, runner.NewJob{TenantID: tenantA, Workflow: "wf", ThreadID: thread, Input: json.RawMessage(`{}`)})
		if err != nil {
			t.Fatal(err)
		}
		b.claimOne(t, w1)
		if fail {
			if _, err := b.store.DeadLetter(b.ctx, j.ID, w1, runner.JobError{Class: fault.Business, Code: "X", Message: "no"}); err != nil {
				t.Fatal(err)
			}
		} else if err := b.store.Succeed(b.ctx, j.ID, w1); err != nil {
			t.Fatal(err)
		}
	}
	run("th-failed", true)      // its entry waits: left whole
	run("th-superseded", true)  // failed, then started again and succeeded
	run("th-superseded", false) // its old entry can only be discarded
	run("th-done", false)       // plain
	threads, err := b.store.FinishedThreads(b.ctx, "", 10)
	if err != nil || !slices.Equal(threads, []string{"th-done", "th-superseded"}) {
		t.Fatalf("finished threads: %v %v, want th-done and th-superseded", threads, err)
	}
}

// TestJobSettling: while a run settles a job it moved to rest, no job of that thread is
// claimed (its retry due at once, a new job on the thread), jobs of other threads are; the
// settling is the marking worker's to extend and end, and it ends by itself when it expires.
func TestJobSettling(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	j := b.enqueue(t, tenantA, "wf")
	b.claimOne(t, w1)
	wantLeaseLost(t, b.store.Settling(b.ctx, j.ID, w2, time.Minute))
	if err := b.store.Settling(b.ctx, j.ID, w1, time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := b.store.Retry(b.ctx, j.ID, w1, jobError("E1", 0), time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	other := b.enqueue(t, tenantA, "wf")
	claimed := func(worker string) []string {
		t.Helper()
		jobs, err := b.store.Claim(b.ctx, worker, 10, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range jobs {
			ids = append(ids, c.ID)
		}
		slices.Sort(ids)
		return ids
	}
	if got := claimed(w2); !slices.Equal(got, []string{other.ID}) {
		t.Fatalf("claimed %v while job %s settles, want only the other thread's %s", got, j.ID, other.ID)
	}
	settlingLeft := func() time.Duration {
		t.Helper()
		var until time.Time
		if err := b.pool.QueryRow(b.ctx, `SELECT settling_until FROM jobs WHERE id = $1`, j.ID).Scan(&until); err != nil {
			t.Fatal(err)
		}
		return time.Until(until)
	}
	if _, err := b.store.Heartbeat(b.ctx, w1, nil, []string{j.ID}, time.Hour); err != nil || settlingLeft() < 59*time.Minute {
		t.Fatalf("settling not extended by its worker's heartbeat: %v left (%v)", settlingLeft(), err)
	}
	if _, err := b.store.Heartbeat(b.ctx, w2, nil, []string{j.ID}, 2*time.Hour); err != nil || settlingLeft() > time.Hour {
		t.Fatalf("another worker's heartbeat extended the settling: %v left (%v)", settlingLeft(), err)
	}
	if err := b.store.Settled(b.ctx, j.ID, w2); err != nil {
		t.Fatal(err)
	}
	if got := claimed(w2); len(got) != 0 {
		t.Fatalf("another worker ended the settling: claimed %v", got)
	}
	if err := b.store.Settled(b.ctx, j.ID, w1); err != nil {
		t.Fatal(err)
	}
	if got := claimed(w2); !slices.Equal(got, []string{j.ID}) {
		t.Fatalf("claimed %v once the settling ended, want %s", got, j.ID)
	}

	// A job dead-lettered while settling: a new job on its thread (as a rerun starts one)
	// is refused until the settling ends, here by expiring (the worker died).
	k := b.enqueue(t, tenantA, "wf")
	b.claimOne(t, w1)
	if err := b.store.Settling(b.ctx, k.ID, w1, time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := b.store.DeadLetter(b.ctx, k.ID, w1, jobError("E1", 0)); err != nil {
		t.Fatal(err)
	}
	// Starting one now would record as its base the head about to move: it is refused.
	if _, err := b.store.Enqueue(b.ctx, runner.NewJob{TenantID: tenantA, Workflow: "wf", ThreadID: k.ThreadID}); !errors.Is(err, postgres.ErrThreadBusy) {
		t.Fatalf("a new job on a settling thread: %v, want ErrThreadBusy", err)
	}
	b.exec(t, `UPDATE jobs SET settling_until = now() - interval '1 second' WHERE id = $1`, k.ID)
	same, err := b.store.Enqueue(b.ctx, runner.NewJob{TenantID: tenantA, Workflow: "wf", ThreadID: k.ThreadID})
	if err != nil {
		t.Fatalf("a new job once the settling expired: %v", err)
	}
	if got := claimed(w2); !slices.Equal(got, []string{same.ID}) {
		t.Fatalf("claimed %v after the settling expired, want %s", got, same.ID)
	}
	// A claim clears an expired mark its job was left with (its worker died settling).
	b.exec(t, `UPDATE jobs SET settling_owner = $2, settling_until = now() - interval '1 second' WHERE id = $1`, same.ID, w1)
	if err := b.store.Release(b.ctx, w2, []string{same.ID}); err != nil {
		t.Fatal(err)
	}
	if got := claimed(w2); !slices.Equal(got, []string{same.ID}) ||
		b.count(t, `SELECT count(*) FROM jobs WHERE id = $1 AND settling_owner IS NULL AND settling_until IS NULL`, same.ID) != 1 {
		t.Fatalf("claimed %v; the expired mark of %s was not cleared", got, same.ID)
	}
}
