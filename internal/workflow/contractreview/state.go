package contractreview

import (
	"time"

	"weft/internal/graph"
	"weft/internal/workflow"
)

// ReviewGraphState is the state of one contract review: the seed's
// ReviewGraphState field for field (JSON names as in the seed), plus the few
// channels the real nodes need (marked "beyond the seed").
type ReviewGraphState struct {
	// Task information, set at the start and read only afterwards.
	TaskID        string `json:"task_id"`
	OurParty      string `json:"our_party"`
	MaterialType  string `json:"material_type"`
	Language      string `json:"language"` // "en" or "zh"; detected from the text when empty
	DomainID      string `json:"domain_id,omitempty"`
	DomainSubtype string `json:"domain_subtype,omitempty"`

	// Documents: the contract (role "primary") and any others.
	Documents        []TaskDocument     `json:"documents"`
	PrimaryStructure *DocumentStructure `json:"primary_structure,omitempty"`

	// The checklist, from the domain or generated from the top-level clauses.
	ReviewChecklist    []ChecklistItem `json:"review_checklist"`
	CurrentClauseIndex int             `json:"current_clause_index"`

	// Findings is the scratchpad, keyed by clause id: a merge channel, so
	// save_clause writes only its own clause's entry.
	Findings     map[string]ClauseFindings `json:"findings" weft:"merge"`
	GlobalIssues []string                  `json:"global_issues" weft:"append"`

	// The clause under review.
	CurrentClauseID   string         `json:"current_clause_id"`
	CurrentClauseText string         `json:"current_clause_text"`
	CurrentRisks      []RiskPoint    `json:"current_risks"`
	CurrentDiffs      []DocumentDiff `json:"current_diffs"`
	// CurrentFacts are what the clause states that later clauses may use
	// (the contract price, the parties): beyond the seed.
	CurrentFacts []Fact `json:"current_facts"`

	// Loop control. ClauseRetryCount counts the regenerations after a failed
	// validation, so a clause gets 1 + MaxRetries attempts.
	ValidationResult string `json:"validation_result"` // "pass" / "fail"
	ClauseRetryCount int    `json:"clause_retry_count"`
	MaxRetries       int    `json:"max_retries"`
	// ValidationIssues say why the last validation failed, for the next
	// generation: beyond the seed.
	ValidationIssues []ValidationIssue `json:"validation_issues"`

	// Human in the loop. PendingDiffs are the diffs of the paused clause that
	// wait for a decision; UserDecisions (diff id → "approve"/"reject") and
	// UserFeedback (diff id → text) are injected with update_state.
	PendingDiffs  []DocumentDiff    `json:"pending_diffs"`
	UserDecisions map[string]string `json:"user_decisions"`
	UserFeedback  map[string]string `json:"user_feedback"`
	// DecidedBy and DecidedAt, written with the decisions, are the reviewer
	// and the time of the decision: the author and date of the tracked
	// changes. Beyond the seed.
	DecidedBy string    `json:"decided_by,omitempty"`
	DecidedAt time.Time `json:"decided_at,omitzero"`

	// The results.
	AllRisks     []RiskPoint            `json:"all_risks" weft:"append"`
	AllDiffs     []DocumentDiff         `json:"all_diffs" weft:"append"` // approved diffs only
	AllActions   []ActionRecommendation `json:"all_actions" weft:"append"`
	SummaryNotes string                 `json:"summary_notes"`
	// Summary holds the counts behind SummaryNotes; Artifacts the files
	// summarize wrote; Provider and Offline name the model used. Beyond the seed.
	Summary   *Summary               `json:"summary,omitempty"`
	Artifacts []workflow.ArtifactRef `json:"artifacts"`
	Provider  string                 `json:"provider,omitempty"`
	Offline   bool                   `json:"offline,omitempty"`

	// Flow control.
	Error      string `json:"error,omitempty"`
	IsComplete bool   `json:"is_complete"`
}

// TaskDocument is a document of the review. The primary one is the contract.
type TaskDocument struct {
	DocumentID string `json:"document_id"`
	Filename   string `json:"filename"`
	Role       string `json:"role"` // "primary", or "reference"
	Text       string `json:"text"`
}

// RolePrimary marks the contract under review.
const RolePrimary = "primary"

// DocumentStructure is the contract's clause structure (offsets index the
// primary document's text).
type DocumentStructure struct {
	DocumentID string   `json:"document_id"`
	Style      string   `json:"style"` // "fidic", "article", "chinese" or "none"
	Clauses    []Clause `json:"clauses"`
}

// Clause is one numbered clause. Offsets are byte offsets into the document
// text: the heading starts at HeadingStart; the body (after the number and
// title) runs from BodyStart to BodyEnd, where the next heading of any level
// starts; End is where the clause with all its sub-clauses ends.
type Clause struct {
	ID           string `json:"clause_id"` // "14.2", "20", "14-1" (第十四条之一), "14(1)"
	Label        string `json:"label"`     // as written: "Sub-Clause 14.2", "第十四条之一", "（一）"
	Title        string `json:"title"`
	Level        int    `json:"level"` // 1 for top-level clauses
	Parent       string `json:"parent,omitempty"`
	HeadingStart int    `json:"heading_start"`
	BodyStart    int    `json:"body_start"`
	BodyEnd      int    `json:"body_end"`
	End          int    `json:"end"`
}

// ChecklistItem is one clause to review and the checks it needs.
type ChecklistItem struct {
	ClauseID       string   `json:"clause_id"`
	ClauseName     string   `json:"clause_name"`
	ClauseNameEn   string   `json:"clause_name_en,omitempty"`
	Priority       string   `json:"priority"` // critical, high, medium, low
	RequiredSkills []string `json:"required_skills"`
	Description    string   `json:"description"`
	// Checks name rules (Rule* constants) whose subject must be present in
	// the clause: a required check that finds nothing is itself a risk (a
	// limitation-of-liability clause with no cap). Every rule runs on every
	// clause regardless.
	Checks []string `json:"checks,omitempty"`
}

// Span is a byte range of a clause's text: text[Start:End].
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Severity levels, highest first.
const (
	SeverityCritical = "critical"
	SeverityHigh     = "high"
	SeverityMedium   = "medium"
	SeverityLow      = "low"
)

// Severities lists the levels, highest first.
var Severities = []string{SeverityCritical, SeverityHigh, SeverityMedium, SeverityLow}

// RiskPoint is one risk found in a clause, citing its span of the clause
// text (nil when the risk is an absence, such as a missing clause).
type RiskPoint struct {
	RiskID      string `json:"risk_id"`
	ClauseID    string `json:"clause_id"`
	Rule        string `json:"rule"` // a Rule* constant, or "model" for the provider's
	Severity    string `json:"severity"`
	Description string `json:"description"`
	Span        *Span  `json:"span,omitempty"`
	Excerpt     string `json:"excerpt,omitempty"` // the clause text at Span
	// Source is "rule", or the provider's name for a risk the model found.
	Source string `json:"source"`
	// Uses lists the scratchpad facts the risk relied on ("1.1: contract_price").
	Uses []string `json:"uses,omitempty"`
}

// Diff status values.
const (
	StatusProposed = "proposed" // waiting for validation or a decision
	StatusApproved = "approved"
	StatusRejected = "rejected"
)

// DocumentDiff is a proposed change to a clause: replace Original (at Span
// of the clause text) with Suggested.
type DocumentDiff struct {
	DiffID    string `json:"diff_id"`
	ClauseID  string `json:"clause_id"`
	RiskID    string `json:"risk_id"`
	Span      Span   `json:"span"`
	Original  string `json:"original"`
	Suggested string `json:"suggested"`
	Reason    string `json:"reason"`
	Status    string `json:"status"`
	// Round is 0 for a first proposal, 1 for one re-proposed after a
	// rejection with feedback; Revises names the rejected diff and Feedback
	// is what the reviewer said. RevisedBy, on the rejected diff, names its
	// re-proposal.
	Round     int    `json:"round,omitempty"`
	Revises   string `json:"revises,omitempty"`
	RevisedBy string `json:"revised_by,omitempty"`
	Feedback  string `json:"feedback,omitempty"`
	// DecidedBy and DecidedAt record the reviewer's decision.
	DecidedBy string    `json:"decided_by,omitempty"`
	DecidedAt time.Time `json:"decided_at,omitzero"`
}

// Fact is something a clause states that later clauses use: the scratchpad's content.
type Fact struct {
	Key      string  `json:"key"` // FactContractPrice, "party:contractor", "term:Works"
	Value    string  `json:"value"`
	Amount   float64 `json:"amount,omitempty"`
	Currency string  `json:"currency,omitempty"`
	ClauseID string  `json:"clause_id"`
	Span     Span    `json:"span"`
}

// Fact keys.
const (
	FactContractPrice = "contract_price"
	FactPartyPrefix   = "party:" // + "contractor" / "employer": the party's name
	FactTermPrefix    = "term:"  // + a defined term: its definition
)

// ValidationIssue is why one proposed diff failed validation.
type ValidationIssue struct {
	DiffID string `json:"diff_id"`
	RiskID string `json:"risk_id"`
	Check  string `json:"check"` // CheckSpan, CheckWeakens, CheckEmpty
	Detail string `json:"detail"`
}

// Validation checks.
const (
	CheckSpan    = "span_unique"
	CheckWeakens = "not_weaker"
	CheckEmpty   = "not_empty"
)

// ClauseFindings is the scratchpad entry of a reviewed clause.
type ClauseFindings struct {
	ClauseID   string         `json:"clause_id"`
	ClauseName string         `json:"clause_name,omitempty"`
	Risks      []RiskPoint    `json:"risks"`
	Diffs      []DocumentDiff `json:"diffs"`    // approved
	Rejected   []DocumentDiff `json:"rejected"` // rejected by the reviewer
	Proposed   int            `json:"proposed"` // diffs put to the reviewer, re-proposals included
	Facts      []Fact         `json:"facts"`
	Retries    int            `json:"retries"`
	// SkippedAfterRetries: validation still failed after MaxRetries
	// regenerations, so the clause was saved with its risks and no diffs.
	SkippedAfterRetries bool `json:"skipped_after_retries,omitempty"`
	Missing             bool `json:"missing,omitempty"` // the checklist's clause is not in the contract
	Completed           bool `json:"completed"`
}

// ActionRecommendation is what to do about a risk that no approved change answers.
type ActionRecommendation struct {
	ClauseID string `json:"clause_id"`
	RiskID   string `json:"risk_id"`
	Priority string `json:"priority"`
	Action   string `json:"action"`
}

// Summary is the counts of a finished review.
type Summary struct {
	ClausesReviewed int            `json:"clauses_reviewed"`
	RisksBySeverity map[string]int `json:"risks_by_severity"`
	Risks           int            `json:"risks"`
	DiffsProposed   int            `json:"diffs_proposed"`
	DiffsApproved   int            `json:"diffs_approved"`
	DiffsRejected   int            `json:"diffs_rejected"`
	ClausesSkipped  []string       `json:"clauses_skipped"` // after retries
	ClausesMissing  []string       `json:"clauses_missing"`
	Reviewers       []string       `json:"reviewers,omitempty"`
}

type st = ReviewGraphState

// The state's channels, as typed keys (checked when the package loads).
var (
	keyTaskID             = graph.KeyOf[st, string]("task_id")
	keyOurParty           = graph.KeyOf[st, string]("our_party")
	keyMaterialType       = graph.KeyOf[st, string]("material_type")
	keyLanguage           = graph.KeyOf[st, string]("language")
	keyDomainID           = graph.KeyOf[st, string]("domain_id")
	keyDomainSubtype      = graph.KeyOf[st, string]("domain_subtype")
	keyDocuments          = graph.KeyOf[st, []TaskDocument]("documents")
	keyPrimaryStructure   = graph.KeyOf[st, *DocumentStructure]("primary_structure")
	keyReviewChecklist    = graph.KeyOf[st, []ChecklistItem]("review_checklist")
	keyCurrentClauseIndex = graph.KeyOf[st, int]("current_clause_index")
	keyFindings           = graph.KeyOf[st, map[string]ClauseFindings]("findings")
	keyGlobalIssues       = graph.KeyOf[st, []string]("global_issues")
	keyCurrentClauseID    = graph.KeyOf[st, string]("current_clause_id")
	keyCurrentClauseText  = graph.KeyOf[st, string]("current_clause_text")
	keyCurrentRisks       = graph.KeyOf[st, []RiskPoint]("current_risks")
	keyCurrentDiffs       = graph.KeyOf[st, []DocumentDiff]("current_diffs")
	keyCurrentFacts       = graph.KeyOf[st, []Fact]("current_facts")
	keyValidationResult   = graph.KeyOf[st, string]("validation_result")
	keyClauseRetryCount   = graph.KeyOf[st, int]("clause_retry_count")
	keyMaxRetries         = graph.KeyOf[st, int]("max_retries")
	keyValidationIssues   = graph.KeyOf[st, []ValidationIssue]("validation_issues")
	keyPendingDiffs       = graph.KeyOf[st, []DocumentDiff]("pending_diffs")
	keyUserDecisions      = graph.KeyOf[st, map[string]string]("user_decisions")
	keyUserFeedback       = graph.KeyOf[st, map[string]string]("user_feedback")
	keyDecidedBy          = graph.KeyOf[st, string]("decided_by")
	keyDecidedAt          = graph.KeyOf[st, time.Time]("decided_at")
	keyAllRisks           = graph.KeyOf[st, []RiskPoint]("all_risks")
	keyAllDiffs           = graph.KeyOf[st, []DocumentDiff]("all_diffs")
	keyAllActions         = graph.KeyOf[st, []ActionRecommendation]("all_actions")
	keySummaryNotes       = graph.KeyOf[st, string]("summary_notes")
	keySummary            = graph.KeyOf[st, *Summary]("summary")
	keyArtifacts          = graph.KeyOf[st, []workflow.ArtifactRef]("artifacts")
	keyProvider           = graph.KeyOf[st, string]("provider")
	keyOffline            = graph.KeyOf[st, bool]("offline")
	keyError              = graph.KeyOf[st, string]("error")
	keyIsComplete         = graph.KeyOf[st, bool]("is_complete")
)
