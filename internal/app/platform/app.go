// Package platform is what a Weft process runs workflows on: the database,
// the stores, the workflow registry, the runner and the event bus, and what
// the console and the API do with them (start runs through a workflow's
// start form, fork, prune, load the demo). It names no workflow: it knows
// them through the registry (internal/workflow), their own pages through
// Mounts and their demo data through Demos, all of which internal/app sets
// when it assembles a process. The server (internal/server) takes an App of
// this package, so it depends on no workflow. It imports the internal core
// packages and the standard library.
package platform

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/llm"
	"weft/internal/postgres"
	"weft/internal/runner"
	"weft/internal/server/mount"
	"weft/internal/telemetry"
	"weft/internal/usertext"
	"weft/internal/workflow"
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
	// Tracer makes the process's spans (runs, nodes, LLM calls, SQL, HTTP requests); nil:
	// the global provider (cmd/weft installs the one internal/telemetry reads from the
	// environment).
	Tracer trace.TracerProvider
}

// App is a running Weft process's parts.
type App struct {
	DB          *postgres.DB
	Jobs        *postgres.JobStore
	Checkpoints *postgres.Checkpointer
	Tenants     *postgres.Tenants
	Audit       *postgres.Audit
	Artifacts   *postgres.Artifacts
	Events      *postgres.EventBus
	Nodes       *postgres.NodeRecords
	Wake        *postgres.Listener
	Registry    *workflow.Registry
	// Mounts add the workflows' own pages and API calls to the server (mount.Func).
	Mounts []mount.Func
	Runner *runner.Runner
	LLM    llm.Provider
	Log    *slog.Logger
	// NodeLatency is the node latency histogram (served at /metrics).
	NodeLatency *prometheus.HistogramVec
	// RunMetrics are the runner's metrics (served at /metrics).
	RunMetrics *RunMetrics
	// Tracer makes the process's spans (Config.Tracer, or the global provider).
	Tracer trace.TracerProvider
	// Demos load each workflow's demo data into the demo tenants (which exist by then) and
	// start the demo's runs (SeedDemo).
	Demos []func(ctx context.Context) error
	// PrunePage is how many finished threads one Prune step trims (0: 1000).
	PrunePage int

	closeOnce sync.Once
}

// Open connects (applying migrations) and assembles the App, with no workflow registered
// (internal/app.Open registers them).
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
	tp := telemetry.Or(cfg.Tracer)
	d, err := postgres.Open(ctx, cfg.DatabaseURL, postgres.WithLogger(log), postgres.WithMaxConns(workers+8), postgres.WithTracing(tp))
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
		DB: d, Jobs: postgres.NewJobStore(d), Checkpoints: postgres.NewCheckpointer(d), Tenants: postgres.NewTenants(d),
		Audit: postgres.NewAudit(d), Artifacts: postgres.NewArtifacts(d), Events: postgres.NewEventBus(d, postgres.EventBusOptions{}),
		Nodes: postgres.NewNodeRecords(d, postgres.BatchOptions{}), Wake: postgres.NewListener(d),
		Registry: workflow.NewRegistry(), LLM: telemetry.LLM(provider, tp), Log: log, Tracer: tp, RunMetrics: NewRunMetrics(),
	}
	a.NodeLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "weft_node_latency_seconds",
		Help: "Node execution latency by workflow and node.", Buckets: prometheus.ExponentialBuckets(0.0005, 2.5, 14)},
		[]string{"workflow", "node", "outcome"})
	rc := cfg.Runner
	rc.Store, rc.Workflows, rc.Events, rc.Logger = a.Jobs, a.Registry, a.Events, log
	if rc.Tracer == nil {
		rc.Tracer = tp
	}
	if rc.Observer == nil {
		rc.Observer = a.RunMetrics
	}
	rc.Nodes = latencyRecorder{next: a.Nodes, hist: a.NodeLatency}
	if rc.Wake == nil {
		rc.Wake = a.Wake.C()
	}
	a.Runner = runner.New(rc)
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
		if st, err = def.Start.Start(ctx, workflow.StartRequest{TenantID: tenantID, Actor: actor, TraceID: telemetry.TraceID(ctx)}, v); err != nil {
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
	page := cmp.Or(a.PrunePage, defaultPrunePage)
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
