package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"weft/internal/app"
	"weft/internal/checkpoint"
	"weft/internal/checkpoint/sqlite"
	"weft/internal/graph"
	"weft/internal/llm"
	"weft/internal/postgres"
	"weft/internal/terminal"
)

// runWorkflow is weft run WORKFLOW: the workflow in this terminal (internal/terminal).
func runWorkflow(ctx context.Context, args []string, in io.Reader, out io.Writer) error {
	fs := flag.NewFlagSet("run WORKFLOW", flag.ContinueOnError) // the name is usage's: weft run WORKFLOW [flags]
	store := fs.String("store", "sqlite:weft-run.db", "where threads are saved: sqlite:PATH, memory (nothing outlives the process), or a PostgreSQL URL")
	thread := fs.String("thread", "", "resume this thread (its id as the run printed it)")
	dir := fs.String("out", "weft-out", "the folder the run's files are written to (a site's pages, a report)")
	input := fs.String("input", "", "the start form's fields as JSON (as the API takes them); without it they are asked for")
	name := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if name == "" {
		return errors.New("weft run WORKFLOW: name the workflow (page_generation, contract_review, tour)")
	}
	var raw json.RawMessage
	if *input != "" {
		if !json.Valid([]byte(*input)) {
			return errors.New("--input is not valid JSON")
		}
		raw = json.RawMessage(*input)
	}
	cp, durable, closeStore, err := openStore(ctx, *store)
	if err != nil {
		return err
	}
	defer closeStore()
	provider, err := llm.FromEnv()
	if err != nil {
		return err
	}
	reg, err := app.StandaloneWorkflows(app.Standalone{Checkpointer: cp, Artifacts: terminal.Dir{Path: *dir}, LLM: provider})
	if err != nil {
		return err
	}
	err = terminal.Run(ctx, terminal.Config{Registry: reg, Workflow: name, Thread: *thread, Store: *store, Durable: durable, Input: raw,
		Resume: fmt.Sprintf("weft run %s --store %s --out %s", name, *store, *dir), ArtifactDir: *dir, In: in, Out: out})
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return nil // stopped with Ctrl-C: the run said how to resume
	}
	return err
}

// openStore opens the checkpointer a --store names; durable: it outlives the process.
func openStore(ctx context.Context, store string) (graph.Checkpointer, bool, func(), error) {
	switch {
	case store == "memory":
		return checkpoint.NewMemory(), false, func() {}, nil
	case strings.HasPrefix(store, "sqlite:"):
		cp, err := sqlite.Open(ctx, strings.TrimPrefix(store, "sqlite:"))
		if err != nil {
			return nil, false, nil, err
		}
		return cp, true, func() { _ = cp.Close() }, nil
	case strings.HasPrefix(store, "postgres://"), strings.HasPrefix(store, "postgresql://"):
		d, err := postgres.Open(ctx, store)
		if err != nil {
			return nil, false, nil, err
		}
		return postgres.NewCheckpointer(d), true, d.Close, nil
	}
	return nil, false, nil, fmt.Errorf("--store %q: use sqlite:PATH, memory or a postgres:// URL", store)
}
