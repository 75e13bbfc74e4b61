package platform

import (
	"context"

	"weft/internal/runner"
)

// BidCalls are the calls of bid evaluation's that the API's start of a run still makes by
// name (its bid evaluation branch); internal/app sets them. They go once that start is made
// through the workflow's start form alone.
type BidCalls struct {
	// StartEvaluation starts a run of an evaluation's thread, as its tender's page does.
	StartEvaluation func(ctx context.Context, tenantID, evaluationID, actor string) (runner.Job, error)
}
