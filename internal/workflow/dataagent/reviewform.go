package dataagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"weft/internal/fault"
	"weft/internal/workflow"
)

// Reviewer is the review of a plan: the plan as a plan block (its steps,
// their tools, the SQL drafts), to approve (it runs) or reject with feedback
// (the Planner rebuilds it from the feedback; a rejection beyond
// MaxFeedbackRounds ends the turn). The decision is written with
// update_state as HumanFeedback (DecisionWrites), then the run continues.
type Reviewer struct{}

var _ workflow.Reviewer = Reviewer{}

// Form implements workflow.Reviewer.
func (Reviewer) Form(_ context.Context, r workflow.Review) (workflow.Form, error) {
	s, err := workflow.DecodeState[State](r.State)
	if err != nil {
		return workflow.Form{}, fmt.Errorf("decode the data agent's state: %w", err)
	}
	var p PlanReview
	if len(r.Interrupt.Value) > 0 {
		if err := json.Unmarshal(r.Interrupt.Value, &p); err != nil {
			return workflow.Form{}, fmt.Errorf("decode the plan review: %w", err)
		}
	}
	if r.Interrupt.Node != NodeHumanFeedback || p.Type != ReasonPlanReview {
		return workflow.Form{Blocks: []workflow.Block{workflow.Notice{Kind: "info", Text: "This pause is not a plan review."}}}, nil
	}
	return workflow.Form{
		Subject: p.Question, SubjectDetail: fmt.Sprintf("data agent plan · turn %d · plan %d", p.Turn, p.Version),
		Reasons: []workflow.Reason{{Key: ReasonPlanReview, Label: ReasonLabels[ReasonPlanReview],
			Detail: fmt.Sprintf("review %d of at most %d: a rejection beyond the limit of %d ends the turn", p.Round, p.Limit+1, p.Limit)}},
		Blocks: planBlocks(p, s.Schema),
		Choices: []workflow.Choice{
			{Value: DecisionApprove, Label: "Approve and run", Style: "primary"},
			{Value: DecisionReject, Label: "Reject and replan", Style: "danger"},
		},
		CommentHint: "Your feedback for the planner: required to reject (“only East China”, “by month instead”); the planner rebuilds the plan from it.",
	}, nil
}

// planBlocks shows a plan under review: the question, the plan's steps as a
// plan block, each SQL draft highlighted, and the earlier decisions.
func planBlocks(p PlanReview, schema string) []workflow.Block {
	bs := []workflow.Block{workflow.KeyValues{Items: []workflow.KV{
		{Key: "Question", Value: p.Question}, {Key: "Schema", Value: schema, Code: true},
		{Key: "Plan", Value: fmt.Sprintf("version %d", p.Version)},
	}}}
	if p.Thought != "" {
		bs = append(bs, workflow.Paragraph{Text: p.Thought, Muted: true})
	}
	plan := workflow.Plan{Title: fmt.Sprintf("Plan %d", p.Version)}
	for _, st := range p.Steps {
		plan.Steps = append(plan.Steps, workflow.PlanStep{N: st.Step, Tool: st.Tool, Instruction: st.Instruction, Status: StepPending})
	}
	bs = append(bs, plan)
	for _, st := range p.Steps {
		if st.SQLDraft != "" {
			bs = append(bs, SQLCode(st.SQLDraft, fmt.Sprintf("Step %d · SQL draft", st.Step)))
		}
	}
	if len(p.Feedback) > 0 {
		bs = append(bs, feedbackTable(p.Feedback))
	}
	return bs
}

// feedbackTable lists a turn's review decisions.
func feedbackTable(fb []Feedback) workflow.Table {
	t := workflow.Table{Caption: "Earlier decisions on this question",
		Columns: []workflow.Column{{Title: "Plan", Type: workflow.ColNumber}, {Title: "Decision", Type: workflow.ColBadge},
			{Title: "By"}, {Title: "Feedback", Type: workflow.ColWide}}}
	for _, f := range fb {
		badge := "approved"
		if f.Decision == DecisionReject {
			badge = "rejected"
		}
		t.Rows = append(t.Rows, workflow.Row{Cells: []workflow.Cell{{Text: fmt.Sprint(f.PlanVersion)}, {Text: f.Decision, Badge: badge},
			{Text: f.Reviewer}, {Text: f.Feedback}}})
	}
	return t
}

// Decide implements workflow.Reviewer: approve, or reject with the comment
// as the planner's feedback; the decision becomes DecisionWrites' update,
// applied as HumanFeedback.
func (Reviewer) Decide(_ context.Context, r workflow.Review, a workflow.Answer) (workflow.Decision, error) {
	for k := range a.Values {
		return workflow.Decision{}, &workflow.AnswerError{Code: CodeDecisionInvalid,
			Message: fmt.Sprintf("%q is not a field of a plan review: it is approve or reject, with the feedback as the comment", k),
			Fields:  map[string]string{k: "unknown field"}}
	}
	if r.Interrupt.Node != NodeHumanFeedback {
		return workflow.Decision{}, &workflow.AnswerError{Code: CodeDecisionInvalid, Message: "This pause is not a plan review."}
	}
	s, err := workflow.DecodeState[State](r.State)
	if err != nil {
		return workflow.Decision{}, fmt.Errorf("decode the data agent's state: %w", err)
	}
	reviewer := r.Reader.Name
	if reviewer == "" {
		reviewer = r.Reader.ID
	}
	comment := strings.TrimSpace(a.Comment)
	ws, err := DecisionWrites(s, Decision{Decision: a.Decision, Feedback: comment, Reviewer: reviewer})
	var fe *fault.Error
	if errors.As(err, &fe) {
		ae := &workflow.AnswerError{Code: fe.Code, Message: sentence(fe.Message)}
		if strings.Contains(fe.Message, "feedback") {
			ae.Fields = map[string]string{"comment": "is required to reject: say what the plan should do instead"}
		}
		return workflow.Decision{}, ae
	}
	if err != nil {
		return workflow.Decision{}, err
	}
	what := "approved: the plan runs"
	if a.Decision == DecisionReject {
		what = "rejected: the planner rebuilds the plan from the feedback"
		if rejections(s.Feedback)+1 > MaxFeedbackRounds {
			what = fmt.Sprintf("rejected (%d rejections, over the limit of %d): the turn ends without running a plan", rejections(s.Feedback)+1, MaxFeedbackRounds)
		}
	}
	return workflow.Decision{Update: ws, AsNode: NodeHumanFeedback, Outcome: strings.ToLower(strings.TrimSpace(a.Decision)), Comment: comment,
		Summary: []workflow.KV{{Key: "Plan", Value: fmt.Sprintf("version %d", s.PlanVersion)}, {Key: "Decision", Value: what}}}, nil
}

// sentence is s with a capital first letter and a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}
