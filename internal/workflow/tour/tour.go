// Package tour is a small graph that shows the engine's moving parts in a
// terminal: Send fan-out with an append reducer, a flaky node under a retry
// policy, custom progress events, a merge reducer, a join, and a human
// approval interrupt. `weft demo-terminal` (make run, before the console
// exists) streams it. It imports only internal/graph.
package tour

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"weft/internal/graph"
)

// State is the tour's state.
type State struct {
	Question string            `json:"question"`
	Topics   []string          `json:"topics"`
	Topic    string            `json:"topic,omitempty"`
	Notes    []string          `json:"notes" weft:"append"`
	Scores   map[string]int    `json:"scores" weft:"merge"`
	Draft    string            `json:"draft"`
	Decision string            `json:"decision"`
	Meta     map[string]string `json:"meta" weft:"merge"`
	// Review is what the reviewer sent beside the decision and comment (the review form's
	// resume value, the API's value).
	Review map[string]any `json:"review,omitempty"`
}

// Typed keys of the state's channels.
var (
	keyTopics   = graph.KeyOf[State, []string]("topics")
	keyNotes    = graph.ItemsKeyOf[State, string]("notes")
	keyScores   = graph.KeyOf[State, map[string]int]("scores")
	keyDraft    = graph.KeyOf[State, string]("draft")
	keyMeta     = graph.KeyOf[State, map[string]string]("meta")
	keyDecision = graph.KeyOf[State, string]("decision")
	keyReview   = graph.KeyOf[State, map[string]any]("review")
)

// ExampleInput is a tour run's input, for the console's start form.
var ExampleInput = json.RawMessage(`{"question": "What makes durable workflows survive crashes and restarts?"}`)

// SubjectOf names a run by its question (at most 80 characters), for the pages that list it.
func SubjectOf(input json.RawMessage) string {
	var s State
	if json.Unmarshal(input, &s) != nil {
		return ""
	}
	q := strings.Join(strings.Fields(s.Question), " ")
	if r := []rune(q); len(r) > 80 {
		q = string(r[:79]) + "…"
	}
	return q
}

// CheckInput refuses a run input without a question (the first node finds its topics in it,
// so such a run could only fail), or with any other channel set.
func CheckInput(input json.RawMessage) error {
	var s State
	if len(input) > 0 {
		if err := json.Unmarshal(input, &s); err != nil {
			return fmt.Errorf("a tour run's input is a JSON object: %w", err)
		}
		// The run's input is its question; the other channels are what the run works out
		// (a decision given as input would read as a review that never happened).
		var fields map[string]json.RawMessage
		_ = json.Unmarshal(input, &fields)
		for name := range fields {
			if name != "question" {
				return fmt.Errorf("a tour run's input is its question alone; %q is worked out by the run", name)
			}
		}
	}
	if strings.TrimSpace(s.Question) == "" {
		return errors.New(`a tour run needs a question, e.g. {"question": "What makes workflows durable?"}`)
	}
	if len(topicsOf(s.Question)) == 0 {
		return fmt.Errorf("the question %q has no topic: a tour researches its words of five letters or more, and it has none", s.Question)
	}
	return nil
}

// topicsOf is what the plan node researches: the question's first three words longer than
// four letters, in lower case.
func topicsOf(question string) []string {
	var topics []string
	for _, w := range strings.Fields(strings.ToLower(question)) {
		// Punctuation around a word, ASCII or not ("durable?", "恢复？"), is not part of it.
		w = strings.TrimFunc(w, func(r rune) bool { return unicode.IsPunct(r) || unicode.IsSymbol(r) })
		if utf8.RuneCountInString(w) > 4 && len(topics) < 3 && !slices.Contains(topics, w) {
			topics = append(topics, w)
		}
	}
	return topics
}

// ReasonDraftReady is why the tour pauses: its draft waits for a reviewer's approval.
const ReasonDraftReady = "draft_ready"

// ReasonLabels names the tour's review reasons.
var ReasonLabels = map[string]string{ReasonDraftReady: "Draft ready for approval"}

// Approval is the human's answer to the review interrupt.
type Approval struct {
	Decision string `json:"decision"`
	Comment  string `json:"comment"`
	Editor   struct {
		ReviewerID string `json:"reviewer_id"`
	} `json:"editor"` // who decided (the console and the API set it)
	// Extra is the answer's other fields (the review form's resume value).
	Extra map[string]any `json:"-"`
}

// UnmarshalJSON reads an answer, keeping its fields beyond the decision, comment and editor
// in Extra.
func (a *Approval) UnmarshalJSON(b []byte) error {
	type plain Approval
	if err := json.Unmarshal(b, (*plain)(a)); err != nil {
		return err
	}
	var all map[string]any
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	for _, k := range []string{"decision", "comment", "editor"} {
		delete(all, k)
	}
	if len(all) > 0 {
		a.Extra = all
	}
	return nil
}

// New builds the tour graph. flakyFailures is how many times the research
// node fails (transiently) for the first topic before it succeeds.
func New(cp graph.Checkpointer, flakyFailures int) (*graph.Graph[State], error) {
	var mu sync.Mutex
	failures := map[string]int{}
	b := graph.New[State]()
	b.AddNode("plan", func(_ context.Context, s State) (graph.Command, error) {
		topics := topicsOf(s.Question)
		if len(topics) == 0 {
			return graph.Command{}, graph.Permanent(fmt.Errorf("question %q has no topic words", s.Question))
		}
		return graph.Update(keyTopics.Set(topics)), nil
	})
	b.AddNode("research", func(ctx context.Context, s State) (graph.Command, error) {
		mu.Lock()
		fail := s.Topic == firstTopic(s) && failures[s.Topic] < flakyFailures
		if fail {
			failures[s.Topic]++
		}
		mu.Unlock()
		if fail {
			return graph.Command{}, fmt.Errorf("search backend timed out on %q", s.Topic)
		}
		for i := 1; i <= 3; i++ {
			graph.Emit(ctx, map[string]any{"topic": s.Topic, "page": i, "of": 3})
		}
		letters := utf8.RuneCountInString(s.Topic)
		note := fmt.Sprintf("%s: %d letters, vowels %d", s.Topic, letters, strings.Count(s.Topic, "a")+strings.Count(s.Topic, "e")+strings.Count(s.Topic, "i")+strings.Count(s.Topic, "o")+strings.Count(s.Topic, "u"))
		return graph.Update(keyNotes.Append(note), keyScores.Set(map[string]int{s.Topic: letters * 10})), nil
	}, graph.WithRetry[State](graph.RetryPolicy{InitialInterval: 50 * time.Millisecond, MaxAttempts: 3}))
	b.AddNode("draft", func(_ context.Context, s State) (graph.Command, error) {
		total := 0
		for _, v := range s.Scores {
			total += v
		}
		noun := "notes"
		if len(s.Notes) == 1 {
			noun = "note"
		}
		return graph.Update(keyDraft.Set(fmt.Sprintf("%d %s, total score %d: %s", len(s.Notes), noun, total, strings.Join(s.Notes, "; ")))), nil
	})
	b.AddNode("stamp", func(context.Context, State) (graph.Command, error) {
		return graph.Update(keyMeta.Set(map[string]string{"reviewed_by": "pending"})), nil
	})
	b.AddNode("review", func(ctx context.Context, s State) (graph.Command, error) {
		a, err := graph.Interrupt[Approval](ctx, map[string]any{"type": "human_review", "reasons": []string{ReasonDraftReady},
			"draft": s.Draft, "suggested_actions": []string{"approve", "reject"}})
		if err != nil {
			return graph.Command{}, err
		}
		by := a.Editor.ReviewerID
		if by == "" {
			by = "human" // resumed without naming the reviewer (in code, as the tests do)
		}
		ws := []graph.Write{keyDecision.Set(a.Decision), keyMeta.Set(map[string]string{"reviewed_by": by, "comment": a.Comment})}
		if len(a.Extra) > 0 {
			ws = append(ws, keyReview.Set(a.Extra))
		}
		return graph.Update(ws...), nil
	})
	b.AddEdge(graph.START, "plan")
	b.AddConditionalEdges("plan", func(_ context.Context, s State) (graph.Route, error) {
		sends := make([]graph.Send, len(s.Topics))
		for i, t := range s.Topics {
			sends[i] = graph.Send{Node: "research", Arg: State{Topic: t, Topics: s.Topics}}
		}
		return graph.Fanout(sends...), nil
	}, map[string]string{"research": "research"})
	b.AddEdge("research", "draft")
	b.AddEdge("research", "stamp")
	b.AddJoin([]string{"draft", "stamp"}, "review")
	b.AddEdge("review", graph.END)
	opts := []graph.CompileOption{graph.WithName("tour")}
	if cp != nil {
		opts = append(opts, graph.WithCheckpointer(cp))
	}
	return b.Compile(opts...)
}

func firstTopic(s State) string {
	if len(s.Topics) == 0 {
		return ""
	}
	return s.Topics[0]
}
