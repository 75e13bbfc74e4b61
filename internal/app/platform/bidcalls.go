package platform

import (
	"context"

	"weft/internal/runner"
	"weft/internal/workflow/bideval"
	"weft/internal/workflow/bideval/bidevalpg"
)

// BidCalls are bid evaluation's calls that the console's review form, thread page and API
// still make by name; internal/app sets them. They go once those pages are built through the
// plug-in contract (issue 33), and with them this file's imports of bid evaluation.
type BidCalls struct {
	// Evaluations is bid evaluation's store.
	Evaluations func() *bidevalpg.Store
	// StartEvaluation starts a run of an evaluation's thread, as its tender's page does.
	StartEvaluation func(ctx context.Context, tenantID, evaluationID, actor string) (runner.Job, error)
	// EvaluationState is get_workflow_state(evaluation_id, tenant) (seed 004).
	EvaluationState func(ctx context.Context, tenantID, evaluationID string) (bideval.WorkflowState, error)
	// EvaluationValues is an evaluation thread's current state.
	EvaluationValues func(ctx context.Context, threadID string) (bideval.State, error)
}
