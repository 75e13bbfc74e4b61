package bideval

import (
	"cmp"
	"encoding/json"
	"slices"
	"time"
)

// WorkflowState is get_workflow_state's answer: the seed 004 shape, grouped
// as seed 000 §2, with errors[] as the full history.
type WorkflowState struct {
	Identity  ViewIdentity  `json:"identity"`
	Trace     ViewTrace     `json:"trace"`
	Inputs    ViewInputs    `json:"inputs"`
	Retrieval ViewRetrieval `json:"retrieval"`
	Scoring   ViewScoring   `json:"scoring"`
	Review    ViewReview    `json:"review"`
	Output    ViewOutput    `json:"output"`
	Runtime   ViewRuntime   `json:"runtime"`
}

// The groups of WorkflowState.
type (
	ViewIdentity struct {
		TenantID     string `json:"tenant_id"`
		ProjectID    string `json:"project_id"`
		EvaluationID string `json:"evaluation_id"`
		SupplierID   string `json:"supplier_id"`
	}
	ViewTrace struct {
		TraceID      string `json:"trace_id"`
		ThreadID     string `json:"thread_id"`
		CheckpointID string `json:"checkpoint_id"`
	}
	ViewInputs struct {
		QueryBundle     QueryBundle `json:"query_bundle"`
		RulePackVersion string      `json:"rule_pack_version"`
	}
	ViewRetrieval struct {
		RetrievedChunks []RetrievedChunk    `json:"retrieved_chunks"`
		EvidenceBundle  map[string]Evidence `json:"evidence_bundle"`
	}
	ViewScoring struct {
		CriteriaScores   []CriterionScore `json:"criteria_scores"`
		TotalScore       float64          `json:"total_score"`
		Confidence       float64          `json:"confidence"`
		CitationCoverage float64          `json:"citation_coverage"`
		RuleResults      []RuleResult     `json:"rule_results"`
		ScoredBy         string           `json:"scored_by"`
		ScoredOffline    bool             `json:"scored_offline"`
	}
	ViewReview struct {
		RequiresHumanReview bool           `json:"requires_human_review"`
		Reasons             []string       `json:"reasons"`
		HumanReviewPayload  *ReviewPayload `json:"human_review_payload"`
		HumanDecision       *Decision      `json:"human_decision"`
		ResumeToken         string         `json:"resume_token"`
	}
	ViewOutput struct {
		ReportPayload *Report `json:"report_payload"`
		Status        string  `json:"status"`
	}
	ViewRuntime struct {
		RetryCount int         `json:"retry_count"`
		Errors     []ViewError `json:"errors"`
	}
)

// ViewError is one entry of the error history, whichever side recorded it.
type ViewError struct {
	At      time.Time `json:"at"`
	Source  string    `json:"source"` // "graph" (errors[] of the state) or "job"
	Node    string    `json:"node,omitempty"`
	Class   string    `json:"class"`
	Code    string    `json:"code"`
	Message string    `json:"message"`
	TraceID string    `json:"trace_id"`
}

// JobView is what the view needs from the job running the evaluation.
type JobView struct {
	Status     string
	RetryCount int
	Errors     []ViewError
	// Interrupt is the pending review payload while the job waits.
	Interrupt json.RawMessage
}

// View assembles get_workflow_state from the thread's state at its head
// checkpoint and the job. Errors merge both histories, oldest first, without
// duplicates (the job records what the graph's error route reported).
func View(s State, checkpointID string, job JobView) WorkflowState {
	v := WorkflowState{
		Identity:  ViewIdentity{TenantID: s.TenantID, ProjectID: s.ProjectID, EvaluationID: s.EvaluationID, SupplierID: s.SupplierID},
		Trace:     ViewTrace{TraceID: s.TraceID, ThreadID: s.ThreadID, CheckpointID: checkpointID},
		Inputs:    ViewInputs{QueryBundle: s.QueryBundle, RulePackVersion: s.RulePackVersion},
		Retrieval: ViewRetrieval{RetrievedChunks: nonNil(s.RetrievedChunks), EvidenceBundle: s.EvidenceBundle},
		Scoring: ViewScoring{CriteriaScores: nonNil(s.CriteriaScores), TotalScore: s.TotalScore, Confidence: s.Confidence,
			CitationCoverage: s.CitationCoverage, RuleResults: nonNil(s.RuleResults), ScoredBy: s.ScoredBy, ScoredOffline: s.ScoredOffline},
		Review: ViewReview{RequiresHumanReview: s.RequiresHumanReview, Reasons: nonNil(s.ReviewReasons), HumanReviewPayload: s.HumanReviewPayload,
			HumanDecision: s.HumanDecision, ResumeToken: s.ResumeToken},
		Output:  ViewOutput{ReportPayload: s.ReportPayload, Status: s.Status},
		Runtime: ViewRuntime{RetryCount: s.RetryCount, Errors: []ViewError{}},
	}
	if v.Retrieval.EvidenceBundle == nil {
		v.Retrieval.EvidenceBundle = map[string]Evidence{}
	}
	// The job says where the run is; once it succeeded, a disqualified bid's status stays
	// disqualified (its report says which rule), as seed 000's output.status.
	if job.Status != "" && !(s.Status == StatusDisqualified && job.Status == "succeeded") {
		v.Output.Status = job.Status
	}
	if job.RetryCount > v.Runtime.RetryCount {
		v.Runtime.RetryCount = job.RetryCount
	}
	if v.Review.HumanReviewPayload == nil && len(job.Interrupt) > 0 {
		var p ReviewPayload
		if json.Unmarshal(job.Interrupt, &p) == nil && p.Type != "" {
			v.Review.HumanReviewPayload = &p
			v.Review.ResumeToken = p.ResumeToken
		}
	}
	// Every failure of every run is one entry. The state's errors[] holds the thread's whole
	// history; the job's, the current run's, each of which the state also holds (the same
	// code, node and message): such a pair is one failure, shown once with the job's trace.
	// A state error of an earlier run keeps its own trace, or none when it recorded none. The
	// newest state errors pair first: the current run's failures are the latest.
	key := func(e ViewError) string { return e.Code + "|" + e.Node + "|" + e.Message }
	jobErrs := slices.Clone(job.Errors)
	for _, e := range slices.Backward(s.Errors) {
		ve := ViewError{At: e.At, Source: "graph", Node: e.Node, Class: e.Class, Code: e.Code, Message: e.Message, TraceID: e.TraceID}
		// Recorded moments apart (the node's failure, then its job's); a run's failure that
		// never reached a checkpoint (a crash) must not pair with an earlier run's.
		same := func(j ViewError) bool { return key(j) == key(ve) && j.At.Sub(ve.At).Abs() <= pairWindow }
		if i := slices.IndexFunc(jobErrs, same); i >= 0 {
			ve.TraceID = cmp.Or(ve.TraceID, jobErrs[i].TraceID)
			jobErrs = slices.Delete(jobErrs, i, i+1)
		}
		v.Runtime.Errors = append(v.Runtime.Errors, ve)
	}
	for _, e := range jobErrs {
		e.Source = "job"
		v.Runtime.Errors = append(v.Runtime.Errors, e)
	}
	sortErrors(v.Runtime.Errors)
	return v
}

// pairWindow is how far apart a failure's state entry and its job's entry may be recorded.
const pairWindow = time.Minute

func sortErrors(es []ViewError) {
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && es[j].At.Before(es[j-1].At); j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
}
