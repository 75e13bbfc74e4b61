package bideval

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/workflow"
)

// Store is what the workflow's console and API parts need beyond its nodes' Data: the
// evaluation a run is started for, the link from the evaluation to its run, and what lists
// name its runs by (implemented by bidevalpg).
type Store interface {
	// EvaluationThread is the thread of a tenant's evaluation (graph.ErrNotFound for none).
	EvaluationThread(ctx context.Context, tenantID, evaluationID string) (string, error)
	// RunInProgress says where the evaluation's last run is, in words, while it has not
	// finished ("" otherwise).
	RunInProgress(ctx context.Context, tenantID, evaluationID string) (string, error)
	// SetJob records the evaluation's latest run.
	SetJob(ctx context.Context, tenantID, evaluationID, jobID string) error
	// Describe names evaluations by id (a run's subject): supplier, tender and its page
	// (workflow.Definition.Describe).
	Describe(ctx context.Context, tenantID string, evaluationIDs []string) (map[string]workflow.Subject, error)
	// Tenders lists a tenant's tenders newest first, with how their evaluations stand.
	Tenders(ctx context.Context, tenantID string) ([]Tender, error)
	Chunks
	Reports
}

// Title is the workflow's title in the console.
const Title = "Bid evaluation"

// FieldEvaluationID is the start field naming the evaluation to run.
const FieldEvaluationID = "evaluation_id"

// Definition is the bid evaluation as a plug-in of the platform: its graph, its start (an
// evaluation id; the console starts evaluations from their tender's page), and what its
// pages and the API show.
func Definition(g *graph.Graph[State], store Store) workflow.Definition {
	return workflow.Definition{
		Name: Name, Title: Title, Graph: g,
		Description: "Scores a supplier's bid against the tender's rule pack, with evidence, hard rules and human review.",
		Path: []string{NodeLoadContext, NodeRetrieveEvidence, NodeEvaluateRules, NodeScoreWithLLM,
			NodeQualityGate, NodeFinalizeReport, NodePersistResult},
		Start: &workflow.StartForm{
			Fields: []workflow.Field{{Name: FieldEvaluationID, Label: "Evaluation", Kind: workflow.Text, Required: true, MaxLength: 200,
				Help: "The evaluation of one supplier's bid, as its tender's page lists it (ev_…)."}},
			Start: func(ctx context.Context, req workflow.StartRequest, v workflow.Values) (workflow.Start, error) {
				return start(ctx, store, req, v)
			},
			Elsewhere: true,
		},
		Review:       Reviewer{Chunks: store},
		Views:        workflow.Views{Panel: Panel, Report: ReportView(store, store), Dashboard: dashboardView(store)},
		ReasonLabels: ReasonLabels,
		AuditActions: AuditActions,
		Hidden:       []string{"resume_token"},
		Describe:     store.Describe,
		Forked: func(ctx context.Context, tenantID, subject, threadID, jobID string) error {
			return forked(ctx, store, tenantID, subject, threadID, jobID)
		},
	}
}

// ReasonLabels names the quality gate's review reasons.
var ReasonLabels = map[string]string{
	"low_confidence":              "Low confidence",
	"citation_coverage_low":       "Too few cited claims",
	"hard_rule_failed_high_score": "Hard rule failed despite a high score",
	"score_outlier":               "Score far from the other bids",
}

// start is a run of the evaluation's thread, every channel but the error history reset
// (Input), linked to the evaluation once queued.
func start(ctx context.Context, store Store, req workflow.StartRequest, v workflow.Values) (workflow.Start, error) {
	id := v.String(FieldEvaluationID)
	thread, err := store.EvaluationThread(ctx, req.TenantID, id)
	if errors.Is(err, graph.ErrNotFound) {
		return workflow.Start{}, workflow.FieldErrors{FieldEvaluationID: fmt.Sprintf("there is no evaluation %q", id)}
	}
	if err != nil {
		return workflow.Start{}, err
	}
	if where, err := store.RunInProgress(ctx, req.TenantID, id); err != nil {
		return workflow.Start{}, err
	} else if where != "" {
		return workflow.Start{}, fault.New(fault.Business, CodeEvaluationRunning,
			fmt.Sprintf("evaluation %s has a run that has not finished (%s): start it again once that run ends", id, where))
	}
	trace := cmp.Or(req.TraceID, newTraceID())
	return workflow.Start{
		Input: Input(req.TenantID, id, thread, trace), ThreadID: thread, Subject: id, TraceID: trace,
		Started:     func(ctx context.Context, jobID string) error { return store.SetJob(ctx, req.TenantID, id, jobID) },
		AuditAction: ActionEvaluationStart, AuditSubject: id,
	}, nil
}

// forked points the evaluation a forked run is of (its subject) at the run's job, when the
// thread is the evaluation's.
func forked(ctx context.Context, store Store, tenantID, evaluationID, threadID, jobID string) error {
	if evaluationID == "" {
		return nil
	}
	if thread, err := store.EvaluationThread(ctx, tenantID, evaluationID); err != nil || thread != threadID {
		return nil // no evaluation of this thread: nothing to point
	}
	return store.SetJob(ctx, tenantID, evaluationID, jobID)
}

func newTraceID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
