package dataagent

import (
	"context"
	"errors"
	"fmt"
	"time"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/llm"
	"weft/internal/sandbox"
	"weft/internal/workflow"
	"weft/internal/workflow/dataagent/nlsql"
)

// Node names, as in the seed.
const (
	NodeIntentRecognition     = "IntentRecognition"
	NodeEvidenceRecall        = "EvidenceRecall"
	NodeQueryEnhance          = "QueryEnhance"
	NodeSchemaRecall          = "SchemaRecall"
	NodeTableRelation         = "TableRelation"
	NodeFeasibilityAssessment = "FeasibilityAssessment"
	NodePlanner               = "Planner"
	NodePlanExecutor          = "PlanExecutor"
	NodeSqlGenerate           = "SqlGenerate"
	NodeSemanticConsistency   = "SemanticConsistency"
	NodeSqlExecute            = "SqlExecute"
	NodePythonGenerate        = "PythonGenerate"
	NodePythonExecute         = "PythonExecute"
	NodePythonAnalyze         = "PythonAnalyze"
	NodeHumanFeedback         = "HumanFeedback"
	NodeReportGenerator       = "ReportGenerator"
)

// Path is the main path of a turn, for progress bars.
var Path = []string{NodeIntentRecognition, NodeEvidenceRecall, NodeQueryEnhance, NodeSchemaRecall, NodeTableRelation,
	NodeFeasibilityAssessment, NodePlanner, NodePlanExecutor, NodeSqlGenerate, NodeSemanticConsistency, NodeSqlExecute,
	NodeReportGenerator}

// CatalogReader reads a schema's catalog: tables, columns with their types,
// comments and (for small text columns) values, primary and foreign keys.
type CatalogReader interface {
	ReadCatalog(ctx context.Context, schema string) (nlsql.Catalog, error)
}

// EvidenceSearch finds the business notes of a schema that match a text,
// best first.
type EvidenceSearch interface {
	SearchNotes(ctx context.Context, schema, query string, k int) ([]nlsql.Note, error)
}

// SQLExecutor runs one read-only SELECT on a schema. An error the query
// itself causes (refused, invalid, a permission, the timeout) is a
// *QueryError; any other error is the executor's own.
type SQLExecutor interface {
	Query(ctx context.Context, schema, sql string) (ResultSet, error)
}

// QueryError is a query's own failure: it goes back to SqlGenerate.
type QueryError struct {
	Code    string // SQLSTATE, or "refused" for a query refused before it ran
	Message string
}

func (e *QueryError) Error() string { return fmt.Sprintf("query failed (%s): %s", e.Code, e.Message) }

// PythonRunner runs Python in a sandbox; *sandbox.Runner is one.
type PythonRunner interface {
	Run(ctx context.Context, job sandbox.Job) (sandbox.Result, error)
}

// Deps are the workflow's collaborators.
type Deps struct {
	Catalog  CatalogReader
	Evidence EvidenceSearch
	SQL      SQLExecutor
	// Python runs the analysis steps; nil plans none.
	Python       PythonRunner
	LLM          llm.Provider
	Artifacts    workflow.ArtifactStore
	Checkpointer graph.Checkpointer
	Now          func() time.Time
	// Limits (defaults 3): plans refused by PlanExecutor before the turn
	// gives up, SQL attempts per step, table-relation attempts.
	MaxPlanAttempts int
	MaxSQLAttempts  int
	MaxRelation     int
	// EvidenceK is how many notes EvidenceRecall keeps (default 8).
	EvidenceK int
}

type wf struct{ d Deps }

// New compiles the data agent's graph.
func New(d Deps) (*graph.Graph[State], error) {
	if d.Catalog == nil || d.SQL == nil || d.Evidence == nil || d.LLM == nil || d.Artifacts == nil {
		return nil, errors.New("dataagent: Catalog, Evidence, SQL, LLM and Artifacts are required")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	for _, p := range []*int{&d.MaxPlanAttempts, &d.MaxSQLAttempts, &d.MaxRelation} {
		if *p <= 0 {
			*p = 3
		}
	}
	if d.EvidenceK <= 0 {
		d.EvidenceK = 8
	}
	w := &wf{d: d}
	// A node's transient failure (the database, the model, the sandbox's
	// host) is retried twice before the run fails; the others are not.
	retry := graph.WithRetry[State](graph.RetryPolicy{InitialInterval: 200 * time.Millisecond, MaxAttempts: 3,
		RetryOn: func(err error) bool {
			c, _ := fault.Classify(err)
			return c == fault.Transient && !errors.Is(err, context.Canceled)
		}})
	b := graph.New[State]()
	b.Reducer(keyContext.Name(), graph.ReducerFunc(reduceConversation))
	for _, n := range []struct {
		name string
		fn   graph.NodeFunc[State]
	}{
		{NodeIntentRecognition, w.intentRecognition}, {NodeEvidenceRecall, w.evidenceRecall}, {NodeQueryEnhance, w.queryEnhance},
		{NodeSchemaRecall, w.schemaRecall}, {NodeTableRelation, w.tableRelation}, {NodeFeasibilityAssessment, w.feasibility},
		{NodePlanner, w.planner}, {NodePlanExecutor, w.planExecutor}, {NodeSqlGenerate, w.sqlGenerate},
		{NodeSemanticConsistency, w.semanticConsistency}, {NodeSqlExecute, w.sqlExecute}, {NodePythonGenerate, w.pythonGenerate},
		{NodePythonExecute, w.pythonExecute}, {NodePythonAnalyze, w.pythonAnalyze}, {NodeHumanFeedback, w.humanFeedback},
		{NodeReportGenerator, w.reportGenerator},
	} {
		b.AddNode(n.name, n.fn, retry)
	}
	b.AddEdge(graph.START, NodeIntentRecognition)
	b.AddEdge(NodeEvidenceRecall, NodeQueryEnhance)
	b.AddEdge(NodePlanner, NodePlanExecutor)
	b.AddEdge(NodePythonGenerate, NodePythonExecute)
	b.AddEdge(NodePythonAnalyze, NodePlanExecutor)
	b.AddEdge(NodeReportGenerator, graph.END)
	for _, dsp := range w.dispatchers() {
		b.AddConditionalEdges(dsp.from, graph.Pick(dsp.route), dsp.paths)
	}
	opts := []graph.CompileOption{graph.WithName(Name), graph.WithRecursionLimit(120)}
	if d.Checkpointer != nil {
		opts = append(opts, graph.WithCheckpointer(d.Checkpointer))
	}
	return b.Compile(opts...)
}

// dispatcher is one of the seed's 11 dispatchers: a conditional edge.
type dispatcher struct {
	name  string
	from  string
	route func(State) string
	paths map[string]string
}

// Dispatchers names the seed's dispatchers with the node each routes from.
func Dispatchers() map[string]string {
	out := map[string]string{}
	for _, d := range (&wf{}).dispatchers() {
		out[d.name] = d.from
	}
	return out
}

func (w *wf) dispatchers() []dispatcher {
	return []dispatcher{
		{"IntentRecognitionDispatcher", NodeIntentRecognition, func(s State) string {
			return ifElse(s.Intent.Analysis, "analysis", "end")
		}, map[string]string{"analysis": NodeEvidenceRecall, "end": graph.END}},
		{"QueryEnhanceDispatcher", NodeQueryEnhance, func(s State) string {
			return ifElse(len(s.Query.Parts) > 0, "recall", "end")
		}, map[string]string{"recall": NodeSchemaRecall, "end": graph.END}},
		{"SchemaRecallDispatcher", NodeSchemaRecall, func(s State) string {
			return ifElse(len(s.Recalled) > 0, "relate", "assess")
		}, map[string]string{"relate": NodeTableRelation, "assess": NodeFeasibilityAssessment}},
		{"TableRelationDispatcher", NodeTableRelation, func(s State) string {
			return ifElse(s.Relation == nil, "retry", "assess")
		}, map[string]string{"retry": NodeTableRelation, "assess": NodeFeasibilityAssessment}},
		{"FeasibilityAssessmentDispatcher", NodeFeasibilityAssessment, func(s State) string {
			return ifElse(s.Feasibility != nil && s.Feasibility.Feasible, "plan", "report")
		}, map[string]string{"plan": NodePlanner, "report": NodeReportGenerator}},
		{"PlanExecutorDispatcher", NodePlanExecutor, w.routePlan, map[string]string{"replan": NodePlanner,
			ToolSQL: NodeSqlGenerate, ToolPython: NodePythonGenerate, ToolReport: NodeReportGenerator, "human": NodeHumanFeedback}},
		{"SqlGenerateDispatcher", NodeSqlGenerate, func(s State) string {
			switch {
			case s.SQL != nil && s.SQL.SQL != "":
				return "check"
			case s.SQLTries < w.d.MaxSQLAttempts:
				return "retry"
			}
			return "give_up"
		}, map[string]string{"check": NodeSemanticConsistency, "retry": NodeSqlGenerate, "give_up": NodePlanExecutor}},
		{"SemanticConsistenceDispatcher", NodeSemanticConsistency, func(s State) string {
			switch {
			case s.Consistency != nil && s.Consistency.Passed:
				return "execute"
			case s.SQLTries < w.d.MaxSQLAttempts:
				return "regenerate"
			}
			return "give_up"
		}, map[string]string{"execute": NodeSqlExecute, "regenerate": NodeSqlGenerate, "give_up": NodePlanExecutor}},
		{"SQLExecutorDispatcher", NodeSqlExecute, func(s State) string {
			st, _ := s.current()
			return ifElse(st.Status == StepRunning, "regenerate", "next")
		}, map[string]string{"regenerate": NodeSqlGenerate, "next": NodePlanExecutor}},
		{"HumanFeedbackDispatcher", NodeHumanFeedback, func(s State) string {
			switch {
			case s.Approved:
				return "approved"
			case s.rejections() > MaxFeedbackRounds:
				return "over_limit"
			}
			return "rejected"
		}, map[string]string{"approved": NodePlanExecutor, "rejected": NodePlanner, "over_limit": NodeReportGenerator}},
		{"PythonExecutorDispatcher", NodePythonExecute, func(s State) string {
			st, _ := s.current()
			return ifElse(st.Status == StepDegraded, "degraded", "analyze")
		}, map[string]string{"analyze": NodePythonAnalyze, "degraded": NodePlanExecutor}},
	}
}

// routePlan is PlanExecutorDispatcher: an invalid plan back to the Planner
// (or, past the limit, to the report), a plan awaiting review to
// HumanFeedback, else the current step's tool.
func (w *wf) routePlan(s State) string {
	switch {
	case s.PlanError != "" && s.PlanTries < w.d.MaxPlanAttempts:
		return "replan"
	case s.PlanError != "":
		return ToolReport
	case s.HumanReviewEnabled && !s.Approved:
		return "human"
	}
	st, ok := s.current()
	if !ok {
		return ToolReport
	}
	return st.Tool
}

func ifElse(c bool, a, b string) string {
	if c {
		return a
	}
	return b
}
