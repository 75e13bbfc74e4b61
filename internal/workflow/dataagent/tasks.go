package dataagent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"weft/internal/llm"
	"weft/internal/workflow/dataagent/nlsql"
)

// The model calls of the workflow. Each has a system prompt for a model
// and an offline answer computed by package nlsql from the same input.

type intentIn struct {
	Message     string    `json:"message"`
	HasPrevious bool      `json:"has_previous_question"`
	Previous    string    `json:"previous_question,omitempty"`
	Schema      string    `json:"schema"`
	Now         time.Time `json:"now"`
}

var intentTask = llm.Task[intentIn, nlsql.Intent]{
	Name: "dataagent.intent",
	System: `You sort a message sent to a data-analysis agent. Answer JSON {"analysis": bool, "follow_up": bool, "language": "en"|"zh", "kind": string, "reply": string}.
analysis: the message asks something of the data (a number, a list, a comparison). follow_up: it narrows or changes the previous question ("and for last quarter?", "只看华东"). When analysis is false, reply answers it directly in the message's language and says what the agent can do.`,
	Offline: func(_ context.Context, in intentIn) (nlsql.Intent, error) {
		return nlsql.ClassifyIntent(in.Message, in.HasPrevious, in.Schema, in.Now), nil
	},
}

type enhanceIn struct {
	Message  string    `json:"message"`
	FollowUp bool      `json:"follow_up"`
	Previous *Turn     `json:"previous,omitempty"`
	Evidence []string  `json:"evidence,omitempty"`
	Now      time.Time `json:"now"`
}

var enhanceTask = llm.Task[enhanceIn, Query]{
	Name: "dataagent.query_enhance",
	System: `You rewrite an analyst's message as the question it asks. Answer JSON {"parts": [string], "standalone": string, "follow_up": bool}.
For a follow-up, parts are the previous question's parts followed by the message, and standalone is the previous question rewritten with the change ("What was the GMV last quarter?"). Otherwise parts is [message] and standalone the message.`,
	Offline: func(_ context.Context, in enhanceIn) (Query, error) {
		if !in.FollowUp {
			return Query{Parts: []string{in.Message}, Standalone: in.Message}, nil
		}
		if in.Previous == nil {
			return Query{FollowUp: true}, nil
		}
		parts := append(append([]string(nil), in.Previous.Parts...), in.Message)
		return Query{Parts: parts, Standalone: nlsql.Enhance(in.Previous.Standalone, in.Message, in.Now), FollowUp: true}, nil
	},
}

// questionIn is a question with what it is read against.
type questionIn struct {
	Parts    []string      `json:"parts"`
	Lenient  []int         `json:"lenient,omitempty"`
	Feedback []string      `json:"feedback,omitempty"`
	Catalog  nlsql.Catalog `json:"catalog"`
	Notes    []nlsql.Note  `json:"notes"`
	Now      time.Time     `json:"now"`
}

func (in questionIn) question() nlsql.Question {
	return nlsql.Question{Parts: in.Parts, Lenient: in.Lenient, Feedback: in.Feedback, Catalog: in.Catalog, Notes: in.Notes, Now: in.Now}
}

type recallOut struct {
	Tables []string `json:"tables"`
}

var schemaRecallTask = llm.Task[questionIn, recallOut]{
	Name:   "dataagent.schema_recall",
	System: `You pick the tables of a database catalog a question needs, using the catalog's names, comments and values and the business notes. Answer JSON {"tables": [table names]}; [] when none fits.`,
	Offline: func(_ context.Context, in questionIn) (recallOut, error) {
		return recallOut{Tables: nlsql.Recall(in.question())}, nil
	},
}

type relationIn struct {
	Tables  []string      `json:"tables"`
	Catalog nlsql.Catalog `json:"catalog"`
	Error   string        `json:"previous_error,omitempty"`
}

var tableRelationTask = llm.Task[relationIn, Relation]{
	Name:   "dataagent.table_relation",
	System: `You connect tables along the catalog's foreign keys. Answer JSON {"tables": [names, including tables needed in between], "relations": [{"from": referencing table, "to": referenced table, "from_columns": [...], "to_columns": [...]}]}. Use only foreign keys the catalog lists.`,
	Offline: func(_ context.Context, in relationIn) (Relation, error) {
		s := nlsql.Relations(in.Catalog, in.Tables)
		return Relation{Tables: s.Tables, Relations: s.Relations}, nil
	},
}

var feasibilityTask = llm.Task[questionIn, Feasibility]{
	Name:   "dataagent.feasibility",
	System: `You decide whether a question can be answered from the catalog and the business notes, without guessing. Answer JSON {"feasible": bool, "missing": [phrases nothing maps to], "reasons": [why not], "definitions": [{"note_id","term","kind","meaning"}]}.`,
	Offline: func(_ context.Context, in questionIn) (Feasibility, error) {
		u := nlsql.Understand(in.question())
		return Feasibility{Feasible: u.Feasible, Missing: u.Missing, Reasons: u.Problems, Definitions: u.Definitions}, nil
	},
}

type planIn struct {
	questionIn
	Standalone string `json:"standalone"`
	Python     bool   `json:"python_available"`
	Error      string `json:"previous_plan_error,omitempty"`
}

var planTask = llm.Task[planIn, Plan]{
	Name: "dataagent.plan",
	System: `You plan the answer to a data question. Answer JSON {"thought": string, "steps": [{"step": 1, "tool": "sql"|"python"|"report", "instruction": string, "sql_draft": string (sql steps only)}]}.
Start with a sql step, add a python step (pandas and matplotlib: summary figures and a chart) only when python_available and the result has several rows, end with one report step. Apply the reviewer's feedback. If previous_plan_error is set, fix what it names.`,
	Offline: func(_ context.Context, in planIn) (Plan, error) { return offlinePlan(in), nil },
}

type sqlIn struct {
	questionIn
	Instruction string `json:"instruction"`
	PreviousSQL string `json:"previous_sql,omitempty"`
	Error       string `json:"previous_error,omitempty"`
}

var sqlTask = llm.Task[sqlIn, SQLDraft]{
	Name:   "dataagent.sql_generate",
	System: `You write one PostgreSQL SELECT that answers the instruction, using only the catalog's tables and columns (qualified by table name), joins along its foreign keys, and every filter the business notes define for the terms used. Answer JSON {"sql": string, "explanation": string}. If previous_error is set, the previous SQL failed with it: fix the cause.`,
	Offline: func(_ context.Context, in sqlIn) (SQLDraft, error) {
		u := nlsql.Understand(in.question())
		if !u.Feasible {
			return SQLDraft{Error: strings.Join(u.Problems, "; ")}, nil
		}
		return SQLDraft{SQL: u.SQL, Explanation: explain(u)}, nil
	},
}

// explain says how the offline model read the question.
func explain(u nlsql.Understanding) string {
	var parts []string
	for _, d := range u.Definitions {
		parts = append(parts, fmt.Sprintf("%s: %s (note %s)", d.Term, d.Meaning, d.NoteID))
	}
	parts = append(parts, u.Spec.Adjusted...)
	return strings.Join(parts, "; ")
}

type pythonIn struct {
	Question    string         `json:"question"`
	Instruction string         `json:"instruction"`
	Columns     []ResultColumn `json:"columns"`
	Head        [][]string     `json:"first_rows"`
	Rows        int            `json:"row_count"`
	Language    string         `json:"language"`
}

type pythonOut struct {
	Code string `json:"code"`
}

var pythonTask = llm.Task[pythonIn, pythonOut]{
	Name:   "dataagent.python_generate",
	System: `You write Python 3 (pandas, matplotlib with the Agg backend) that reads result.csv in the working directory, computes the figures the instruction asks for, saves one chart as chart.png and prints a JSON object of findings on its last line. No network, no other files. Answer JSON {"code": string}.`,
	Offline: func(_ context.Context, in pythonIn) (pythonOut, error) {
		return pythonOut{Code: offlinePython(in)}, nil
	},
}

type analyzeIn struct {
	Question string         `json:"question"`
	Stdout   string         `json:"stdout"`
	Columns  []ResultColumn `json:"columns"`
	Language string         `json:"language"`
}

type analyzeOut struct {
	Findings []string `json:"findings"`
}

var analyzeTask = llm.Task[analyzeIn, analyzeOut]{
	Name:   "dataagent.python_analyze",
	System: `You read the output of a Python analysis step and state its findings as short sentences with their numbers, in the question's language. Answer JSON {"findings": [string]}.`,
	Offline: func(_ context.Context, in analyzeIn) (analyzeOut, error) {
		return analyzeOut{Findings: offlineFindings(in)}, nil
	},
}

type summaryIn struct {
	questionIn
	Standalone string    `json:"standalone"`
	Steps      []StepRun `json:"steps"`
	Language   string    `json:"language"`
}

type summaryOut struct {
	Summary string `json:"summary"`
}

var summaryTask = llm.Task[summaryIn, summaryOut]{
	Name:   "dataagent.report_summary",
	System: `You summarise the answer to a data question in two or three plain sentences with the key numbers, in the question's language, using only the numbers of the results given. Answer JSON {"summary": string}.`,
	Offline: func(_ context.Context, in summaryIn) (summaryOut, error) {
		return summaryOut{Summary: offlineSummary(in)}, nil
	},
}
