// Package app assembles a Weft process: the database, the stores, the
// workflows in their registry, the runner and the event bus. cmd/weft and
// the end-to-end tests build the same App. It imports the internal packages
// and the standard library.
package app

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/llm"
	"weft/internal/postgres"
	"weft/internal/runner"
	"weft/internal/usertext"
	"weft/internal/workflow"
	"weft/internal/workflow/bideval"
	"weft/internal/workflow/tour"
)

// Config configures an App.
type Config struct {
	DatabaseURL string
	Logger      *slog.Logger
	// LLM scores bids; nil reads WEFT_LLM_* from the environment (offline
	// when unset).
	LLM llm.Provider
	// Runner tunes the workers (Store, Workflows, Events and Nodes are set
	// by the App).
	Runner runner.Config
}

// App is a running Weft process's parts.
type App struct {
	DB          *postgres.DB
	Jobs        *postgres.JobStore
	Checkpoints *postgres.Checkpointer
	Evaluations *postgres.Evaluations
	Audit       *postgres.Audit
	Artifacts   *postgres.Artifacts
	Events      *postgres.EventBus
	Nodes       *postgres.NodeRecords
	Wake        *postgres.Listener
	Registry    *workflow.Registry
	Runner      *runner.Runner
	LLM         llm.Provider
	Log         *slog.Logger
	// NodeLatency is the node latency histogram (served at /metrics).
	NodeLatency *prometheus.HistogramVec

	prunePage int // finished threads per Prune step (0: defaultPrunePage)
	closeOnce sync.Once
}

// Open connects (applying migrations) and assembles the App.
func Open(ctx context.Context, cfg Config) (*App, error) {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// A connection per worker, and as many again for pages, streams and the background
	// writers (event bus, node records), so page requests do not queue behind the workers.
	workers := cfg.Runner.Concurrency
	if workers <= 0 {
		workers = runner.DefaultConcurrency
	}
	d, err := postgres.Open(ctx, cfg.DatabaseURL, postgres.WithLogger(log), postgres.WithMaxConns(workers+8))
	if err != nil {
		return nil, err
	}
	provider := cfg.LLM
	if provider == nil {
		if provider, err = llm.FromEnv(); err != nil {
			d.Close()
			return nil, err
		}
	}
	a := &App{
		DB: d, Jobs: postgres.NewJobStore(d), Checkpoints: postgres.NewCheckpointer(d), Evaluations: postgres.NewEvaluations(d),
		Audit: postgres.NewAudit(d), Artifacts: postgres.NewArtifacts(d), Events: postgres.NewEventBus(d, postgres.EventBusOptions{}),
		Nodes: postgres.NewNodeRecords(d, postgres.BatchOptions{}), Wake: postgres.NewListener(d),
		Registry: workflow.NewRegistry(), LLM: provider, Log: log,
	}
	a.NodeLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "weft_node_latency_seconds",
		Help: "Node execution latency by workflow and node.", Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 14)},
		[]string{"workflow", "node", "outcome"})
	rc := cfg.Runner
	rc.Store, rc.Workflows, rc.Events, rc.Logger = a.Jobs, a.Registry, a.Events, log
	rc.Nodes = latencyRecorder{next: a.Nodes, hist: a.NodeLatency}
	if rc.Wake == nil {
		rc.Wake = a.Wake.C()
	}
	a.Runner = runner.New(rc)

	bid, err := bideval.New(bideval.Deps{
		Data: a.Evaluations, LLM: provider, Checkpointer: a.Checkpoints,
		IssueToken: a.Runner.IssueTokenInRun,
		RecordFailure: func(ctx context.Context, f bideval.Failure) (string, error) {
			return a.Runner.RecordFailure(ctx, runner.Failure{Class: f.Class, Code: f.Code, Message: f.Message, Node: f.Node, CheckpointID: f.CheckpointID})
		},
	})
	if err != nil {
		a.Close()
		return nil, err
	}
	tg, err := tour.New(a.Checkpoints, 0)
	if err != nil {
		a.Close()
		return nil, err
	}
	bidDef := bideval.Definition(bid, a.Evaluations)
	bidDef.Views.State = func(ctx context.Context, t workflow.Thread) (any, error) {
		ev, err := a.Evaluations.EvaluationOfThread(ctx, t.TenantID, t.ThreadID)
		if err != nil {
			return nil, err
		}
		return a.EvaluationState(ctx, t.TenantID, ev.ID)
	}
	for _, e := range []workflow.Definition{
		bidDef,
		{Name: "tour", Title: "Engine tour", Graph: tg, CheckInput: tour.CheckInput, ExampleInput: tour.ExampleInput, SubjectOf: tour.SubjectOf, ReasonLabels: tour.ReasonLabels,
			Description: "A small graph that shows the engine: a Send fan-out into parallel research nodes, one per topic of the question (their progress streams live), a join that drafts an answer, and an approval interrupt."},
	} {
		if err := a.Registry.Register(e); err != nil {
			a.Close()
			return nil, err
		}
	}
	return a, nil
}

// RunWorkers runs the job workers (with their wake-up listener and the job
// counters' compaction) until ctx ends.
func (a *App) RunWorkers(ctx context.Context) error {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := a.Wake.Run(ctx); err != nil && ctx.Err() == nil {
			a.Log.Warn("job wake-up listener stopped", "err", err)
		}
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		a.compactCounts(ctx)
	}()
	err := a.Runner.Run(ctx)
	wg.Wait()
	return err
}

// compactCounts folds the job counters (which the dashboard sums) every
// postgres.CompactCountsEvery until ctx ends; with several processes, one
// compacts at a time.
func (a *App) compactCounts(ctx context.Context) {
	runner.Every(ctx, postgres.CompactCountsEvery, func(ctx context.Context) {
		if err := a.Jobs.CompactCounts(ctx); err != nil && ctx.Err() == nil {
			a.Log.Warn("compact job counts", "err", err)
		}
	})
}

// Close flushes the event and node-record buffers and closes the database.
func (a *App) Close() {
	a.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := a.Events.Close(ctx); err != nil {
			a.Log.Warn("flush events", "err", err)
		}
		if err := a.Nodes.Close(ctx); err != nil {
			a.Log.Warn("flush node records", "err", err)
		}
		a.DB.Close()
	})
}

// StartRun starts a run of a registered workflow from a JSON input: the workflow's start
// fields when it has a start form (StartValues), else its channel values on a new thread.
// Refusals are validation faults (FieldErrors name the fields), and nothing is queued.
func (a *App) StartRun(ctx context.Context, tenantID, name string, input json.RawMessage, actor string) (runner.Job, error) {
	def, ok := a.Registry.Get(name)
	if !ok {
		return runner.Job{}, fault.New(fault.Validation, fault.CodeWorkflowUnknown, fmt.Sprintf("no workflow named %q", name))
	}
	if def.Start != nil {
		v, err := def.Start.ParseJSON(input)
		if err != nil {
			return runner.Job{}, err
		}
		return a.StartValues(ctx, tenantID, name, v, actor)
	}
	return a.enqueue(ctx, def, tenantID, actor, workflow.Start{Input: input})
}

// StartValues starts a run of a workflow with a start form from its checked values.
func (a *App) StartValues(ctx context.Context, tenantID, name string, v workflow.Values, actor string) (runner.Job, error) {
	def, ok := a.Registry.Get(name)
	if !ok || def.Start == nil {
		return runner.Job{}, fault.New(fault.Validation, fault.CodeWorkflowUnknown, fmt.Sprintf("no workflow named %q with a start form", name))
	}
	st := workflow.Start{}
	if def.Start.Start != nil {
		var err error
		if st, err = def.Start.Start(ctx, workflow.StartRequest{TenantID: tenantID, Actor: actor}, v); err != nil {
			return runner.Job{}, err
		}
	} else {
		b, err := json.Marshal(v)
		if err != nil {
			return runner.Job{}, fault.Wrap(fault.Validation, fault.CodeValidation, err)
		}
		st.Input = b
	}
	return a.enqueue(ctx, def, tenantID, actor, st)
}

// enqueue queues a run and audits its start: the input checked first (what any run input
// needs, text people can read, what the workflow asks of it).
func (a *App) enqueue(ctx context.Context, def workflow.Definition, tenantID, actor string, st workflow.Start) (runner.Job, error) {
	if err := runner.CheckInput(def.Graph, st.Input); err != nil {
		return runner.Job{}, err
	}
	if err := usertext.CheckJSON("the input", st.Input); err != nil {
		return runner.Job{}, fault.New(fault.Validation, fault.CodeValidation, err.Error())
	}
	if def.CheckInput != nil {
		if err := def.CheckInput(st.Input); err != nil {
			return runner.Job{}, fault.New(fault.Validation, fault.CodeValidation, err.Error())
		}
	}
	if st.Subject == "" && def.SubjectOf != nil {
		st.Subject = def.SubjectOf(st.Input)
	}
	j, err := a.Runner.Enqueue(ctx, runner.NewJob{TenantID: tenantID, Workflow: def.Name, ThreadID: st.ThreadID, TraceID: st.TraceID,
		Subject: st.Subject, Input: st.Input})
	if err != nil {
		return runner.Job{}, err
	}
	if st.Started != nil {
		if err := st.Started(ctx, j.ID); err != nil {
			return j, err
		}
	}
	action, subject := cmp.Or(st.AuditAction, "run.start"), cmp.Or(st.AuditSubject, j.ThreadID)
	payload, _ := json.Marshal(map[string]string{"job_id": j.ID, "thread_id": j.ThreadID, "subject": j.Subject})
	if _, err := a.Audit.Append(ctx, postgres.Entry{TenantID: tenantID, Actor: actor, Action: action, Subject: subject,
		Workflow: j.Workflow, Payload: payload}); err != nil {
		return j, err
	}
	return j, nil
}

// CodeEvaluationRunning refuses to start an evaluation whose run is in progress.
const CodeEvaluationRunning = "EVALUATION_RUNNING"

// StartEvaluation starts a run of an evaluation's thread (the bid evaluation's start form,
// as the tender page and the API start it).
func (a *App) StartEvaluation(ctx context.Context, tenantID, evaluationID, actor string) (runner.Job, error) {
	j, err := a.StartValues(ctx, tenantID, bideval.Name, workflow.Values{bideval.FieldEvaluationID: evaluationID}, actor)
	if errors.Is(err, postgres.ErrThreadBusy) { // started by another click a moment ago, or running
		return runner.Job{}, fault.New(fault.Business, CodeEvaluationRunning, fmt.Sprintf("evaluation %s has a run that has not finished: start it again once that run ends", evaluationID))
	}
	var fe workflow.FieldErrors
	if errors.As(err, &fe) {
		return runner.Job{}, fmt.Errorf("evaluation %s: %w", evaluationID, graph.ErrNotFound)
	}
	return j, err
}

// EvaluationState is get_workflow_state(evaluation_id, tenant): the seed 004
// view of the evaluation's thread and job. Another tenant's id is
// graph.ErrNotFound.
func (a *App) EvaluationState(ctx context.Context, tenantID, evaluationID string) (bideval.WorkflowState, error) {
	ev, err := a.Evaluations.Evaluation(ctx, tenantID, evaluationID)
	if err != nil {
		return bideval.WorkflowState{}, err
	}
	e, _ := a.Registry.Get(bideval.Name)
	g := e.Graph.(*graph.Graph[bideval.State])
	var jv bideval.JobView
	var trace string // the job's, for a thread without checkpoints
	if ev.JobID != "" {
		j, err := a.Jobs.Job(ctx, tenantID, ev.JobID)
		if err != nil {
			return bideval.WorkflowState{}, err
		}
		trace = j.TraceID
		jv.Status, jv.RetryCount = string(j.Status), j.RetryCount
		for _, je := range j.Errors {
			jv.Errors = append(jv.Errors, bideval.ViewError{At: je.At, Node: je.Node, Class: string(je.Class), Code: je.Code, Message: je.Message, TraceID: je.TraceID})
		}
		if len(j.Interrupts) > 0 {
			jv.Interrupt = j.Interrupts[0].Value
		}
	}
	snap, err := g.GetState(ctx, graph.Config{ThreadID: ev.ThreadID})
	switch {
	case errors.Is(err, graph.ErrNotFound):
		// Not started, or its checkpoints were pruned: what was persisted of its result
		// (the newest report) still stands.
		// Its tender, supplier and trace are still known from their rows and its job.
		s := bideval.State{TenantID: tenantID, EvaluationID: evaluationID, ThreadID: ev.ThreadID, ProjectID: ev.ProjectID,
			SupplierID: ev.SupplierID, Status: ev.Status, TraceID: trace}
		ec, err := a.Evaluations.LoadContext(ctx, tenantID, evaluationID)
		if err != nil {
			return bideval.WorkflowState{}, err
		}
		s.Project, s.Supplier = ec.Project, ec.Supplier
		rp, ok, err := a.Evaluations.LatestReport(ctx, tenantID, evaluationID)
		if err != nil {
			return bideval.WorkflowState{}, err
		}
		if ok {
			if ec.RulePack.Version == rp.RulePackVersion { // the pack the report was scored under
				s.RulePack, s.QueryBundle = ec.RulePack, bideval.Queries(ec.RulePack)
			}
			s.ReportPayload, s.RulePackVersion = &rp, rp.RulePackVersion
			if rp.Outcome == bideval.OutcomeDisqualified {
				s.Status = bideval.StatusDisqualified
			}
			s.TotalScore, s.Confidence, s.CitationCoverage = rp.TotalScore, rp.Confidence, rp.Coverage
			s.CriteriaScores, s.RuleResults, s.ScoredBy, s.ScoredOffline = rp.Criteria, rp.RuleResults, rp.ScoredBy, rp.ScoredOffline
		}
		return bideval.View(s, "", jv), nil
	case err != nil:
		return bideval.WorkflowState{}, err
	}
	return bideval.View(snap.Values, snap.Checkpoint.ID, jv), nil
}

// SeedDemo loads the demo tenants (unless present) and starts the demo
// tenant's three evaluations. It reports whether it loaded anything.
func (a *App) SeedDemo(ctx context.Context) (bool, error) {
	loaded, err := a.Evaluations.SeedDemo(ctx, bideval.Demo(DemoTenant, "Demo Procurement Co."))
	if err != nil || !loaded {
		return loaded, err
	}
	if _, err := a.Evaluations.SeedDemo(ctx, bideval.Demo(OtherTenant, "Acme Holdings")); err != nil {
		return true, err
	}
	d := bideval.Demo(DemoTenant, "")
	for _, s := range d.Suppliers {
		if _, err := a.StartEvaluation(ctx, DemoTenant, "ev_"+s.ID, "system:demo"); err != nil {
			return true, err
		}
	}
	return true, nil
}

// The demo's tenants: the one with the running demo, and a second one so
// that tenant isolation can be seen.
const (
	DemoTenant  = "demo"
	OtherTenant = "acme"
)

// latencyRecorder observes node latencies, then stores the record.
type latencyRecorder struct {
	next runner.NodeRecorder
	hist *prometheus.HistogramVec
}

func (l latencyRecorder) RecordNode(ctx context.Context, rec runner.NodeExecution) {
	outcome := "ok"
	if rec.ErrorCode != "" {
		outcome = "error"
	}
	l.hist.WithLabelValues(rec.Workflow, rec.Node, outcome).Observe(rec.LatencyMS / 1000)
	l.next.RecordNode(ctx, rec)
}

// Flush waits for the records stored through it (the runner flushes its writers before a job
// comes to rest: runner.EventFlusher).
func (l latencyRecorder) Flush(ctx context.Context) error {
	if f, ok := l.next.(runner.EventFlusher); ok {
		return f.Flush(ctx)
	}
	return nil
}

var _ runner.EventFlusher = latencyRecorder{}

func newTraceID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// defaultPrunePage is how many finished threads one Prune step trims.
const defaultPrunePage = 1000

// Prune trims the checkpoints of finished threads to their newest keep, and
// drops finished threads whose head is older than olderThan (0: never). It
// walks the finished threads a page at a time, so its memory and each step's
// transactions stay bounded however many threads there are.
func (a *App) Prune(ctx context.Context, keep int, olderThan time.Duration) (graph.PruneResult, error) {
	opts := graph.PruneOptions{KeepLast: keep}
	if olderThan > 0 {
		opts.OlderThan = time.Now().Add(-olderThan)
	}
	page := cmp.Or(a.prunePage, defaultPrunePage)
	var removed graph.PruneResult
	for after := ""; ; {
		threads, err := a.Jobs.FinishedThreads(ctx, after, page)
		if err != nil || len(threads) == 0 {
			return removed, err
		}
		opts.Threads = threads
		n, err := a.Checkpoints.Prune(ctx, opts)
		removed = removed.Add(n)
		if err != nil || len(threads) < page {
			return removed, err
		}
		after = threads[len(threads)-1]
	}
}

// PruneEvents deletes the stream events older than olderThan (they serve
// live pages and their reconnects; checkpoints, node records and the audit
// log keep the history) and returns how many went.
func (a *App) PruneEvents(ctx context.Context, olderThan time.Duration) (int, error) {
	return a.Events.Prune(ctx, time.Now().Add(-olderThan))
}

// PruneTokens deletes the resume tokens that expired more than olderThan ago and returns how
// many went.
func (a *App) PruneTokens(ctx context.Context, olderThan time.Duration) (int, error) {
	return a.Jobs.PruneTokens(ctx, time.Now().Add(-olderThan))
}

// EvaluationValues is an evaluation thread's current state: its rule pack's criteria (what
// an edit_scores decision may change) and the model's scores (what it changes from).
func (a *App) EvaluationValues(ctx context.Context, threadID string) (bideval.State, error) {
	e, _ := a.Registry.Get(bideval.Name)
	snap, err := e.Graph.(*graph.Graph[bideval.State]).GetState(ctx, graph.Config{ThreadID: threadID})
	if err != nil {
		return bideval.State{}, err
	}
	return snap.Values, nil
}
