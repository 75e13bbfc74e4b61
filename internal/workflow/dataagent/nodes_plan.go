package dataagent

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"weft/internal/graph"
	"weft/internal/workflow/dataagent/nlsql"
)

// planner builds the plan: from the question, the reviewer's feedback and
// the last plan's validation error, if any.
func (w *wf) planner(ctx context.Context, s State) (graph.Command, error) {
	s, ws, err := w.withFeedback(ctx, s)
	if err != nil {
		return graph.Command{}, err
	}
	in := planIn{questionIn: s.question(s.recalled()), Standalone: s.Query.Standalone, Python: w.d.Python != nil, Error: s.PlanError}
	p, err := planTask.Do(ctx, w.d.LLM, in)
	if err != nil {
		return graph.Command{}, err
	}
	v := s.PlanVersion + 1
	return graph.Update(append(ws, keyPlan.Set(&p), keyPlanVersion.Set(v), keyPlanError.Set(""), keySteps.Set(nil), keyCurrent.Set(0),
		keyApproved.Set(false), appendPlannerChunk(fmt.Sprintf("plan %d:\n%s", v, p.Text())))...), nil
}

// withFeedback brings what a reviewer's feedback names into the turn: the
// notes it matches and the tables it needs, so that the Planner can rebuild
// the plan with them ("only East China" needs the note that defines East
// China). Without feedback it changes nothing.
func (w *wf) withFeedback(ctx context.Context, s State) (State, []graph.Write, error) {
	fb := s.feedbackTexts()
	if len(fb) == 0 {
		return s, nil, nil
	}
	notes, err := w.d.Evidence.SearchNotes(ctx, s.Schema, strings.Join(fb, " "), w.d.EvidenceK)
	if err != nil {
		return s, nil, err
	}
	evidence := append([]nlsql.Note(nil), s.Evidence...)
	for _, n := range notes {
		if !slices.ContainsFunc(evidence, func(e nlsql.Note) bool { return e.ID == n.ID }) {
			evidence = append(evidence, n)
		}
	}
	s.Evidence = evidence
	out, err := schemaRecallTask.Do(ctx, w.d.LLM, s.question(s.Catalog))
	if err != nil {
		return s, nil, err
	}
	tables := append([]string(nil), s.Recalled...)
	for _, t := range out.Tables {
		if !slices.Contains(tables, t) {
			tables = append(tables, t)
		}
	}
	rel, err := tableRelationTask.Do(ctx, w.d.LLM, relationIn{Tables: tables, Catalog: s.Catalog})
	if err != nil {
		return s, nil, err
	}
	if nlsql.CheckRelations(s.Catalog, rel.Relations) != nil {
		fk := nlsql.Relations(s.Catalog, tables)
		rel = Relation{Tables: fk.Tables, Relations: fk.Relations}
	}
	s.Recalled, s.Relation = tables, &rel
	return s, []graph.Write{keyEvidence.Set(evidence), keyRecalled.Set(tables), keyRelation.Set(&rel)}, nil
}

// planExecutor validates a new plan, holds it for review when a human
// reviews plans, and moves to the next pending step (skipping a python
// step whose data never came).
func (w *wf) planExecutor(_ context.Context, s State) (graph.Command, error) {
	var ws []graph.Write
	steps := s.Steps
	if len(steps) == 0 {
		if s.Plan == nil {
			return graph.Update(keyPlanError.Set("there is no plan"), keyPlanTries.Set(s.PlanTries+1)), nil
		}
		if err := s.Plan.Validate(w.d.Python != nil); err != nil {
			ws = append(ws, keyPlanError.Set(err.Error()), keyPlanTries.Set(s.PlanTries+1))
			if s.PlanTries+1 >= w.d.MaxPlanAttempts {
				ws = append(ws, keyStatus.Set(StatusFailed))
			}
			return graph.Update(ws...), nil
		}
		for _, st := range s.Plan.Steps {
			steps = append(steps, StepRun{PlanStep: st, Status: StepPending})
		}
		ws = append(ws, keyPlanTries.Set(0))
	}
	if s.HumanReviewEnabled && !s.Approved {
		return graph.Update(append(ws, keySteps.Set(steps), keyStatus.Set(StatusWaitingReview))...), nil
	}
	steps = append([]StepRun(nil), steps...)
	next := len(steps)
	for i := range steps {
		if steps[i].Status != StepPending {
			continue
		}
		if steps[i].Tool == ToolPython && lastData(steps[:i]) == nil {
			steps[i].Status, steps[i].Reason = StepSkipped, "no sql step before it produced data"
			continue
		}
		steps[i].Status = StepRunning
		next = i
		break
	}
	return graph.Update(append(ws, keySteps.Set(steps), keyCurrent.Set(next), keySQL.Set(nil), keySQLTries.Set(0),
		keyConsistency.Set(nil), keyPythonCode.Set(""), keyStatus.Set(StatusRunning))...), nil
}

// lastData is the result of the last sql step that produced one.
func lastData(steps []StepRun) *ResultSet {
	for i := len(steps) - 1; i >= 0; i-- {
		if steps[i].Tool == ToolSQL && steps[i].Status == StepDone && steps[i].Result != nil {
			return steps[i].Result
		}
	}
	return nil
}

// humanFeedback pauses with the plan for a reviewer; the decision (the
// resume value, or the same writes applied with update_state) approves it
// or sends it back to the Planner with feedback.
func (w *wf) humanFeedback(ctx context.Context, s State) (graph.Command, error) {
	d, err := graph.Interrupt[Decision](ctx, ReviewOf(s))
	if err != nil {
		return graph.Command{}, err
	}
	ws, err := DecisionWrites(s, d)
	if err != nil {
		return graph.Command{}, err
	}
	return graph.Update(ws...), nil
}

// offlinePlan is the offline Planner: a sql step (with its draft), a python
// step when the answer has several rows (or a chart is asked for) and
// Python is available, and the report.
func offlinePlan(in planIn) Plan {
	u := nlsql.Understand(in.question())
	zh := u.Spec.Chinese()
	var p Plan
	sqlStep := PlanStep{Step: 1, Tool: ToolSQL, Instruction: u.Spec.Describe(zh), SQLDraft: u.SQL}
	if !u.Feasible {
		sqlStep.Instruction = strings.Join(in.Parts, " / ")
	}
	p.Steps = append(p.Steps, sqlStep)
	if in.Python && wantsPython(u.Spec) {
		p.Steps = append(p.Steps, PlanStep{Step: 2, Tool: ToolPython, Instruction: pythonInstruction(u.Spec, zh)})
	}
	p.Steps = append(p.Steps, PlanStep{Step: len(p.Steps) + 1, Tool: ToolReport, Instruction: pick(zh,
		"Report the answer: the question, this plan, the SQL, the result table, the chart if any, and a summary with the key numbers.",
		"生成报告：问题、计划、SQL、结果表、图表（如有）以及包含关键数字的总结。")})
	var thought []string
	thought = append(thought, pick(zh, "The question asks: ", "问题要求：")+u.Spec.Describe(zh)+".")
	for _, d := range u.Definitions {
		thought = append(thought, fmt.Sprintf(pick(zh, "Note %s defines %s as %s.", "业务说明 %s：%s 即 %s。"), d.NoteID, d.Term, d.Meaning))
	}
	if fb := in.Feedback; len(fb) > 0 {
		thought = append(thought, pick(zh, "Reviewer feedback applied: ", "已采纳审核意见：")+strings.Join(fb, " / "))
	}
	if len(u.Ignored) > 0 {
		thought = append(thought, pick(zh, "Words of the feedback that map to nothing in the schema, so were not used: ", "审核意见中无法对应到数据的词（未采用）：")+strings.Join(u.Ignored, ", "))
	}
	if in.Error != "" {
		thought = append(thought, pick(zh, "The previous plan was refused: ", "上一版计划被拒绝：")+in.Error)
	}
	if !u.Feasible {
		thought = append(thought, pick(zh, "It cannot be answered as asked: ", "按现有要求无法回答：")+strings.Join(u.Problems, "; "))
	}
	p.Thought = strings.Join(thought, " ")
	return p
}

// wantsPython: a chart asked for, or several rows to chart (not refused).
func wantsPython(s nlsql.Spec) bool {
	if s.Chart != nil {
		return *s.Chart
	}
	return len(s.Dims) > 0 && s.Limit != 1 && s.Kind != nlsql.SpecList
}

func pythonInstruction(s nlsql.Spec, zh bool) string {
	chart := pick(zh, "a bar chart", "柱状图")
	for _, d := range s.Dims {
		if d.Bucket != "" {
			chart = pick(zh, "a line chart over time", "随时间变化的折线图")
		}
	}
	return fmt.Sprintf(pick(zh, "Analyse the result with pandas: total, mean, the largest and smallest group and its share, the change from first to last period; draw %s of %s.",
		"用 pandas 分析结果：合计、均值、最大与最小的分组及其占比、首末期变化；绘制%s（%s）。"), chart, s.Measure.Name)
}

func pick(zh bool, en, cn string) string {
	if zh {
		return cn
	}
	return en
}
