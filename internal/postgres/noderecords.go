package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"time"

	"weft/db"
	"weft/internal/runner"
)

// NodeRecords stores one record per node execution (seed 000 §10) for the console's node
// timeline. RecordNode queues and returns at once; a background writer inserts the queue in
// batches (every FlushInterval or MaxBatch records). When the queue is full, records are
// dropped and counted (Stats): they are observability, and a run must not wait for them.
type NodeRecords struct {
	db  *DB
	log *slog.Logger
	w   *batcher[runner.NodeExecution]
}

var _ runner.NodeRecorder = (*NodeRecords)(nil)

// maxNodeExecutions caps ListNodeExecutions.
const maxNodeExecutions = 10000

// NewNodeRecords starts the writer of node execution records on d. Close it to flush.
func NewNodeRecords(d *DB, o BatchOptions) *NodeRecords {
	log := o.Logger
	if log == nil {
		log = d.log
	}
	n := &NodeRecords{db: d, log: log}
	n.w = newBatcher("node executions", o, log, n.flush)
	n.w.start()
	return n
}

// RecordNode queues rec; it never blocks.
func (n *NodeRecords) RecordNode(_ context.Context, rec runner.NodeExecution) { n.w.add(rec) }

// Stats reports what the writer did.
func (n *NodeRecords) Stats() BatchStats { return n.w.stats() }

// Flush waits until the records made before it are written (or dropped); see EventBus.Flush.
func (n *NodeRecords) Flush(ctx context.Context) error { return n.w.sync(ctx) }

// Close stops accepting records and writes the queued ones (until ctx ends).
func (n *NodeRecords) Close(ctx context.Context) error { return n.w.close(ctx) }

func (n *NodeRecords) flush(ctx context.Context, batch []runner.NodeExecution) error {
	k := len(batch)
	p := db.NodeExecutionsInsertParams{
		TenantIds: make([]string, k), JobIds: make([]string, k), Workflows: make([]string, k),
		TraceIds: make([]string, k), ThreadIds: make([]string, k), Nodes: make([]string, k),
		TaskIds: make([]string, k), StartedAts: make([]time.Time, k), EndedAts: make([]time.Time, k),
		LatenciesMs: make([]float64, k), InputSizes: make([]int32, k), OutputSizes: make([]int32, k),
		Attempts: make([]int32, k), ErrorCodes: make([]string, k), Cached: make([]bool, k),
	}
	for i, r := range batch {
		p.TenantIds[i] = cleanText(r.TenantID)
		p.JobIds[i] = cleanText(r.JobID)
		p.Workflows[i] = cleanText(r.Workflow)
		p.TraceIds[i] = cleanText(r.TraceID)
		p.ThreadIds[i] = cleanText(r.ThreadID)
		p.Nodes[i] = cleanText(r.Node)
		p.TaskIds[i] = cleanText(r.TaskID)
		p.StartedAts[i] = r.StartedAt
		p.EndedAts[i] = r.EndedAt
		p.LatenciesMs[i] = r.LatencyMS
		p.InputSizes[i] = clampInt32(r.InputSize)
		p.OutputSizes[i] = clampInt32(r.OutputSize)
		p.Attempts[i] = clampInt32(r.Attempts)
		p.ErrorCodes[i] = cleanText(r.ErrorCode)
		p.Cached[i] = r.Cached
	}
	err := n.db.rideOrRun(ctx, func(q *db.Queries) error { return q.NodeExecutionsInsert(ctx, p) })
	if err != nil {
		return fmt.Errorf("insert %d node executions: %w", k, err)
	}
	return nil
}

// ListNodeExecutions returns a thread's node executions of a tenant in the order they
// started (at most 10,000; the console's node timeline). Another tenant's thread has none.
func (d *DB) ListNodeExecutions(ctx context.Context, tenantID, threadID string) ([]runner.NodeExecution, error) {
	rows, err := d.q.NodeExecutionsList(ctx, db.NodeExecutionsListParams{
		TenantID: tenantID, ThreadID: threadID, MaxRows: maxNodeExecutions})
	if err != nil {
		return nil, fmt.Errorf("list node executions: %w", translate(err))
	}
	out := make([]runner.NodeExecution, len(rows))
	for i, r := range rows {
		out[i] = runner.NodeExecution{TenantID: r.TenantID, JobID: r.JobID, Workflow: r.Workflow,
			TraceID: r.TraceID, ThreadID: r.ThreadID, Node: r.Node, TaskID: r.TaskID,
			StartedAt: r.StartedAt, EndedAt: r.EndedAt, LatencyMS: r.LatencyMs,
			InputSize: int(r.InputSize), OutputSize: int(r.OutputSize), Attempts: int(r.Attempts),
			ErrorCode: r.ErrorCode, Cached: r.Cached}
	}
	return out, nil
}

func clampInt32(v int) int32 {
	return int32(max(min(v, math.MaxInt32), math.MinInt32))
}
