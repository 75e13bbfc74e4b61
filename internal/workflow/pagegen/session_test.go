package pagegen_test

import (
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"weft/internal/checkpoint/sqlite"
	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/workflow/pagegen"
)

// The graph is seed 001 §4.1's, plus START's route to refine_gate for later rounds.
func TestGraphIsTheSeeds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	want := []string{pagegen.NodeBrief, pagegen.NodeStyle, pagegen.NodeRegistry, pagegen.NodeGenerate,
		pagegen.NodeAesthetic, pagegen.NodeRefineGate, pagegen.NodeRefine, pagegen.NodeRender}
	if got := b.g.Nodes(); !slices.Equal(got, want) {
		t.Fatalf("nodes = %v, want %v", got, want)
	}
	var edges []string
	for _, e := range b.g.Structure().Edges {
		edges = append(edges, fmt.Sprintf("%s -%s-> %s", e.From, e.Label, e.To))
	}
	for _, e := range []string{
		"__start__ -brief-> brief", "__start__ -refine_gate-> refine_gate",
		"brief --> style_extractor", "style_extractor --> component_registry", "component_registry --> generate",
		"generate -aesthetic-> aesthetic_scorer", "generate -skip-> refine_gate", "aesthetic_scorer --> refine_gate",
		"refine_gate -refine-> refine", "refine_gate -render-> render", "refine --> render", "render --> __end__",
	} {
		if !slices.Contains(edges, e) {
			t.Errorf("missing edge %q in %v", e, edges)
		}
	}
}

// §11: the same session resumed after its interrupt gives the same output. A session
// paused in one process (on a SQLite file) and resumed in another, after the file is
// reopened, builds pages byte-identical to a session run in one go on another saver, for
// the same request and feedback.
func TestResumedSessionBuildsByteIdenticalPages(t *testing.T) {
	t.Parallel()
	d := pagegen.Demos()[0]
	path := filepath.Join(t.TempDir(), "sessions.db")

	first, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	before := setup(t, func(d *pagegen.Deps) { d.Checkpointer = first })
	res, err := pagegen.Start(before.ctx, before.g, d.Session, d.Request)
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("start: %+v, %v", res.Interrupts, err)
	}
	if err := first.Close(); err != nil { // the process goes away
		t.Fatal(err)
	}

	second, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = second.Close() })
	after := setup(t, func(dp *pagegen.Deps) { dp.Checkpointer = second; dp.Artifacts = before.arts })
	res, err = pagegen.Feedback(after.ctx, after.g, d.Session, d.Feedback)
	if err != nil || res.State.BuildStatus != pagegen.BuildSucceeded {
		t.Fatalf("resume after reopening: %q, %v", res.State.BuildStatus, err)
	}
	resumed := pages(t, before, d.Session, res.State)

	oneGo := setup(t)
	reference := pages(t, oneGo, d.Session, runDemo(t, oneGo, d))
	if len(resumed) != len(reference) || len(resumed) < 4 {
		t.Fatalf("resumed built %d pages, the reference %d", len(resumed), len(reference))
	}
	for file, html := range reference {
		if !bytes.Equal(resumed[file], html) {
			t.Errorf("%s differs between the resumed session and the reference", file)
		}
	}
	zipA, _ := before.arts.Get(d.Session, "site.zip")
	zipB, _ := oneGo.arts.Get(d.Session, "site.zip")
	if !bytes.Equal(zipA.Data, zipB.Data) {
		t.Error("site.zip differs between the resumed session and the reference")
	}
}

// §11 / §5: refine through interrupt + Command(resume={"user_feedback": …}); a second round
// on the same thread after render; "no changes" goes straight to render; the history
// shows every round.
func TestRefineThroughInterruptAndLaterRounds(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const session = "rounds"
	res, err := pagegen.Start(b.ctx, b.g, session, pagegen.Request{Text: "A site for Brewly, a coffee subscription service for busy professionals, with pricing."})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Interrupts) != 1 {
		t.Fatalf("no pause for feedback: %+v", res)
	}
	it := res.Interrupts[0]
	if it.Node != pagegen.NodeRefineGate || !strings.Contains(string(it.Value), `"type":"need_user_feedback"`) || !strings.Contains(string(it.Value), `"resumable":true`) {
		t.Fatalf("interrupt = %s at %s", it.Value, it.Node)
	}
	primary := res.State.StyleTokens.Palette.Primary

	// Round 1: the seed's own resume command.
	res, err = b.g.Invoke(b.ctx, graph.Config{ThreadID: session}, graph.Resume(map[string]any{"user_feedback": "use blue, add an about page"}))
	if err != nil || !res.Done() {
		t.Fatalf("resume: %+v, %v", res.Next, err)
	}
	if got := res.State.StyleTokens.Palette.Primary; got != "#2563eb" || got == primary {
		t.Errorf("primary after \"use blue\" = %s (was %s)", got, primary)
	}
	if n := len(res.State.BuildArtifacts.Pages); n != 3 || res.State.BuildArtifacts.Pages[2].Slug != pagegen.PageAbout {
		t.Errorf("pages after \"add an about page\" = %+v", res.State.BuildArtifacts.Pages)
	}
	if res.State.UserFeedback != "" {
		t.Errorf("render left the round's feedback pending: %q", res.State.UserFeedback)
	}

	// Round 2, after render, on the same thread: refine → render from the stored state.
	res, err = pagegen.Feedback(b.ctx, b.g, session, "remove the pricing page")
	if err != nil || !res.Done() {
		t.Fatalf("second round: %+v, %v", res.Next, err)
	}
	if len(res.State.Refinements) != 2 || res.State.BuildArtifacts.Round != 2 {
		t.Fatalf("refinements = %d, build round %d", len(res.State.Refinements), res.State.BuildArtifacts.Round)
	}
	for _, p := range res.State.BuildArtifacts.Pages {
		if p.Slug == pagegen.PagePricing {
			t.Error("the pricing page survived \"remove the pricing page\"")
		}
	}

	// Round 3: "no changes" goes to render without refine.
	res, err = pagegen.Feedback(b.ctx, b.g, session, "looks good")
	if err != nil || len(res.State.Refinements) != 2 || res.State.BuildArtifacts.Round != 3 {
		t.Fatalf("\"looks good\": %d refinements, round %d, %v", len(res.State.Refinements), res.State.BuildArtifacts.Round, err)
	}

	hist, err := b.g.History(b.ctx, graph.Config{ThreadID: session}, graph.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, cp := range hist {
		for _, n := range cp.Nodes {
			count[n]++
		}
	}
	if count[pagegen.NodeBrief] != 1 || count[pagegen.NodeRefine] != 2 || count[pagegen.NodeRender] != 3 || count[pagegen.NodeRefineGate] != 3 {
		t.Errorf("history per node = %v; want brief 1, refine_gate 3, refine 2, render 3", count)
	}

	// A new request on the session starts over from brief and asks for feedback again.
	res, err = pagegen.Start(b.ctx, b.g, session, pagegen.Request{Text: "A site for Crumb, a bakery for families."})
	if err != nil || len(res.Interrupts) != 1 || res.State.ProductDoc.Name != "Crumb" || res.State.UserFeedback != "" {
		t.Fatalf("a new request on the session: %+v, %v", res.Interrupts, err)
	}
}

// A bad answer to the pause is asked for again with the reason, not stored, and does not
// leave the session stuck.
func TestOversizedResumeIsAskedAgain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if _, err := pagegen.Start(b.ctx, b.g, "big", pagegen.Request{Text: "A site for a bakery called Crumb."}); err != nil {
		t.Fatal(err)
	}
	cfg := graph.Config{ThreadID: "big"}
	res, err := b.g.Invoke(b.ctx, cfg, graph.Resume(pagegen.ResumeValue{UserFeedback: strings.Repeat("x", 50<<10)}))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Interrupts) != 1 || !strings.Contains(string(res.Interrupts[0].Value), "at most 10240 bytes") {
		t.Fatalf("a 50 KB answer: %+v", res.Interrupts)
	}
	res, err = b.g.Invoke(b.ctx, cfg, graph.Resume(pagegen.ResumeValue{UserFeedback: "use red"}))
	if err != nil || !res.Done() || res.State.StyleTokens.Palette.Primary != "#dc2626" {
		t.Fatalf("the next answer: %+v, %v", res.Next, err)
	}
}

// §11: without a checkpointer the session cannot be resumed, and the system says so: in
// the pause itself and when feedback is sent.
func TestWithoutCheckpointerSaysNotResumable(t *testing.T) {
	t.Parallel()
	b := setup(t, func(d *pagegen.Deps) { d.Checkpointer = nil })
	res, err := pagegen.Start(b.ctx, b.g, "ephemeral", pagegen.Request{Text: "A site for a bakery called Crumb."})
	if err != nil || len(res.Interrupts) != 1 {
		t.Fatalf("start without a checkpointer: %+v, %v", res, err)
	}
	if v := string(res.Interrupts[0].Value); !strings.Contains(v, `"resumable":false`) || !strings.Contains(v, "cannot be resumed") {
		t.Errorf("the pause does not say it cannot be resumed: %s", v)
	}
	_, err = pagegen.Feedback(b.ctx, b.g, "ephemeral", "use green")
	var se *pagegen.SessionError
	if !errors.As(err, &se) || se.Code != pagegen.CodeNotResumable || !errors.Is(err, graph.ErrNoCheckpointer) {
		t.Fatalf("feedback without a checkpointer: %v", err)
	}
	if !strings.Contains(err.Error(), "cannot be resumed") || !strings.Contains(err.Error(), "checkpointer") {
		t.Errorf("message %q does not say why", err)
	}
	if class, code := fault.Classify(err); class != fault.Validation || code != pagegen.CodeNotResumable {
		t.Errorf("classified %s %s", class, code)
	}
	// The engine's own resume path says the same through ExplainResume.
	_, err = b.g.Invoke(b.ctx, graph.Config{ThreadID: "ephemeral"}, graph.Resume("x"))
	if err = pagegen.ExplainResume("ephemeral", err); !errors.As(err, &se) || se.Code != pagegen.CodeNotResumable {
		t.Fatalf("ExplainResume of a resume without a checkpointer: %v", err)
	}
}

// Feedback to a session that is not waiting, or does not exist, is refused clearly.
func TestFeedbackWhenNotWaiting(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, err := pagegen.Feedback(b.ctx, b.g, "nobody", "use green")
	var se *pagegen.SessionError
	if !errors.As(err, &se) || !errors.Is(err, graph.ErrNotFound) {
		t.Fatalf("feedback to an unknown session: %v", err)
	}
	// A session that failed before its pause is not waiting for feedback.
	_, err = b.g.Invoke(b.ctx, graph.Config{ThreadID: "broken"}, graph.Update(graph.Set("user_input", "   ")))
	if err == nil {
		t.Fatal("a blank request ran")
	}
	_, err = pagegen.Feedback(b.ctx, b.g, "broken", "use green")
	if !errors.As(err, &se) || se.Code != pagegen.CodeNotWaiting {
		t.Fatalf("feedback to a failed session: %v", err)
	}
}
