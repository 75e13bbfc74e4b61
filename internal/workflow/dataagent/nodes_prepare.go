package dataagent

import (
	"context"
	"errors"
	"slices"
	"strings"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/workflow/dataagent/nlsql"
)

// CodeInputInvalid is the code of a turn refused at its start.
const CodeInputInvalid = "DATAAGENT_INPUT_INVALID"

// MaxInputRunes bounds a message.
const MaxInputRunes = 4000

// resetTurn clears every per-turn key: each turn replaces what the last
// one left (the seed's REPLACE strategy, so no old result leaks into a new
// answer).
func resetTurn() []graph.Write {
	return []graph.Write{keyEvidence.Set(nil), keyQuery.Set(Query{}), keyRecalled.Set(nil), keyCatalog.Set(nlsql.Catalog{}),
		keyRelation.Set(nil), keyRelTries.Set(0), keyFeasibility.Set(nil), keyPlan.Set(nil), keyPlanVersion.Set(0),
		keyPlanError.Set(""), keyPlanTries.Set(0), keyFeedback.Set(nil), keyApproved.Set(false), keySteps.Set(nil),
		keyCurrent.Set(0), keySQL.Set(nil), keySQLTries.Set(0), keyConsistency.Set(nil), keyPythonCode.Set(""),
		keyReport.Set(nil)}
}

// intentRecognition begins the turn and sorts the message: an analysis goes
// on, anything else ends the turn with a direct answer.
func (w *wf) intentRecognition(ctx context.Context, s State) (graph.Command, error) {
	msg := strings.TrimSpace(s.Input)
	switch {
	case msg == "":
		return graph.Command{}, fault.New(fault.Validation, CodeInputInvalid, "the message is empty: ask a question about the data")
	case len([]rune(msg)) > MaxInputRunes:
		return graph.Command{}, fault.New(fault.Validation, CodeInputInvalid, "the message is limited to 4000 characters")
	case CheckSchema(s.Schema) != nil:
		return graph.Command{}, fault.New(fault.Validation, CodeInputInvalid, CheckSchema(s.Schema).Error())
	}
	now := w.d.Now()
	prev, hasPrev := s.Context.previousQuery()
	intent, err := intentTask.Do(ctx, w.d.LLM, intentIn{Message: msg, HasPrevious: hasPrev, Previous: prev.Standalone, Schema: s.Schema, Now: now})
	if err != nil {
		return graph.Command{}, err
	}
	turn := s.Turn + 1
	ws := append(resetTurn(), keyTurn.Set(turn), keyAsOf.Set(now), keyIntent.Set(intent), beginTurn(turn, msg))
	if !intent.Analysis {
		return graph.Update(append(ws, keyStatus.Set(StatusNotAnalysis), keyReply.Set(intent.Reply), finishTurn(StatusNotAnalysis, intent.Reply))...), nil
	}
	return graph.Update(append(ws, keyStatus.Set(StatusRunning), keyReply.Set(""))...), nil
}

// evidenceRecall finds the business notes that bear on the question (and,
// for a follow-up, on the question it follows).
func (w *wf) evidenceRecall(ctx context.Context, s State) (graph.Command, error) {
	q := s.Input
	if prev, ok := s.Context.previousQuery(); ok && s.Intent.FollowUp {
		q = strings.Join(prev.Parts, " ") + " " + q
	}
	notes, err := w.d.Evidence.SearchNotes(ctx, s.Schema, q, w.d.EvidenceK)
	if err != nil {
		return graph.Command{}, err
	}
	return graph.Update(keyEvidence.Set(notes)), nil
}

// queryEnhance rewrites a follow-up as the question it asks.
func (w *wf) queryEnhance(ctx context.Context, s State) (graph.Command, error) {
	in := enhanceIn{Message: strings.TrimSpace(s.Input), FollowUp: s.Intent.FollowUp, Now: s.AsOf}
	if prev, ok := s.Context.previousQuery(); ok {
		in.Previous = &prev
	}
	for _, n := range s.Evidence {
		in.Evidence = append(in.Evidence, n.Text)
	}
	q, err := enhanceTask.Do(ctx, w.d.LLM, in)
	if err != nil {
		return graph.Command{}, err
	}
	if len(q.Parts) == 0 {
		reply := nlsql.ClassifyIntent("and", false, s.Schema, s.AsOf).Reply
		if s.Intent.Language == "zh" {
			reply = nlsql.ClassifyIntent("只看", false, s.Schema, s.AsOf).Reply
		}
		return graph.Update(keyQuery.Set(q), keyStatus.Set(StatusNotAnalysis), keyReply.Set(reply), finishTurn(StatusNotAnalysis, reply)), nil
	}
	if q.FollowUp && in.Previous != nil {
		q.Lenient = carried(*in.Previous, q.Parts)
	}
	return graph.Update(keyQuery.Set(q), recordQuery(q)), nil
}

// carried are the indexes of parts that repeat the previous turn's lenient
// parts (the feedback it applied), which stay lenient in the follow-up.
func carried(prev Turn, parts []string) []int {
	var out []int
	for _, i := range prev.Lenient {
		if i < len(parts) && i < len(prev.Parts) && parts[i] == prev.Parts[i] {
			out = append(out, i)
		}
	}
	return out
}

// question is the turn's question as the tasks read it, against cat.
func (s State) question(cat nlsql.Catalog) questionIn {
	return questionIn{Parts: s.Query.Parts, Lenient: s.Query.Lenient, Feedback: s.feedbackTexts(), Catalog: cat, Notes: s.Evidence, Now: s.AsOf}
}

// recalled is the catalog cut to the related tables.
func (s State) recalled() nlsql.Catalog {
	if s.Relation == nil {
		return nlsql.Catalog{Schema: s.Catalog.Schema}
	}
	return s.Catalog.Subset(s.Relation.Tables)
}

// schemaRecall reads the schema's catalog and picks the tables the
// question needs.
func (w *wf) schemaRecall(ctx context.Context, s State) (graph.Command, error) {
	cat, err := w.d.Catalog.ReadCatalog(ctx, s.Schema)
	if err != nil {
		return graph.Command{}, err
	}
	out, err := schemaRecallTask.Do(ctx, w.d.LLM, s.question(cat))
	if err != nil {
		return graph.Command{}, err
	}
	var tables []string // a model may name a table the catalog does not have: it is dropped
	for _, t := range out.Tables {
		if _, ok := cat.Table(t); ok && !slices.Contains(tables, t) {
			tables = append(tables, t)
		}
	}
	return graph.Update(keyCatalog.Set(cat), keyRecalled.Set(tables)), nil
}

// tableRelation joins the recalled tables along foreign keys. A relation
// that is no foreign key is asked for again; past the limit the catalog's
// own foreign keys are used.
func (w *wf) tableRelation(ctx context.Context, s State) (graph.Command, error) {
	in := relationIn{Tables: s.Recalled, Catalog: s.Catalog}
	rel, err := tableRelationTask.Do(ctx, w.d.LLM, in)
	if err != nil {
		return graph.Command{}, err
	}
	if cerr := nlsql.CheckRelations(s.Catalog, rel.Relations); cerr != nil {
		var re *nlsql.RelationError
		if !errors.As(cerr, &re) {
			return graph.Command{}, cerr
		}
		if s.RelTries+1 < w.d.MaxRelation {
			return graph.Update(keyRelation.Set(nil), keyRelTries.Set(s.RelTries+1)), nil
		}
		fk := nlsql.Relations(s.Catalog, s.Recalled)
		rel = Relation{Tables: fk.Tables, Relations: fk.Relations}
	}
	return graph.Update(keyRelation.Set(&rel), keyRelTries.Set(s.RelTries+1)), nil
}

// feasibility decides whether the question can be answered from the
// recalled tables and the notes, naming what is missing when not.
func (w *wf) feasibility(ctx context.Context, s State) (graph.Command, error) {
	f, err := feasibilityTask.Do(ctx, w.d.LLM, s.question(s.recalled()))
	if err != nil {
		return graph.Command{}, err
	}
	if len(s.Recalled) == 0 && f.Feasible {
		f = Feasibility{Reasons: []string{"no table of schema " + s.Schema + " matches the question"}}
	}
	if !f.Feasible && len(f.Reasons) == 0 {
		f.Reasons = []string{"the question could not be mapped to the schema"}
	}
	status := StatusRunning
	if !f.Feasible {
		status = StatusCannotAnswer
	}
	return graph.Update(keyFeasibility.Set(&f), keyStatus.Set(status)), nil
}
