package dataagent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"weft/internal/graph"
	"weft/internal/workflow"
	"weft/internal/workflow/dataagent"
	"weft/internal/workflow/workflowtest"
)

// thread is the agent's thread as the platform's views and reviews see it.
func (a agent) thread(t *testing.T, id string) workflow.Thread {
	t.Helper()
	snap, err := a.g.StateJSON(context.Background(), graph.Config{ThreadID: id})
	if err != nil {
		t.Fatal(err)
	}
	return workflow.Thread{ThreadID: id, State: snap.Values, Next: snap.Next, Interrupts: snap.Interrupts, JobStatus: "succeeded",
		Reader: workflow.Person{ID: "u_rev", Name: "Ravi Rao", Role: "reviewer"}}
}

// The start form turns the question and the review toggle into the run's
// input on the demo schema; an empty question is refused on its field.
func TestStartForm(t *testing.T) {
	t.Parallel()
	deps := dataagent.Deps{Catalog: nopCatalog{}, Evidence: nopEvidence{}, SQL: nopSQL{}, LLM: newScripted(nil)}
	if _, err := dataagent.Definition(deps); err == nil {
		t.Fatal("a definition without an artifact store was built")
	}
	deps.Artifacts = workflowtest.NewArtifacts()
	def, err := dataagent.Definition(deps)
	if err != nil {
		t.Fatal(err)
	}
	v, err := def.Start.ParseJSON(json.RawMessage(`{"question": "  GMV by region last month ", "human_review": true}`))
	if err != nil {
		t.Fatal(err)
	}
	st, err := def.Start.Start(context.Background(), workflow.StartRequest{TenantID: "demo"}, v)
	if err != nil {
		t.Fatal(err)
	}
	var in map[string]any
	_ = json.Unmarshal(st.Input, &in)
	if in["input"] != "GMV by region last month" || in["schema"] != "analytics" || in["human_review_enabled"] != true {
		t.Errorf("input %s", st.Input)
	}
	if err := def.CheckInput(st.Input); err != nil {
		t.Errorf("the start's input is refused: %v", err)
	}
	if got := def.SubjectOf(st.Input); got != "GMV by region last month" {
		t.Errorf("subject %q", got)
	}
	_, err = def.Start.ParseJSON(json.RawMessage(`{"question": ""}`))
	var fe workflow.FieldErrors
	if !errors.As(err, &fe) || fe[dataagent.FieldQuestion] == "" {
		t.Errorf("an empty question: %v", err)
	}
}

// The review form shows the plan as a plan block with its SQL drafts
// highlighted; Decide refuses a rejection without feedback, and an approval
// becomes the update HumanFeedback would write, after which the run answers
// and the conversation view shows the turn's table and report downloads.
func TestReviewFormAndPanel(t *testing.T) {
	t.Parallel()
	pool := demoPool(t)
	a := newAgent(t, pool, nil)
	ctx := context.Background()
	a.start(t, "review-form", "GMV by region last month", true)
	th := a.thread(t, "review-form")
	if len(th.Interrupts) != 1 {
		t.Fatalf("interrupts %v", th.Interrupts)
	}
	rv := workflow.Review{Thread: th, Interrupt: th.Interrupts[0]}
	r := dataagent.Reviewer{}
	form, err := r.Form(ctx, rv)
	if err != nil {
		t.Fatal(err)
	}
	var plan *workflow.Plan
	var code *workflow.Code
	for _, b := range form.Blocks {
		switch v := b.(type) {
		case workflow.Plan:
			plan = &v
		case workflow.Code:
			code = &v
		}
	}
	if plan == nil || len(plan.Steps) != 2 || plan.Steps[0].Tool != "sql" || plan.Steps[1].Tool != "report" {
		t.Fatalf("plan block %+v", plan)
	}
	if code == nil || !strings.Contains(code.Text, "GROUP BY") || !hasMark(*code, "SELECT", workflow.CodeKeyword) || !hasMark(*code, "'paid'", workflow.CodeString) {
		t.Fatalf("SQL draft %+v", code)
	}
	if form.Subject != "GMV by region last month" {
		t.Errorf("subject %q", form.Subject)
	}
	if len(form.Reasons) != 1 || form.Reasons[0].Key != dataagent.ReasonPlanReview || !strings.Contains(form.Reasons[0].Detail, "review 1 of at most 4") {
		t.Errorf("reasons %+v", form.Reasons)
	}
	_, err = r.Decide(ctx, rv, workflow.Answer{Decision: "reject", FromForm: true})
	var ae *workflow.AnswerError
	if !errors.As(err, &ae) || ae.Fields["comment"] == "" || ae.Code != dataagent.CodeDecisionInvalid {
		t.Fatalf("a rejection without feedback: %v", err)
	}
	if _, err := r.Decide(ctx, rv, workflow.Answer{Decision: "approve", Values: map[string]json.RawMessage{"x": []byte("1")}}); !errors.As(err, &ae) {
		t.Fatalf("an unknown field: %v", err)
	}
	d, err := r.Decide(ctx, rv, workflow.Answer{Decision: "approve", FromForm: true})
	if err != nil {
		t.Fatal(err)
	}
	if d.AsNode != dataagent.NodeHumanFeedback || d.Outcome != "approve" || len(d.Update) == 0 {
		t.Fatalf("decision %+v", d)
	}
	cfg := graph.Config{ThreadID: "review-form"}
	if _, err := a.g.UpdateState(ctx, cfg, d.Update, d.AsNode); err != nil {
		t.Fatal(err)
	}
	s := a.stream(t, cfg.ThreadID, graph.Command{}).res.State
	if s.Status != dataagent.StatusAnswered || !strings.Contains(s.Report.Markdown, "approved by Ravi Rao") {
		t.Fatalf("status %s", s.Status)
	}
	blocks, err := dataagent.Panel(ctx, a.thread(t, cfg.ThreadID))
	if err != nil {
		t.Fatal(err)
	}
	sec, ok := blocks[0].(workflow.Section)
	if len(blocks) != 1 || !ok || sec.Badge != "answered" {
		t.Fatalf("panel %+v", blocks)
	}
	var table *workflow.Table
	var dl *workflow.Downloads
	for _, b := range sec.Blocks {
		switch v := b.(type) {
		case workflow.Table:
			if strings.Contains(v.Caption, "result") {
				table = &v
			}
		case workflow.Downloads:
			dl = &v
		}
	}
	if table == nil || len(table.Rows) == 0 || table.Columns[1].Type != workflow.ColNumber || !strings.HasPrefix(table.Caption, "Step 1 · result: ") {
		t.Fatalf("result table %+v", table)
	}
	if dl == nil || len(dl.Items) != 2 || dl.Items[0].Key != "turns/1/report.md" || dl.Items[1].Key != "turns/1/step-1.csv" {
		t.Fatalf("downloads %+v", dl)
	}
	rep, err := dataagent.ReportView(ctx, a.thread(t, cfg.ThreadID))
	if err != nil || len(rep) != 3 {
		t.Fatalf("report %+v %v", rep, err)
	}
}

// SQL is highlighted by PostgreSQL's scanner: keywords (a non-reserved one in a qualified
// name is a name), strings, numbers, comments, function names and operators.
func TestSQLCode(t *testing.T) {
	t.Parallel()
	c := dataagent.SQLCode("SELECT regions.name, sum(o.amount) -- total\nFROM orders o WHERE o.status = 'paid' AND o.n >= 2.5 GROUP BY 1", "")
	for _, m := range []struct{ text, class string }{{"SELECT", workflow.CodeKeyword}, {"sum", workflow.CodeFunction},
		{"-- total", workflow.CodeComment}, {"FROM", workflow.CodeKeyword}, {"'paid'", workflow.CodeString}, {">=", workflow.CodeOperator},
		{"2.5", workflow.CodeNumber}, {"GROUP", workflow.CodeKeyword}, {"BY", workflow.CodeKeyword}} {
		if !hasMark(c, m.text, m.class) {
			t.Errorf("%q is not marked %s: %+v", m.text, m.class, c.Runs())
		}
	}
	for _, r := range c.Runs() {
		if r.Mark != nil && r.Text == "name" {
			t.Errorf("the column regions.name is marked as a keyword")
		}
	}
	if bad := dataagent.SQLCode("SELECT 'unterminated", ""); len(bad.Marks) != 0 {
		t.Errorf("SQL the scanner refuses is marked: %+v", bad.Marks)
	}
}

func hasMark(c workflow.Code, text, class string) bool {
	for _, r := range c.Runs() {
		if r.Mark != nil && r.Text == text && r.Mark.Class == class {
			return true
		}
	}
	return false
}
