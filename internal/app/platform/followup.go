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

// CodeNoFollowUp: the thread's workflow takes no follow-up (Definition.FollowUp).
const CodeNoFollowUp = "WF_NO_FOLLOW_UP"

// ActionThreadFollowUp is the audit action of a follow-up.
const ActionThreadFollowUp = "thread.follow_up"

// FollowUpDef finds the workflow of a tenant's thread and whether the thread takes a
// follow-up now: its workflow has a FollowUp form, and every job of the thread has finished
// (a follow-up waits for the run in progress). Another tenant's thread, or none, is
// graph.ErrNotFound.
func (a *App) FollowUpDef(ctx context.Context, tenantID, threadID string) (workflow.Definition, bool, error) {
	jobs, err := a.Jobs.ThreadJobs(ctx, tenantID, threadID, 20)
	if err != nil {
		return workflow.Definition{}, false, err
	}
	if len(jobs) == 0 {
		return workflow.Definition{}, false, fmt.Errorf("thread %s: %w", threadID, graph.ErrNotFound)
	}
	def, ok := a.Registry.Get(jobs[0].Workflow)
	if !ok {
		return workflow.Definition{}, false, fmt.Errorf("thread %s: %w", threadID, graph.ErrNotFound)
	}
	for _, j := range jobs {
		if !j.Status.Terminal() {
			return def, false, nil
		}
	}
	return def, def.FollowUp != nil, nil
}

// FollowUp queues a follow-up on a tenant's finished thread from the checked values of its
// workflow's FollowUp form: a new input on the same thread (the runner starts a new run from
// it, the state's other channels as the last run left them), audited as thread.follow_up. A
// workflow without a follow-up is refused (CodeNoFollowUp), a thread with a job in progress
// too (postgres.ErrThreadBusy), and nothing is queued.
func (a *App) FollowUp(ctx context.Context, tenantID, threadID string, v workflow.Values, actor string) (runner.Job, error) {
	def, open, err := a.FollowUpDef(ctx, tenantID, threadID)
	if err != nil {
		return runner.Job{}, err
	}
	if def.FollowUp == nil {
		return runner.Job{}, fault.New(fault.Validation, CodeNoFollowUp, fmt.Sprintf("a %s thread takes no follow-up", def.Title))
	}
	if !open {
		return runner.Job{}, postgres.ErrThreadBusy
	}
	st := workflow.Start{}
	if def.FollowUp.Start != nil {
		if st, err = def.FollowUp.Start(ctx, workflow.StartRequest{TenantID: tenantID, Actor: actor, ThreadID: threadID, TraceID: telemetry.TraceID(ctx)}, v); err != nil {
			return runner.Job{}, err
		}
	} else {
		b, err := json.Marshal(v)
		if err != nil {
			return runner.Job{}, fault.Wrap(fault.Validation, fault.CodeValidation, err)
		}
		st.Input = b
	}
	st.ThreadID = threadID
	if st.AuditAction == "" {
		st.AuditAction = ActionThreadFollowUp
	}
	return a.enqueue(ctx, def, tenantID, actor, st)
}

// FollowUpJSON is FollowUp from the FollowUp form's fields as JSON (the API's input).
func (a *App) FollowUpJSON(ctx context.Context, tenantID, threadID string, input json.RawMessage, actor string) (runner.Job, error) {
	def, _, err := a.FollowUpDef(ctx, tenantID, threadID)
	if err != nil {
		return runner.Job{}, err
	}
	if def.FollowUp == nil {
		return runner.Job{}, fault.New(fault.Validation, CodeNoFollowUp, fmt.Sprintf("a %s thread takes no follow-up", def.Title))
	}
	v, err := def.FollowUp.ParseJSON(input)
	if err != nil {
		return runner.Job{}, err
	}
	return a.FollowUp(ctx, tenantID, threadID, v, actor)
}
