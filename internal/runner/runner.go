package runner

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/telemetry"
)

// MaxJobRetries is how many times a transient failure reschedules a job
// (seed 000 §5.2: retry while retry_count < 3).
const MaxJobRetries = 3

// DefaultMaxRescues is how many times in a row a job may be requeued after
// its lease expired (its worker died, stalled or lost the database) before
// the runner dead-letters it instead of running it again (Config.MaxRescues).
// A run that ends in its worker's hands (a pause, a scheduled retry) and an
// admin retry start the count again.
const DefaultMaxRescues = 10

// DefaultConcurrency is how many jobs a Runner runs at once unless
// Config.Concurrency says otherwise.
const DefaultConcurrency = 4

// DefaultTokenTTL is how long a paused thread can be resumed (seed 000 §11.1).
const DefaultTokenTTL = 24 * time.Hour

// Job is one run of one thread of one registered workflow.
type Job struct {
	ID         string
	TenantID   string
	Workflow   string
	ThreadID   string
	TraceID    string
	Subject    string // what the job is about, e.g. an evaluation id
	Status     Status
	RetryCount int
	// Rescues counts the requeues after an expired lease since the job's
	// last run that ended in its worker's hands (or an admin retry).
	Rescues    int
	Input      json.RawMessage // channel -> value, applied when the thread starts
	Resume     json.RawMessage // interrupt id -> value, set by a resume
	Errors     []JobError      // every error, oldest first (seed 004)
	Interrupts []graph.PendingInterrupt
	// RetryFrom is the checkpoint a retry forks from when the failure was
	// handled inside the graph (its error route ran to the end).
	RetryFrom string
	// BaseCheckpoint is the thread's head when the job was enqueued ("" for
	// a new thread): while the head is still there, the job's run has not
	// started, so its Input starts a new run on a thread that finished.
	BaseCheckpoint string
	RunAfter       time.Time
	LeaseOwner     string
	LeaseUntil     time.Time
	CreatedAt      time.Time
	UpdatedAt      time.Time
	// TraceParent is the W3C traceparent of the span that started or last resumed the job
	// ("": none): the run's span is its child when it is in the job's trace, else links to it.
	TraceParent string
	// PausedAt is when the job began waiting for review (zero when it is not waiting; for
	// a job ResumeJob returns, when the pause it answered began).
	PausedAt time.Time
}

// JobError is one entry of a job's error history.
type JobError struct {
	At         time.Time   `json:"at"`
	Class      fault.Class `json:"class"`
	Code       string      `json:"code"`
	Message    string      `json:"message"`
	Node       string      `json:"node,omitempty"`
	TraceID    string      `json:"trace_id"`
	RetryCount int         `json:"retry_count"`
	// CheckpointID is where a retry of the failed node starts (set when the
	// graph's error route recorded the failure); the store keeps it as the
	// job's RetryFrom.
	CheckpointID string `json:"checkpoint_id,omitempty"`
	// SpanID is the span of the attempt that failed, which the next attempt links to.
	SpanID string `json:"span_id,omitempty"`
}

// NewJob is what Enqueue takes.
type NewJob struct {
	TenantID string
	Workflow string
	ThreadID string // default: the job id
	TraceID  string // default: the trace of the span in Enqueue's context, else a new id
	Subject  string
	Input    json.RawMessage
	// TraceParent: default, the traceparent of the span in Enqueue's context.
	TraceParent string
}

// ResumeRequest is a reviewer's answer to a paused thread (seed 000 §7.2).
type ResumeRequest struct {
	TenantID string
	// JobID, when set, is the job whose pause the caller answers (the one whose form or
	// thread the decision was checked against): a token of any other job is refused before
	// anything is used up.
	JobID    string
	Token    string
	Actor    string          // the reviewer's identity; required
	Decision json.RawMessage // the resume value handed to the interrupted node
	// Update, when set (a JSON object of channel values), is applied to the thread's state
	// as if AsNode wrote it (LangGraph's update_state) before the run continues; the
	// Decision (a JSON object) is then the record of what was decided, kept with it.
	Update json.RawMessage
	AsNode string
}

// updateKey is the key of a recorded decision that carries an update of the state: the
// worker applies it, then continues the run (runner.command).
const updateKey = "$update"

// stateUpdate is a decision's update of the state.
type stateUpdate struct {
	Values json.RawMessage `json:"values"`
	AsNode string          `json:"as_node,omitempty"`
}

// ResumeParams is what Store.ResumeJob needs. Now comes from the runner's
// clock, so expiry is decided by the same clock that issued the token.
type ResumeParams struct {
	TenantID  string
	JobID     string // "": any job the token belongs to
	TokenHash string
	Actor     string
	Decision  json.RawMessage
	Worker    string
	Lease     time.Duration
	Now       time.Time
	// TraceParent, when set, is the resume caller's span: the job keeps it (Job.TraceParent).
	TraceParent string
}

// Token is an issued resume token (the secret is returned once).
type Token struct {
	Secret    string
	ExpiresAt time.Time
}

// Store is what the runner needs from the database. Every status change goes
// through CheckTransition; a job moved under a worker that no longer holds
// its lease fails with ErrLeaseLost.
type Store interface {
	Enqueue(ctx context.Context, j NewJob) (Job, error)
	// Claim moves up to limit runnable jobs (queued, or retry_scheduled and
	// due) to running, leased to worker (FOR UPDATE SKIP LOCKED).
	Claim(ctx context.Context, worker string, limit int, lease time.Duration) ([]Job, error)
	// Heartbeat extends the leases worker still holds and returns the ids of
	// the jobs it lost; it extends the settling of the jobs of settling too.
	Heartbeat(ctx context.Context, worker string, ids, settling []string, lease time.Duration) (lost []string, err error)
	// Settling marks the running job leased to worker as settling for d: its
	// run is about to move it to rest and then still writes its last step. No
	// job of its thread is claimed until Settled (or until d passes without a
	// heartbeat: the worker died), so none starts from a head about to move.
	Settling(ctx context.Context, id, worker string, d time.Duration) error
	// Settled ends the settling worker marked (its run returned).
	Settled(ctx context.Context, id, worker string) error
	// Rescue requeues running jobs whose lease expired.
	Rescue(ctx context.Context) (int, error)
	// ExpirePauses moves up to limit jobs paused before pausedBefore (unanswered: their
	// tokens have expired) waiting_review → running, leased to worker, and dead-letters each
	// with the error why gives it (told the node it paused at), in one transaction.
	ExpirePauses(ctx context.Context, worker string, lease time.Duration, pausedBefore time.Time, limit int,
		why func(j Job, node string) JobError) ([]Job, error)
	Succeed(ctx context.Context, id, worker string) error
	// Pause moves the job to waiting_review and records its interrupts.
	Pause(ctx context.Context, id, worker string, ints []graph.PendingInterrupt) error
	// Retry appends e, increments retry_count and schedules the job at at.
	Retry(ctx context.Context, id, worker string, e JobError, at time.Time) error
	// DeadLetter appends e and walks running → dlq_pending → dlq_recorded
	// → failed, writing the DLQ row on the way; idempotent on (job id,
	// retry_count). It returns the DLQ entry id.
	DeadLetter(ctx context.Context, id, worker string, e JobError) (string, error)
	// IssueToken stores a resume token's hash bound to the job's thread and
	// interrupt.
	IssueToken(ctx context.Context, tenantID, jobID, interruptID, tokenHash string, expiresAt time.Time) error
	// ResumeJob consumes the token, records the decision and the audit row
	// and moves the job waiting_review → running leased to p.Worker, in one
	// transaction. Invalid, used, expired or mismatched tokens give an error
	// classified WF_INTERRUPT_RESUME_INVALID.
	ResumeJob(ctx context.Context, p ResumeParams) (Job, error)
	// Release requeues jobs a stopping worker still holds.
	Release(ctx context.Context, worker string, ids []string) error
	// Requeue is an admin retry: failed → queued from the last checkpoint,
	// the DLQ entry marked retried, an audit row written, in one transaction.
	Requeue(ctx context.Context, tenantID, jobID, actor string) error
	// Discard marks a DLQ entry discarded (the job stays failed) and audits it.
	Discard(ctx context.Context, tenantID, dlqID, actor string) error
	// Job loads one job of a tenant (ErrNotFound for another tenant's id).
	Job(ctx context.Context, tenantID, jobID string) (Job, error)
}

// EventSink receives every event of every run (the event bus).
type EventSink interface {
	Publish(ctx context.Context, tenantID string, ev graph.Event)
}

// EventFlusher is an EventSink or NodeRecorder that writes in the background and can wait
// until what it was given has been written. The runner waits for it before a job comes to
// rest (paused, succeeded, retry scheduled, failed), so a run's events and records are
// stored by the time its job says the run ended, even if the process dies right after.
type EventFlusher interface {
	Flush(ctx context.Context) error
}

// flushWait bounds that wait: past it, the job comes to rest anyway (a warning is logged).
const flushWait = 5 * time.Second

// flushRun waits for the events and node records of the run so far to be written.
func (r *Runner) flushRun(ctx context.Context, log *slog.Logger) {
	for _, w := range []any{r.cfg.Events, r.cfg.Nodes} {
		f, ok := w.(EventFlusher)
		if !ok {
			continue
		}
		fctx, cancel := context.WithTimeout(ctx, flushWait)
		if err := f.Flush(fctx); err != nil {
			log.Warn("the run's events or node records were not all written before its job came to rest", "err", err)
		}
		cancel()
	}
}

// NodeRecorder receives one record per node execution (seed 000 §10).
type NodeRecorder interface {
	RecordNode(ctx context.Context, rec NodeExecution)
}

// NodeExecution is the observability record of one node execution.
type NodeExecution struct {
	TenantID   string
	JobID      string
	Workflow   string
	TraceID    string
	ThreadID   string
	Node       string
	TaskID     string
	StartedAt  time.Time
	EndedAt    time.Time
	LatencyMS  float64
	InputSize  int
	OutputSize int
	Attempts   int
	ErrorCode  string
	Cached     bool
}

// Registry finds workflows by name.
type Registry interface {
	Lookup(name string) (graph.Runnable, bool)
}

// Config configures a Runner.
type Config struct {
	Store        Store
	Workflows    Registry
	Events       EventSink    // optional
	Nodes        NodeRecorder // optional
	Logger       *slog.Logger
	WorkerID     string
	Concurrency  int           // jobs run at once (default 4)
	Lease        time.Duration // default 30s; heartbeats every Lease/3
	PollInterval time.Duration // fallback when no wake-up arrives (default 1s)
	RescueEvery  time.Duration // default Lease/2
	Wake         <-chan struct{}
	// EventModes selects the events published to Events (default: tasks,
	// custom progress, checkpoints; interrupts always).
	EventModes graph.StreamMode
	// MaxRescues: a job rescued this many times in a row is dead-lettered
	// with fault.CodeWorkerLost when next claimed (default DefaultMaxRescues).
	MaxRescues int
	TokenTTL   time.Duration                      // default 24h
	Backoff    func(retryCount int) time.Duration // default 2s·4^n
	Now        func() time.Time
	// Tracer makes the spans of job attempts and node tasks (default: the global provider;
	// a no-op one records nothing and costs next to nothing).
	Tracer trace.TracerProvider
	// Observer is told about claims, rests, pauses and resumes (metrics; optional).
	Observer Observer
}

// Runner claims and runs jobs.
type Runner struct {
	cfg Config
	log *slog.Logger

	mu       sync.Mutex
	inflight map[string]context.CancelFunc
	// rested are in-flight jobs their own run moved to rest (the graph's error route:
	// RecordFailure): they hold no lease any more, and their run goes on to write its last
	// checkpoint, so a heartbeat that finds them not leased must not stop it. They are
	// settling (Store.Settling) until their run returns: heartbeats extend that instead.
	rested map[string]bool
	wg     sync.WaitGroup
	slots  chan struct{}

	tracer trace.Tracer // job attempts' and node tasks' spans
}

// New returns a Runner; Run starts it.
func New(cfg Config) *Runner {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = DefaultConcurrency
	}
	if cfg.Lease <= 0 {
		cfg.Lease = 30 * time.Second
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = time.Second
	}
	if cfg.RescueEvery <= 0 {
		cfg.RescueEvery = cfg.Lease / 2
	}
	if cfg.TokenTTL <= 0 {
		cfg.TokenTTL = DefaultTokenTTL
	}
	if cfg.MaxRescues <= 0 {
		cfg.MaxRescues = DefaultMaxRescues
	}
	if cfg.Backoff == nil {
		cfg.Backoff = func(n int) time.Duration { return time.Duration(2*math.Pow(4, float64(n))) * time.Second }
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.WorkerID == "" {
		host, _ := os.Hostname()
		cfg.WorkerID = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), randomHex(4))
	}
	return &Runner{cfg: cfg, log: cfg.Logger.With("worker", cfg.WorkerID), inflight: map[string]context.CancelFunc{}, rested: map[string]bool{},
		slots: make(chan struct{}, cfg.Concurrency), tracer: telemetry.Or(cfg.Tracer).Tracer(telemetry.ScopeName)}
}

// WorkerID names this runner in leases.
func (r *Runner) WorkerID() string { return r.cfg.WorkerID }

// TokenTTL is how long after a pause its review can be answered.
func (r *Runner) TokenTTL() time.Duration { return r.cfg.TokenTTL }

// CheckInput refuses a run input wf cannot take, as a validation fault whose message says
// which channel or value is wrong (shown to whoever started the run): text jsonb would refuse
// (checked before anything decodes it, which would hide it), then the channels' types.
func CheckInput(wf graph.Runnable, input json.RawMessage) error {
	if err := StorableJSON(input); err != nil {
		return fault.New(fault.Validation, fault.CodeValidation, err.Error())
	}
	if _, err := wf.InputWrites(input); err != nil {
		return fault.New(fault.Validation, fault.CodeValidation, err.Error())
	}
	return nil
}

// Enqueue adds a job.
func (r *Runner) Enqueue(ctx context.Context, j NewJob) (Job, error) {
	wf, ok := r.cfg.Workflows.Lookup(j.Workflow)
	if !ok {
		return Job{}, fault.New(fault.Validation, fault.CodeWorkflowUnknown, fmt.Sprintf("no workflow named %q", j.Workflow))
	}
	if err := CheckInput(wf, j.Input); err != nil {
		return Job{}, err
	}
	if j.TraceID == "" {
		j.TraceID = cmp.Or(telemetry.TraceID(ctx), randomHex(16))
	}
	if j.TraceParent == "" {
		j.TraceParent = telemetry.Traceparent(ctx)
	}
	return r.cfg.Store.Enqueue(ctx, j)
}

// Run claims and runs jobs until ctx ends, then releases what it holds.
func (r *Runner) Run(ctx context.Context) error {
	var bg sync.WaitGroup
	bg.Add(2)
	go func() { defer bg.Done(); r.heartbeats(ctx) }()
	go func() { defer bg.Done(); r.rescues(ctx) }()
	defer bg.Wait()
	poll := time.NewTimer(0)
	defer poll.Stop()
	failures := 0 // consecutive claim failures: back off while the database is away
	for {
		select {
		case <-ctx.Done():
			r.stop()
			return nil
		case <-poll.C:
		case <-r.cfg.Wake:
		}
		for ctx.Err() == nil {
			free := cap(r.slots) - len(r.slots)
			if free == 0 {
				break
			}
			jobs, err := r.cfg.Store.Claim(ctx, r.cfg.WorkerID, free, r.cfg.Lease)
			if err != nil {
				if ctx.Err() == nil && failures%10 == 0 {
					r.log.Error("claim jobs", "err", err, "consecutive_failures", failures+1)
				}
				failures++
				break
			}
			failures = 0
			for _, j := range jobs {
				if r.cfg.Observer != nil {
					r.cfg.Observer.Claimed(j, max(0, r.cfg.Now().Sub(j.RunAfter)))
				}
				r.dispatch(ctx, j)
			}
			if len(jobs) < free {
				break
			}
		}
		delay := r.cfg.PollInterval
		for i := 0; i < failures && delay < 5*time.Second; i++ {
			delay *= 2
		}
		poll.Reset(min(delay, 5*time.Second))
	}
}

// stop cancels in-flight jobs and hands them back to the queue.
func (r *Runner) stop() {
	r.mu.Lock()
	ids := make([]string, 0, len(r.inflight))
	for id, cancel := range r.inflight {
		ids = append(ids, id)
		cancel()
	}
	r.mu.Unlock()
	r.wg.Wait()
	if len(ids) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := r.cfg.Store.Release(ctx, r.cfg.WorkerID, ids); err != nil {
			r.log.Warn("release jobs at shutdown", "err", err, "jobs", len(ids))
		}
	}
}

func (r *Runner) dispatch(ctx context.Context, j Job) {
	r.slots <- struct{}{}
	jctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	r.mu.Lock()
	r.inflight[j.ID] = cancel
	r.mu.Unlock()
	r.wg.Add(1)
	go func() {
		defer func() {
			r.mu.Lock()
			delete(r.inflight, j.ID)
			settling := r.rested[j.ID]
			delete(r.rested, j.ID)
			r.mu.Unlock()
			if settling {
				r.settled(jctx, j.ID)
			}
			cancel()
			<-r.slots
			r.wg.Done()
		}()
		r.process(jctx, j)
	}()
}

func (r *Runner) heartbeats(ctx context.Context) {
	Every(ctx, r.cfg.Lease/3, r.heartbeat)
}

// heartbeat extends the leases of the jobs this runner is running and stops
// those whose lease was lost.
func (r *Runner) heartbeat(ctx context.Context) {
	r.mu.Lock()
	ids := make([]string, 0, len(r.inflight))
	var settling []string
	for id := range r.inflight {
		if r.rested[id] {
			settling = append(settling, id)
		} else {
			ids = append(ids, id)
		}
	}
	r.mu.Unlock()
	if len(ids) == 0 && len(settling) == 0 {
		return
	}
	lost, err := r.cfg.Store.Heartbeat(ctx, r.cfg.WorkerID, ids, settling, r.cfg.Lease)
	if err != nil {
		r.log.Warn("heartbeat", "err", err)
		return
	}
	r.mu.Lock()
	for _, id := range lost {
		if cancel := r.inflight[id]; cancel != nil && !r.rested[id] { // (rested since it was read)
			r.log.Warn("lease lost; stopping job", "job_id", id)
			cancel()
		}
	}
	r.mu.Unlock()
}

func (r *Runner) rescues(ctx context.Context) {
	Every(ctx, r.cfg.RescueEvery, func(ctx context.Context) {
		if n, err := r.cfg.Store.Rescue(ctx); err != nil {
			r.log.Warn("rescue expired leases", "err", err)
		} else if n > 0 {
			r.log.Info("requeued jobs whose lease expired", "jobs", n)
		}
		r.ExpirePauses(ctx)
	})
}

// expireBatch bounds the unanswered pauses one sweep dead-letters.
const expireBatch = 100

// ExpirePauses dead-letters the jobs whose pause nobody answered before its resume tokens
// expired (TokenTTL after the pause), with fault.CodeReviewExpired: they leave the review
// inbox, their thread can be started again, and an admin's retry from the dead letters runs
// the paused node again, which asks for the review anew (new tokens, a new deadline). The
// runner's rescue loop calls it; it returns how many it dead-lettered.
func (r *Runner) ExpirePauses(ctx context.Context) int {
	why := func(j Job, node string) JobError {
		return JobError{At: r.cfg.Now().UTC(), Class: fault.Business, Code: fault.CodeReviewExpired, Node: node, TraceID: j.TraceID, RetryCount: j.RetryCount,
			Message: fmt.Sprintf("no reviewer answered within %s of the pause, so its review links expired; retry the job to ask for the review again", ttlWords(r.cfg.TokenTTL))}
	}
	n := 0
	for {
		jobs, err := r.cfg.Store.ExpirePauses(ctx, r.cfg.WorkerID, r.cfg.Lease, r.cfg.Now().Add(-r.cfg.TokenTTL), expireBatch, why)
		if err != nil {
			r.log.Warn("expire unanswered pauses", "err", err)
			return n
		}
		for _, j := range jobs {
			r.log.Info("job dead-lettered: its pause was not answered in time", "job_id", j.ID, "trace_id", j.TraceID, "thread_id", j.ThreadID,
				"workflow", j.Workflow, "code", fault.CodeReviewExpired)
			r.publishJob(ctx, j, JobEvent{Status: Failed, Class: string(fault.Business), Code: fault.CodeReviewExpired})
		}
		n += len(jobs)
		if len(jobs) < expireBatch {
			return n
		}
	}
}

// Every calls fn every interval until ctx ends (the first call one interval
// from now): the runner's heartbeats and rescues, and the server's
// scheduled upkeep (pruning, counter compaction).
func Every(ctx context.Context, interval time.Duration, fn func(context.Context)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn(ctx)
		}
	}
}

// process runs one claimed job to its next resting status.
func (r *Runner) process(ctx context.Context, j Job) {
	ctx, at := r.startAttempt(ctx, j)
	defer at.end()
	log := r.log.With("job_id", j.ID, "trace_id", j.TraceID, "thread_id", j.ThreadID, "workflow", j.Workflow)
	if j.Rescues >= r.cfg.MaxRescues {
		// Every run of this job so far ended with its worker gone (killed,
		// stalled, or cut off from the database); running it again would most
		// likely do the same. An admin can retry it from the dead letters.
		r.publishJob(ctx, j, r.fail(ctx, log, j, fault.New(fault.Permanent, fault.CodeWorkerLost,
			fmt.Sprintf("the job's lease expired %d times without its worker finishing it (worker killed, stalled or disconnected); not running it again automatically", j.Rescues))))
		return
	}
	wf, ok := r.cfg.Workflows.Lookup(j.Workflow)
	if !ok {
		r.publishJob(ctx, j, r.fail(ctx, log, j, fault.New(fault.Permanent, fault.CodeWorkflowUnknown, fmt.Sprintf("no workflow named %q", j.Workflow))))
		return
	}
	cfg, in, err := r.command(ctx, wf, j)
	if err != nil {
		r.publishJob(ctx, j, r.fail(ctx, log, j, err))
		return
	}
	log.InfoContext(ctx, "job running", "retry_count", j.RetryCount)
	// published is what watchers need to follow a run: one event per step
	// (its checkpoint, as a summary), nodes' progress, and interrupts. Not
	// the step's full state (values) or writes (updates), nor task events:
	// those are read from the checkpoints and node records, and storing them
	// as events would cost each step several more rows. The run also streams
	// task results when node records are kept.
	var published graph.StreamMode
	if r.cfg.Events != nil {
		published = r.cfg.EventModes
		if published == 0 {
			published = graph.ModeCustom | graph.ModeCheckpoints
		}
	}
	modes := published
	var tasks *telemetry.Tasks // a span per node task, when the attempt's span is recorded
	if at.span.IsRecording() {
		tasks = telemetry.NewTasks(r.tracer, j.TraceID, j.ThreadID)
		defer tasks.End()
		modes |= graph.ModeTasks
	}
	if r.cfg.Nodes != nil {
		modes |= graph.ModeTasks
	}
	var sink func(graph.Event) bool
	if modes != 0 {
		sink = func(ev graph.Event) bool {
			if r.cfg.Events != nil && published.Wants(ev.Kind) {
				if cp, ok := ev.Data.(graph.Checkpoint); ok {
					ev.Data = cp.Summary()
				}
				r.cfg.Events.Publish(ctx, j.TenantID, ev)
			}
			// A replayed task (its writes saved by an earlier run, as after a fork) did not run
			// now: it has no execution to record.
			res, ok := ev.Data.(graph.TaskResult)
			if !ok || res.Replayed {
				return true
			}
			class, code := fault.Class(""), ""
			if res.Err != nil {
				class, code = fault.Classify(res.Err)
			} else if res.Error != "" {
				class, code = fault.Classify(errors.New(res.Error))
			}
			if tasks != nil {
				tasks.Result(ctx, res, string(class), code)
			}
			if r.cfg.Nodes != nil {
				r.cfg.Nodes.RecordNode(ctx, NodeExecution{TenantID: j.TenantID, JobID: j.ID, Workflow: j.Workflow, TraceID: j.TraceID,
					ThreadID: j.ThreadID, Node: res.Node, TaskID: res.ID, StartedAt: res.Started, EndedAt: res.Ended,
					LatencyMS: float64(res.Ended.Sub(res.Started).Microseconds()) / 1000, InputSize: res.InputSize,
					OutputSize: res.OutputSize, Attempts: res.Attempts, ErrorCode: code, Cached: res.Cached})
			}
			return true
		}
	}
	h := &handle{job: j}
	rctx := withHandle(ctx, h)
	if tasks != nil {
		rctx = graph.WithTaskHook(rctx, tasks.Hook)
	}
	out, err := wf.Run(rctx, cfg, in, modes, sink)
	if ctx.Err() != nil && (err == nil || errors.Is(err, context.Canceled)) {
		log.WarnContext(ctx, "job stopped: lease lost or shutting down; it will be picked up again")
		return
	}
	if h.recorded == "" { // (the graph's error route flushed before it moved the job)
		r.flushRun(ctx, log)
	}
	switch {
	case h.recorded != "":
		// The graph's error route moved the job already (a retry scheduled, or the DLQ):
		// that is where it rests, whatever the run did after.
		if err != nil {
			log.WarnContext(ctx, "job failure handled by the graph's error route; the run then failed too", "decision", h.recorded, "err", err)
		} else {
			log.InfoContext(ctx, "job failure handled by the graph's error route", "decision", h.recorded)
		}
		// Its last step is written: the thread may run again, before anyone hears it ended (a
		// re-run started on the closing event would otherwise find the thread still busy).
		r.unrest(ctx, j.ID)
		r.publishJob(ctx, j, h.rest)
	case err != nil:
		r.publishJob(ctx, j, r.fail(ctx, log, j, err))
	case len(out.Interrupts) > 0:
		if err := r.cfg.Store.Pause(ctx, j.ID, r.cfg.WorkerID, out.Interrupts); err != nil {
			log.ErrorContext(ctx, "pause job", "err", err)
			return
		}
		log.InfoContext(ctx, "job waiting for review", "interrupts", len(out.Interrupts))
		if r.cfg.Observer != nil {
			r.cfg.Observer.Interrupted(j, len(out.Interrupts))
		}
		r.publishJob(ctx, j, JobEvent{Status: WaitingReview})
	default:
		if err := r.cfg.Store.Succeed(ctx, j.ID, r.cfg.WorkerID); err != nil {
			log.ErrorContext(ctx, "complete job", "err", err)
			return
		}
		log.InfoContext(ctx, "job succeeded")
		r.publishJob(ctx, j, JobEvent{Status: Succeeded})
	}
}

// KindJob is the kind of the event the runner publishes when a run leaves its job at rest:
// waiting for review, succeeded, retry scheduled or failed (Data: JobEvent). It is the run's
// last event, so a stream's reader knows the run has ended and how.
const KindJob = "job"

// JobEvent is the Data of a KindJob event.
type JobEvent struct {
	JobID    string     `json:"job_id"`
	Status   Status     `json:"status"`
	Class    string     `json:"class,omitempty"` // of the error that failed the run
	Code     string     `json:"code,omitempty"`
	RunAfter *time.Time `json:"run_after,omitempty"` // when a scheduled retry runs
}

// publishJob publishes where the run left job j (nothing when e has no status: the job's
// status was not changed).
func (r *Runner) publishJob(ctx context.Context, j Job, e JobEvent) {
	r.noteRest(ctx, j, e)
	if r.cfg.Events == nil || e.Status == "" {
		return
	}
	e.JobID = j.ID
	r.cfg.Events.Publish(ctx, j.TenantID, graph.Event{Kind: KindJob, Thread: j.ThreadID, At: r.cfg.Now().UTC(), Data: e})
}

// command decides how a job's run starts: the input on a new thread, or on
// a thread whose earlier job ended, until the job's run has started; a
// fork from RetryFrom when the last run ended on the graph's error route;
// the reviewer's decision on a thread paused at that interrupt; otherwise a
// plain continue from the last checkpoint (after a crash or a retry).
func (r *Runner) command(ctx context.Context, wf graph.Runnable, j Job) (graph.Config, graph.Command, error) {
	cfg := graph.Config{ThreadID: j.ThreadID}
	snap, err := wf.StateJSON(ctx, cfg)
	if err != nil && !errors.Is(err, graph.ErrNotFound) {
		return cfg, graph.Command{}, fmt.Errorf("load thread: %w", err)
	}
	// A new thread; or a new run on a thread whose earlier job ended
	// (finished, failed or stopped: its pending tasks are dropped, as
	// LangGraph drops them for new input), when this job's run has not
	// started: the head is where it was at enqueue, whatever any clock says.
	if err != nil || (len(j.Input) > 0 && snap.Checkpoint.ID == j.BaseCheckpoint) {
		ws, err := wf.InputWrites(j.Input)
		if err != nil {
			return cfg, graph.Command{}, fault.Wrap(fault.Validation, fault.CodeValidation, err)
		}
		return cfg, graph.Command{Update: ws}, nil
	}
	if j.RetryFrom != "" && onErrorRoute(snap.Next, wf.ErrorRoute()) {
		// A failed job's retry re-runs what failed in the step (its siblings' writes
		// stay); an admin's fork (a new job, without errors) replays everything after
		// the checkpoint.
		cfg.CheckpointID, cfg.RetryFailed = j.RetryFrom, len(j.Errors) > 0
		return cfg, graph.Command{}, nil
	}
	if len(j.Resume) > 0 && len(snap.Interrupts) > 0 {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(j.Resume, &m); err != nil {
			return cfg, graph.Command{}, fault.Wrap(fault.Validation, fault.CodeInterruptResumeInvalid, err)
		}
		rm := graph.ResumeMap{}
		for _, it := range snap.Interrupts {
			v, ok := m[it.ID]
			if !ok {
				continue
			}
			var rec struct {
				Update *stateUpdate `json:"$update"`
			}
			if json.Unmarshal(v, &rec) == nil && rec.Update != nil {
				// The decision updates the state (seed 002 §7): apply it, then continue. A
				// crash after this finds the pause gone and continues from the update.
				if _, err := wf.UpdateStateJSON(ctx, cfg, rec.Update.Values, rec.Update.AsNode); err != nil {
					return cfg, graph.Command{}, fault.Wrap(fault.Validation, fault.CodeInterruptResumeInvalid, err)
				}
				return cfg, graph.Command{}, nil
			}
			rm[it.ID] = v
		}
		if len(rm) > 0 {
			return cfg, graph.Resume(rm), nil
		}
	}
	return cfg, graph.Command{}, nil
}

// onErrorRoute: nothing left to run but (at most) the error route.
func onErrorRoute(next, route []string) bool {
	for _, n := range next {
		found := false
		for _, e := range route {
			found = found || n == e
		}
		if !found {
			return false
		}
	}
	return true
}

// handle is the job a run belongs to, reachable from its nodes' context.
type handle struct {
	job      Job
	recorded string
	rest     JobEvent // where RecordFailure left the job
}

type handleKey struct{}

func withHandle(ctx context.Context, h *handle) context.Context {
	return context.WithValue(ctx, handleKey{}, h)
}

// JobInfo is what a node may know about the job running it.
type JobInfo struct {
	ID         string
	TenantID   string
	ThreadID   string
	TraceID    string
	RetryCount int
}

// JobFromContext returns the job running the current node, if any.
func JobFromContext(ctx context.Context) (JobInfo, bool) {
	h, ok := ctx.Value(handleKey{}).(*handle)
	if !ok {
		return JobInfo{}, false
	}
	return JobInfo{ID: h.job.ID, TenantID: h.job.TenantID, ThreadID: h.job.ThreadID, TraceID: h.job.TraceID, RetryCount: h.job.RetryCount}, true
}

// Decisions of RecordFailure.
const (
	DecisionRetry = "retry"
	DecisionDLQ   = "dlq"
)

// Failure is a failure a graph handled on its own error route.
type Failure struct {
	Class        fault.Class
	Code         string
	Message      string
	Node         string
	CheckpointID string // where a retry of the failed node starts
}

// RecordFailure is the side effect of a graph's retry_or_dlq node (seed
// 000 §5.2, §8): a transient failure with job retries left schedules a retry
// that forks from f.CheckpointID; anything else walks the job through
// dlq_pending → dlq_recorded → failed with a DLQ row. It is idempotent per
// job id + retry count (the store's keys), and it tells the runner not to
// mark the job succeeded when the graph then reaches END.
func (r *Runner) RecordFailure(ctx context.Context, f Failure) (string, error) {
	h, ok := ctx.Value(handleKey{}).(*handle)
	if !ok {
		return "", errors.New("record failure: not running inside a job")
	}
	if h.recorded != "" { // recorded already in this run (the node ran again): the same answer
		return h.recorded, nil
	}
	j := h.job
	r.flushRun(ctx, r.log.With("job_id", j.ID, "trace_id", j.TraceID))
	je := JobError{At: r.cfg.Now().UTC(), Class: f.Class, Code: f.Code, Message: f.Message, Node: f.Node,
		TraceID: j.TraceID, SpanID: spanID(ctx), RetryCount: j.RetryCount, CheckpointID: f.CheckpointID}
	// From here the job is being moved to rest by its own run: heartbeats leave its lease be
	// (see Runner.rested), or one that found it no longer leased would stop the run before it
	// writes its last checkpoint and says where the job rests; and the job settles until the
	// run returns, so no run of its thread starts meanwhile (an admin retry, a retry due at
	// once) from a head about to move.
	if err := r.cfg.Store.Settling(ctx, j.ID, r.cfg.WorkerID, r.cfg.Lease); err != nil {
		return "", err
	}
	r.rest(j.ID, true)
	if f.Class.Retryable() && j.RetryCount < MaxJobRetries {
		at := r.cfg.Now().Add(r.cfg.Backoff(j.RetryCount))
		if err := r.cfg.Store.Retry(ctx, j.ID, r.cfg.WorkerID, je, at); err != nil {
			r.unrest(ctx, j.ID)
			return "", err
		}
		h.recorded, h.rest = DecisionRetry, retryEvent(je, at)
		return DecisionRetry, nil
	}
	if _, err := r.cfg.Store.DeadLetter(ctx, j.ID, r.cfg.WorkerID, je); err != nil {
		r.unrest(ctx, j.ID)
		return "", err
	}
	h.recorded, h.rest = DecisionDLQ, JobEvent{Status: Failed, Class: string(je.Class), Code: je.Code}
	return DecisionDLQ, nil
}

// rest marks (or, when moving it failed, unmarks) an in-flight job its run moves to rest
// (see Runner.rested).
func (r *Runner) rest(id string, rested bool) {
	r.mu.Lock()
	if _, ok := r.inflight[id]; ok && rested {
		r.rested[id] = true
	} else {
		delete(r.rested, id)
	}
	r.mu.Unlock()
}

// unrest undoes rest and ends the job's settling: when moving the job to rest failed (it
// still runs under its lease), and when its run has written its last step.
func (r *Runner) unrest(ctx context.Context, id string) {
	r.rest(id, false)
	r.settled(ctx, id)
}

// settled ends the settling of job id (see Store.Settling); should that fail, the settling
// ends when it expires, a lease's time from the last heartbeat.
func (r *Runner) settled(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := r.cfg.Store.Settled(ctx, id, r.cfg.WorkerID); err != nil {
		r.log.Warn("end the settling of a job its run moved to rest; it ends when it expires", "job_id", id, "err", err)
	}
}

// retryEvent is where a job rests when its retry is scheduled at at.
func retryEvent(je JobError, at time.Time) JobEvent {
	at = at.UTC()
	return JobEvent{Status: RetryScheduled, Class: string(je.Class), Code: je.Code, RunAfter: &at}
}

// fail classifies err and reschedules the job or sends it to the DLQ. It returns where the
// job rests (no status when it was left as it was).
func (r *Runner) fail(ctx context.Context, log *slog.Logger, j Job, err error) JobEvent {
	class, code := fault.Classify(err)
	if code == fault.CodeConnectionLost {
		// The database dropped us: nothing about the job failed. Leave it to
		// lease expiry and rescue (its checkpoints are intact) instead of
		// spending one of its retries.
		log.WarnContext(ctx, "connection lost while running the job; it will be rescued when its lease expires", "err", err)
		return JobEvent{}
	}
	je := JobError{At: r.cfg.Now().UTC(), Class: class, Code: code, Message: err.Error(), TraceID: j.TraceID, SpanID: spanID(ctx), RetryCount: j.RetryCount}
	var ne *graph.NodeError
	if errors.As(err, &ne) {
		je.Node = ne.Node
	}
	if class.Retryable() && j.RetryCount < MaxJobRetries {
		at := r.cfg.Now().Add(r.cfg.Backoff(j.RetryCount))
		if serr := r.cfg.Store.Retry(ctx, j.ID, r.cfg.WorkerID, je, at); serr != nil {
			log.ErrorContext(ctx, "schedule retry", "err", serr, "cause", err)
			return JobEvent{}
		}
		log.WarnContext(ctx, "job failed; retry scheduled", "class", class, "code", code, "err", err, "retry_count", j.RetryCount+1, "run_after", at)
		return retryEvent(je, at)
	}
	dlq, serr := r.cfg.Store.DeadLetter(ctx, j.ID, r.cfg.WorkerID, je)
	if serr != nil {
		log.ErrorContext(ctx, "dead-letter job", "err", serr, "cause", err)
		return JobEvent{}
	}
	log.ErrorContext(ctx, "job failed; dead-lettered", "class", class, "code", code, "err", err, "dlq_id", dlq)
	return JobEvent{Status: Failed, Class: string(class), Code: code}
}

// IssueToken creates a resume token for a paused job's interrupt. It
// expires TokenTTL after the interrupt, not after issuing: re-issuing (a
// reviewer opening the form again) never extends the window.
func (r *Runner) IssueToken(ctx context.Context, j Job, interruptID string, pausedAt time.Time) (Token, error) {
	if j.Status != WaitingReview || pausedAt.IsZero() { // no pause time: it was answered since j was read
		return Token{}, fault.New(fault.Validation, fault.CodeInterruptResumeInvalid, "the thread is not waiting for review")
	}
	exp := pausedAt.Add(r.cfg.TokenTTL)
	if !r.cfg.Now().Before(exp) {
		return Token{}, fault.New(fault.Business, fault.CodeReviewExpired,
			fmt.Sprintf("the time to answer this pause ran out at %s (%s after it); the job is dead-lettered shortly, and an admin's retry asks for the review again",
				exp.UTC().Format(time.RFC3339), ttlWords(r.cfg.TokenTTL)))
	}
	secret := TokenPrefix + randomToken()
	if err := r.cfg.Store.IssueToken(ctx, j.TenantID, j.ID, interruptID, HashToken(secret), exp); err != nil {
		return Token{}, err
	}
	return Token{Secret: secret, ExpiresAt: exp}, nil
}

// TokenPrefix begins every resume token's secret (so pages and logs can tell one from other
// values of a field named resume_token, such as a channel's version).
const TokenPrefix = "rt_"

// IsToken reports whether s has the shape of a resume token's secret: the prefix and 32
// random bytes, base64url.
func IsToken(s string) bool {
	rest, ok := strings.CutPrefix(s, TokenPrefix)
	if !ok || len(rest) != 43 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(rest)
	return err == nil
}

// IssueTokenInRun issues a resume token from inside a running node, bound to
// the job's thread and the interrupt about to happen (graph.NextInterruptID);
// it expires TokenTTL from now.
func (r *Runner) IssueTokenInRun(ctx context.Context, interruptID string) (string, error) {
	h, ok := ctx.Value(handleKey{}).(*handle)
	if !ok {
		return "", errors.New("issue token: not running inside a job")
	}
	secret := TokenPrefix + randomToken()
	if err := r.cfg.Store.IssueToken(ctx, h.job.TenantID, h.job.ID, interruptID, HashToken(secret), r.cfg.Now().Add(r.cfg.TokenTTL)); err != nil {
		return "", err
	}
	return secret, nil
}

// Resume consumes a token and continues the thread on this runner.
func (r *Runner) Resume(ctx context.Context, req ResumeRequest) (Job, error) {
	if req.Actor == "" {
		return Job{}, fault.New(fault.Security, fault.CodeInterruptResumeInvalid, "a resume needs the reviewer's identity")
	}
	if req.Token == "" {
		return Job{}, fault.New(fault.Validation, fault.CodeInterruptResumeInvalid, "a resume needs its resume_token")
	}
	if len(req.Decision) == 0 || !json.Valid(req.Decision) {
		return Job{}, fault.New(fault.Validation, fault.CodeValidation, "the decision must be JSON")
	}
	if len(req.Update) > 0 {
		var rec map[string]json.RawMessage
		if err := json.Unmarshal(req.Decision, &rec); err != nil || rec == nil {
			return Job{}, fault.New(fault.Validation, fault.CodeValidation, "a decision with an update of the state must be a JSON object")
		}
		u, err := json.Marshal(stateUpdate{Values: req.Update, AsNode: req.AsNode})
		if err != nil {
			return Job{}, fault.Wrap(fault.Validation, fault.CodeValidation, err)
		}
		rec[updateKey] = u
		if req.Decision, err = json.Marshal(rec); err != nil {
			return Job{}, err
		}
	}
	j, err := r.cfg.Store.ResumeJob(ctx, ResumeParams{TenantID: req.TenantID, JobID: req.JobID, TokenHash: HashToken(req.Token), Actor: req.Actor,
		Decision: req.Decision, Worker: r.cfg.WorkerID, Lease: r.cfg.Lease, Now: r.cfg.Now(), TraceParent: telemetry.Traceparent(ctx)})
	if err != nil {
		return Job{}, err
	}
	if r.cfg.Observer != nil && !j.PausedAt.IsZero() {
		r.cfg.Observer.Resumed(j, max(0, r.cfg.Now().Sub(j.PausedAt)))
	}
	r.dispatch(context.Background(), j)
	return j, nil
}

// ttlWords says a token lifetime as people do: "24 hours", "90 minutes", else Go's form.
func ttlWords(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		if d == time.Hour {
			return "1 hour"
		}
		return fmt.Sprintf("%d hours", d/time.Hour)
	case d >= time.Minute && d%time.Minute == 0:
		if d == time.Minute {
			return "1 minute"
		}
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	return d.String()
}

// HashToken is how tokens are stored.
func HashToken(secret string) string {
	sum := sha256.Sum256([]byte(secret))
	return hex.EncodeToString(sum[:])
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Wait blocks until the jobs running now have finished (tests use it).
func (r *Runner) Wait() { r.wg.Wait() }
