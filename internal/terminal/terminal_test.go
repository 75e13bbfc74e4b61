package terminal_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"weft/internal/checkpoint"
	"weft/internal/llm"
	"weft/internal/terminal"
	"weft/internal/workflow"
	"weft/internal/workflow/pagegen"
	"weft/internal/workflow/tour"
)

func registry(t *testing.T, dir string) *workflow.Registry {
	t.Helper()
	cp := checkpoint.NewMemory()
	reg := workflow.NewRegistry()
	pg, err := pagegen.Definition(pagegen.Deps{LLM: llm.NewOffline(), Artifacts: terminal.Dir{Path: dir}, Checkpointer: cp})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := tour.New(cp, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []workflow.Definition{pg, {Name: "tour", Title: "Engine tour", Graph: tg, ExampleInput: tour.ExampleInput}} {
		if err := reg.Register(d); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// "no changes" at the feedback prompt goes straight to render (no refine round), the site is
// written to the folder, and the end of the input ends the run at the follow-up question.
func TestNoChangesBuildsTheSite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out strings.Builder
	err := terminal.Run(context.Background(), terminal.Config{Registry: registry(t, dir), Workflow: pagegen.Name, Store: "memory",
		Input: []byte(`{"request": "A site for Crumb, a neighbourhood bakery, with a contact form.", "aesthetic": false}`),
		In:    strings.NewReader("\n2\n\n"), Out: &out, ArtifactDir: dir})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	if strings.Contains(text, "[refine_start]") || !strings.Contains(text, "[build_complete]") || !strings.Contains(text, "Rounds of feedback 0") {
		t.Errorf("no changes did not go straight to render:\n%s", text)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "pages", "index.html")); err != nil || !strings.Contains(string(b), "Crumb") {
		t.Errorf("index.html: %v", err)
	}
}

// A workflow without a review of its own gets the generic one at the prompt: a rejection
// without a comment is refused and asked again.
func TestGenericReviewAtThePrompt(t *testing.T) {
	t.Parallel()
	var out strings.Builder
	err := terminal.Run(context.Background(), terminal.Config{Registry: registry(t, t.TempDir()), Workflow: "tour", Store: "memory",
		In: strings.NewReader("\n\n2\n\n\n1\nlooks right\n"), Out: &out})
	if err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	text := out.String()
	if !strings.Contains(text, "not taken: Say why you reject") || !strings.Contains(text, "is done") {
		t.Errorf("the tour's review:\n%s", text)
	}
}

func TestMemoryStoreRefusesResume(t *testing.T) {
	t.Parallel()
	err := terminal.Run(context.Background(), terminal.Config{Registry: registry(t, t.TempDir()), Workflow: pagegen.Name, Store: "memory",
		Thread: "page-generation-1", In: strings.NewReader(""), Out: new(strings.Builder)})
	if !errors.Is(err, terminal.ErrNotResumable) || !strings.Contains(err.Error(), "cannot be resumed") {
		t.Fatalf("got %v", err)
	}
}
