package dataagent_test

import (
	"maps"
	"slices"
	"testing"

	"weft/internal/llm"
	"weft/internal/workflow/dataagent"
	"weft/internal/workflow/workflowtest"
)

// The graph has the seed's 16 nodes and 11 dispatchers, by the seed's names.
func TestSeedStructure(t *testing.T) {
	t.Parallel()
	g, err := dataagent.New(dataagent.Deps{Catalog: nopCatalog{}, Evidence: nopEvidence{}, SQL: nopSQL{}, LLM: llm.NewOffline(),
		Artifacts: workflowtest.NewArtifacts()})
	if err != nil {
		t.Fatal(err)
	}
	nodes := []string{"IntentRecognition", "EvidenceRecall", "QueryEnhance", "SchemaRecall", "TableRelation", "FeasibilityAssessment",
		"Planner", "PlanExecutor", "SqlGenerate", "SemanticConsistency", "SqlExecute", "PythonGenerate", "PythonExecute",
		"PythonAnalyze", "HumanFeedback", "ReportGenerator"}
	got := g.Nodes()
	slices.Sort(got)
	slices.Sort(nodes)
	if !slices.Equal(got, nodes) {
		t.Errorf("nodes = %v, want the seed's %v", got, nodes)
	}
	dispatchers := []string{"IntentRecognitionDispatcher", "QueryEnhanceDispatcher", "SchemaRecallDispatcher", "TableRelationDispatcher",
		"SqlGenerateDispatcher", "SQLExecutorDispatcher", "SemanticConsistenceDispatcher", "FeasibilityAssessmentDispatcher",
		"PlanExecutorDispatcher", "HumanFeedbackDispatcher", "PythonExecutorDispatcher"}
	have := slices.Sorted(maps.Keys(dataagent.Dispatchers()))
	slices.Sort(dispatchers)
	if !slices.Equal(have, dispatchers) {
		t.Errorf("dispatchers = %v, want the seed's %v", have, dispatchers)
	}
	if _, err := dataagent.New(dataagent.Deps{LLM: llm.NewOffline()}); err == nil {
		t.Errorf("New without its collaborators succeeded")
	}
}
