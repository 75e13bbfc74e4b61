package dataagent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"weft/internal/graph"
	"weft/internal/workflow"
)

// Title is the workflow's title in the console.
const Title = "Data agent"

// DefaultSchema is the schema the console's questions are about: the demo
// analytics data set.
const DefaultSchema = "analytics"

// DemoQuestion is the question the demo asks.
const DemoQuestion = "GMV by region last month"

// The start form's fields (the API's input keys).
const (
	FieldQuestion    = "question"
	FieldHumanReview = "human_review"
)

// ReasonLabels names the reasons a plan review gives.
var ReasonLabels = map[string]string{ReasonPlanReview: "Plan review"}

// ReasonPlanReview is the reason of every plan review.
const ReasonPlanReview = "plan_review"

// Definition is the data agent as a plug-in of the platform: the seed's
// graph (New), a start form (the question and whether a human approves the
// plan), the review of a plan, the conversation view of the thread's turns
// and a follow-up box that asks a new question on the same thread.
func Definition(d Deps) (workflow.Definition, error) {
	g, err := New(d)
	if err != nil {
		return workflow.Definition{}, err
	}
	return workflow.Definition{
		Name: Name, Title: Title, Graph: g,
		Description: "Answers questions about the analytics data in plain English or Chinese: it plans, writes SQL checked by PostgreSQL's " +
			"parser, runs it read-only, analyses the result in sandboxed Python with a chart, and writes a report. A reviewer can approve " +
			"the plan first; a follow-up on the same thread builds on the last question.",
		Path:         Path,
		Start:        &workflow.StartForm{Fields: StartFields(), Start: startRun},
		FollowUp:     &workflow.StartForm{Fields: FollowUpFields(), Start: startRun},
		CheckInput:   CheckInput,
		SubjectOf:    SubjectOf,
		Describe:     describe,
		Review:       Reviewer{},
		Views:        workflow.Views{Panel: Panel, Report: ReportView, Live: Live},
		EventName:    eventName,
		ReasonLabels: ReasonLabels,
	}, nil
}

// StartFields are the start form's fields.
func StartFields() []workflow.Field {
	return []workflow.Field{
		{Name: FieldQuestion, Label: "Question", Kind: workflow.LongText, Required: true, MaxLength: MaxInputRunes,
			Placeholder: "GMV by region last month",
			Help:        "In English or Chinese, about the demo analytics data (orders, customers, products, regions), e.g. “Top 5 products by sales in 2025 Q3” or “去年各月的成交额”."},
		{Name: FieldHumanReview, Label: "A reviewer approves the plan before it runs", Kind: workflow.Bool},
	}
}

// FollowUpFields are the follow-up box's fields: a question that builds on
// the thread's last one ("and for last quarter?", "只看华东").
func FollowUpFields() []workflow.Field {
	f := StartFields()
	f[0].Label, f[0].Placeholder = "Follow-up question", "and for last quarter?"
	f[0].Help = "Builds on the last question of this thread: “and for last quarter?”, “only East China”, “只看华东”, or a new question."
	return f
}

// Live shows the report's chunks on the thread page as ReportGenerator
// streams them.
func Live(custom json.RawMessage) []workflow.Block {
	c, ok := reportChunkOf(custom)
	switch {
	case !ok:
		return nil
	case c.Done:
		return []workflow.Block{workflow.Notice{Kind: "ok", Text: fmt.Sprintf("Turn %d's report is written.", c.Turn)}}
	case c.Seq == 0:
		return []workflow.Block{workflow.Heading{Text: fmt.Sprintf("Turn %d · the report, as it is written", c.Turn), Level: 3},
			workflow.Code{Language: "markdown", Text: c.Text}}
	}
	return []workflow.Block{workflow.Code{Language: "markdown", Text: c.Text}}
}

// startRun turns the form's values into the run's input.
func startRun(_ context.Context, _ workflow.StartRequest, v workflow.Values) (workflow.Start, error) {
	q := strings.TrimSpace(v.String(FieldQuestion))
	if q == "" {
		return workflow.Start{}, workflow.FieldErrors{FieldQuestion: "is required"}
	}
	b, err := json.Marshal(map[string]any{"input": q, "schema": DefaultSchema, "human_review_enabled": v.Bool(FieldHumanReview)})
	if err != nil {
		return workflow.Start{}, fmt.Errorf("encode the question: %w", err)
	}
	return workflow.Start{Input: b}, nil
}

// describe names runs in lists by their question.
func describe(_ context.Context, _ string, subjects []string) (map[string]workflow.Subject, error) {
	out := map[string]workflow.Subject{}
	for _, s := range subjects {
		if s != "" {
			out[s] = workflow.Subject{Title: s, Detail: "data agent question"}
		}
	}
	return out, nil
}

// EventReportChunk names the report's streamed chunks in the API's events.
const EventReportChunk = "report_chunk"

// eventName names the report's chunks; other events keep their kind's name.
func eventName(ev graph.Event) (string, bool) {
	if ev.Kind != graph.KindCustom {
		return "", false
	}
	if _, ok := reportChunkOf(ev.Data); ok {
		return EventReportChunk, true
	}
	return "", false
}

// reportChunkOf reads a custom event's data as a report chunk (a live
// event carries the value, a stored one its JSON).
func reportChunkOf(data any) (ReportChunk, bool) {
	switch v := data.(type) {
	case ReportChunk:
		return v, true
	case *ReportChunk:
		return *v, v != nil
	}
	var raw []byte
	switch v := data.(type) {
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	default:
		var err error
		if raw, err = json.Marshal(data); err != nil {
			return ReportChunk{}, false
		}
	}
	var c ReportChunk
	if json.Unmarshal(raw, &c) != nil || c.Type != EventReportChunk {
		return ReportChunk{}, false
	}
	return c, true
}
