package dataagent

import (
	"context"
	"errors"
	"strings"

	"weft/internal/graph"
	"weft/internal/workflow/dataagent/nlsql"
)

// sqlGenerate writes the current step's SQL; after a failed attempt it
// passes the SQL and the reason (a consistency failure, the database's
// error) back to the model.
func (w *wf) sqlGenerate(ctx context.Context, s State) (graph.Command, error) {
	st, ok := s.current()
	if !ok {
		return graph.Command{}, graph.Permanent(errors.New("sql generate: no current step"))
	}
	in := sqlIn{questionIn: s.question(s.recalled()), Instruction: st.Instruction}
	if s.SQL != nil {
		in.PreviousSQL = s.SQL.SQL
	}
	if n := len(st.Errors); n > 0 {
		in.Error = st.Errors[n-1]
	}
	draft, err := sqlTask.Do(ctx, w.d.LLM, in)
	if err != nil {
		return graph.Command{}, err
	}
	tries := s.SQLTries + 1
	st.Attempts = tries
	if strings.TrimSpace(draft.SQL) == "" {
		if draft.Error == "" {
			draft.Error = "the model wrote no SQL"
		}
		st = w.attemptFailed(st, tries, "generate: "+draft.Error)
	}
	return graph.Update(keySQL.Set(&draft), keySQLTries.Set(tries), keySteps.Set(s.withStep(st))), nil
}

// attemptFailed records a failed SQL attempt; the step fails when no
// attempt is left.
func (w *wf) attemptFailed(st StepRun, tries int, reason string) StepRun {
	st.Errors = append(append([]string(nil), st.Errors...), reason)
	if tries >= w.d.MaxSQLAttempts {
		st.Status = StepFailed
		st.Reason = reason
	}
	return st
}

// understand reads the turn's question with package nlsql: the same reading
// the offline model uses, here as the reference the checks compare with.
func (s State) understand() nlsql.Understanding {
	return nlsql.Understand(s.question(s.recalled()).question())
}

// semanticConsistency checks the SQL with PostgreSQL's parser against the
// recalled schema and what the question and its notes require.
func (w *wf) semanticConsistency(_ context.Context, s State) (graph.Command, error) {
	st, ok := s.current()
	if !ok || s.SQL == nil {
		return graph.Command{}, graph.Permanent(errors.New("semantic consistency: no SQL to check"))
	}
	u := s.understand()
	reasons := checkConsistency(s.SQL.SQL, u.Spec, s.recalled())
	if !u.Feasible && len(reasons) == 0 {
		reasons = append(reasons, "the question cannot be mapped to the schema: "+strings.Join(u.Problems, "; "))
	}
	c := Consistency{Passed: len(reasons) == 0, Reasons: reasons}
	if !c.Passed {
		st = w.attemptFailed(st, s.SQLTries, "consistency: "+strings.Join(reasons, "; "))
	}
	return graph.Update(keyConsistency.Set(&c), keySteps.Set(s.withStep(st))), nil
}

// sqlExecute runs the checked SQL read-only. The query's own failure goes
// back to SqlGenerate with the error; the executor's failure fails the node
// (the runner retries it).
func (w *wf) sqlExecute(ctx context.Context, s State) (graph.Command, error) {
	st, ok := s.current()
	if !ok || s.SQL == nil {
		return graph.Command{}, graph.Permanent(errors.New("sql execute: no SQL to run"))
	}
	res, err := w.d.SQL.Query(ctx, s.Schema, s.SQL.SQL)
	var qe *QueryError
	switch {
	case errors.As(err, &qe):
		st = w.attemptFailed(st, s.SQLTries, "execute: "+qe.Error())
		return graph.Update(keySteps.Set(s.withStep(st))), nil
	case err != nil:
		return graph.Command{}, err
	}
	st.Status, st.SQL, st.Result, st.Reason = StepDone, s.SQL.SQL, &res, ""
	return graph.Update(keySteps.Set(s.withStep(st))), nil
}
