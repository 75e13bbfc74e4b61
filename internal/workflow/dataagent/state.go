// Package dataagent is the data agent of seed 003: an analyst asks a
// question in plain English or Chinese; the agent recognises the intent,
// recalls business notes and the schema, plans, writes and checks SQL, runs
// it read-only, optionally analyses the result in sandboxed Python with a
// chart, asks a human to approve the plan when configured, and streams a
// report. The graph has the seed's 16 nodes and 11 dispatchers:
//
//	START → IntentRecognition ─(not analysis)→ END
//	      → EvidenceRecall → QueryEnhance → SchemaRecall → TableRelation
//	      → FeasibilityAssessment ─(cannot answer)→ ReportGenerator
//	      → Planner → PlanExecutor ─┬→ SqlGenerate → SemanticConsistency → SqlExecute → PlanExecutor
//	                                ├→ PythonGenerate → PythonExecute → PythonAnalyze → PlanExecutor
//	                                ├→ HumanFeedback → PlanExecutor | Planner | ReportGenerator
//	                                └→ ReportGenerator → END
//
// Every state key is last-value (the seed's REPLACE), reset when a turn
// begins, except the multi-turn context (beginTurn / appendPlannerChunk /
// finishTurn), which a follow-up on the same thread reads.
//
// Model calls are llm.Tasks; the offline provider answers them with
// package nlsql, which computes from the question, the catalog and the
// notes. The package imports internal/graph, internal/llm,
// internal/workflow, internal/fault, internal/sandbox (its job and result
// types), nlsql and pg_query_go (the PostgreSQL parser); the database and
// the sandbox are reached through the small interfaces of Deps.
package dataagent

import (
	"time"

	"weft/internal/graph"
	"weft/internal/workflow"
	"weft/internal/workflow/dataagent/nlsql"
)

// Name is the workflow's registry name.
const Name = "data_agent"

// State is the graph state.
type State struct {
	// Input is the analyst's message (the seed's INPUT_KEY).
	Input string `json:"input"`
	// Schema is the PostgreSQL schema the agent analyses.
	Schema string `json:"schema"`
	// HumanReviewEnabled asks a human to approve each plan (the seed's
	// HUMAN_REVIEW_ENABLED).
	HumanReviewEnabled bool `json:"human_review_enabled"`

	// Context is the multi-turn context, kept across the thread's turns.
	Context Conversation `json:"context" weft:"custom"`

	// The turn's keys, every one replaced by the node that writes it.
	Turn        int           `json:"turn"`
	AsOf        time.Time     `json:"as_of"`
	Intent      nlsql.Intent  `json:"intent"`
	Evidence    []nlsql.Note  `json:"evidence"`
	Query       Query         `json:"query_enhance_output"`
	Recalled    []string      `json:"schema_recall_output"`
	Catalog     nlsql.Catalog `json:"catalog"`
	Relation    *Relation     `json:"table_relation_output"`
	RelTries    int           `json:"table_relation_attempts"`
	Feasibility *Feasibility  `json:"feasibility_assessment_output"`
	Plan        *Plan         `json:"plan"`
	PlanVersion int           `json:"plan_version"`
	PlanError   string        `json:"plan_validation_error"`
	PlanTries   int           `json:"plan_attempts"`
	Feedback    []Feedback    `json:"human_feedback"`
	Approved    bool          `json:"plan_approved"`
	Steps       []StepRun     `json:"steps"`
	Current     int           `json:"current_step"`
	SQL         *SQLDraft     `json:"sql_generate_output"`
	SQLTries    int           `json:"sql_generate_count"`
	Consistency *Consistency  `json:"semantic_consistency_output"`
	PythonCode  string        `json:"python_generate_output"`
	Report      *Report       `json:"result"`
	Status      string        `json:"status"`
	Reply       string        `json:"reply"`
}

// Statuses a turn reports.
const (
	StatusRunning       = "running"
	StatusWaitingReview = "waiting_review"
	StatusAnswered      = "answered"
	StatusNotAnalysis   = "not_analysis"
	StatusCannotAnswer  = "cannot_answer"
	StatusFailed        = "failed"
	StatusStopped       = "stopped" // the plan was rejected more often than allowed
)

// Query is the question the turn answers: Parts are the question read
// against the catalog (a follow-up adds itself to the previous question's
// parts), Standalone the same as one sentence, for people.
type Query struct {
	Parts      []string `json:"parts"`
	Standalone string   `json:"standalone"`
	FollowUp   bool     `json:"follow_up"`
	// Lenient are the indexes of the parts that are a reviewer's feedback
	// an earlier turn applied (read like feedback: nlsql.Question.Lenient).
	Lenient []int `json:"lenient,omitempty"`
}

// Relation is the recalled schema with its joins (the seed's
// TABLE_RELATION_OUTPUT, a SchemaDTO).
type Relation struct {
	Tables    []string         `json:"tables"`
	Relations []nlsql.Relation `json:"relations"`
}

// Feasibility is whether the question can be answered from the schema.
type Feasibility struct {
	Feasible bool     `json:"feasible"`
	Missing  []string `json:"missing,omitempty"`
	Reasons  []string `json:"reasons,omitempty"`
	// Definitions are the notes the answer relies on, as understood.
	Definitions []nlsql.Definition `json:"definitions,omitempty"`
}

// Plan is the Planner's plan: ordered steps, each naming its tool.
type Plan struct {
	Thought string     `json:"thought"`
	Steps   []PlanStep `json:"steps"`
}

// Tools a plan step may name.
const (
	ToolSQL    = "sql"
	ToolPython = "python"
	ToolReport = "report"
)

// PlanStep is one step of a plan.
type PlanStep struct {
	Step        int    `json:"step"`
	Tool        string `json:"tool"`
	Instruction string `json:"instruction"`
	// SQLDraft is the query a sql step expects to run, for the reviewer.
	SQLDraft string `json:"sql_draft,omitempty"`
}

// Step statuses.
const (
	StepPending  = "pending"
	StepRunning  = "running"
	StepDone     = "done"
	StepFailed   = "failed"
	StepDegraded = "degraded" // a python step that failed or could not run: the report goes on without it
	StepSkipped  = "skipped"
)

// StepRun is a plan step as it runs.
type StepRun struct {
	PlanStep
	Status   string     `json:"status"`
	SQL      string     `json:"sql,omitempty"`
	Attempts int        `json:"attempts,omitempty"`
	Errors   []string   `json:"errors,omitempty"` // each failed attempt's reason, in order
	Result   *ResultSet `json:"result,omitempty"`
	Python   *PythonRun `json:"python,omitempty"`
	Findings []string   `json:"findings,omitempty"`
	Reason   string     `json:"reason,omitempty"` // why it failed, degraded or was skipped
}

// ResultSet is a query's result. Cells are PostgreSQL's text for each
// value; a NULL is "".
type ResultSet struct {
	Columns   []ResultColumn `json:"columns"`
	Rows      [][]string     `json:"rows"`
	Truncated bool           `json:"truncated,omitempty"` // more rows than the limit; Rows holds the first ones
	Limit     int            `json:"limit,omitempty"`
	// Total, when set, is the result's row count where Rows holds only its
	// first rows (a finished turn's record).
	Total int `json:"total,omitempty"`
}

// RowCount is how many rows the query returned (up to its limit).
func (r ResultSet) RowCount() int { return max(r.Total, len(r.Rows)) }

// preview is the result with its first n rows only.
func (r ResultSet) preview(n int) ResultSet {
	if len(r.Rows) <= n {
		return r
	}
	r.Total = r.RowCount()
	r.Rows = r.Rows[:n]
	return r
}

// ResultColumn is a result column: its name and kind (number, text, time,
// bool, other).
type ResultColumn struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

// SQLDraft is SqlGenerate's output for the current step.
type SQLDraft struct {
	SQL         string `json:"sql"`
	Explanation string `json:"explanation,omitempty"`
	Error       string `json:"error,omitempty"` // why no SQL was produced
}

// Consistency is SemanticConsistency's verdict on the current SQL.
type Consistency struct {
	Passed  bool     `json:"passed"`
	Reasons []string `json:"reasons,omitempty"`
}

// PythonRun is PythonExecute's output.
type PythonRun struct {
	Stdout   string                `json:"stdout"`
	Stderr   string                `json:"stderr,omitempty"`
	ExitCode int                   `json:"exit_code"`
	Chart    *workflow.ArtifactRef `json:"chart,omitempty"`
	Error    string                `json:"error,omitempty"`
}

// Feedback is a reviewer's decision on a plan.
type Feedback struct {
	PlanVersion int    `json:"plan_version"`
	Decision    string `json:"decision"` // approve or reject
	Feedback    string `json:"feedback,omitempty"`
	Reviewer    string `json:"reviewer,omitempty"`
}

// Report is ReportGenerator's output (the seed's RESULT).
type Report struct {
	Turn      int                    `json:"turn"`
	Status    string                 `json:"status"`
	Language  string                 `json:"language"`
	Question  string                 `json:"question"`
	Summary   string                 `json:"summary"`
	Markdown  string                 `json:"markdown"`
	Artifacts []workflow.ArtifactRef `json:"artifacts,omitempty"`
}

// Keys are the state's channels, typed.
var (
	keyInput       = graph.KeyOf[State, string]("input")
	keySchema      = graph.KeyOf[State, string]("schema")
	keyReview      = graph.KeyOf[State, bool]("human_review_enabled")
	keyContext     = graph.KeyOf[State, Conversation]("context")
	keyTurn        = graph.KeyOf[State, int]("turn")
	keyAsOf        = graph.KeyOf[State, time.Time]("as_of")
	keyIntent      = graph.KeyOf[State, nlsql.Intent]("intent")
	keyEvidence    = graph.KeyOf[State, []nlsql.Note]("evidence")
	keyQuery       = graph.KeyOf[State, Query]("query_enhance_output")
	keyRecalled    = graph.KeyOf[State, []string]("schema_recall_output")
	keyCatalog     = graph.KeyOf[State, nlsql.Catalog]("catalog")
	keyRelation    = graph.KeyOf[State, *Relation]("table_relation_output")
	keyRelTries    = graph.KeyOf[State, int]("table_relation_attempts")
	keyFeasibility = graph.KeyOf[State, *Feasibility]("feasibility_assessment_output")
	keyPlan        = graph.KeyOf[State, *Plan]("plan")
	keyPlanVersion = graph.KeyOf[State, int]("plan_version")
	keyPlanError   = graph.KeyOf[State, string]("plan_validation_error")
	keyPlanTries   = graph.KeyOf[State, int]("plan_attempts")
	keyFeedback    = graph.KeyOf[State, []Feedback]("human_feedback")
	keyApproved    = graph.KeyOf[State, bool]("plan_approved")
	keySteps       = graph.KeyOf[State, []StepRun]("steps")
	keyCurrent     = graph.KeyOf[State, int]("current_step")
	keySQL         = graph.KeyOf[State, *SQLDraft]("sql_generate_output")
	keySQLTries    = graph.KeyOf[State, int]("sql_generate_count")
	keyConsistency = graph.KeyOf[State, *Consistency]("semantic_consistency_output")
	keyPythonCode  = graph.KeyOf[State, string]("python_generate_output")
	keyReport      = graph.KeyOf[State, *Report]("result")
	keyStatus      = graph.KeyOf[State, string]("status")
	keyReply       = graph.KeyOf[State, string]("reply")
)

// Input is the write that starts a turn: the message, the schema it is
// about and whether a human reviews the plan.
func Input(message, schema string, humanReview bool) []graph.Write {
	return []graph.Write{keyInput.Set(message), keySchema.Set(schema), keyReview.Set(humanReview)}
}

// current returns the step being worked on.
func (s State) current() (StepRun, bool) {
	if s.Current < 0 || s.Current >= len(s.Steps) {
		return StepRun{}, false
	}
	return s.Steps[s.Current], true
}

// withStep returns the steps with the current one replaced by st.
func (s State) withStep(st StepRun) []StepRun {
	out := append([]StepRun(nil), s.Steps...)
	if s.Current >= 0 && s.Current < len(out) {
		out[s.Current] = st
	}
	return out
}

// rejections counts the turn's rejected plans.
func (s State) rejections() int { return rejections(s.Feedback) }
