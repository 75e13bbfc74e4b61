package dataagent

import (
	"context"
	"fmt"
	"strings"

	"weft/internal/graph"
	"weft/internal/workflow"
)

// ReportChunk is a custom event ReportGenerator streams: the report, a
// section at a time, then Done.
type ReportChunk struct {
	Type string `json:"type"` // "report_chunk"
	Turn int    `json:"turn"`
	Seq  int    `json:"seq"`
	Text string `json:"text,omitempty"`
	Done bool   `json:"done,omitempty"`
}

// previewRows is how many rows of a result the report shows.
const previewRows = 20

// reportGenerator writes the turn's report: the answer, or why there is
// none (cannot answer, the feedback limit, no valid plan). It streams the
// report as it is written, stores it as Markdown and each result as CSV,
// and closes the turn.
func (w *wf) reportGenerator(ctx context.Context, s State) (graph.Command, error) {
	zh := s.language() == "zh"
	status, summary, err := w.outcome(ctx, s)
	if err != nil {
		return graph.Command{}, err
	}
	seq := 0
	var md strings.Builder
	emit := func(text string) {
		md.WriteString(text)
		graph.Emit(ctx, ReportChunk{Type: EventReportChunk, Turn: s.Turn, Seq: seq, Text: text})
		seq++
	}
	question := s.Query.Standalone
	if question == "" {
		question = s.Input
	}
	emit(fmt.Sprintf("# %s\n\n", question))
	emit(fmt.Sprintf(pick(zh, "_Schema %s · as of %s · %s_\n\n", "_数据集 %s · 截至 %s · %s_\n\n"), s.Schema, s.AsOf.Format("2006-01-02 15:04"), w.modelLabel(zh)))
	emit(pick(zh, "## Answer\n\n", "## 结论\n\n") + summary + "\n\n")
	var refs []workflow.ArtifactRef
	if s.Plan != nil {
		emit(planSection(s, zh))
	}
	for _, st := range s.Steps {
		text, ref, err := w.stepSection(ctx, s, st, zh)
		if err != nil {
			return graph.Command{}, err
		}
		if ref != nil {
			refs = append(refs, *ref)
		}
		if st.Python != nil && st.Python.Chart != nil {
			refs = append(refs, *st.Python.Chart)
		}
		if text != "" {
			emit(text)
		}
	}
	if s.Feasibility != nil && len(s.Feasibility.Definitions) > 0 {
		emit(notesSection(s, zh))
	}
	ref, err := w.d.Artifacts.PutArtifact(ctx, workflow.Artifact{Key: fmt.Sprintf("turns/%d/report.md", s.Turn),
		Name: fmt.Sprintf("report-turn-%d.md", s.Turn), ContentType: "text/markdown; charset=utf-8", Data: []byte(md.String())})
	if err != nil {
		return graph.Command{}, fmt.Errorf("store report: %w", err)
	}
	refs = append([]workflow.ArtifactRef{ref}, refs...)
	graph.Emit(ctx, ReportChunk{Type: EventReportChunk, Turn: s.Turn, Seq: seq, Done: true})
	rep := &Report{Turn: s.Turn, Status: status, Language: s.language(), Question: question, Summary: summary,
		Markdown: md.String(), Artifacts: refs}
	steps := append([]StepRun(nil), s.Steps...)
	for i := range steps {
		if steps[i].Tool == ToolReport && steps[i].Status != StepDone {
			steps[i].Status = StepDone
		}
	}
	return graph.Update(keyReport.Set(rep), keyStatus.Set(status), keySteps.Set(steps), finishTurnWith(s, status, summary, recordOf(s, steps, rep))), nil
}

func (w *wf) modelLabel(zh bool) string {
	if w.d.LLM.Offline() {
		return pick(zh, "computed by the offline model ("+w.d.LLM.Name()+"), no language model was called", "由离线模型计算（"+w.d.LLM.Name()+"），未调用语言模型")
	}
	return pick(zh, "model: ", "模型：") + w.d.LLM.Name()
}

// outcome is the turn's status and its summary.
func (w *wf) outcome(ctx context.Context, s State) (string, string, error) {
	zh := s.language() == "zh"
	switch {
	case s.Feasibility != nil && !s.Feasibility.Feasible:
		return StatusCannotAnswer, cannotAnswer(s, zh), nil
	case s.rejections() > MaxFeedbackRounds:
		last := s.Feedback[len(s.Feedback)-1]
		return StatusStopped, fmt.Sprintf(pick(zh,
			"Stopped: the plan was rejected %d times, over the limit of %d, so the turn was ended without running it. Last feedback: %q.",
			"已强制终止：计划被拒绝 %d 次，超过上限 %d 次，本轮未执行计划。最后一条意见：“%s”。"), s.rejections(), MaxFeedbackRounds, last.Feedback), nil
	case s.PlanError != "":
		return StatusFailed, fmt.Sprintf(pick(zh, "No valid plan after %d attempts: %s", "尝试 %d 次后仍没有有效的计划：%s"), s.PlanTries, s.PlanError), nil
	}
	for _, st := range s.Steps {
		if st.Tool == ToolSQL && st.Status == StepFailed {
			return StatusFailed, fmt.Sprintf(pick(zh, "The SQL step failed after %d attempts: %s", "SQL 步骤尝试 %d 次后失败：%s"), st.Attempts, st.Reason), nil
		}
	}
	out, err := summaryTask.Do(ctx, w.d.LLM, summaryIn{questionIn: s.question(s.recalled()), Standalone: s.Query.Standalone,
		Steps: s.Steps, Language: s.language()})
	if err != nil {
		return "", "", err
	}
	return StatusAnswered, out.Summary, nil
}

// cannotAnswer says why the question cannot be answered and what is missing.
func cannotAnswer(s State, zh bool) string {
	f := s.Feasibility
	var b strings.Builder
	b.WriteString(pick(zh, "Cannot answer, because ", "无法回答，因为"))
	b.WriteString(strings.Join(f.Reasons, pick(zh, "; ", "；")))
	b.WriteString(pick(zh, ".", "。"))
	if len(f.Missing) > 0 {
		fmt.Fprintf(&b, pick(zh, " Missing from schema %s: %s — no table, column, value or business note matches it. Add the data, or a business note that defines it, and ask again.",
			" 数据集 %s 中缺少：%s（没有任何表、列、取值或业务说明与之对应）。请补充数据或添加定义它的业务说明后再问。"), s.Schema, quoted(f.Missing))
	}
	return b.String()
}

func quoted(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = "“" + w + "”"
	}
	return strings.Join(q, ", ")
}

func planSection(s State, zh bool) string {
	var b strings.Builder
	b.WriteString(pick(zh, "## Plan\n\n", "## 计划\n\n"))
	for _, st := range s.Plan.Steps {
		fmt.Fprintf(&b, "%d. **%s** — %s\n", st.Step, st.Tool, st.Instruction)
	}
	for _, f := range s.Feedback {
		fmt.Fprintf(&b, pick(zh, "\n- Plan %d %s", "\n- 计划 %d：%s"), f.PlanVersion, decisionText(f, zh))
	}
	b.WriteString("\n\n")
	return b.String()
}

func decisionText(f Feedback, zh bool) string {
	who := ""
	if f.Reviewer != "" {
		who = pick(zh, " by "+f.Reviewer, "（"+f.Reviewer+"）")
	}
	if f.Decision == DecisionApprove {
		return pick(zh, "approved"+who, "已批准"+who)
	}
	return pick(zh, "rejected"+who+": “"+f.Feedback+"”", "被拒绝"+who+"：“"+f.Feedback+"”")
}

// stepSection writes one step: its SQL and result table (stored as CSV),
// its chart and findings, or why it failed or was left out.
func (w *wf) stepSection(ctx context.Context, s State, st StepRun, zh bool) (string, *workflow.ArtifactRef, error) {
	var b strings.Builder
	switch st.Tool {
	case ToolReport:
		return "", nil, nil
	case ToolSQL:
		fmt.Fprintf(&b, pick(zh, "## Step %d · SQL\n\n", "## 步骤 %d · SQL\n\n"), st.Step)
		sql := st.SQL
		if sql == "" && s.SQL != nil && s.Current == st.Step-1 {
			sql = s.SQL.SQL
		}
		if sql != "" {
			b.WriteString("```sql\n" + sql + "\n```\n\n")
		}
	case ToolPython:
		fmt.Fprintf(&b, pick(zh, "## Step %d · Python\n\n", "## 步骤 %d · Python\n\n"), st.Step)
	}
	switch st.Status {
	case StepFailed, StepDegraded, StepSkipped:
		label := map[string]string{StepFailed: pick(zh, "Failed", "失败"), StepDegraded: pick(zh, "Left out (degraded)", "已降级略过"),
			StepSkipped: pick(zh, "Skipped", "已跳过")}[st.Status]
		fmt.Fprintf(&b, "**%s:** %s\n\n", label, st.Reason)
		if st.Tool == ToolPython && st.Status == StepDegraded {
			b.WriteString(pick(zh, "The report goes on without the Python analysis.\n\n", "报告在没有 Python 分析的情况下继续。\n\n"))
		}
	}
	var ref *workflow.ArtifactRef
	if st.Result != nil {
		b.WriteString(resultTable(*st.Result, zh))
		r, err := w.d.Artifacts.PutArtifact(ctx, workflow.Artifact{Key: fmt.Sprintf("turns/%d/step-%d.csv", s.Turn, st.Step),
			Name: fmt.Sprintf("result-turn-%d-step-%d.csv", s.Turn, st.Step), ContentType: "text/csv; charset=utf-8", Data: st.Result.CSV()})
		if err != nil {
			return "", nil, fmt.Errorf("store result: %w", err)
		}
		ref = &r
		fmt.Fprintf(&b, pick(zh, "CSV: %s\n\n", "CSV：%s\n\n"), r.Name)
	}
	if st.Python != nil && st.Python.Chart != nil {
		fmt.Fprintf(&b, "![chart](%s)\n\n", st.Python.Chart.Name)
	}
	for _, f := range st.Findings {
		b.WriteString("- " + f + "\n")
	}
	if len(st.Findings) > 0 {
		b.WriteString("\n")
	}
	return b.String(), ref, nil
}

// resultTable is a result's first rows as a Markdown table, with its count.
func resultTable(r ResultSet, zh bool) string {
	var b strings.Builder
	cells := func(row []string) {
		b.WriteString("|")
		for _, c := range row {
			b.WriteString(" " + strings.ReplaceAll(c, "|", `\|`) + " |")
		}
		b.WriteString("\n")
	}
	var head, rule []string
	for _, c := range r.Columns {
		head, rule = append(head, c.Name), append(rule, "---")
	}
	cells(head)
	cells(rule)
	for i, row := range r.Rows {
		if i == previewRows {
			break
		}
		cells(row)
	}
	n := fmt.Sprintf(pick(zh, "%d rows", "共 %d 行"), len(r.Rows))
	if len(r.Rows) == 1 && !zh {
		n = "1 row"
	}
	if len(r.Rows) > previewRows {
		n += fmt.Sprintf(pick(zh, ", the first %d shown", "，显示前 %d 行"), previewRows)
	}
	if r.Truncated {
		n += fmt.Sprintf(pick(zh, "; the query returned more than %d rows and was cut off there", "；查询结果超过 %d 行，已截断"), r.Limit)
	}
	return b.String() + "\n" + n + pick(zh, ".\n\n", "。\n\n")
}

func notesSection(s State, zh bool) string {
	var b strings.Builder
	b.WriteString(pick(zh, "## Business notes used\n\n", "## 使用的业务说明\n\n"))
	for _, d := range s.Feasibility.Definitions {
		fmt.Fprintf(&b, "- **%s** (%s): `%s`\n", d.Term, d.NoteID, d.Meaning)
	}
	b.WriteString("\n")
	return b.String()
}
