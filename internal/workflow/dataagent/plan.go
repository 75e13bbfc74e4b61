package dataagent

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Plan limits.
const (
	MaxPlanSteps       = 8
	MaxInstructionRune = 2000
)

// ErrPlanInvalid marks a plan PlanExecutor refused.
var ErrPlanInvalid = errors.New("plan invalid")

// Validate checks a plan's structure and each step: 2 to MaxPlanSteps
// steps numbered 1, 2, … in order; each tool sql, python or report; an
// instruction of 1 to MaxInstructionRune characters; a sql step first;
// python steps only after a sql step and only when Python is available;
// SQL drafts only on sql steps; exactly one report step, the last. The
// error lists every problem.
func (p Plan) Validate(python bool) error {
	var probs []string
	bad := func(format string, args ...any) { probs = append(probs, fmt.Sprintf(format, args...)) }
	if n := len(p.Steps); n < 2 || n > MaxPlanSteps {
		bad("a plan has 2 to %d steps, this one has %d", MaxPlanSteps, n)
	}
	sqlSeen, reports := false, 0
	for i, st := range p.Steps {
		if st.Step != i+1 {
			bad("step %d is numbered %d", i+1, st.Step)
		}
		if n := utf8.RuneCountInString(strings.TrimSpace(st.Instruction)); n == 0 || n > MaxInstructionRune {
			bad("step %d needs an instruction of 1 to %d characters", i+1, MaxInstructionRune)
		}
		if st.SQLDraft != "" && st.Tool != ToolSQL {
			bad("step %d (%s) carries a SQL draft; only sql steps do", i+1, st.Tool)
		}
		switch st.Tool {
		case ToolSQL:
			sqlSeen = true
		case ToolPython:
			if !sqlSeen {
				bad("step %d (python) comes before any sql step: it would have no data", i+1)
			}
			if !python {
				bad("step %d asks for python, which this agent cannot run", i+1)
			}
		case ToolReport:
			reports++
			if i != len(p.Steps)-1 {
				bad("step %d is a report but not the last step", i+1)
			}
		default:
			bad("step %d names the tool %q; the tools are sql, python and report", i+1, st.Tool)
		}
		if i == 0 && st.Tool != ToolSQL {
			bad("the first step must be a sql step, not %q", st.Tool)
		}
	}
	if reports != 1 {
		bad("a plan ends with exactly one report step, this one has %d", reports)
	}
	if len(probs) > 0 {
		return fmt.Errorf("%w: %s", ErrPlanInvalid, strings.Join(probs, "; "))
	}
	return nil
}

// Text is the plan as lines, for the conversation context and logs.
func (p Plan) Text() string {
	var b strings.Builder
	if p.Thought != "" {
		b.WriteString(p.Thought + "\n")
	}
	for _, st := range p.Steps {
		fmt.Fprintf(&b, "%d. [%s] %s\n", st.Step, st.Tool, st.Instruction)
	}
	return strings.TrimSpace(b.String())
}
