package contractreview_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"weft/internal/checkpoint"
	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/llm"
	cr "weft/internal/workflow/contractreview"
)

// model stands in for a model-backed provider: it answers each task with
// what answer computes from the request's user message (the task's input as JSON).
type model struct {
	llm.Provider
	answer func(task string, in map[string]any) any
}

func (m model) Name() string  { return "model-under-test" }
func (m model) Offline() bool { return false }
func (m model) Chat(_ context.Context, req llm.ChatRequest) (llm.ChatResponse, error) {
	var in map[string]any
	if err := json.Unmarshal([]byte(req.Messages[1].Content), &in); err != nil {
		return llm.ChatResponse{}, err
	}
	b, err := json.Marshal(m.answer(req.Task, in))
	return llm.ChatResponse{Content: string(b)}, err
}

func TestModelProvider(t *testing.T) {
	t.Parallel()
	text := "9.1 Suspension\nThe Employer may suspend the Works whenever it deems fit.\n"
	run := func(t *testing.T, excerpt string) (graph.Result[cr.ReviewGraphState], error) {
		p := model{answer: func(task string, in map[string]any) any {
			if task == "contractreview.clause_risks" {
				return map[string]any{"risks": []map[string]string{{"excerpt": excerpt, "severity": "high", "description": "open-ended suspension"}}}
			}
			target := in["targets"].([]any)[0].(map[string]any)["risk"].(map[string]any)
			return map[string]any{"diffs": []map[string]string{{"risk_id": target["risk_id"].(string), "original": "whenever it deems fit",
				"suggested": "for no more than 84 days in total", "reason": "bounded suspension"}}}
		}}
		g, err := cr.New(cr.Deps{Provider: p, Checkpointer: checkpoint.NewMemory(), AutoApprove: true})
		if err != nil {
			t.Fatal(err)
		}
		ws, err := contract("Contractor", text).Writes()
		if err != nil {
			t.Fatal(err)
		}
		return g.Invoke(context.Background(), graph.Config{ThreadID: t.Name()}, graph.Update(ws...))
	}
	t.Run("the model's risk and redline", func(t *testing.T) {
		t.Parallel()
		res, err := run(t, "whenever it deems fit")
		if err != nil {
			t.Fatal(err)
		}
		s := res.State
		if s.Offline || s.Provider != "model-under-test" || len(s.AllRisks) != 1 || s.AllRisks[0].Source != "model-under-test" {
			t.Fatalf("provider %q offline %v, risks %+v", s.Provider, s.Offline, s.AllRisks)
		}
		if len(s.AllDiffs) != 1 || s.AllDiffs[0].Suggested != "for no more than 84 days in total" {
			t.Errorf("all_diffs = %+v", s.AllDiffs)
		}
	})
	t.Run("a model citing words not in the clause", func(t *testing.T) {
		t.Parallel()
		_, err := run(t, "at any time at all")
		if c, code := fault.Classify(err); c != fault.Permanent || code != fault.CodeLLMPermanent || !strings.Contains(err.Error(), "not in the clause") {
			t.Fatalf("err = %v (%s %s), want a permanent LLM error", err, c, code)
		}
		var ne *graph.NodeError
		if !errors.As(err, &ne) || ne.Node != cr.NodeClauseAnalyze {
			t.Errorf("failed node = %v", err)
		}
	})
}
