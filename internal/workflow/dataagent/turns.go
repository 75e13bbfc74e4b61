package dataagent

import (
	"slices"
	"strings"

	"weft/internal/graph"
)

// Conversation is the thread's multi-turn context: one Turn per message.
// It is the one key that is not replaced: its reducer applies the turn
// operations nodes write (beginTurn, appendPlannerChunk, finishTurn), so a
// follow-up reads the turns before it.
type Conversation struct {
	Turns []Turn `json:"turns"`
	// Op is an operation in flight: set in a write, applied by the reducer,
	// never kept.
	Op *TurnOp `json:"op,omitempty"`
}

// Turn is one message and what came of it.
type Turn struct {
	Index    int      `json:"index"`
	Question string   `json:"question"`
	Analysis bool     `json:"analysis"`
	Parts    []string `json:"parts,omitempty"`
	// Lenient are the indexes of Parts that are a reviewer's feedback (an
	// answered turn's parts end with the feedback its plan was rebuilt
	// with, so a follow-up keeps "only East China").
	Lenient []int `json:"lenient,omitempty"`
	// Standalone is the question as a sentence that needs no context.
	Standalone string `json:"standalone,omitempty"`
	// Planner holds the planner's outputs of the turn (each plan's thought
	// and steps, as text), in order.
	Planner []string `json:"planner,omitempty"`
	Summary string   `json:"summary,omitempty"`
	Status  string   `json:"status,omitempty"`
	Done    bool     `json:"done"`
	// Record is what the turn showed when it finished (its plan's steps with
	// the first rows of their results, the review decisions, the report), so
	// that the conversation view shows earlier turns after their keys were
	// replaced.
	Record *TurnRecord `json:"record,omitempty"`
}

// TurnRecord is a finished turn as the conversation view shows it.
type TurnRecord struct {
	Thought  string     `json:"thought,omitempty"`
	Steps    []StepRun  `json:"steps,omitempty"`
	Feedback []Feedback `json:"feedback,omitempty"`
	Report   *Report    `json:"report,omitempty"`
}

// TurnOp is an operation on the conversation.
type TurnOp struct {
	Kind       string      `json:"kind"` // begin, query, planner, finish
	Index      int         `json:"index,omitempty"`
	Question   string      `json:"question,omitempty"`
	Analysis   bool        `json:"analysis,omitempty"`
	Parts      []string    `json:"parts,omitempty"`
	Lenient    []int       `json:"lenient,omitempty"`
	Standalone string      `json:"standalone,omitempty"`
	Chunk      string      `json:"chunk,omitempty"`
	Summary    string      `json:"summary,omitempty"`
	Status     string      `json:"status,omitempty"`
	Record     *TurnRecord `json:"record,omitempty"`
}

// reduceConversation applies an update: an operation, or (without one) a
// whole conversation that replaces the current one.
func reduceConversation(cur, up Conversation) Conversation {
	if up.Op == nil {
		return Conversation{Turns: slices.Clone(up.Turns)}
	}
	turns := slices.Clone(cur.Turns)
	op := up.Op
	last := len(turns) - 1
	switch op.Kind {
	case "begin":
		turns = append(turns, Turn{Index: op.Index, Question: op.Question})
	case "query":
		if last >= 0 {
			turns[last].Analysis, turns[last].Parts, turns[last].Standalone = true, slices.Clone(op.Parts), op.Standalone
			turns[last].Lenient = slices.Clone(op.Lenient)
		}
	case "planner":
		if last >= 0 {
			turns[last].Planner = append(slices.Clone(turns[last].Planner), op.Chunk)
		}
	case "finish":
		if last >= 0 {
			turns[last].Summary, turns[last].Status, turns[last].Done, turns[last].Record = op.Summary, op.Status, true, op.Record
			if op.Parts != nil { // the question as answered: with the feedback applied
				turns[last].Parts, turns[last].Lenient = slices.Clone(op.Parts), slices.Clone(op.Lenient)
				turns[last].Standalone = op.Standalone
			}
		}
	}
	return Conversation{Turns: turns}
}

// beginTurn records the turn's message (the seed's beginTurn()).
func beginTurn(index int, question string) graph.Write {
	return keyContext.Set(Conversation{Op: &TurnOp{Kind: "begin", Index: index, Question: question}})
}

// recordQuery records the question the turn answers, for follow-ups.
func recordQuery(q Query) graph.Write {
	return keyContext.Set(Conversation{Op: &TurnOp{Kind: "query", Parts: q.Parts, Lenient: q.Lenient, Standalone: q.Standalone}})
}

// appendPlannerChunk records a planner output (the seed's appendPlannerChunk()).
func appendPlannerChunk(chunk string) graph.Write {
	return keyContext.Set(Conversation{Op: &TurnOp{Kind: "planner", Chunk: chunk}})
}

// finishTurn closes the turn with its outcome (the seed's finishTurn()).
func finishTurn(status, summary string) graph.Write {
	return keyContext.Set(Conversation{Op: &TurnOp{Kind: "finish", Status: status, Summary: summary}})
}

// finishTurnWith closes the turn with its outcome and its record; an
// answered turn whose plan was rebuilt from a reviewer's feedback keeps that
// feedback as lenient parts of its question, for a follow-up.
func finishTurnWith(s State, status, summary string, rec *TurnRecord) graph.Write {
	op := &TurnOp{Kind: "finish", Status: status, Summary: summary, Record: rec}
	if fb := s.feedbackTexts(); status == StatusAnswered && len(fb) > 0 && len(s.Query.Parts) > 0 {
		op.Parts, op.Lenient = slices.Clone(s.Query.Parts), slices.Clone(s.Query.Lenient)
		for _, f := range fb {
			op.Lenient = append(op.Lenient, len(op.Parts))
			op.Parts = append(op.Parts, f)
		}
		op.Standalone = s.Query.Standalone + " (" + strings.Join(fb, "; ") + ")"
	}
	return keyContext.Set(Conversation{Op: op})
}

// recordOf is the turn's record: its steps with the first rows of their
// results (Total keeps the row count), its review decisions and its report.
func recordOf(s State, steps []StepRun, rep *Report) *TurnRecord {
	rec := &TurnRecord{Feedback: slices.Clone(s.Feedback), Report: rep}
	if s.Plan != nil {
		rec.Thought = s.Plan.Thought
	}
	for _, st := range steps {
		if st.Result != nil {
			r := st.Result.preview(previewRows)
			st.Result = &r
		}
		rec.Steps = append(rec.Steps, st)
	}
	return rec
}

// previousQuery is the question of the last earlier turn that had one.
func (c Conversation) previousQuery() (Turn, bool) {
	for i := len(c.Turns) - 1; i >= 0; i-- {
		t := c.Turns[i]
		if t.Done && t.Analysis && len(t.Parts) > 0 {
			return t, true
		}
	}
	return Turn{}, false
}
