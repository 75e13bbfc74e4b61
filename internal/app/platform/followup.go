package platform

import (
	"context"
	"encoding/json"
	"fmt"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/runner"
	"weft/internal/telemetry"
	"weft/internal/workflow"
)

// FollowUpOf finds the follow-up form of a tenant's thread: its workflow's definition when
// the workflow has one (ok false otherwise). The thread must be the tenant's
// (graph.ErrNotFound otherwise).
func (a *App) FollowUpOf(ctx context.Context, tenantID, threadID string) (workflow.Definition, runner.Job, bool, error) {
	jobs, err := a.Jobs.ThreadJobs(ctx, tenantID, threadID, 1)
	if err != nil {
		return workflow.Definition{}, runner.Job{}, false, err
	}
	if len(jobs) == 0 {
		return workflow.Definition{}, runner.Job{}, false, fmt.Errorf("thread %s: %w", threadID, graph.ErrNotFound)
	}
	def, ok := a.Registry.Get(jobs[0].Workflow)
	return def, jobs[0], ok && def.FollowUp != nil, nil
}

// StartFollowUpJSON is StartFollowUp with the API's JSON input.
func (a *App) StartFollowUpJSON(ctx context.Context, tenantID, threadID string, input json.RawMessage, actor string) (runner.Job, error) {
	def, _, ok, err := a.FollowUpOf(ctx, tenantID, threadID)
	if err != nil {
		return runner.Job{}, err
	}
	if !ok {
		return runner.Job{}, fault.New(fault.Validation, fault.CodeValidation, "this thread's workflow takes no follow-up run")
	}
	v, err := def.FollowUp.ParseJSON(input)
	if err != nil {
		return runner.Job{}, err
	}
	return a.StartFollowUp(ctx, tenantID, threadID, v, actor)
}

// StartFollowUp queues another run on a tenant's thread whose run has ended, from its
// workflow's follow-up form (workflow.Definition.FollowUp): the values become the run's input
// on the same thread, audited as "run.follow_up". A thread whose job has not finished is
// refused (postgres.ErrThreadBusy), as is one whose last run failed.
func (a *App) StartFollowUp(ctx context.Context, tenantID, threadID string, v workflow.Values, actor string) (runner.Job, error) {
	def, last, ok, err := a.FollowUpOf(ctx, tenantID, threadID)
	if err != nil {
		return runner.Job{}, err
	}
	if !ok {
		return runner.Job{}, fault.New(fault.Validation, fault.CodeValidation, "this thread's workflow takes no follow-up run")
	}
	if !last.Status.Terminal() {
		return runner.Job{}, postgres.ErrThreadBusy
	}
	if last.Status != runner.Succeeded {
		return runner.Job{}, fault.New(fault.Business, CodeThreadBusy, fmt.Sprintf("the thread's last run is %s: retry it before starting another", last.Status))
	}
	st := workflow.Start{}
	if def.FollowUp.Start != nil {
		if st, err = def.FollowUp.Start(ctx, workflow.StartRequest{TenantID: tenantID, Actor: actor, ThreadID: threadID, TraceID: telemetry.TraceID(ctx)}, v); err != nil {
			return runner.Job{}, err
		}
	} else if st.Input, err = json.Marshal(v); err != nil {
		return runner.Job{}, fault.Wrap(fault.Validation, fault.CodeValidation, err)
	}
	st.ThreadID = threadID
	if st.Subject == "" {
		st.Subject = last.Subject
	}
	st.AuditAction = "run.follow_up"
	return a.enqueue(ctx, def, tenantID, actor, st)
}
