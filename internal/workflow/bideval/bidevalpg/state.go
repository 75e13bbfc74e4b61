package bidevalpg

import (
	"context"
	"errors"

	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/workflow/bideval"
)

// WorkflowState is get_workflow_state(evaluation_id, tenant): the seed 004 view of the
// evaluation's thread (g's checkpoints) and of its job. Another tenant's id is
// graph.ErrNotFound.
func (e *Store) WorkflowState(ctx context.Context, g *graph.Graph[bideval.State], tenantID, evaluationID string) (bideval.WorkflowState, error) {
	ev, err := e.Evaluation(ctx, tenantID, evaluationID)
	if err != nil {
		return bideval.WorkflowState{}, err
	}
	var jv bideval.JobView
	var trace string // the job's, for a thread without checkpoints
	if ev.JobID != "" {
		j, err := postgres.NewJobStore(e.db).Job(ctx, tenantID, ev.JobID)
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
		ec, err := e.LoadContext(ctx, tenantID, evaluationID)
		if err != nil {
			return bideval.WorkflowState{}, err
		}
		s.Project, s.Supplier = ec.Project, ec.Supplier
		rp, ok, err := e.LatestReport(ctx, tenantID, evaluationID)
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
