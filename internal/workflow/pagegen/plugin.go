package pagegen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"weft/internal/graph"
	"weft/internal/workflow"
)

// The start form's fields (the API's input keys).
const (
	FieldRequest   = "request"
	FieldLogo      = "logo"
	FieldAesthetic = "aesthetic"
	// FieldFeedback is the follow-up form's field: a later round's feedback.
	FieldFeedback = "feedback"
)

// Review decisions of refine_gate's pause.
const (
	DecisionRefine    = "refine"
	DecisionNoChanges = "no_changes"
)

// NoChanges is the feedback "no changes" sends: refine reads it as no change, so the
// session goes straight to render.
const NoChanges = "no changes"

// Definition is page generation as a plug-in of the platform: the seed's graph (New), a
// start form (the request, an optional logo, the aesthetic toggle), the feedback review of
// refine_gate's pause, a follow-up form for another round on a built session, its views
// (score card, rounds, previews) and the seed's §7.2 event names.
func Definition(d Deps) (workflow.Definition, error) {
	g, err := New(d)
	if err != nil {
		return workflow.Definition{}, err
	}
	offline := d.LLM.Offline()
	return workflow.Definition{
		Name: Name, Title: Title, Description: Description, Graph: g,
		Path:         Path,
		Start:        &workflow.StartForm{Fields: StartFields(), Start: startSession},
		FollowUp:     &workflow.StartForm{Fields: FollowUpFields(), Start: followUp},
		CheckInput:   CheckInput,
		SubjectOf:    SubjectOf,
		Describe:     describe,
		Review:       Reviewer{},
		InlineReview: true,
		Views: workflow.Views{
			Panel:  func(ctx context.Context, t workflow.Thread) ([]workflow.Block, error) { return Panel(ctx, t, offline) },
			Report: Report,
		},
		EventName:    EventName,
		ReasonLabels: map[string]string{InterruptNeedFB: "Your feedback on the pages"},
	}, nil
}

// StartFields are the start form's fields.
func StartFields() []workflow.Field {
	return []workflow.Field{
		{Name: FieldRequest, Label: "What site do you want?", Kind: workflow.LongText, Required: true, MaxLength: MaxRequestBytes,
			Placeholder: "A landing page for Brewly, a coffee subscription for busy professionals, with pricing and a contact form. Use green.",
			Help:        "In English or Chinese: the product, who it is for, the pages (pricing, about, contact, FAQ …), colours or a mood."},
		{Name: FieldLogo, Label: "Logo (optional)", Kind: workflow.Upload, Accept: []string{".png", ".jpg", ".jpeg", ".gif"}, MaxBytes: MaxLogoBytes,
			Help: fmt.Sprintf("A PNG, JPEG or GIF of at most %d MB: the palette is quantised from its pixels.", MaxLogoBytes>>20)},
		{Name: FieldAesthetic, Label: "Score the design (contrast, type scale, spacing, line length)", Kind: workflow.Bool, Default: "true"},
	}
}

// FollowUpFields are the follow-up form's fields: the next round's feedback.
func FollowUpFields() []workflow.Field {
	return []workflow.Field{{Name: FieldFeedback, Label: "Refine again", Kind: workflow.LongText, Required: true, MaxLength: MaxFeedbackBytes,
		Placeholder: "make the primary colour darker, add a FAQ page, bigger headings",
		Help:        "Another round on this session: refine applies your feedback to the built pages and builds them again."}}
}

// startSession checks a start form's values: the request and logo by Request.Validate, a
// refusal named on its field.
func startSession(_ context.Context, _ workflow.StartRequest, v workflow.Values) (workflow.Start, error) {
	r := Request{Text: v.String(FieldRequest), Aesthetic: v.Bool(FieldAesthetic)}
	if f, ok := v.File(FieldLogo); ok {
		ct := f.ContentType
		if ct == "" || ct == "application/octet-stream" {
			ct = map[string]string{".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif"}[strings.ToLower(filepath.Ext(f.Name))]
		}
		r.Logo = &Asset{Kind: "logo", Name: filepath.Base(f.Name), ContentType: ct, Data: f.Data}
	}
	ws, err := r.Writes()
	if err != nil {
		return workflow.Start{}, fieldError(err)
	}
	in := map[string]any{}
	for _, w := range ws {
		in[w.Channel] = w.Value
	}
	b, err := json.Marshal(in)
	if err != nil {
		return workflow.Start{}, fmt.Errorf("encode the session's input: %w", err)
	}
	return workflow.Start{Input: b, Subject: SubjectOf(b)}, nil
}

// followUp is another round on a built session: its feedback as the run's input on the same
// thread (START routes a session with pages to refine_gate, which passes on the feedback).
func followUp(_ context.Context, req workflow.StartRequest, v workflow.Values) (workflow.Start, error) {
	fb := v.String(FieldFeedback)
	if err := CheckFeedback(fb); err != nil {
		return workflow.Start{}, fieldError(err)
	}
	b, err := json.Marshal(map[string]string{keyUserFeedback.Name(): fb})
	if err != nil {
		return workflow.Start{}, err
	}
	return workflow.Start{Input: b, ThreadID: req.ThreadID}, nil
}

// fieldError names an *InputError's form field.
func fieldError(err error) error {
	var ie *InputError
	if !errors.As(err, &ie) {
		return err
	}
	field := map[string]string{"user_input": FieldRequest, "assets": FieldLogo, "user_feedback": FieldFeedback}[ie.Field]
	if field == "" {
		return err
	}
	return workflow.FieldErrors{field: ie.Message}
}

// describe names sessions in lists by their request.
func describe(_ context.Context, _ string, subjects []string) (map[string]workflow.Subject, error) {
	out := map[string]workflow.Subject{}
	for _, s := range subjects {
		if s != "" {
			out[s] = workflow.Subject{Title: s, Detail: "page generation"}
		}
	}
	return out, nil
}

// NodeStart is the progress a node of §7.2's *_start events emits first (brief, generate,
// refine, render): the platform stores no task events, so its stream names the start by it.
type NodeStart struct {
	Started string `json:"started"`
}

// EventName names the platform's stream events as seed 001 §7.2 does. The platform stores a
// step's checkpoint (which nodes ran, what runs next), nodes' progress and interrupts: a
// node's NodeStart progress is its *_start event, its step's checkpoint its completion
// (brief_complete, style_extracted, …), a feedback interrupt refine_waiting. Task events
// (the engine's own stream) are named by StreamEvents.
func EventName(ev graph.Event) (string, bool) {
	switch ev.Kind {
	case graph.KindTaskStart:
		return "", false // a node's NodeStart says it
	case graph.KindCheckpoint:
		cp, ok := as[graph.CheckpointSummary](ev.Data)
		if !ok {
			return "", false
		}
		for _, n := range cp.Nodes {
			if name := completes[n]; name != "" {
				return name, true
			}
		}
		return "", false
	case graph.KindCustom:
		if ns, ok := as[NodeStart](ev.Data); ok && ns.Started != "" {
			name, ok := starts[ns.Started]
			return name, ok
		}
	}
	evs := StreamEvents(ev)
	if len(evs) == 0 {
		return "", false
	}
	return evs[len(evs)-1].Name, true
}

// Reviewer is refine_gate's review: the pages are built as a draft, and the user says what
// to change (or "no changes").
type Reviewer struct{}

var _ workflow.Reviewer = Reviewer{}

// Form implements workflow.Reviewer: what refine_gate asks, the aesthetic suggestions, and a
// feedback box.
func (Reviewer) Form(_ context.Context, r workflow.Review) (workflow.Form, error) {
	var req FeedbackRequest
	if err := json.Unmarshal(r.Interrupt.Value, &req); err != nil || req.Type != InterruptNeedFB {
		return workflow.GenericReviewer{}.Form(context.Background(), r)
	}
	s, err := workflow.DecodeState[GraphState](r.State)
	if err != nil {
		return workflow.Form{}, err
	}
	blocks := []workflow.Block{workflow.Paragraph{Text: req.Message}}
	if req.Error != "" {
		blocks = append(blocks, workflow.Notice{Kind: "error", Text: "The last answer was not used: " + req.Error})
	}
	about := []workflow.KV{{Key: "Round", Value: fmt.Sprint(req.Round)}, {Key: "Pages", Value: strings.Join(req.Pages, ", ")}}
	if s.ProductDoc != nil {
		about = append([]workflow.KV{{Key: "Site", Value: s.ProductDoc.Name}}, about...)
	}
	blocks = append(blocks, workflow.KeyValues{Items: about})
	if len(req.Suggestions) > 0 {
		sug := []workflow.Block{}
		for _, m := range req.Suggestions {
			sug = append(sug, workflow.Paragraph{Text: "• " + m})
		}
		blocks = append(blocks, workflow.Section{ID: "suggestions", Title: "The aesthetic check suggests", Blocks: sug})
	}
	blocks = append(blocks, workflow.Paragraph{Text: "For example: " + strings.Join(req.Examples, "; ") + ".", Muted: true})
	return workflow.Form{
		Subject: SubjectOf(mustJSON(map[string]string{"user_input": s.UserInput})), SubjectDetail: "page generation · round " + fmt.Sprint(req.Round),
		Reasons: []workflow.Reason{{Key: InterruptNeedFB, Label: "Your feedback on the pages"}},
		Blocks:  blocks,
		Inputs: []workflow.Block{workflow.TextBox{Name: FieldFeedback, Label: "What should change?", Rows: 4, MaxLength: MaxFeedbackBytes,
			Placeholder: strings.Join(req.Examples, ", ")}},
		Choices: []workflow.Choice{{Value: DecisionRefine, Label: "Refine with this feedback", Style: "primary", Validate: true},
			{Value: DecisionNoChanges, Label: "No changes: build the pages", Style: "ok"}},
		CommentHint: "Optional: a note for the session's history.",
	}, nil
}

// Decide implements workflow.Reviewer: "refine" needs feedback (at most MaxFeedbackBytes);
// "no_changes" answers "no changes", which goes straight to render. The resume value is
// seed 001 §5.2's {"user_feedback": …}.
func (Reviewer) Decide(_ context.Context, r workflow.Review, a workflow.Answer) (workflow.Decision, error) {
	var fb string
	if raw, ok := a.Values[FieldFeedback]; ok {
		if err := json.Unmarshal(raw, &fb); err != nil {
			return workflow.Decision{}, &workflow.AnswerError{Message: "feedback must be a string, not " + workflow.JSONValueKind(raw) + ".",
				Fields: map[string]string{FieldFeedback: "is not text"}}
		}
	}
	for k := range a.Values {
		if k != FieldFeedback {
			return workflow.Decision{}, &workflow.AnswerError{Message: fmt.Sprintf("%q is not a field of this review: send \"feedback\" with the decision %q, or the decision %q.",
				k, DecisionRefine, DecisionNoChanges), Fields: map[string]string{k: "unknown field"}}
		}
	}
	switch a.Decision {
	case DecisionNoChanges:
		fb = NoChanges
	case DecisionRefine:
		if err := CheckFeedback(fb); err != nil {
			var ie *InputError
			msg := err.Error()
			if errors.As(err, &ie) {
				msg = ie.Message
			}
			return workflow.Decision{}, &workflow.AnswerError{Code: codeOf(err), Message: "The feedback cannot be used: " + msg + ".",
				Fields: map[string]string{FieldFeedback: msg}}
		}
	default:
		return workflow.Decision{}, workflow.Refuse("The decision must be %q (with feedback) or %q.", DecisionRefine, DecisionNoChanges)
	}
	return workflow.Decision{Resume: ResumeValue{UserFeedback: fb}, Outcome: a.Decision, Comment: strings.TrimSpace(a.Comment),
		SummaryTitle: "Feedback sent", Summary: []workflow.KV{{Key: "Feedback", Value: fb}}}, nil
}

func codeOf(err error) string {
	var ie *InputError
	if errors.As(err, &ie) {
		return ie.Code
	}
	return ""
}

func mustJSON(v any) json.RawMessage {
	b, _ := json.Marshal(v)
	return b
}
