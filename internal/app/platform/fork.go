package platform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/runner"
)

// Codes of a refused fork.
const (
	// CodeThreadBusy: the thread's job has not finished; a fork waits for it.
	CodeThreadBusy = postgres.CodeThreadBusy
	// CodeForkInvalid: the checkpoint cannot be forked from (not in the thread's history,
	// or nothing follows it).
	CodeForkInvalid = "WF_FORK_INVALID"
)

// ActionThreadFork is the audit action of a fork.
const ActionThreadFork = "thread.fork"

// Fork re-runs a tenant's finished thread from one of its checkpoints: it queues a job for
// the same thread and workflow that starts from checkpointID (the new checkpoint's ForkOf
// names it), tells the workflow (its Forked: bid evaluation points the evaluation at the new
// job), and audits the fork. The thread must be the tenant's (graph.ErrNotFound otherwise) and must not have a
// job in progress; the checkpoint must be in the thread's history and have work after it.
func (a *App) Fork(ctx context.Context, tenantID, threadID, checkpointID, actor string) (runner.Job, error) {
	if checkpointID == "" {
		return runner.Job{}, fault.New(fault.Validation, CodeForkInvalid, "choose the checkpoint to fork from")
	}
	jobs, err := a.Jobs.ThreadJobs(ctx, tenantID, threadID, 20)
	if err != nil {
		return runner.Job{}, err
	}
	if len(jobs) == 0 {
		return runner.Job{}, fmt.Errorf("thread %s: %w", threadID, graph.ErrNotFound)
	}
	for _, j := range jobs {
		if !j.Status.Terminal() {
			return runner.Job{}, postgres.ErrThreadBusy
		}
	}
	last := jobs[0]
	e, ok := a.Registry.Get(last.Workflow)
	if !ok {
		return runner.Job{}, fault.New(fault.Validation, fault.CodeWorkflowUnknown, fmt.Sprintf("no workflow named %q", last.Workflow))
	}
	g := e.Graph
	at, err := g.StateJSON(ctx, graph.Config{ThreadID: threadID, CheckpointID: checkpointID})
	if errors.Is(err, graph.ErrNotFound) {
		return runner.Job{}, fault.New(fault.Validation, CodeForkInvalid, "that checkpoint is not in this thread's history")
	}
	if err != nil {
		return runner.Job{}, err
	}
	if len(at.Next) == 0 {
		return runner.Job{}, fault.New(fault.Validation, CodeForkInvalid, "the run ended at that checkpoint: there is nothing to re-run from it")
	}
	head, err := g.StateJSON(ctx, graph.Config{ThreadID: threadID})
	if err != nil {
		return runner.Job{}, err
	}
	// The runner starts a job from RetryFrom only when the thread has nothing left to run
	// but (at most) its error route.
	for _, n := range head.Next {
		if !slices.Contains(g.ErrorRoute(), n) {
			return runner.Job{}, fault.New(fault.Business, CodeThreadBusy,
				fmt.Sprintf("the thread stopped before %s; retry its job instead of forking", n))
		}
	}
	j, err := a.Jobs.EnqueueFork(ctx, runner.NewJob{TenantID: tenantID, Workflow: last.Workflow, ThreadID: threadID,
		TraceID: newTraceID(), Subject: last.Subject}, checkpointID)
	if err != nil {
		return runner.Job{}, err
	}
	if e.Forked != nil {
		if err := e.Forked(ctx, tenantID, last.Subject, threadID, j.ID); err != nil {
			return j, err
		}
	}
	payload, _ := json.Marshal(map[string]any{"job_id": j.ID, "checkpoint_id": checkpointID, "step": at.Checkpoint.Step,
		"next": at.Next, "previous_job_id": last.ID})
	if _, err := a.Audit.Append(ctx, postgres.Entry{TenantID: tenantID, Actor: actor, Action: ActionThreadFork, Subject: threadID,
		Workflow: last.Workflow, Payload: payload}); err != nil {
		return j, err
	}
	return j, nil
}
