package pagegen_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"weft/internal/graph"
	"weft/internal/workflow/pagegen"
)

// names streams a run and maps its events to §7.2 names, both as the engine hands them
// over and after a JSON round trip (as an event bus would deliver them).
func names(t *testing.T, b bundle, session string, in graph.Command) ([]string, []pagegen.StreamEvent) {
	t.Helper()
	var out []string
	var all []pagegen.StreamEvent
	for ev, err := range b.g.Stream(b.ctx, graph.Config{ThreadID: session}, in, graph.ModeTasks|graph.ModeCustom) {
		if err != nil {
			t.Fatal(err)
		}
		direct := pagegen.StreamEvents(ev)
		raw, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		var decoded graph.Event
		if err := json.Unmarshal(raw, &decoded); err != nil {
			t.Fatal(err)
		}
		viaJSON := pagegen.StreamEvents(decoded)
		if len(direct) != len(viaJSON) {
			t.Fatalf("%s event: %d mapped directly, %d after JSON", ev.Kind, len(direct), len(viaJSON))
		}
		for i, e := range direct {
			if viaJSON[i].Name != e.Name {
				t.Fatalf("%s: %s directly, %s after JSON", ev.Kind, e.Name, viaJSON[i].Name)
			}
			out = append(out, e.Name)
			all = append(all, e)
		}
	}
	return out, all
}

func compact(ns []string) []string { return slices.Compact(slices.Clone(ns)) }

// The seed's SSE names come from node starts and completions, Emit progress and the
// interrupt, in order (§7.2).
func TestStreamEventsFollowSeed(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := pagegen.Demos()[0]
	ws, err := d.Request.Writes()
	if err != nil {
		t.Fatal(err)
	}
	first, evs := names(t, b, d.Session, graph.Update(ws...))
	want := []string{"brief_start", "brief_complete", "style_extracted", "registry_complete", "generate_start",
		"generate_progress", "generate_complete", "interrupt", "refine_waiting"}
	if got := compact(first); !slices.Equal(got, want) {
		t.Fatalf("first run = %v, want %v", got, want)
	}
	if n := strings.Count(strings.Join(first, " "), "generate_progress"); n != 4 {
		t.Errorf("%d generate_progress events for 4 pages (home, pricing, about, contact)", n)
	}
	wait := evs[len(evs)-1].Data.(pagegen.RefineWaiting)
	if wait.InterruptID == "" || wait.Type != "need_user_feedback" || !wait.Resumable || len(wait.Examples) == 0 {
		t.Errorf("refine_waiting = %+v", wait)
	}

	cmd, err := pagegen.Resume(d.Feedback)
	if err != nil {
		t.Fatal(err)
	}
	second, evs := names(t, b, d.Session, cmd)
	want = []string{"refine_start", "generate_progress", "refine_complete", "build_start", "build_progress", "build_complete"}
	if got := compact(second); !slices.Equal(got, want) {
		t.Fatalf("after feedback = %v, want %v", got, want)
	}
	done := evs[len(evs)-1].Data.(map[string]any)
	if pages, ok := done["pages"].([]pagegen.BuiltPage); !ok || len(pages) != 5 || strings.Count(strings.Join(second, " "), "build_progress") != 5 {
		t.Errorf("build_complete payload = %+v", done)
	}
	for _, n := range append(first, second...) {
		if !slices.Contains(pagegen.EventNames, n) {
			t.Errorf("event %q is not one of §7.2's", n)
		}
	}
}
