package workflow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"weft/internal/graph"
	"weft/internal/usertext"
)

// Reviewer is a workflow's review: the page a pause shows, and what an answer to it does.
// The console's review form and the API's resume both go through Decide, so a workflow's
// rules for an answer live in one place.
type Reviewer interface {
	// Form describes the review page of the pause as data.
	Form(ctx context.Context, r Review) (Form, error)
	// Decide turns an answer into what the run continues with, or refuses it with an
	// *AnswerError (the edge maps it to a 400 naming the fields).
	Decide(ctx context.Context, r Review, a Answer) (Decision, error)
}

// Review is one pause being reviewed: the thread, the interrupt and who reviews.
type Review struct {
	Thread
	Interrupt graph.PendingInterrupt
}

// Answer is a reviewer's answer, as the console's form or the API's resume body sent it.
type Answer struct {
	// Decision is the choice made (the button pressed; the API's "decision").
	Decision string
	// FromForm: the answer comes from the console's form, whose values are the texts as
	// typed (JSON strings); the API's are JSON values as sent.
	FromForm bool
	Comment  string
	// Values are the form's other fields as a JSON object: the console's fields decoded by
	// the form's inputs (a score as a JSON number, its text as typed; an item decision as
	// {"<id>": {"decision", "feedback"}}), or the API body's other keys as sent.
	Values map[string]json.RawMessage
}

// Decision is what an answer does to the run.
type Decision struct {
	// Resume answers the interrupt (nil: the run continues without a value, as after a
	// pause before a node).
	Resume any
	// Update, when set, is applied to the thread's state before the run continues
	// (LangGraph's update_state, seed 002 §7), as if AsNode wrote it ("" : the node that
	// wrote the head).
	Update []graph.Write
	AsNode string
	// Outcome is the decision in a word, as the thread and the audit log record it
	// ("approve", "reject", "edit_scores", …).
	Outcome string
	// Comment is the reviewer's comment as kept.
	Comment string
	// Summary lists what was decided, in words, for the reviewer's confirmation, under
	// SummaryTitle ("Recorded" when empty).
	Summary      []KV
	SummaryTitle string
	// Note, when set, is said beside the summary (e.g. edits that a rejection dropped).
	Note string
}

// Choice is one way to answer (a submit button).
type Choice struct {
	Value string // the Decision it sends
	Label string
	Style string // "primary", "ok" or "danger"
	// Validate: the browser checks the inputs first (a choice that ignores them skips it).
	Validate bool
}

// Form is a review page as data: what the reviewer reads, the inputs of the decision form,
// and the choices.
type Form struct {
	// Subject names what is reviewed ("Bluewater Systems"), SubjectDetail says more
	// ("evaluation ev_… · Data centre network upgrade 2026"); empty: the job's subject.
	Subject, SubjectDetail string
	// Reasons say why the pause needs a review.
	Reasons []Reason
	// Blocks are what the reviewer reads.
	Blocks []Block
	// Inputs are the decision form's fields (score fields, text boxes, item decisions).
	Inputs []Block
	// Choices are the buttons; empty: approve and reject.
	Choices []Choice
	// CommentLabel and CommentHint describe the comment box.
	CommentHint string
}

// Reason is why a pause needs a review: its key, in words, and the numbers behind it.
type Reason struct {
	Key, Label, Detail string
}

// AnswerError refuses an answer: a message, and a message per field where one is at fault.
type AnswerError struct {
	Code    string // a machine code (default VALIDATION_FAILED)
	Message string
	Fields  map[string]string
}

func (e *AnswerError) Error() string {
	if len(e.Fields) == 0 {
		return e.Message
	}
	return e.Message + " (" + FieldErrors(e.Fields).Error() + ")"
}

// Refuse is an *AnswerError with a message.
func Refuse(format string, args ...any) *AnswerError {
	return &AnswerError{Message: fmt.Sprintf(format, args...)}
}

// Generic decisions.
const (
	Approve = "approve"
	Reject  = "reject"
)

// GenericReviewer is the review of a workflow without its own: the interrupt's payload to
// read, approve or reject with a comment (a rejection needs one), and an optional JSON
// object whose fields go to the paused node beside the decision.
type GenericReviewer struct{}

var _ Reviewer = GenericReviewer{}

// Form implements Reviewer.
func (GenericReviewer) Form(_ context.Context, r Review) (Form, error) {
	payload := string(r.Interrupt.Value)
	var pretty any
	if json.Unmarshal(r.Interrupt.Value, &pretty) == nil {
		if b, err := json.MarshalIndent(pretty, "", "  "); err == nil {
			payload = string(b)
		}
	}
	return Form{
		Blocks: []Block{Section{Title: "What the workflow asks", Blocks: []Block{
			Paragraph{Text: "The interrupt payload the paused node sent.", Muted: true},
			Code{Language: "json", Text: payload}}}},
		Inputs: []Block{TextBox{Name: "value", Label: "Resume value (JSON)", Placeholder: `{"note": "…"}`, Rows: 6,
			MaxLength: MaxValueBytes}},
	}, nil
}

// MaxValueBytes bounds a generic review's JSON value.
const MaxValueBytes = 16 << 10

// Decide implements Reviewer: the resume value is the JSON object, with the decision, the
// comment and the reviewer set over it.
func (GenericReviewer) Decide(_ context.Context, r Review, a Answer) (Decision, error) {
	if a.Decision != Approve && a.Decision != Reject {
		return Decision{}, Refuse("The decision must be approve or reject.")
	}
	comment := strings.TrimSpace(a.Comment)
	if a.Decision == Reject && comment == "" {
		return Decision{}, &AnswerError{Message: "Say why you reject: a rejection needs a comment, which the thread and the audit log keep.",
			Fields: map[string]string{"comment": "is required to reject"}}
	}
	v := map[string]any{}
	raw, ok := a.Values["value"]
	what := "value"
	if ok && a.FromForm { // the form's text box holds the JSON as typed
		var typed string
		_ = json.Unmarshal(raw, &typed)
		raw, what = json.RawMessage(strings.TrimSpace(typed)), "The resume value"
	}
	if ok && len(raw) > MaxValueBytes {
		return Decision{}, &AnswerError{Message: fmt.Sprintf("%s is too long (%d bytes; at most %d).", what, len(raw), MaxValueBytes),
			Fields: map[string]string{"value": "is too long"}}
	}
	if ok && len(raw) > 0 && string(raw) != "null" {
		if err := usertext.StorableJSON(raw); err != nil && json.Valid(raw) {
			return Decision{}, &AnswerError{Message: what + " " + strings.TrimPrefix(err.Error(), "the input ") + ".",
				Fields: map[string]string{"value": err.Error()}}
		}
		if err := usertext.CheckJSON(what, raw); err != nil {
			return Decision{}, &AnswerError{Message: err.Error() + ".", Fields: map[string]string{"value": err.Error()}}
		}
		var parsed any
		if err := json.Unmarshal(raw, &parsed); err != nil {
			msg := what + " is not valid JSON: " + err.Error() + "."
			if se := (*json.SyntaxError)(nil); errors.As(err, &se) {
				msg = what + " is not valid JSON: " + SyntaxWhere(typedText(a, raw), string(raw), se) + "."
			}
			return Decision{}, &AnswerError{Message: msg, Fields: map[string]string{"value": "is not valid JSON"}}
		}
		obj, isObject := parsed.(map[string]any)
		if !isObject {
			return Decision{}, &AnswerError{Message: what + ` must be a JSON object, such as {"note": "checked"}.`,
				Fields: map[string]string{"value": "is not a JSON object"}}
		}
		for _, k := range []string{"decision", "comment", "editor"} {
			if _, ok := obj[k]; ok {
				return Decision{}, &AnswerError{Message: fmt.Sprintf("%s cannot set %q: the decision, the comment and who decided have fields of their own.", what, k),
					Fields: map[string]string{"value": "sets " + k}}
			}
		}
		v = obj
	}
	for k := range a.Values {
		if k != "value" {
			return Decision{}, &AnswerError{Message: fmt.Sprintf("%q is not a field of this review: it is approve or reject, with a comment and an optional \"value\" object", k),
				Fields: map[string]string{k: "unknown field"}}
		}
	}
	v["decision"] = a.Decision
	if comment != "" {
		v["comment"] = comment
	}
	v["editor"] = map[string]string{"reviewer_id": r.Reader.ID}
	return Decision{Resume: v, Outcome: a.Decision, Comment: comment}, nil
}

// SyntaxWhere says what is wrong with parsed (typed with white space trimmed around it) and
// where, counted in typed as the person typed it: "invalid character '}' looking for
// beginning of object key string at line 1, column 52".
func SyntaxWhere(typed, parsed string, se *json.SyntaxError) string {
	lead := strings.Index(typed, parsed) // parsed is typed with white space trimmed around it
	if lead < 0 {
		typed, lead = parsed, 0
	}
	before := typed[:min(lead+int(se.Offset), len(typed))]
	line := strings.Count(before, "\n") + 1
	col := utf8.RuneCountInString(before[strings.LastIndexByte(before, '\n')+1:])
	return fmt.Sprintf("%s at line %d, column %d", se.Error(), line, col)
}

// typedText is the value as the reviewer typed it (the form's text, before trimming), for
// positions in messages; the API's value as sent.
func typedText(a Answer, raw json.RawMessage) string {
	if a.FromForm {
		var typed string
		if json.Unmarshal(a.Values["value"], &typed) == nil {
			return typed
		}
	}
	return string(raw)
}

// JSONValueKind names the kind of the JSON value b in an API's words: "number", "null", "a JSON
// string", "a JSON object", … (for messages such as "scores.C1 must be a number, not null").
func JSONValueKind(b json.RawMessage) string {
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case 'n':
		return "null"
	case '"':
		return "a JSON string"
	case '{':
		return "a JSON object"
	case '[':
		return "a JSON array"
	case 't', 'f':
		return "a JSON boolean"
	}
	return "number"
}
