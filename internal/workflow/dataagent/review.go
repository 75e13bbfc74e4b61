package dataagent

import (
	"strings"
	"unicode/utf8"

	"weft/internal/fault"
	"weft/internal/graph"
)

// MaxFeedbackRounds is how many times a turn's plan may be rejected: a
// rejection beyond it ends the turn (the seed's 人工反馈超限 → 强制终止).
const MaxFeedbackRounds = 3

// Review decisions.
const (
	DecisionApprove = "approve"
	DecisionReject  = "reject"
)

// CodeDecisionInvalid is the code of a review decision refused.
const CodeDecisionInvalid = "DATAAGENT_DECISION_INVALID"

// MaxFeedbackRunes bounds a reviewer's feedback.
const MaxFeedbackRunes = 2000

// Decision is a reviewer's answer to a plan review: approve, or reject
// with feedback the Planner rebuilds the plan with.
type Decision struct {
	Decision string `json:"decision"`
	Feedback string `json:"feedback,omitempty"`
	Reviewer string `json:"reviewer,omitempty"`
}

// PlanReview is what HumanFeedback pauses with (its interrupt payload):
// the plan to approve, with its SQL drafts.
type PlanReview struct {
	Type     string     `json:"type"` // "plan_review"
	Reasons  []string   `json:"reasons"`
	Turn     int        `json:"turn"`
	Question string     `json:"question"`
	Version  int        `json:"plan_version"`
	Thought  string     `json:"thought"`
	Steps    []PlanStep `json:"steps"`
	// Round is this review's number in the turn (1 for the first plan);
	// rejections beyond Limit end the turn.
	Round    int        `json:"round"`
	Limit    int        `json:"limit"`
	Feedback []Feedback `json:"previous_feedback,omitempty"`
}

// ReviewOf is the review of s's current plan, for the review form.
func ReviewOf(s State) PlanReview {
	r := PlanReview{Type: ReasonPlanReview, Reasons: []string{ReasonPlanReview}, Turn: s.Turn, Question: s.Query.Standalone, Version: s.PlanVersion,
		Round: s.rejections() + 1, Limit: MaxFeedbackRounds, Feedback: s.Feedback}
	if s.Plan != nil {
		r.Thought, r.Steps = s.Plan.Thought, s.Plan.Steps
	}
	return r
}

// DecisionWrites checks a decision on s's current plan and returns the
// writes that record it, exactly as HumanFeedback writes them. The review
// form applies them with Graph.UpdateState(ctx, cfg, writes,
// NodeHumanFeedback), then continues the thread: HumanFeedbackDispatcher
// routes from the new state (approve → PlanExecutor; reject → Planner;
// a rejection beyond MaxFeedbackRounds → ReportGenerator, which reports the
// forced end). A bad decision is a fault.Validation error.
func DecisionWrites(s State, d Decision) ([]graph.Write, error) {
	d.Decision = strings.ToLower(strings.TrimSpace(d.Decision))
	d.Feedback = strings.TrimSpace(d.Feedback)
	switch {
	case s.Plan == nil:
		return nil, fault.New(fault.Validation, CodeDecisionInvalid, "there is no plan to decide on")
	case d.Decision != DecisionApprove && d.Decision != DecisionReject:
		return nil, fault.New(fault.Validation, CodeDecisionInvalid, `decision must be "approve" or "reject"`)
	case d.Decision == DecisionReject && d.Feedback == "":
		return nil, fault.New(fault.Validation, CodeDecisionInvalid, "a rejection needs feedback: say what the plan should do instead")
	case utf8.RuneCountInString(d.Feedback) > MaxFeedbackRunes:
		return nil, fault.New(fault.Validation, CodeDecisionInvalid, "feedback is limited to 2000 characters")
	}
	fb := append(append([]Feedback(nil), s.Feedback...), Feedback{PlanVersion: s.PlanVersion, Decision: d.Decision,
		Feedback: d.Feedback, Reviewer: d.Reviewer})
	status := StatusRunning
	if d.Decision == DecisionReject && rejections(fb) > MaxFeedbackRounds {
		status = StatusStopped
	}
	return []graph.Write{keyFeedback.Set(fb), keyApproved.Set(d.Decision == DecisionApprove), keyStatus.Set(status)}, nil
}

func rejections(fb []Feedback) int {
	n := 0
	for _, f := range fb {
		if f.Decision == DecisionReject {
			n++
		}
	}
	return n
}

// feedbackTexts lists the turn's rejection feedback, in order: the Planner
// and SqlGenerate apply it like follow-ups.
func (s State) feedbackTexts() []string {
	var out []string
	for _, f := range s.Feedback {
		if f.Decision == DecisionReject && f.Feedback != "" {
			out = append(out, f.Feedback)
		}
	}
	return out
}
