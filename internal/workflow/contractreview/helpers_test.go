package contractreview_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"weft/internal/checkpoint"
	"weft/internal/graph"
	"weft/internal/llm"
	cr "weft/internal/workflow/contractreview"
	"weft/internal/workflow/workflowtest"
)

// bundle is one test's review graph, its artifact store and its thread.
type bundle struct {
	g    *graph.Graph[cr.ReviewGraphState]
	arts *workflowtest.Artifacts
	cfg  graph.Config
}

var threadSeq atomic.Int64

// setup builds the graph on the in-memory checkpointer with the offline
// provider; autoApprove compiles it without the pause (the seed's
// interrupt_before=[]).
func setup(t testing.TB, autoApprove bool) bundle {
	t.Helper()
	arts := workflowtest.NewArtifacts()
	g, err := cr.New(cr.Deps{Provider: llm.NewOffline(), Artifacts: arts, Checkpointer: checkpoint.NewMemory(),
		Now: func() time.Time { return decidedAt }, AutoApprove: autoApprove})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return bundle{g: g, arts: arts, cfg: graph.Config{ThreadID: fmt.Sprintf("%s/%d", t.Name(), threadSeq.Add(1))}}
}

var decidedAt = time.Date(2026, 3, 2, 10, 15, 0, 0, time.UTC)

// contract is a start for a contract text reviewed for our party.
func contract(ourParty, text string, checklist ...cr.ChecklistItem) cr.Start {
	return cr.Start{TaskID: "task", OurParty: ourParty, Language: "en", Checklist: checklist,
		Document: cr.TaskDocument{DocumentID: "c1", Filename: "contract.txt", Role: cr.RolePrimary, Text: text}}
}

// run starts a review.
func (b bundle) run(t testing.TB, st cr.Start) graph.Result[cr.ReviewGraphState] {
	t.Helper()
	ws, err := st.Writes()
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	res, err := b.g.Invoke(context.Background(), b.cfg, graph.Update(ws...))
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	return res
}

// decide records decisions on the paused clause and continues the thread.
func (b bundle) decide(t testing.TB, d cr.Decisions) graph.Result[cr.ReviewGraphState] {
	t.Helper()
	ctx := context.Background()
	if d.Reviewer == "" {
		d.Reviewer = "Li Na"
	}
	if d.At.IsZero() {
		d.At = decidedAt
	}
	if _, err := cr.ApplyDecisions(ctx, b.g, b.cfg, d); err != nil {
		t.Fatalf("apply decisions: %v", err)
	}
	res, err := b.g.Invoke(ctx, b.cfg, graph.Command{})
	if err != nil {
		t.Fatalf("continue: %v", err)
	}
	return res
}

// approveAll answers every pause with "approve all" until the review ends.
func (b bundle) approveAll(t testing.TB, res graph.Result[cr.ReviewGraphState]) (graph.Result[cr.ReviewGraphState], int) {
	t.Helper()
	pauses := 0
	for !res.Done() {
		pauses++
		if pauses > 100 {
			t.Fatalf("the review does not end")
		}
		res = b.decide(t, cr.Decisions{ApproveAll: true})
	}
	return res, pauses
}

// snapshot reads the thread's head.
func (b bundle) snapshot(t testing.TB) graph.Snapshot[cr.ReviewGraphState] {
	t.Helper()
	snap, err := b.g.GetState(context.Background(), b.cfg)
	if err != nil {
		t.Fatalf("get state: %v", err)
	}
	return snap
}

// visited lists the nodes the thread ran, oldest first.
func (b bundle) visited(t testing.TB) []string {
	t.Helper()
	hist, err := b.g.History(context.Background(), b.cfg, graph.ListOptions{Source: graph.SourceLoop})
	if err != nil {
		t.Fatalf("history: %v", err)
	}
	var out []string
	for i := len(hist) - 1; i >= 0; i-- {
		out = append(out, hist[i].Nodes...)
	}
	return out
}

func count(path []string, node string) int {
	n := 0
	for _, p := range path {
		if p == node {
			n++
		}
	}
	return n
}

func diffIDs(ds []cr.DocumentDiff) []string {
	out := []string{}
	for _, d := range ds {
		out = append(out, d.DiffID)
	}
	return out
}

func rulesOf(rs []cr.RiskPoint) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Rule)
	}
	slices.Sort(out)
	return out
}

// clauseSteps is one clause's path through the loop.
func clauseSteps(approval bool) []string {
	steps := []string{cr.NodeClauseAnalyze, cr.NodeGenerateDiffs, cr.NodeClauseValidate}
	if approval {
		steps = append(steps, cr.NodeHumanApproval)
	}
	return append(steps, cr.NodeSaveClause)
}
