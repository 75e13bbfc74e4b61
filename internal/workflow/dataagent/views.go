package dataagent

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"weft/internal/workflow"
)

// Panel is the thread page's conversation view: each turn of the thread, the
// earlier ones from their records and the current one from the state as it
// runs, with its plan's steps and their status, the SQL (highlighted), the
// result table, the chart, the review decisions and the report.
func Panel(_ context.Context, t workflow.Thread) ([]workflow.Block, error) {
	s, err := workflow.DecodeState[State](t.State)
	if err != nil {
		return nil, fmt.Errorf("decode the data agent's state: %w", err)
	}
	var bs []workflow.Block
	for i, turn := range s.Context.Turns {
		if i == len(s.Context.Turns)-1 && !turn.Done {
			bs = append(bs, currentTurn(s, turn, t.JobStatus))
			continue
		}
		bs = append(bs, finishedTurn(turn))
	}
	if len(bs) == 0 {
		return []workflow.Block{workflow.Notice{Kind: "info", Text: "The question is queued: its plan and results appear here as the agent works."}}, nil
	}
	return bs, nil
}

// ReportView is the thread's report: the latest finished turn's answer and
// its downloads (nil before a turn has finished).
func ReportView(_ context.Context, t workflow.Thread) ([]workflow.Block, error) {
	s, err := workflow.DecodeState[State](t.State)
	if err != nil {
		return nil, fmt.Errorf("decode the data agent's state: %w", err)
	}
	for i := len(s.Context.Turns) - 1; i >= 0; i-- {
		turn := s.Context.Turns[i]
		if !turn.Done {
			continue
		}
		bs := []workflow.Block{workflow.KeyValues{Items: []workflow.KV{{Key: "Question", Value: turn.Question},
			{Key: "Outcome", Value: statusWords(turn.Status), Badge: statusBadge(turn.Status)}}},
			workflow.Paragraph{Text: turn.Summary}}
		if turn.Record != nil && turn.Record.Report != nil {
			bs = append(bs, downloads(turn.Record.Report.Artifacts))
		}
		return bs, nil
	}
	return nil, nil
}

// finishedTurn is a turn from its record.
func finishedTurn(turn Turn) workflow.Block {
	sec := turnSection(turn.Index, turn.Question, turn.Status)
	if turn.Status == StatusNotAnalysis || turn.Record == nil {
		sec.Blocks = append(sec.Blocks, workflow.Paragraph{Text: turn.Summary})
		return sec
	}
	rec := turn.Record
	if turn.Standalone != "" && turn.Standalone != turn.Question {
		sec.Blocks = append(sec.Blocks, workflow.Paragraph{Text: "Read as: " + turn.Standalone, Muted: true})
	}
	sec.Blocks = append(sec.Blocks, stepBlocks(rec.Steps, nil)...)
	if len(rec.Feedback) > 0 {
		sec.Blocks = append(sec.Blocks, feedbackTable(rec.Feedback))
	}
	if rec.Report != nil {
		sec.Blocks = append(sec.Blocks, reportBlocks(*rec.Report)...)
	} else {
		sec.Blocks = append(sec.Blocks, workflow.Paragraph{Text: turn.Summary})
	}
	return sec
}

// currentTurn is the turn in progress, from the state's keys.
func currentTurn(s State, turn Turn, jobStatus string) workflow.Block {
	status := s.Status
	if jobStatus == "failed" {
		status = StatusFailed
	}
	sec := turnSection(turn.Index, turn.Question, status)
	if s.Query.Standalone != "" && s.Query.Standalone != turn.Question {
		sec.Blocks = append(sec.Blocks, workflow.Paragraph{Text: "Read as: " + s.Query.Standalone, Muted: true})
	}
	switch {
	case s.Status == StatusWaitingReview:
		sec.Blocks = append(sec.Blocks, workflow.Notice{Kind: "warn",
			Text: fmt.Sprintf("Plan %d waits for a reviewer: it runs once approved; a rejection with feedback has it rebuilt.", s.PlanVersion)})
	case s.Plan == nil:
		sec.Blocks = append(sec.Blocks, workflow.Paragraph{Text: "Reading the question, recalling the notes and the schema…", Muted: true})
	}
	steps := s.Steps
	if len(steps) == 0 && s.Plan != nil {
		for _, st := range s.Plan.Steps {
			steps = append(steps, StepRun{PlanStep: st, Status: StepPending})
		}
	}
	var draft *SQLDraft
	if st, ok := s.current(); ok && st.Tool == ToolSQL && st.Status == StepRunning {
		draft = s.SQL
	}
	sec.Blocks = append(sec.Blocks, stepBlocks(steps, draft)...)
	if len(s.Feedback) > 0 {
		sec.Blocks = append(sec.Blocks, feedbackTable(s.Feedback))
	}
	if s.Report != nil {
		sec.Blocks = append(sec.Blocks, reportBlocks(*s.Report)...)
	}
	return sec
}

func turnSection(index int, question, status string) workflow.Section {
	return workflow.Section{ID: "turn-" + strconv.Itoa(index), Title: fmt.Sprintf("Turn %d · %s", index, question),
		Badge: statusWords(status), Class: statusBadge(status)}
}

// stepBlocks are a plan's steps as a plan block, then each step's SQL,
// result table, chart and findings. draft is the running sql step's SQL
// being checked, if any.
func stepBlocks(steps []StepRun, draft *SQLDraft) []workflow.Block {
	if len(steps) == 0 {
		return nil
	}
	plan := workflow.Plan{Title: "Plan"}
	for _, st := range steps {
		plan.Steps = append(plan.Steps, workflow.PlanStep{N: st.Step, Tool: st.Tool, Instruction: st.Instruction, Status: st.Status,
			Detail: stepDetail(st)})
	}
	bs := []workflow.Block{plan}
	for _, st := range steps {
		switch st.Tool {
		case ToolSQL:
			sql := st.SQL
			caption := fmt.Sprintf("Step %d · SQL", st.Step)
			if sql == "" && draft != nil && st.Status == StepRunning {
				sql, caption = draft.SQL, fmt.Sprintf("Step %d · SQL being checked", st.Step)
			}
			if sql == "" {
				sql, caption = st.SQLDraft, fmt.Sprintf("Step %d · SQL draft", st.Step)
			}
			if sql != "" {
				bs = append(bs, SQLCode(sql, caption))
			}
			if st.Result != nil {
				bs = append(bs, resultBlock(st.Step, *st.Result))
			}
		case ToolPython:
			if st.Python != nil && st.Python.Chart != nil {
				bs = append(bs, workflow.Image{Key: st.Python.Chart.Key, Alt: fmt.Sprintf("Chart of step %d", st.Step),
					Caption: fmt.Sprintf("Step %d · chart drawn by the sandboxed Python analysis", st.Step)})
			}
			for _, f := range st.Findings {
				bs = append(bs, workflow.Paragraph{Text: f})
			}
			if st.Status == StepDegraded {
				bs = append(bs, workflow.Notice{Kind: "warn", Text: "The Python step was left out: " + st.Reason + ". The report goes on without it."})
			}
		}
	}
	return bs
}

func stepDetail(st StepRun) string {
	var parts []string
	if st.Attempts > 1 {
		parts = append(parts, fmt.Sprintf("%d attempts", st.Attempts))
	}
	if st.Reason != "" {
		parts = append(parts, st.Reason)
	} else if n := len(st.Errors); n > 0 && st.Status != StepDone {
		parts = append(parts, "last attempt: "+st.Errors[n-1])
	}
	return strings.Join(parts, " · ")
}

// resultBlock is a result's first rows as a table, saying how many rows
// there are and whether the query was cut off.
func resultBlock(step int, r ResultSet) workflow.Table {
	t := workflow.Table{Empty: "The query returned no rows."}
	for _, c := range r.Columns {
		typ := workflow.ColText
		if c.Kind == "number" {
			typ = workflow.ColNumber
		}
		t.Columns = append(t.Columns, workflow.Column{Title: c.Name, Type: typ})
	}
	for i, row := range r.Rows {
		if i == previewRows {
			break
		}
		cells := make([]workflow.Cell, len(row))
		for j, v := range row {
			cells[j] = workflow.Cell{Text: v}
		}
		t.Rows = append(t.Rows, workflow.Row{Cells: cells})
	}
	n := r.RowCount()
	caption := fmt.Sprintf("Step %d · result: %d rows", step, n)
	if n == 1 {
		caption = fmt.Sprintf("Step %d · result: 1 row", step)
	}
	if n > previewRows {
		caption += fmt.Sprintf(", the first %d shown", previewRows)
	}
	if r.Truncated {
		caption += fmt.Sprintf("; cut off at the limit of %d rows", r.Limit)
	}
	t.Caption = caption
	return t
}

// reportBlocks are a turn's report: its answer, the Markdown as written,
// and its downloads.
func reportBlocks(r Report) []workflow.Block {
	return []workflow.Block{
		workflow.Heading{Text: "Report", Level: 3},
		workflow.Paragraph{Text: r.Summary},
		workflow.Code{Language: "markdown", Text: r.Markdown, Caption: "The report as Markdown"},
		downloads(r.Artifacts),
	}
}

// downloads lists a report's files: the Markdown, each result as CSV, the
// charts.
func downloads(refs []workflow.ArtifactRef) workflow.Downloads {
	var d workflow.Downloads
	for _, a := range refs {
		label := a.Name
		switch {
		case strings.HasSuffix(a.Key, "report.md"):
			label = "Report (Markdown)"
		case strings.HasSuffix(a.Key, ".csv"):
			label = "Result table (CSV): " + a.Name
		case strings.HasSuffix(a.Key, ".png"):
			label = "Chart (PNG): " + a.Name
		}
		d.Items = append(d.Items, workflow.Download{Key: a.Key, Label: label})
	}
	return d
}

func statusWords(s string) string {
	switch s {
	case StatusRunning, "":
		return "working"
	case StatusWaitingReview:
		return "waiting for review"
	case StatusAnswered:
		return "answered"
	case StatusNotAnalysis:
		return "direct answer"
	case StatusCannotAnswer:
		return "cannot answer"
	case StatusStopped:
		return "stopped: feedback limit"
	}
	return s
}

func statusBadge(s string) string {
	switch s {
	case StatusAnswered, StatusNotAnalysis:
		return "succeeded"
	case StatusWaitingReview:
		return "waiting_review"
	case StatusFailed, StatusStopped:
		return "failed"
	case StatusCannotAnswer:
		return "flag"
	}
	return "running"
}
