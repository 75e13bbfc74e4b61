package app

import (
	"context"

	"weft/internal/graph"
	"weft/internal/llm"
	"weft/internal/runner"
	"weft/internal/workflow"
	"weft/internal/workflow/bideval"
	"weft/internal/workflow/bideval/bidevalhttp"
	"weft/internal/workflow/bideval/bidevalpg"
	"weft/internal/workflow/tour"
)

// The one file of the package that names workflows: each is registered here (one
// Definition each), with its store adapter and its own pages where it has them, and its demo
// data is loaded from here. Adding a workflow is a line in registerWorkflows (and one in
// seedWorkflowDemos when it has demo data).

// workflowParts are the parts of the workflows that the wiring keeps: what their own
// pages, their demo data and the tests reach.
type workflowParts struct {
	bid      *bidevalpg.Store
	bidGraph *graph.Graph[bideval.State]
}

// registerWorkflows builds each workflow on the App's stores and registers it, with the
// routes of its own pages.
func (a *App) registerWorkflows(provider llm.Provider) error {
	bid := bidevalpg.New(a.DB)
	bg, err := bideval.New(bideval.Deps{
		Data: bid, LLM: provider, Checkpointer: a.Checkpoints,
		IssueToken: a.Runner.IssueTokenInRun,
		RecordFailure: func(ctx context.Context, f bideval.Failure) (string, error) {
			return a.Runner.RecordFailure(ctx, runner.Failure{Class: f.Class, Code: f.Code, Message: f.Message, Node: f.Node, CheckpointID: f.CheckpointID})
		},
	})
	if err != nil {
		return err
	}
	a.workflows = workflowParts{bid: bid, bidGraph: bg}
	tg, err := tour.New(a.Checkpoints, 0)
	if err != nil {
		return err
	}
	for _, d := range []workflow.Definition{
		bideval.Definition(bg, bid),
		{Name: "tour", Title: "Engine tour", Graph: tg, CheckInput: tour.CheckInput, ExampleInput: tour.ExampleInput, SubjectOf: tour.SubjectOf,
			Description: "A small graph that shows the engine: a Send fan-out into parallel research nodes, one per topic of the question (their progress streams live), a join that drafts an answer, and an approval interrupt."},
	} {
		if err := a.Registry.Register(d); err != nil {
			return err
		}
	}
	a.Mounts = append(a.Mounts, bidevalhttp.Mount(bidevalhttp.Deps{Store: bid, Graph: bg, Jobs: a.Jobs, Audit: a.Audit, Start: a.StartValues}))
	return nil
}

// seedWorkflowDemos loads each workflow's demo data into the demo tenants (which exist), and
// starts the demo tenant's runs.
func (a *App) seedWorkflowDemos(ctx context.Context) error {
	d := bideval.Demo(DemoTenant, "Demo Procurement Co.")
	if _, err := a.workflows.bid.SeedDemo(ctx, d); err != nil {
		return err
	}
	if _, err := a.workflows.bid.SeedDemo(ctx, bideval.Demo(OtherTenant, "Acme Holdings")); err != nil {
		return err
	}
	for _, s := range d.Suppliers {
		if _, err := a.StartEvaluation(ctx, DemoTenant, "ev_"+s.ID, "system:demo"); err != nil {
			return err
		}
	}
	return nil
}

// Evaluations is bid evaluation's store (its tenders, evaluations and documents).
func (a *App) Evaluations() *bidevalpg.Store { return a.workflows.bid }

// StartEvaluation starts a run of an evaluation's thread, as its tender's page does (an
// evaluation in progress is refused with bideval.CodeEvaluationRunning, an unknown one is
// graph.ErrNotFound).
func (a *App) StartEvaluation(ctx context.Context, tenantID, evaluationID, actor string) (runner.Job, error) {
	return bidevalhttp.StartEvaluation(ctx, a.StartValues, tenantID, evaluationID, actor)
}

// EvaluationState is get_workflow_state(evaluation_id, tenant): the seed 004 view of the
// evaluation's thread and job. Another tenant's id is graph.ErrNotFound.
func (a *App) EvaluationState(ctx context.Context, tenantID, evaluationID string) (bideval.WorkflowState, error) {
	return a.workflows.bid.WorkflowState(ctx, a.workflows.bidGraph, tenantID, evaluationID)
}

// EvaluationValues is an evaluation thread's current state: its rule pack's criteria (what
// an edit_scores decision may change) and the model's scores (what it changes from).
func (a *App) EvaluationValues(ctx context.Context, threadID string) (bideval.State, error) {
	snap, err := a.workflows.bidGraph.GetState(ctx, graph.Config{ThreadID: threadID})
	if err != nil {
		return bideval.State{}, err
	}
	return snap.Values, nil
}
