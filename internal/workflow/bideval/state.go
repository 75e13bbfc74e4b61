// Package bideval is the bid-evaluation workflow of seeds 000 and 004: one
// evaluation of one supplier's bid against a tender's versioned rule pack.
//
//	START → load_context → retrieve_evidence → evaluate_rules → score_with_llm
//	      → quality_gate → (pass) finalize_report | (hitl) human_review_interrupt → finalize_report
//	      → persist_result → END
//	any error → classify_error → retry_or_dlq → END
//
// Only persist_result and retry_or_dlq have side effects, each under its
// idempotency key (seed 000 §8). The package imports internal/graph,
// internal/llm and internal/fault; the data it reads and writes goes through
// the Data interface (implemented in internal/postgres).
package bideval

import (
	"encoding/json"
	"time"

	"weft/internal/graph"
	"weft/internal/llm"
)

// Name is the workflow's registry name.
const Name = "bid_evaluation"

// State is the graph state: every field of seed 000 §2, in its groups, as
// channels named as in the seed. tenant_id, evaluation_id and thread_id are
// immutable once set (the graph's guard rejects any change).
type State struct {
	// identity
	TenantID     string `json:"tenant_id"`
	ProjectID    string `json:"project_id"`
	EvaluationID string `json:"evaluation_id"`
	SupplierID   string `json:"supplier_id"`
	// trace (checkpoint_id is the head's id, filled in by the state view)
	TraceID      string `json:"trace_id"`
	ThreadID     string `json:"thread_id"`
	CheckpointID string `json:"checkpoint_id"`
	// inputs
	QueryBundle     QueryBundle `json:"query_bundle"`
	RulePackVersion string      `json:"rule_pack_version"`
	RulePack        RulePack    `json:"rule_pack"`
	Project         Project     `json:"project"`
	Supplier        Supplier    `json:"supplier"`
	// retrieval
	RetrievedChunks []RetrievedChunk    `json:"retrieved_chunks"`
	EvidenceBundle  map[string]Evidence `json:"evidence_bundle"`
	// scoring
	RuleResults      []RuleResult     `json:"rule_results"`
	CriteriaScores   []CriterionScore `json:"criteria_scores"`
	TotalScore       float64          `json:"total_score"`
	Confidence       float64          `json:"confidence"`
	CitationCoverage float64          `json:"citation_coverage"`
	ScoredBy         string           `json:"scored_by"`
	ScoredOffline    bool             `json:"scored_offline"`
	// review
	RequiresHumanReview bool           `json:"requires_human_review"`
	ReviewReasons       []string       `json:"review_reasons"`
	HumanReviewPayload  *ReviewPayload `json:"human_review_payload"`
	HumanDecision       *Decision      `json:"human_decision"`
	ResumeToken         string         `json:"resume_token"`
	// output
	ReportPayload *Report `json:"report_payload"`
	ReportVersion int     `json:"report_version"`
	Status        string  `json:"status"`
	// runtime
	RetryCount int          `json:"retry_count"`
	Errors     []ErrorEntry `json:"errors" weft:"append"`
	ErrorClass string       `json:"error_class"`
	Retryable  bool         `json:"retryable"`
}

// Statuses an evaluation's state reports.
const (
	StatusRunning       = "running"
	StatusWaitingReview = "waiting_review"
	StatusCompleted     = "completed"
	// StatusDisqualified: completed, with a report saying which hard rule disqualified the bid.
	StatusDisqualified   = "disqualified"
	StatusRetryScheduled = "retry_scheduled"
	StatusFailed         = "failed"
)

// QueryBundle is what retrieval asks for: one query per criterion and per
// hard rule that needs evidence.
type QueryBundle struct {
	Criteria []Query `json:"criteria"`
	Rules    []Query `json:"rules"`
}

// Query is one retrieval query.
type Query struct {
	ID    string `json:"id"` // criterion or rule id
	Text  string `json:"text"`
	TopK  int    `json:"top_k"`
	Label string `json:"label"`
}

// Project is the tender being evaluated.
type Project struct {
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	Budget   float64 `json:"budget"`
	Currency string  `json:"currency"`
}

// Supplier is the bidder.
type Supplier struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// RulePack is a tender's versioned rules: hard rules and weighted criteria.
type RulePack struct {
	Version    string      `json:"version"`
	HardRules  []HardRule  `json:"hard_rules"`
	Criteria   []Criterion `json:"criteria"`
	Thresholds Thresholds  `json:"thresholds"`
}

// Hard rule kinds.
const (
	RuleRequiredDocument = "required_document" // one of Keywords appears in the bid
	RuleMaxPrice         = "max_price"         // bid price ≤ Max (or the project budget when Max is 0)
	RuleMaxDeliveryDays  = "max_delivery_days" // delivery days ≤ Max
	RuleMinNumber        = "min_number"        // the number Pattern captures ≥ Min
	RuleMaxNumber        = "max_number"        // the number Pattern captures ≤ Max
)

// Hard rule severities.
const (
	SeverityDisqualify = "disqualify"
	SeverityFlag       = "flag"
)

// Report outcomes.
const (
	OutcomePassed       = "passed"
	OutcomeApproved     = "approved"
	OutcomeRejected     = "rejected"
	OutcomeScoresEdited = "scores_edited"
	OutcomeDisqualified = "disqualified"
)

// Ranked reports whether an evaluation with this outcome takes a place in its tender's
// ranking: a bid rejected in review or disqualified by a hard rule does not.
func Ranked(outcome string) bool { return outcome != OutcomeRejected && outcome != OutcomeDisqualified }

// HardRule is a pass/fail constraint. A failed rule of severity
// "disqualify" ends the evaluation with outcome disqualified (completed, its
// report naming the rule, not ranked, not scored); a failed "flag" rule is
// reported and, with a high score, sends it to human review.
type HardRule struct {
	ID       string   `json:"id"`
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`
	Query    string   `json:"query"`
	Keywords []string `json:"keywords,omitempty"`
	Pattern  string   `json:"pattern,omitempty"`
	Min      float64  `json:"min,omitempty"`
	Max      float64  `json:"max,omitempty"`
	Severity string   `json:"severity"` // "disqualify" or "flag"
}

// Criterion is a weighted scoring criterion with its rubric.
type Criterion struct {
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	Weight   float64 `json:"weight"`
	MaxScore float64 `json:"max_score"`
	// TopK is how many evidence chunks are retrieved for it (0: 4).
	TopK   int        `json:"top_k,omitempty"`
	Query  string     `json:"query"`
	Rubric llm.Rubric `json:"rubric"`
}

// Thresholds drive the quality gate.
type Thresholds struct {
	MinConfidence       float64 `json:"min_confidence"`        // below: low_confidence
	MinCitationCoverage float64 `json:"min_citation_coverage"` // below: citation_coverage_low
	HighScore           float64 `json:"high_score"`            // a failed flag rule with a total ≥ this: hard_rule_failed_high_score
	OutlierDelta        float64 `json:"outlier_delta"`         // |total − peers' mean| > this: score_outlier
	MinPeers            int     `json:"min_peers"`             // peers needed before outliers count
}

// RetrievedChunk is one retrieved chunk with its score.
type RetrievedChunk struct {
	ChunkID    string   `json:"chunk_id"`
	DocumentID string   `json:"document_id"`
	Document   string   `json:"document"`
	Text       string   `json:"text"`
	Score      float64  `json:"score"`
	For        []string `json:"for"` // criterion / rule ids it was retrieved for
}

// Evidence is the bundle for one criterion or rule.
type Evidence struct {
	ID       string    `json:"id"`
	Label    string    `json:"label"`
	Query    string    `json:"query"`
	ChunkIDs []string  `json:"chunk_ids"`
	Scores   []float64 `json:"scores"`
}

// RuleResult is one hard rule's verdict.
type RuleResult struct {
	RuleID   string   `json:"rule_id"`
	Name     string   `json:"name"`
	Kind     string   `json:"kind"`
	Severity string   `json:"severity"`
	Passed   bool     `json:"passed"`
	Value    string   `json:"value,omitempty"`
	Reason   string   `json:"reason"`
	ChunkIDs []string `json:"chunk_ids"`
}

// CriterionScore is one criterion's score.
type CriterionScore struct {
	CriterionID string   `json:"criterion_id"`
	Name        string   `json:"name"`
	Weight      float64  `json:"weight"`
	Score       float64  `json:"score"`
	MaxScore    float64  `json:"max_score"`
	Confidence  float64  `json:"confidence"`
	Explanation string   `json:"explanation"`
	Citations   []string `json:"citations"`
	Claims      int      `json:"claims"`
	CitedClaims int      `json:"cited_claims"`
	Edited      bool     `json:"edited,omitempty"`
	// ModelScore is the score the model gave, kept when a reviewer edited Score (the
	// confidence and explanation stay the model's).
	ModelScore *float64 `json:"model_score,omitempty"`
}

// ReviewPayload is the interrupt payload, exactly seed 000 §7.1.
type ReviewPayload struct {
	Type             string   `json:"type"`
	EvaluationID     string   `json:"evaluation_id"`
	Reasons          []string `json:"reasons"`
	SuggestedActions []string `json:"suggested_actions"`
	ResumeToken      string   `json:"resume_token"`
}

// Decision is the resume input, seed 000 §7.2 (less the token, which the
// runner consumes), plus the edited scores of edit_scores.
type Decision struct {
	Decision string             `json:"decision"` // approve | reject | edit_scores
	Comment  string             `json:"comment"`
	Editor   Editor             `json:"editor"`
	Scores   map[string]float64 `json:"scores,omitempty"` // criterion id → score, for edit_scores
	At       time.Time          `json:"at,omitempty"`
}

// Editor identifies the reviewer.
type Editor struct {
	ReviewerID string `json:"reviewer_id"`
}

// Review decisions.
const (
	DecisionApprove    = "approve"
	DecisionReject     = "reject"
	DecisionEditScores = "edit_scores"
)

// Report is report_payload: what persist_result saves.
type Report struct {
	EvaluationID    string `json:"evaluation_id"`
	ProjectID       string `json:"project_id"`
	Project         string `json:"project"`
	SupplierID      string `json:"supplier_id"`
	Supplier        string `json:"supplier"`
	RulePackVersion string `json:"rule_pack_version"`
	ReportVersion   int    `json:"report_version"`
	Outcome         string `json:"outcome"` // passed | approved | rejected | scores_edited | disqualified
	// DisqualifiedBy lists the hard rules (ids) that disqualified the bid; their results,
	// with what was found and the evidence, are in RuleResults.
	DisqualifiedBy []string         `json:"disqualified_by,omitempty"`
	TotalScore     float64          `json:"total_score"`
	Rank           int              `json:"rank"`
	RankOf         int              `json:"rank_of"`
	Ranking        []RankEntry      `json:"ranking"`
	Criteria       []CriterionScore `json:"criteria"`
	RuleResults    []RuleResult     `json:"rule_results"`
	Citations      []Citation       `json:"citations"`
	Confidence     float64          `json:"confidence"`
	Coverage       float64          `json:"citation_coverage"`
	ReviewRequired bool             `json:"review_required"`
	ReviewReasons  []string         `json:"review_reasons"`
	Decision       string           `json:"decision,omitempty"`
	Comment        string           `json:"comment,omitempty"`
	ReviewerID     string           `json:"reviewer_id,omitempty"`
	ScoredBy       string           `json:"scored_by"`
	ScoredOffline  bool             `json:"scored_offline"`
}

// RankEntry is one supplier in the ranking.
type RankEntry struct {
	EvaluationID string  `json:"evaluation_id"`
	Supplier     string  `json:"supplier"`
	TotalScore   float64 `json:"total_score"`
	Rank         int     `json:"rank"`
}

// Citation is a chunk the report relies on.
type Citation struct {
	ChunkID  string `json:"chunk_id"`
	Document string `json:"document"`
	Text     string `json:"text"`
}

// ErrorEntry is one error in the state's history.
type ErrorEntry struct {
	At           time.Time `json:"at"`
	Node         string    `json:"node"`
	Class        string    `json:"class"`
	Code         string    `json:"code"`
	Message      string    `json:"message"`
	TraceID      string    `json:"trace_id"`
	Attempts     int       `json:"attempts"`
	CheckpointID string    `json:"checkpoint_id"`
}

// Input is what starts a run of an evaluation's thread: its identity, and every other channel
// at its zero value but the error history. A thread's channels outlive a run (as in
// LangGraph), so without this a run started again would show the last run's review
// decision, scores and report until its own nodes replaced them (and keep those its path
// does not reach: a bid disqualified this time kept last time's scores). The errors
// channel is the thread's history across runs (seed 004) and is kept.
func Input(tenantID, evaluationID, threadID, traceID string) json.RawMessage {
	b, _ := json.Marshal(State{TenantID: tenantID, EvaluationID: evaluationID, ThreadID: threadID, TraceID: traceID})
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		panic(err) // a State always encodes to an object
	}
	delete(m, "errors")
	b, _ = json.Marshal(m)
	return b
}

// Typed keys of the state's channels (checked against State when the package loads).
var (
	keyProjectID           = graph.KeyOf[State, string]("project_id")
	keySupplierID          = graph.KeyOf[State, string]("supplier_id")
	keyProject             = graph.KeyOf[State, Project]("project")
	keySupplier            = graph.KeyOf[State, Supplier]("supplier")
	keyRulePack            = graph.KeyOf[State, RulePack]("rule_pack")
	keyRulePackVersion     = graph.KeyOf[State, string]("rule_pack_version")
	keyQueryBundle         = graph.KeyOf[State, QueryBundle]("query_bundle")
	keyReportVersion       = graph.KeyOf[State, int]("report_version")
	keyStatus              = graph.KeyOf[State, string]("status")
	keyRetrievedChunks     = graph.KeyOf[State, []RetrievedChunk]("retrieved_chunks")
	keyEvidenceBundle      = graph.KeyOf[State, map[string]Evidence]("evidence_bundle")
	keyRuleResults         = graph.KeyOf[State, []RuleResult]("rule_results")
	keyCriteriaScores      = graph.KeyOf[State, []CriterionScore]("criteria_scores")
	keyTotalScore          = graph.KeyOf[State, float64]("total_score")
	keyConfidence          = graph.KeyOf[State, float64]("confidence")
	keyCitationCoverage    = graph.KeyOf[State, float64]("citation_coverage")
	keyScoredBy            = graph.KeyOf[State, string]("scored_by")
	keyScoredOffline       = graph.KeyOf[State, bool]("scored_offline")
	keyRequiresHumanReview = graph.KeyOf[State, bool]("requires_human_review")
	keyReviewReasons       = graph.KeyOf[State, []string]("review_reasons")
	keyHumanDecision       = graph.KeyOf[State, *Decision]("human_decision")
	keyHumanReviewPayload  = graph.KeyOf[State, *ReviewPayload]("human_review_payload")
	keyResumeToken         = graph.KeyOf[State, string]("resume_token")
	keyReportPayload       = graph.KeyOf[State, *Report]("report_payload")
	keyErrorClass          = graph.KeyOf[State, string]("error_class")
	keyRetryable           = graph.KeyOf[State, bool]("retryable")
	keyRetryCount          = graph.KeyOf[State, int]("retry_count")
	keyErrors              = graph.ItemsKeyOf[State, ErrorEntry]("errors")
)
