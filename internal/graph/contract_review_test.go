package graph_test

// A Go port of the contract-review LangGraph of seed spec 002 (SPEC-4,
// "LangGraph 状态机骨架"): the graph is built inside the test and its §9 tests
// (test_empty_checklist, test_single_clause_no_interrupt,
// test_interrupt_and_resume, test_multiple_clauses) are reproduced, plus the
// retry loop of §8 item 5 (route_validation).
//
//	START → init → parse_document → (next_clause_or_end)
//	  → clause_analyze → clause_generate_diffs → clause_validate
//	      → (pass) human_approval [interrupt_before] → save_clause → (next_clause_or_end)
//	      → (fail, retries left) clause_generate_diffs
//	      → (fail, no retries left) save_clause
//	  → summarize → END
//
// The seed's nodes are LLM stubs returning empty lists; here they are
// deterministic but do real work: clause_analyze derives risks from the
// clause text (and from earlier clauses' findings, the spec's scratchpad),
// clause_generate_diffs writes one diff per risk, clause_validate checks them.

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"weft/internal/checkpoint"
	"weft/internal/graph"
)

// ---------------------------------------------------------------------------
// State (mirrors ReviewGraphState, models reduced to what the nodes use)
// ---------------------------------------------------------------------------

type ChecklistItem struct {
	ClauseID       string   `json:"clause_id"`
	ClauseName     string   `json:"clause_name"`
	Priority       string   `json:"priority"`
	RequiredSkills []string `json:"required_skills"`
	Description    string   `json:"description"`
	// Text stands in for the get_clause_context skill: the clause's wording.
	Text string `json:"text"`
}

type RiskPoint struct {
	RiskID      string `json:"risk_id"`
	ClauseID    string `json:"clause_id"`
	Level       string `json:"level"` // high / medium / low
	Description string `json:"description"`
	Excerpt     string `json:"excerpt"` // the offending words, as in the clause text
	Suggestion  string `json:"suggestion"`
}

type DocumentDiff struct {
	DiffID   string `json:"diff_id"`
	ClauseID string `json:"clause_id"`
	RiskID   string `json:"risk_id"`
	Original string `json:"original"`
	Proposed string `json:"proposed"`
	Reason   string `json:"reason"`
}

type ClauseFindings struct {
	ClauseID  string         `json:"clause_id"`
	Risks     []RiskPoint    `json:"risks"`
	Diffs     []DocumentDiff `json:"diffs"`
	Validated bool           `json:"validated"`
	Retries   int            `json:"retries"`
	Completed bool           `json:"completed"`
}

type ReviewGraphState struct {
	TaskID string `json:"task_id"`

	ReviewChecklist    []ChecklistItem `json:"review_checklist"`
	CurrentClauseIndex int             `json:"current_clause_index"`

	// Findings is a merge channel: save_clause writes only the one entry of
	// the clause it saves, and the reducer folds it into the scratchpad. The
	// seed (no reducer, last value) copies the whole dict and returns it;
	// with merge the node cannot lose another clause's entry by working from
	// a stale copy, and the result is the same. The price: init cannot reset
	// it by writing {} (merging {} is a no-op), so it writes an Overwrite.
	Findings map[string]ClauseFindings `json:"findings" weft:"merge"`

	CurrentClauseID   string         `json:"current_clause_id"`
	CurrentClauseText string         `json:"current_clause_text"`
	CurrentRisks      []RiskPoint    `json:"current_risks"`
	CurrentDiffs      []DocumentDiff `json:"current_diffs"`

	ValidationResult string `json:"validation_result"` // "pass" / "fail"
	ClauseRetryCount int    `json:"clause_retry_count"`
	MaxRetries       int    `json:"max_retries"`

	PendingDiffs  []DocumentDiff    `json:"pending_diffs"`
	UserDecisions map[string]string `json:"user_decisions"` // diff_id → approve/reject; last value, so UpdateState replaces it
	UserFeedback  map[string]string `json:"user_feedback"`

	// AllRisks and AllDiffs accumulate across clauses: append channels, so
	// save_clause writes only the clause's items (the seed re-sends the
	// whole list); init resets them with an Overwrite.
	AllRisks     []RiskPoint    `json:"all_risks" weft:"append"`
	AllDiffs     []DocumentDiff `json:"all_diffs" weft:"append"`
	SummaryNotes string         `json:"summary_notes"`

	Error      string `json:"error"`
	IsComplete bool   `json:"is_complete"`
}

// ---------------------------------------------------------------------------
// Node logic
// ---------------------------------------------------------------------------

type riskRule struct {
	keyword, level, description, proposed string
}

// riskRules are checked in this order, so risk ids are stable.
var riskRules = []riskRule{
	{"unlimited", "high", "uncapped liability", "capped at 100% of the Contract Price"},
	{"sole discretion", "medium", "one-sided discretion", "reasonable discretion"},
	{"without notice", "medium", "action without notice", "upon 14 days' written notice"},
	{"within 7 days", "low", "unrealistic deadline", "within 28 days"},
}

var clauseRef = regexp.MustCompile(`(?i)\bclause (\d+(?:\.\d+)*)`)

// analyzeClause derives the clause's risks from its text and, through the
// scratchpad, from the findings of clauses reviewed before it: referring to
// an earlier clause that carries a high risk is itself a risk.
func analyzeClause(id, text string, prior map[string]ClauseFindings) []RiskPoint {
	lower := strings.ToLower(text)
	var risks []RiskPoint
	add := func(level, desc, excerpt, suggestion string) {
		risks = append(risks, RiskPoint{RiskID: fmt.Sprintf("%s#%d", id, len(risks)+1), ClauseID: id,
			Level: level, Description: desc, Excerpt: excerpt, Suggestion: suggestion})
	}
	for _, r := range riskRules {
		if i := strings.Index(lower, r.keyword); i >= 0 {
			add(r.level, r.description, text[i:i+len(r.keyword)], r.proposed)
		}
	}
	for _, m := range clauseRef.FindAllStringSubmatch(text, -1) {
		f, ok := prior[m[1]]
		if ok && slices.ContainsFunc(f.Risks, func(r RiskPoint) bool { return r.Level == "high" }) {
			add("medium", "relies on high-risk clause "+m[1], m[0], m[0]+" (as amended)")
		}
	}
	return risks
}

// reviewKnobs shape one test's graph.
type reviewKnobs struct {
	interrupt bool            // compile with WithInterruptBefore("human_approval")
	broken    map[string]bool // clause ids whose generated diffs always lack "proposed"
}

// reviewProbe counts node calls per node and clause ("node@clause").
type reviewProbe struct {
	mu    sync.Mutex
	calls map[string]int
	total atomic.Int64
}

func (p *reviewProbe) hit(node, clause string) {
	p.total.Add(1)
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.calls == nil {
		p.calls = map[string]int{}
	}
	p.calls[node+"@"+clause]++
}

func (p *reviewProbe) count(node, clause string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[node+"@"+clause]
}

type rvS = ReviewGraphState

func buildReviewGraph(t *testing.T, cp graph.Checkpointer, k reviewKnobs) (*graph.Graph[rvS], *reviewProbe) {
	t.Helper()
	probe := &reviewProbe{}
	set := graph.Set

	nodeInit := func(_ context.Context, s rvS) (graph.Command, error) {
		probe.hit("init", "")
		maxRetries := s.MaxRetries
		if maxRetries == 0 {
			maxRetries = 2
		}
		return graph.Update(
			set("current_clause_index", 0),
			set("findings", graph.Overwrite{Value: map[string]ClauseFindings{}}),
			set("all_risks", graph.Overwrite{Value: []RiskPoint{}}),
			set("all_diffs", graph.Overwrite{Value: []DocumentDiff{}}),
			set("clause_retry_count", 0),
			set("max_retries", maxRetries),
			set("is_complete", false),
			set("error", ""),
		), nil
	}

	// parse_document: the seed requires a primary document and builds a
	// generic checklist from its structure; here the checklist is given, and
	// the node checks it (a missing or repeated clause id is an error, which
	// routes straight to summarize).
	nodeParse := func(_ context.Context, s rvS) (graph.Command, error) {
		probe.hit("parse_document", "")
		seen := map[string]bool{}
		for i, it := range s.ReviewChecklist {
			switch {
			case it.ClauseID == "":
				return graph.Update(set("error", fmt.Sprintf("checklist item %d has no clause_id", i))), nil
			case seen[it.ClauseID]:
				return graph.Update(set("error", "duplicate clause "+it.ClauseID)), nil
			}
			seen[it.ClauseID] = true
		}
		return graph.Update(set("review_checklist", s.ReviewChecklist)), nil
	}

	nodeAnalyze := func(_ context.Context, s rvS) (graph.Command, error) {
		if s.CurrentClauseIndex >= len(s.ReviewChecklist) {
			return graph.Command{}, fmt.Errorf("clause_analyze at index %d of %d: the router should have prevented this",
				s.CurrentClauseIndex, len(s.ReviewChecklist))
		}
		it := s.ReviewChecklist[s.CurrentClauseIndex]
		probe.hit("clause_analyze", it.ClauseID)
		return graph.Update(
			set("current_clause_id", it.ClauseID),
			set("current_clause_text", it.Text),
			set("current_risks", analyzeClause(it.ClauseID, it.Text, s.Findings)),
			set("current_diffs", []DocumentDiff{}),
			set("validation_result", ""),
			set("clause_retry_count", 0), // a new clause resets the retry count
		), nil
	}

	// clause_generate_diffs counts the retries: it increments
	// clause_retry_count when it runs because validation failed. The seed
	// increments in clause_validate, before route_validation compares
	// retry_count < max_retries; with max_retries 2 that regenerates only
	// once (2 generations in all). Counting here gives what max_retries says:
	// the first generation plus max_retries retries.
	nodeGenerate := func(_ context.Context, s rvS) (graph.Command, error) {
		probe.hit("clause_generate_diffs", s.CurrentClauseID)
		diffs := make([]DocumentDiff, 0, len(s.CurrentRisks))
		for _, r := range s.CurrentRisks {
			d := DocumentDiff{DiffID: "diff-" + r.RiskID, ClauseID: r.ClauseID, RiskID: r.RiskID,
				Original: r.Excerpt, Proposed: r.Suggestion, Reason: r.Description}
			if k.broken[s.CurrentClauseID] {
				d.Proposed = ""
			}
			diffs = append(diffs, d)
		}
		ws := []graph.Write{set("current_diffs", diffs)}
		if s.ValidationResult == "fail" {
			ws = append(ws, set("clause_retry_count", s.ClauseRetryCount+1))
		}
		return graph.Update(ws...), nil
	}

	// clause_validate: every risk needs one diff, and every diff an id, an
	// original found in the clause text and a proposal.
	nodeValidate := func(_ context.Context, s rvS) (graph.Command, error) {
		probe.hit("clause_validate", s.CurrentClauseID)
		result := "pass"
		if len(s.CurrentDiffs) != len(s.CurrentRisks) {
			result = "fail"
		}
		for _, d := range s.CurrentDiffs {
			if d.DiffID == "" || d.Proposed == "" || d.Original == "" ||
				!strings.Contains(strings.ToLower(s.CurrentClauseText), strings.ToLower(d.Original)) {
				result = "fail"
			}
		}
		return graph.Update(set("validation_result", result)), nil
	}

	nodeApproval := func(_ context.Context, s rvS) (graph.Command, error) {
		probe.hit("human_approval", s.CurrentClauseID)
		if len(s.CurrentDiffs) == 0 {
			return graph.Update(set("pending_diffs", []DocumentDiff{}), set("user_decisions", map[string]string{})), nil
		}
		return graph.Update(set("pending_diffs", s.CurrentDiffs)), nil
	}

	// save_clause keeps the diffs the user did not reject (no decision means
	// approve, as in the seed). Diffs that never passed validation (retries
	// exhausted: the seed's "跳过") are not kept; the risks are.
	nodeSave := func(_ context.Context, s rvS) (graph.Command, error) {
		probe.hit("save_clause", s.CurrentClauseID)
		validated := s.ValidationResult == "pass"
		approved := []DocumentDiff{}
		if validated {
			for _, d := range s.CurrentDiffs {
				if dec, ok := s.UserDecisions[d.DiffID]; !ok || dec == "approve" {
					approved = append(approved, d)
				}
			}
		}
		f := ClauseFindings{ClauseID: s.CurrentClauseID, Risks: s.CurrentRisks, Diffs: approved,
			Validated: validated, Retries: s.ClauseRetryCount, Completed: true}
		return graph.Update(
			set("findings", map[string]ClauseFindings{s.CurrentClauseID: f}),
			set("all_risks", s.CurrentRisks),
			set("all_diffs", approved),
			set("current_clause_index", s.CurrentClauseIndex+1),
		), nil
	}

	nodeSummarize := func(_ context.Context, s rvS) (graph.Command, error) {
		probe.hit("summarize", "")
		summary := fmt.Sprintf("审查完成。共审查 %d 个条款，发现 %d 个风险点，生成 %d 条修改建议。",
			len(s.Findings), len(s.AllRisks), len(s.AllDiffs))
		if s.Error != "" {
			summary += "错误：" + s.Error
		}
		return graph.Update(set("summary_notes", summary), set("is_complete", true)), nil
	}

	routeNextClauseOrEnd := func(s rvS) string {
		if s.Error != "" {
			return "summarize"
		}
		if s.CurrentClauseIndex < len(s.ReviewChecklist) {
			return "clause_analyze"
		}
		return "summarize"
	}
	routeValidation := func(s rvS) string {
		switch {
		case s.ValidationResult == "pass":
			return "human_approval"
		case s.ClauseRetryCount < s.MaxRetries:
			return "clause_generate_diffs"
		default:
			return "save_clause"
		}
	}
	routeAfterApproval := func(rvS) string { return "save_clause" }

	b := graph.New[rvS]().
		AddNode("init", nodeInit).
		AddNode("parse_document", nodeParse).
		AddNode("clause_analyze", nodeAnalyze).
		AddNode("clause_generate_diffs", nodeGenerate).
		AddNode("clause_validate", nodeValidate).
		AddNode("human_approval", nodeApproval).
		AddNode("save_clause", nodeSave).
		AddNode("summarize", nodeSummarize).
		AddEdge(graph.START, "init").
		AddEdge("init", "parse_document").
		AddConditionalEdges("parse_document", graph.Pick(routeNextClauseOrEnd),
			map[string]string{"clause_analyze": "clause_analyze", "summarize": "summarize"}).
		AddEdge("clause_analyze", "clause_generate_diffs").
		AddEdge("clause_generate_diffs", "clause_validate").
		AddConditionalEdges("clause_validate", graph.Pick(routeValidation), map[string]string{
			"human_approval":        "human_approval",
			"clause_generate_diffs": "clause_generate_diffs",
			"save_clause":           "save_clause",
		}).
		AddConditionalEdges("human_approval", graph.Pick(routeAfterApproval),
			map[string]string{"save_clause": "save_clause"}).
		AddConditionalEdges("save_clause", graph.Pick(routeNextClauseOrEnd),
			map[string]string{"clause_analyze": "clause_analyze", "summarize": "summarize"}).
		AddEdge("summarize", graph.END)

	opts := []graph.CompileOption{graph.WithCheckpointer(cp), graph.WithName("contract_review")}
	if k.interrupt {
		opts = append(opts, graph.WithInterruptBefore("human_approval"))
	}
	g, err := b.Compile(opts...)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return g, probe
}

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

var reviewThreadSeq atomic.Int64

// reviewThread is unique per test and per -count iteration.
func reviewThread(t *testing.T) graph.Config {
	return graph.Config{ThreadID: fmt.Sprintf("%s/%d", t.Name(), reviewThreadSeq.Add(1))}
}

func reviewInput(task string, items ...ChecklistItem) graph.Command {
	if items == nil {
		items = []ChecklistItem{}
	}
	return graph.Update(graph.Set("task_id", task), graph.Set("review_checklist", items))
}

// visited lists the nodes the thread ran, oldest first, from its history.
func visited(t *testing.T, g *graph.Graph[rvS], cfg graph.Config) []string {
	t.Helper()
	hist, err := g.History(context.Background(), cfg, graph.ListOptions{Source: graph.SourceLoop})
	if err != nil {
		t.Fatalf("history: %v", err)
	}
	var out []string
	for i := len(hist) - 1; i >= 0; i-- {
		out = append(out, hist[i].Nodes...)
	}
	return out
}

func clauseSteps(approval bool) []string {
	steps := []string{"clause_analyze", "clause_generate_diffs", "clause_validate"}
	if approval {
		steps = append(steps, "human_approval")
	}
	return append(steps, "save_clause")
}

func diffIDs(ds []DocumentDiff) []string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.DiffID
	}
	return out
}

// ---------------------------------------------------------------------------
// §9 tests
// ---------------------------------------------------------------------------

// test_empty_checklist: init → parse_document → summarize → END.
func TestContractReview_EmptyChecklist(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g, probe := buildReviewGraph(t, checkpoint.NewMemory(), reviewKnobs{})
	cfg := reviewThread(t)

	res, err := g.Invoke(ctx, cfg, reviewInput("test_001"))
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	if !res.Done() {
		t.Fatalf("run did not finish: next %v, interrupts %v", res.Next, res.Interrupts)
	}
	s := res.State
	if !s.IsComplete {
		t.Errorf("is_complete = false")
	}
	if !strings.Contains(s.SummaryNotes, "审查完成") || !strings.Contains(s.SummaryNotes, "共审查 0 个条款") {
		t.Errorf("summary_notes = %q, want it to report 0 clauses", s.SummaryNotes)
	}
	if s.Error != "" || s.CurrentClauseIndex != 0 || len(s.Findings) != 0 || s.MaxRetries != 2 {
		t.Errorf("state = error %q, index %d, findings %v, max_retries %d", s.Error, s.CurrentClauseIndex, s.Findings, s.MaxRetries)
	}
	if got, want := visited(t, g, cfg), []string{"init", "parse_document", "summarize"}; !slices.Equal(got, want) {
		t.Errorf("path = %v, want %v", got, want)
	}
	if n := probe.count("clause_analyze", ""); n != 0 {
		t.Errorf("clause_analyze ran %d times", n)
	}
}

// test_single_clause_no_interrupt.
func TestContractReview_SingleClause(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g, probe := buildReviewGraph(t, checkpoint.NewMemory(), reviewKnobs{})
	cfg := reviewThread(t)

	res, err := g.Invoke(ctx, cfg, reviewInput("test_002", ChecklistItem{
		ClauseID: "14.2", ClauseName: "预付款", Priority: "high", RequiredSkills: []string{"get_clause_context"},
		Description: "核查预付款条款",
		Text:        "The Employer may withhold the advance payment at its sole discretion and without notice.",
	}))
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	s := res.State
	if !res.Done() || !s.IsComplete {
		t.Fatalf("run did not complete: next %v, is_complete %v", res.Next, s.IsComplete)
	}
	if s.CurrentClauseIndex != 1 {
		t.Errorf("current_clause_index = %d, want 1", s.CurrentClauseIndex)
	}
	f, ok := s.Findings["14.2"]
	if !ok {
		t.Fatalf("findings has no 14.2: %v", s.Findings)
	}
	wantDiffs := []string{"diff-14.2#1", "diff-14.2#2"} // sole discretion, without notice
	if !f.Completed || !f.Validated || !slices.Equal(diffIDs(f.Diffs), wantDiffs) || len(f.Risks) != 2 {
		t.Errorf("findings[14.2] = %+v, want 2 risks and diffs %v", f, wantDiffs)
	}
	if !slices.Equal(diffIDs(s.AllDiffs), wantDiffs) || len(s.AllRisks) != 2 {
		t.Errorf("all_diffs = %v, all_risks %d; want %v and 2", diffIDs(s.AllDiffs), len(s.AllRisks), wantDiffs)
	}
	if !slices.Equal(diffIDs(s.PendingDiffs), wantDiffs) {
		t.Errorf("pending_diffs = %v, want %v", diffIDs(s.PendingDiffs), wantDiffs)
	}
	want := append(append([]string{"init", "parse_document"}, clauseSteps(true)...), "summarize")
	if got := visited(t, g, cfg); !slices.Equal(got, want) {
		t.Errorf("path = %v, want %v", got, want)
	}
	if n := probe.count("human_approval", "14.2"); n != 1 {
		t.Errorf("human_approval ran %d times, want 1 (no interrupt)", n)
	}
}

// test_interrupt_and_resume: pause before human_approval, inject the user's
// decisions with UpdateState, continue.
func TestContractReview_InterruptAndResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g, probe := buildReviewGraph(t, checkpoint.NewMemory(), reviewKnobs{interrupt: true})
	cfg := reviewThread(t)

	res, err := g.Invoke(ctx, cfg, reviewInput("test_003", ChecklistItem{
		ClauseID: "17.6", ClauseName: "责任限制", Priority: "critical", Description: "核查赔偿上限",
		Text: "The Contractor's liability shall be unlimited; claims must be notified within 7 days.",
	}))
	if err != nil {
		t.Fatalf("first invoke: %v", err)
	}
	if res.Done() || res.State.IsComplete {
		t.Fatalf("first invoke did not pause: next %v, is_complete %v", res.Next, res.State.IsComplete)
	}
	if len(res.Interrupts) != 1 || res.Interrupts[0].Node != "human_approval" || res.Interrupts[0].When != graph.InterruptBefore {
		t.Fatalf("interrupts = %+v, want one before human_approval", res.Interrupts)
	}
	if n := probe.count("human_approval", "17.6"); n != 0 {
		t.Fatalf("human_approval ran %d times before the resume", n)
	}

	snap, err := g.GetState(ctx, cfg)
	if err != nil {
		t.Fatalf("get state: %v", err)
	}
	if !slices.Equal(snap.Next, []string{"human_approval"}) {
		t.Fatalf("snapshot next = %v, want [human_approval]", snap.Next)
	}
	if len(snap.Interrupts) != 1 || snap.Interrupts[0].When != graph.InterruptBefore ||
		len(snap.Tasks) != 1 || len(snap.Tasks[0].Interrupts) != 1 {
		t.Fatalf("snapshot interrupts = %+v, tasks %+v; want one before-interrupt on the human_approval task", snap.Interrupts, snap.Tasks)
	}
	// What the API would push to the user: the validated diffs.
	diffs := snap.Values.CurrentDiffs
	if got, want := diffIDs(diffs), []string{"diff-17.6#1", "diff-17.6#2"}; !slices.Equal(got, want) {
		t.Fatalf("current_diffs at the pause = %v, want %v", got, want)
	}
	keep, reject := diffs[0].DiffID, diffs[1].DiffID

	cp, err := g.UpdateState(ctx, cfg, []graph.Write{
		graph.Set("user_decisions", map[string]string{keep: "approve", reject: "reject"}),
		graph.Set("user_feedback", map[string]string{reject: "索赔通知期限应为 28 天"}),
	}, "")
	if err != nil {
		t.Fatalf("update state: %v", err)
	}
	if !slices.Equal(cp.Nodes, []string{"clause_validate"}) {
		t.Errorf("update written as %v, want the last writer [clause_validate]", cp.Nodes)
	}
	snap, err = g.GetState(ctx, cfg)
	if err != nil {
		t.Fatalf("get state after update: %v", err)
	}
	if !slices.Equal(snap.Next, []string{"human_approval"}) {
		t.Fatalf("next after update = %v, want [human_approval]", snap.Next)
	}

	res, err = g.Invoke(ctx, cfg, graph.Command{})
	if err != nil {
		t.Fatalf("resume: %v", err)
	}
	s := res.State
	if !res.Done() || !s.IsComplete {
		t.Fatalf("resume did not complete: next %v, interrupts %v, is_complete %v", res.Next, res.Interrupts, s.IsComplete)
	}
	if got := diffIDs(s.AllDiffs); !slices.Equal(got, []string{keep}) {
		t.Errorf("all_diffs = %v, want only the approved %s (rejected %s filtered out)", got, keep, reject)
	}
	if got := diffIDs(s.Findings["17.6"].Diffs); !slices.Equal(got, []string{keep}) {
		t.Errorf("findings[17.6].diffs = %v, want [%s]", got, keep)
	}
	if len(s.AllRisks) != 2 || !slices.Equal(diffIDs(s.PendingDiffs), []string{keep, reject}) {
		t.Errorf("all_risks %d, pending_diffs %v; want 2 and both diffs", len(s.AllRisks), diffIDs(s.PendingDiffs))
	}
	if s.UserFeedback[reject] == "" || s.UserDecisions[reject] != "reject" {
		t.Errorf("user input lost: decisions %v, feedback %v", s.UserDecisions, s.UserFeedback)
	}
	if s.CurrentClauseIndex != 1 || !strings.Contains(s.SummaryNotes, "生成 1 条修改建议") {
		t.Errorf("index %d, summary %q", s.CurrentClauseIndex, s.SummaryNotes)
	}
	if n := probe.count("human_approval", "17.6"); n != 1 {
		t.Errorf("human_approval ran %d times, want 1", n)
	}
	want := append(append([]string{"init", "parse_document"}, clauseSteps(true)...), "summarize")
	if got := visited(t, g, cfg); !slices.Equal(got, want) {
		t.Errorf("path = %v, want %v", got, want)
	}
}

// test_multiple_clauses: three clauses, the later ones reading the
// scratchpad (20.1 refers to 4.1, which carries a high risk).
func TestContractReview_MultipleClauses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	g, _ := buildReviewGraph(t, checkpoint.NewMemory(), reviewKnobs{})
	cfg := reviewThread(t)

	res, err := g.Invoke(ctx, cfg, reviewInput("test_004",
		ChecklistItem{ClauseID: "4.1", ClauseName: "一般义务", Priority: "critical",
			Text: "The Contractor bears unlimited responsibility for the design."},
		ChecklistItem{ClauseID: "14.2", ClauseName: "预付款", Priority: "high",
			Text: "The advance payment is made in two equal instalments."},
		ChecklistItem{ClauseID: "20.1", ClauseName: "索赔", Priority: "critical",
			Text: "Claims are subject to Clause 4.1 and Clause 14.2 and shall be notified within 7 days."},
	))
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	s := res.State
	if !res.Done() || !s.IsComplete {
		t.Fatalf("run did not complete: next %v, is_complete %v", res.Next, s.IsComplete)
	}
	if s.CurrentClauseIndex != 3 || len(s.Findings) != 3 {
		t.Fatalf("current_clause_index = %d, findings %d; want 3 and 3", s.CurrentClauseIndex, len(s.Findings))
	}
	risksOf := func(id string) []string {
		var out []string
		for _, r := range s.Findings[id].Risks {
			out = append(out, r.Description)
		}
		return out
	}
	if got := risksOf("4.1"); !slices.Equal(got, []string{"uncapped liability"}) {
		t.Errorf("4.1 risks = %v", got)
	}
	if got := risksOf("14.2"); len(got) != 0 {
		t.Errorf("14.2 risks = %v, want none", got)
	}
	// 20.1: its own deadline risk, plus one for relying on 4.1 (found through
	// the scratchpad); 14.2 has no high risk, so no risk for it.
	if got, want := risksOf("20.1"), []string{"unrealistic deadline", "relies on high-risk clause 4.1"}; !slices.Equal(got, want) {
		t.Errorf("20.1 risks = %v, want %v", got, want)
	}
	if len(s.AllRisks) != 3 || len(s.AllDiffs) != 3 {
		t.Errorf("all_risks %d, all_diffs %d; want 3 and 3", len(s.AllRisks), len(s.AllDiffs))
	}
	if !strings.Contains(s.SummaryNotes, "共审查 3 个条款") {
		t.Errorf("summary_notes = %q", s.SummaryNotes)
	}
	want := []string{"init", "parse_document"}
	for range 3 { // 4.1, 14.2, 20.1
		want = append(want, clauseSteps(true)...)
	}
	want = append(want, "summarize")
	if got := visited(t, g, cfg); !slices.Equal(got, want) {
		t.Errorf("path = %v, want %v", got, want)
	}
}

// §8 item 5: route_validation loops back to clause_generate_diffs while
// clause_retry_count < max_retries, then gives up to save_clause.
func TestContractReview_ValidateFailRetriesToLimit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const maxRetries = 2
	g, probe := buildReviewGraph(t, checkpoint.NewMemory(), reviewKnobs{broken: map[string]bool{"20.1": true}})
	cfg := reviewThread(t)

	in := reviewInput("test_005",
		ChecklistItem{ClauseID: "20.1", ClauseName: "索赔", Text: "Claims lapse unless notified within 7 days."},
		ChecklistItem{ClauseID: "4.1", ClauseName: "一般义务", Text: "Works may be suspended without notice."},
	)
	in.Update = append(in.Update, graph.Set("max_retries", maxRetries))
	res, err := g.Invoke(ctx, cfg, in)
	if err != nil {
		t.Fatalf("invoke: %v", err)
	}
	s := res.State
	if !res.Done() || !s.IsComplete {
		t.Fatalf("run did not complete: next %v, is_complete %v", res.Next, s.IsComplete)
	}
	if n := probe.count("clause_generate_diffs", "20.1"); n != maxRetries+1 {
		t.Errorf("clause_generate_diffs ran %d times for 20.1, want max_retries+1 = %d", n, maxRetries+1)
	}
	if n := probe.count("clause_validate", "20.1"); n != maxRetries+1 {
		t.Errorf("clause_validate ran %d times for 20.1, want %d", n, maxRetries+1)
	}
	if n := probe.count("human_approval", "20.1"); n != 0 {
		t.Errorf("human_approval ran %d times for the failing clause, want 0", n)
	}
	f := s.Findings["20.1"]
	if !f.Completed || f.Validated || f.Retries != maxRetries || len(f.Diffs) != 0 || len(f.Risks) != 1 {
		t.Errorf("findings[20.1] = %+v, want completed, not validated, %d retries, 1 risk, no diffs", f, maxRetries)
	}
	// The next clause starts afresh: retry count reset, validation passes.
	if n := probe.count("clause_generate_diffs", "4.1"); n != 1 {
		t.Errorf("clause_generate_diffs ran %d times for 4.1, want 1", n)
	}
	if g41 := s.Findings["4.1"]; !g41.Validated || g41.Retries != 0 || !slices.Equal(diffIDs(g41.Diffs), []string{"diff-4.1#1"}) {
		t.Errorf("findings[4.1] = %+v", g41)
	}
	if got := diffIDs(s.AllDiffs); !slices.Equal(got, []string{"diff-4.1#1"}) {
		t.Errorf("all_diffs = %v, want only 4.1's", got)
	}
	if s.CurrentClauseIndex != 2 || len(s.AllRisks) != 2 {
		t.Errorf("index %d, all_risks %d; want 2 and 2", s.CurrentClauseIndex, len(s.AllRisks))
	}
	want := []string{"init", "parse_document", "clause_analyze"}
	for range maxRetries + 1 {
		want = append(want, "clause_generate_diffs", "clause_validate")
	}
	want = append(want, "save_clause")
	want = append(want, clauseSteps(true)...)
	want = append(want, "summarize")
	if got := visited(t, g, cfg); !slices.Equal(got, want) {
		t.Errorf("path = %v, want %v", got, want)
	}
}
