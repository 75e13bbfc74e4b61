package pagegen_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/llm"
	"weft/internal/workflow/pagegen"
)

// flaky is the offline provider, except that the first failures chat calls of task fail
// with a transient provider error.
type flaky struct {
	llm.Provider
	task     string
	failures int
	mu       sync.Mutex
	calls    int
}

func (f *flaky) Chat(ctx context.Context, req llm.ChatRequest) (llm.ChatResponse, error) {
	if req.Task == f.task {
		f.mu.Lock()
		f.calls++
		n := f.calls
		f.mu.Unlock()
		if n <= f.failures {
			return llm.ChatResponse{}, fault.New(fault.Transient, fault.CodeLLMTransient, "model server overloaded (503)")
		}
	}
	return f.Provider.Chat(ctx, req)
}

// RetryPolicy(max_attempts=2) on brief: one transient failure is retried and the session
// goes on; two fail the run with the error's class, after two attempts.
func TestBriefRetriesTransientFailureOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		failures int
		ok       bool
	}{{"fails once, retried", 1, true}, {"fails twice, gives up", 2, false}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := &flaky{Provider: llm.NewOffline(), task: "pagegen.brief", failures: tc.failures}
			b := setup(t, func(d *pagegen.Deps) { d.LLM = p })
			var attempts int
			var final error
			for ev, err := range b.g.Stream(b.ctx, graph.Config{ThreadID: "retry"}, graph.Update(graph.Set("user_input", "A site for a bakery called Crumb.")), graph.ModeTasks) {
				if err != nil {
					final = err
					break
				}
				if r, ok := ev.Data.(graph.TaskResult); ok && ev.Node == pagegen.NodeBrief {
					attempts = r.Attempts
				}
			}
			if p.calls != 2 {
				t.Errorf("brief's model call ran %d times, want 2", p.calls)
			}
			if tc.ok {
				if final != nil || attempts != 2 {
					t.Fatalf("err = %v, attempts = %d; want success on attempt 2", final, attempts)
				}
				return
			}
			var ne *graph.NodeError
			if !errors.As(final, &ne) || ne.Node != pagegen.NodeBrief || ne.Attempt != 2 {
				t.Fatalf("err = %v; want brief's NodeError after attempt 2", final)
			}
			if class, code := fault.Classify(final); class != fault.Transient || code != fault.CodeLLMTransient {
				t.Fatalf("class = %s %s; want transient %s (the platform retries, then dead-letters it)", class, code, fault.CodeLLMTransient)
			}
		})
	}
}

// generate has the same policy: a page whose layout call fails once is laid out again.
func TestGenerateRetriesTransientFailureOnce(t *testing.T) {
	t.Parallel()
	p := &flaky{Provider: llm.NewOffline(), task: "pagegen.generate_page", failures: 1}
	b := setup(t, func(d *pagegen.Deps) { d.LLM = p })
	res, err := pagegen.Start(b.ctx, b.g, "gen", pagegen.Request{Text: "A site for a bakery called Crumb, with pricing."})
	if err != nil || len(res.State.PageSchemas) != 2 {
		t.Fatalf("start: %d schemas, %v", len(res.State.PageSchemas), err)
	}
}

// Bad input is not retried: a validation error fails at once.
func TestValidationIsNotRetried(t *testing.T) {
	t.Parallel()
	p := &flaky{Provider: llm.NewOffline(), task: "pagegen.brief"}
	b := setup(t, func(d *pagegen.Deps) { d.LLM = p })
	_, err := b.g.Invoke(b.ctx, graph.Config{ThreadID: "blank"}, graph.Update(graph.Set("user_input", "  ")))
	var ne *graph.NodeError
	if !errors.As(err, &ne) || ne.Attempt != 1 || !errors.Is(err, pagegen.ErrEmptyRequest) {
		t.Fatalf("blank request: %v", err)
	}
	if class, _ := fault.Classify(err); class != fault.Validation {
		t.Fatalf("class %s", class)
	}
}

// CachePolicy on style_extractor and component_registry: a second session with the same
// request and logo takes both from the cache (and ends with the same tokens); a different
// request does not.
func TestStyleAndRegistryCachedAcrossSessions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	req := pagegen.Demos()[2].Request // with a logo
	cached := func(session string, r pagegen.Request) (map[string]bool, pagegen.GraphState) {
		t.Helper()
		ws, err := r.Writes()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]bool{}
		var final pagegen.GraphState
		for ev, err := range b.g.Stream(b.ctx, graph.Config{ThreadID: session}, graph.Update(ws...), graph.ModeTasks) {
			if err != nil {
				t.Fatal(err)
			}
			if r, ok := ev.Data.(graph.TaskResult); ok {
				out[ev.Node] = r.Cached
			}
			if res, ok := ev.Data.(graph.Result[pagegen.GraphState]); ok {
				final = res.State
			}
		}
		return out, final
	}
	first, s1 := cached("cache-1", req)
	if first[pagegen.NodeStyle] || first[pagegen.NodeRegistry] {
		t.Fatalf("first session hit a cold cache: %v", first)
	}
	second, s2 := cached("cache-2", req)
	if !second[pagegen.NodeStyle] || !second[pagegen.NodeRegistry] {
		t.Fatalf("second session with the same inputs: cached = %v; want style_extractor and component_registry from the cache", second)
	}
	if second[pagegen.NodeBrief] || second[pagegen.NodeGenerate] {
		t.Errorf("nodes without a cache policy were cached: %v", second)
	}
	if s1.StyleTokens.Palette != s2.StyleTokens.Palette || s2.StyleTokens.Source != "logo" {
		t.Errorf("cached tokens differ: %+v vs %+v", s1.StyleTokens.Palette, s2.StyleTokens.Palette)
	}
	other := req
	other.Text += " Use purple."
	third, _ := cached("cache-3", other)
	if third[pagegen.NodeStyle] {
		t.Error("a different request hit the style cache")
	}
}

// The cache expires after its TTL.
func TestCacheExpires(t *testing.T) {
	t.Parallel()
	clock := &fakeClock{}
	b := setup(t, func(d *pagegen.Deps) { d.Clock = clock; d.CacheTTL = 10 * 60e9 })
	run := func(session string) bool {
		cachedStyle := false
		for ev, err := range b.g.Stream(b.ctx, graph.Config{ThreadID: session}, graph.Update(graph.Set("user_input", "A site for Crumb, a bakery.")), graph.ModeTasks) {
			if err != nil {
				t.Fatal(err)
			}
			if r, ok := ev.Data.(graph.TaskResult); ok && ev.Node == pagegen.NodeStyle {
				cachedStyle = r.Cached
			}
		}
		return cachedStyle
	}
	run("ttl-1")
	clock.advance(9 * 60e9)
	if !run("ttl-2") {
		t.Fatal("not cached within the TTL")
	}
	clock.advance(2 * 60e9)
	if run("ttl-3") {
		t.Fatal("still cached after the TTL")
	}
}
