// Package memo is a small example workflow for the platform's tests, registered through the
// plug-in contract alone (internal/workflow): a start form with every field kind, a review
// with a per-item decision over redlines, an artifact, and named SSE events. Nothing outside
// this package knows it. A memo's wording is tightened phrase by phrase ("very " dropped,
// "must" made "shall", "ASAP" made "promptly"); a reviewer approves or rejects each change;
// the approved text is written as memo.txt and memo.html.
package memo

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"regexp"
	"sort"
	"strings"

	"weft/internal/graph"
	"weft/internal/workflow"
)

// Name is the workflow's name.
const Name = "memo"

// Change is one proposed change of the memo's text.
type Change struct {
	ID     string `json:"id"`
	Before string `json:"before"`
	After  string `json:"after"`
	Reason string `json:"reason"`
}

// Verdict is a reviewer's decision on one change.
type Verdict struct {
	Decision string `json:"decision"`
	Feedback string `json:"feedback,omitempty"`
}

// State is the memo's state.
type State struct {
	Title    string             `json:"title"`
	Text     string             `json:"text"`
	Tone     string             `json:"tone"`
	Strict   bool               `json:"strict"`
	Changes  []Change           `json:"changes"`
	Verdicts map[string]Verdict `json:"verdicts"`
	Final    string             `json:"final"`
}

var (
	keyChanges  = graph.KeyOf[State, []Change]("changes")
	keyVerdicts = graph.KeyOf[State, map[string]Verdict]("verdicts")
	keyFinal    = graph.KeyOf[State, string]("final")
)

var rules = []struct {
	re          *regexp.Regexp
	replacement string
	reason      string
}{
	{regexp.MustCompile(`(?i)\bvery\s+`), "", "“very” adds nothing"},
	{regexp.MustCompile(`\bmust\b`), "shall", "obligations read “shall”"},
	{regexp.MustCompile(`\bASAP\b`), "promptly", "say what is meant, not an acronym"},
}

// Definition builds the workflow on the platform's checkpointer and artifact store.
func Definition(cp graph.Checkpointer, arts workflow.ArtifactStore) (workflow.Definition, error) {
	b := graph.New[State]()
	b.AddNode("propose", propose)
	b.AddNode("review", review)
	b.AddNode("apply", func(ctx context.Context, s State) (graph.Command, error) { return apply(ctx, s, arts) })
	b.AddEdge(graph.START, "propose").AddEdge("propose", "review").AddEdge("review", "apply").AddEdge("apply", graph.END)
	g, err := b.Compile(graph.WithCheckpointer(cp), graph.WithName(Name))
	if err != nil {
		return workflow.Definition{}, err
	}
	return workflow.Definition{
		Name: Name, Title: "Memo tightening", Graph: g,
		Description: "Proposes wording changes to a memo; a reviewer approves or rejects each; the approved memo is written out.",
		Start: &workflow.StartForm{Fields: []workflow.Field{
			{Name: "title", Label: "Title", Kind: workflow.Text, Required: true, MaxLength: 80},
			{Name: "text", Label: "Memo", Kind: workflow.LongText, MaxLength: 5000, Help: "Type the memo, or upload it below."},
			{Name: "file", Label: "Memo file", Kind: workflow.Upload, Accept: []string{".txt", ".md"}, MaxBytes: 64 << 10},
			{Name: "tone", Label: "Tone", Kind: workflow.Select, Default: "plain", Options: []workflow.Option{{Value: "plain", Label: "Plain"}, {Value: "formal", Label: "Formal"}}},
			{Name: "strict", Label: "Strict", Kind: workflow.Bool},
		}, Start: start},
		SubjectOf: func(in json.RawMessage) string {
			var s State
			_ = json.Unmarshal(in, &s)
			return s.Title
		},
		Review: reviewer{},
		Views:  workflow.Views{Panel: panel},
		EventName: func(ev graph.Event) (string, bool) {
			if ev.Kind == graph.KindCustom {
				return "memo_progress", true
			}
			return "", false
		},
	}, nil
}

func start(_ context.Context, _ workflow.StartRequest, v workflow.Values) (workflow.Start, error) {
	text := v.String("text")
	if f, ok := v.File("file"); ok {
		text = string(f.Data)
	}
	if strings.TrimSpace(text) == "" {
		return workflow.Start{}, workflow.FieldErrors{"text": "type the memo or upload a file"}
	}
	in, err := json.Marshal(State{Title: v.String("title"), Text: text, Tone: v.String("tone"), Strict: v.Bool("strict")})
	return workflow.Start{Input: in}, err
}

func propose(ctx context.Context, s State) (graph.Command, error) {
	graph.Emit(ctx, map[string]string{"stage": "proposing"})
	var changes []Change
	for _, r := range rules {
		for _, m := range r.re.FindAllString(s.Text, -1) {
			sum := sha256.Sum256([]byte(m + "→" + r.replacement))
			c := Change{ID: "c" + hex.EncodeToString(sum[:4]), Before: m, After: r.replacement, Reason: r.reason}
			if !containsID(changes, c.ID) {
				changes = append(changes, c)
			}
		}
	}
	graph.Emit(ctx, map[string]any{"stage": "proposed", "changes": len(changes)})
	return graph.Update(keyChanges.Set(changes)), nil
}

func containsID(cs []Change, id string) bool {
	for _, c := range cs {
		if c.ID == id {
			return true
		}
	}
	return false
}

func review(ctx context.Context, s State) (graph.Command, error) {
	if len(s.Changes) == 0 {
		return graph.Update(keyVerdicts.Set(map[string]Verdict{})), nil
	}
	answer, err := graph.Interrupt[struct {
		Items map[string]Verdict `json:"items"`
	}](ctx, map[string]any{"type": "memo_review", "changes": s.Changes, "reasons": []string{"changes_proposed"}})
	if err != nil {
		return graph.Command{}, err
	}
	return graph.Update(keyVerdicts.Set(answer.Items)), nil
}

func apply(ctx context.Context, s State, arts workflow.ArtifactStore) (graph.Command, error) {
	text := s.Text
	for _, c := range s.Changes {
		if s.Verdicts[c.ID].Decision == workflow.ItemApprove {
			text = strings.ReplaceAll(text, c.Before, c.After)
		}
	}
	graph.Emit(ctx, map[string]string{"stage": "writing"})
	if arts != nil {
		page := "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + html.EscapeString(s.Title) +
			"</title></head><body><main><h1>" + html.EscapeString(s.Title) + "</h1><p>" + html.EscapeString(text) + "</p></main></body></html>"
		for _, a := range []workflow.Artifact{
			{Key: "memo.txt", Name: "memo.txt", ContentType: "text/plain; charset=utf-8", Data: []byte(text)},
			{Key: "memo.html", Name: "memo.html", ContentType: "text/html; charset=utf-8", Data: []byte(page)},
		} {
			if _, err := arts.PutArtifact(ctx, a); err != nil {
				return graph.Command{}, err
			}
		}
	}
	return graph.Update(keyFinal.Set(text)), nil
}

type reviewer struct{}

func (reviewer) Form(_ context.Context, r workflow.Review) (workflow.Form, error) {
	s, err := workflow.DecodeState[State](r.State)
	if err != nil {
		return workflow.Form{}, err
	}
	items := workflow.ItemDecisions{Name: "items", ApproveAll: true, FeedbackLabel: "Why (for a rejection)"}
	for _, c := range s.Changes {
		items.Items = append(items.Items, workflow.DecisionItem{ID: c.ID, Title: fmt.Sprintf("“%s” → “%s”", c.Before, c.After),
			Blocks: []workflow.Block{workflow.Redline{ID: "redline-" + c.ID, Before: c.Before, After: c.After, Note: c.Reason}}})
	}
	return workflow.Form{Subject: s.Title, SubjectDetail: fmt.Sprintf("%d changes proposed", len(s.Changes)),
		Reasons: []workflow.Reason{{Key: "changes_proposed", Label: "Changes proposed"}},
		Blocks:  []workflow.Block{workflow.Section{Title: "The memo", Blocks: []workflow.Block{workflow.Paragraph{Text: s.Text}}}},
		Inputs:  []workflow.Block{items},
		Choices: []workflow.Choice{{Value: "submit", Label: "Record the decisions", Style: "primary", Validate: true}},
	}, nil
}

func (reviewer) Decide(_ context.Context, r workflow.Review, a workflow.Answer) (workflow.Decision, error) {
	s, err := workflow.DecodeState[State](r.State)
	if err != nil {
		return workflow.Decision{}, err
	}
	var items map[string]Verdict
	if raw, ok := a.Values["items"]; ok {
		if err := json.Unmarshal(raw, &items); err != nil {
			return workflow.Decision{}, &workflow.AnswerError{Message: `items must be {"<change id>": {"decision": "approve"|"reject", "feedback": "…"}}`}
		}
	}
	fields := map[string]string{}
	for id := range items {
		if !containsID(s.Changes, id) {
			fields["items."+id] = "no such change"
		}
	}
	var summary []workflow.KV
	for _, c := range s.Changes {
		v := items[c.ID]
		switch v.Decision {
		case workflow.ItemApprove, workflow.ItemReject:
			summary = append(summary, workflow.KV{Key: c.Before + " → " + c.After, Value: v.Decision})
		default:
			fields["items."+c.ID] = "approve or reject this change"
		}
	}
	if len(fields) > 0 {
		keys := make([]string, 0, len(fields))
		for k := range fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return workflow.Decision{}, &workflow.AnswerError{Message: "Decide every change: " + strings.Join(keys, ", "), Fields: fields}
	}
	return workflow.Decision{Resume: map[string]any{"items": items, "decision": "submit", "editor": map[string]string{"reviewer_id": r.Reader.ID}},
		Outcome: "submit", Comment: strings.TrimSpace(a.Comment), Summary: summary}, nil
}

func panel(_ context.Context, t workflow.Thread) ([]workflow.Block, error) {
	s, err := workflow.DecodeState[State](t.State)
	if err != nil || s.Title == "" {
		return nil, err
	}
	decided := 0
	for _, c := range s.Changes {
		if _, ok := s.Verdicts[c.ID]; ok {
			decided++
		}
	}
	bs := []workflow.Block{workflow.Progress{Label: fmt.Sprintf("%d of %d changes decided", decided, len(s.Changes)), Done: decided, Total: len(s.Changes)}}
	if s.Final != "" {
		bs = append(bs, workflow.PagePreview{Key: "memo.html", Title: s.Title, Widths: []int{390}},
			workflow.Downloads{Items: []workflow.Download{{Key: "memo.txt", Label: "memo.txt"}}})
	}
	return bs, nil
}
