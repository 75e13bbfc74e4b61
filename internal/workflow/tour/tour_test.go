package tour_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"weft/internal/checkpoint"
	"weft/internal/graph"
	"weft/internal/workflow/tour"
)

func TestTourRunsRetriesPausesAndFinishes(t *testing.T) {
	t.Parallel()
	g, err := tour.New(checkpoint.NewMemory(), 1)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cfg := graph.Config{ThreadID: "tour"}
	progress := 0
	var res graph.Result[tour.State]
	for ev, err := range g.Stream(ctx, cfg, graph.Update(graph.Set("question", "How do durable workflows survive crashes?")), graph.ModeAll) {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Kind {
		case graph.KindCustom:
			progress++
		case graph.KindDone:
			res = ev.Data.(graph.Result[tour.State])
		}
	}
	if progress != 9 || len(res.State.Notes) != 3 || len(res.Interrupts) != 1 {
		t.Fatalf("first leg: %d progress events, notes %v, interrupts %v", progress, res.State.Notes, res.Interrupts)
	}
	res, err = g.Invoke(ctx, cfg, graph.Resume(tour.Approval{Decision: "approve", Comment: "fine"}))
	if err != nil {
		t.Fatal(err)
	}
	if res.State.Decision != "approve" || res.State.Meta["reviewed_by"] != "human" || !res.Done() {
		t.Fatalf("after approval: %+v", res.State)
	}
}

func TestSubjectOf(t *testing.T) {
	long := strings.Repeat("why ", 30)
	for in, want := range map[string]string{
		`{"question": "  What makes\n workflows durable? "}`: "What makes workflows durable?",
		`{"question": "` + long + `"}`:                       strings.Repeat("why ", 20)[:79] + "…",
		`{}`:                                                 "",
		`not json`:                                           "",
	} {
		if got := tour.SubjectOf(json.RawMessage(in)); got != want {
			t.Errorf("SubjectOf(%s) = %q, want %q", in, got, want)
		}
	}
}

// A question the plan node could find no topic in is refused before a run starts (it could
// only fail); one it can plan from passes.
func TestCheckInput(t *testing.T) {
	for in, ok := range map[string]bool{
		`{"question": "What does a join wait for?"}`:    false,
		`{"question": "  "}`:                            false,
		`{}`:                                            false,
		`{"question": "How do retries work?"}`:          true,
		`{"question": "What makes workflows durable?"}`: true,
		// Letters, not bytes: "café" has four (five bytes), "résumé" six.
		`{"question": "Is the café good?"}`:   false,
		`{"question": "Is the résumé good?"}`: true,
		// The run works out the rest: an input decision would be a review that never happened.
		`{"question": "What makes workflows durable?", "decision": "approve"}`: false,
		`{"question": "What makes workflows durable?", "notes": []}`:           false,
	} {
		if err := tour.CheckInput(json.RawMessage(in)); (err == nil) != ok {
			t.Errorf("CheckInput(%s) = %v, want ok=%v", in, err, ok)
		}
	}
}

// The question's topics are its long words, each once, without the punctuation around them,
// whatever the script.
func TestTopicsOnceWithoutPunctuation(t *testing.T) {
	t.Parallel()
	for q, want := range map[string][]string{
		"durable durable durable?":          {"durable"},
		"Durable workflows, durable (sic)!": {"durable", "workflows"},
		"如何实现持久化工作流的崩溃恢复？":                  {"如何实现持久化工作流的崩溃恢复"},
	} {
		g, err := tour.New(checkpoint.NewMemory(), 0)
		if err != nil {
			t.Fatal(err)
		}
		res, err := g.Invoke(context.Background(), graph.Config{ThreadID: "topics"}, graph.Update(graph.Set("question", q)))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Join(res.State.Topics, "|") != strings.Join(want, "|") || len(res.State.Notes) != len(want) {
			t.Errorf("%q: topics %q, %d notes; want %q", q, res.State.Topics, len(res.State.Notes), want)
		}
	}
}
