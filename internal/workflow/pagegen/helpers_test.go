package pagegen_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"weft/internal/checkpoint"
	"weft/internal/graph"
	"weft/internal/llm"
	"weft/internal/workflow/pagegen"
	"weft/internal/workflow/workflowtest"
)

// bundle is one test's graph and what it writes to.
type bundle struct {
	g    *graph.Graph[pagegen.GraphState]
	arts *workflowtest.Artifacts
	cp   graph.Checkpointer
	ctx  context.Context
}

// setup compiles the workflow on the offline provider, an in-memory saver and artifact
// store; mods adjust the deps.
func setup(t testing.TB, mods ...func(*pagegen.Deps)) bundle {
	t.Helper()
	arts := workflowtest.NewArtifacts()
	d := pagegen.Deps{LLM: llm.NewOffline(), Artifacts: arts, Checkpointer: checkpoint.NewMemory()}
	for _, m := range mods {
		m(&d)
	}
	g, err := pagegen.New(d)
	if err != nil {
		t.Fatal(err)
	}
	return bundle{g: g, arts: arts, cp: d.Checkpointer, ctx: context.Background()}
}

// runDemo runs a demo session to its pause, answers it with the demo's feedback and
// returns the final state.
func runDemo(t testing.TB, b bundle, d pagegen.Demo) pagegen.GraphState {
	t.Helper()
	res, err := pagegen.Start(b.ctx, b.g, d.Session, d.Request)
	if err != nil {
		t.Fatalf("%s: start: %v", d.Session, err)
	}
	if len(res.Interrupts) != 1 || res.Interrupts[0].Node != pagegen.NodeRefineGate {
		t.Fatalf("%s: the session did not pause at refine_gate: %+v", d.Session, res.Interrupts)
	}
	res, err = pagegen.Feedback(b.ctx, b.g, d.Session, d.Feedback)
	if err != nil {
		t.Fatalf("%s: feedback: %v", d.Session, err)
	}
	if !res.Done() || res.State.BuildStatus != pagegen.BuildSucceeded {
		t.Fatalf("%s: after feedback: status %q, error %q, next %v", d.Session, res.State.BuildStatus, res.State.Error, res.Next)
	}
	return res.State
}

// pages returns a session's built pages by file name.
func pages(t testing.TB, b bundle, session string, s pagegen.GraphState) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, p := range s.BuildArtifacts.Pages {
		a, ok := b.arts.Get(session, p.Key)
		if !ok {
			t.Fatalf("%s: artifact %s is not stored", session, p.Key)
		}
		out[p.File] = a.Data
	}
	return out
}

// fakeClock is a graph.Clock that moves only when told (and by a sleep's length).
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.now.IsZero() {
		c.now = time.Date(2026, 2, 5, 9, 0, 0, 0, time.UTC)
	}
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.Now()
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.advance(d)
	return ctx.Err()
}
