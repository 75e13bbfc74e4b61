package pagegen

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"weft/internal/fault"
	"weft/internal/graph"
)

// SessionError is a session operation that cannot be done as asked: the session cannot be
// resumed (no checkpointer), is not waiting for feedback, or does not exist. It wraps the
// engine's sentinel (graph.ErrNoCheckpointer, graph.ErrNotFound …) and is classified
// fault.Validation with its code.
type SessionError struct {
	Session string
	Code    string
	Message string
	Err     error
}

func (e *SessionError) Error() string { return e.Code + ": " + e.Message }

// Unwrap gives the engine's sentinel and the classified fault.
func (e *SessionError) Unwrap() []error {
	return []error{e.Err, fault.New(fault.Validation, e.Code, e.Message)}
}

// ExplainResume turns the engine's errors from resuming or reading a session into ones
// that say what happened in the session's terms: above all, a graph compiled without a
// checkpointer cannot resume anything (seed 001 §11: "未开启 checkpointer 时，系统明确提示
// '不可恢复'"). Other errors pass through.
func ExplainResume(session string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, graph.ErrNoCheckpointer):
		return &SessionError{Session: session, Code: CodeNotResumable, Err: err, Message: fmt.Sprintf(
			"session %s cannot be resumed: page generation is running without a checkpointer, so nothing of the session was saved. "+
				"Start a new session on a workflow with a checkpointer (memory, SQLite or PostgreSQL) to give feedback and refine it", session)}
	case errors.Is(err, graph.ErrNotFound):
		return &SessionError{Session: session, Code: fault.CodeNotFound, Err: err, Message: fmt.Sprintf("there is no session %s", session)}
	case errors.Is(err, graph.ErrResumeInvalid), errors.Is(err, graph.ErrNothingToResume):
		return &SessionError{Session: session, Code: CodeNotWaiting, Err: err, Message: fmt.Sprintf("session %s is not waiting for feedback", session)}
	}
	return err
}

// Start runs a new session (thread_id = session_id) until it pauses for feedback.
func Start(ctx context.Context, g *graph.Graph[GraphState], session string, r Request) (graph.Result[GraphState], error) {
	ws, err := r.Writes()
	if err != nil {
		return graph.Result[GraphState]{}, err
	}
	ws = append(ws, keySessionID.Set(session))
	return g.Invoke(ctx, graph.Config{ThreadID: session}, graph.Update(ws...))
}

// Feedback gives a session its feedback: it answers refine_gate when the session waits
// there, or starts a new refine round (refine → render on the stored pages) when the
// session's last build has finished. It refuses, with a *SessionError, a session that
// cannot be resumed, does not exist, or is in the middle of something else.
func Feedback(ctx context.Context, g *graph.Graph[GraphState], session, feedback string) (graph.Result[GraphState], error) {
	var zero graph.Result[GraphState]
	if err := CheckFeedback(feedback); err != nil {
		return zero, err
	}
	cfg := graph.Config{ThreadID: session}
	snap, err := g.GetState(ctx, cfg)
	if err != nil {
		return zero, ExplainResume(session, err)
	}
	waiting := slices.ContainsFunc(snap.Interrupts, func(it graph.PendingInterrupt) bool { return it.Node == NodeRefineGate })
	switch {
	case waiting:
		res, err := g.Invoke(ctx, cfg, graph.Resume(ResumeValue{UserFeedback: feedback}))
		return res, ExplainResume(session, err)
	case len(snap.Values.PageSchemas) > 0 && (len(snap.Next) == 0 || slices.Equal(snap.Next, []string{NodeRefineGate})):
		// Built (or a round that failed at the gate): a new round, START → refine_gate.
		res, err := g.Invoke(ctx, cfg, graph.Update(keyUserFeedback.Set(feedback)))
		return res, ExplainResume(session, err)
	}
	return zero, &SessionError{Session: session, Code: CodeNotWaiting, Err: graph.ErrNothingToResume,
		Message: fmt.Sprintf("session %s is not waiting for feedback (its next step is %v); send feedback when it pauses at refine_gate or after it is built", session, snap.Next)}
}
