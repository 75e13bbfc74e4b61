package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"weft/internal/checkpoint"
	"weft/internal/graph"
	"weft/internal/workflow/tour"
)

// demoTerminal streams the tour graph: every event as it happens, an
// automatic approval at the review interrupt, then the final state.
func demoTerminal(ctx context.Context, args []string, out io.Writer) error {
	if err := parseFlags(flag.NewFlagSet("demo-terminal", flag.ContinueOnError), args); err != nil {
		return err
	}
	g, err := tour.New(checkpoint.NewMemory(), 1)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "The tour graph (Mermaid):\n\n%s\n", g.Mermaid())
	cfg := graph.Config{ThreadID: "tour-1"}
	input := graph.Update(graph.Set("question", "How do durable workflows survive worker crashes and restarts?"))
	res, err := streamTo(ctx, out, g, cfg, input)
	if err != nil {
		return err
	}
	for len(res.Interrupts) > 0 {
		it := res.Interrupts[0]
		fmt.Fprintf(out, "\n== paused at %s, interrupt %s: %s\n== answering as the reviewer: approve\n\n", it.Node, short(it.ID), it.Value)
		res, err = streamTo(ctx, out, g, cfg, graph.Resume(tour.Approval{Decision: "approve", Comment: "approved from the terminal demo"}))
		if err != nil {
			return err
		}
	}
	final, err := json.MarshalIndent(res.State, "", "  ")
	if err != nil {
		return err
	}
	hist, err := g.History(ctx, cfg, graph.ListOptions{})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\n== done after %d checkpoints; final state:\n%s\n", len(hist), final)
	return nil
}

func streamTo(ctx context.Context, out io.Writer, g *graph.Graph[tour.State], cfg graph.Config, in graph.Command) (graph.Result[tour.State], error) {
	var res graph.Result[tour.State]
	for ev, err := range g.Stream(ctx, cfg, in, graph.ModeAll) {
		if err != nil {
			return res, err
		}
		line := describe(ev)
		if line != "" {
			fmt.Fprintf(out, "step %-2d %-12s %s\n", ev.Step, ev.Kind, line)
		}
		if ev.Kind == graph.KindDone {
			res = ev.Data.(graph.Result[tour.State])
		}
	}
	return res, nil
}

func describe(ev graph.Event) string {
	switch d := ev.Data.(type) {
	case graph.TaskStart:
		return fmt.Sprintf("%s started (task %s)", d.Node, short(d.ID))
	case graph.TaskResult:
		if d.Error != "" {
			return fmt.Sprintf("%s failed after %d attempt(s): %s", d.Node, d.Attempts, d.Error)
		}
		if len(d.Interrupts) > 0 {
			return fmt.Sprintf("%s interrupted", d.Node)
		}
		return fmt.Sprintf("%s finished in %s, %d attempt(s), %d bytes out", d.Node, d.Ended.Sub(d.Started).Round(1000), d.Attempts, d.OutputSize)
	case graph.Checkpoint:
		var next []string
		for _, t := range d.Next {
			next = append(next, t.Node)
		}
		return fmt.Sprintf("saved %s (%s), next [%s]", short(d.ID), d.Source, strings.Join(next, " "))
	case graph.PendingInterrupt:
		return fmt.Sprintf("%s waits for input: %s", d.Node, d.Value)
	case graph.Result[tour.State]:
		return ""
	}
	switch ev.Kind {
	case graph.KindStep:
		return fmt.Sprintf("%v task(s)", ev.Data)
	case graph.KindValues:
		return ""
	case graph.KindUpdates:
		b, _ := json.Marshal(ev.Data)
		return fmt.Sprintf("%s wrote %s", ev.Node, b)
	}
	b, _ := json.Marshal(ev.Data)
	if ev.Node != "" {
		return fmt.Sprintf("%s: %s", ev.Node, b)
	}
	return string(b)
}

func short(id string) string {
	if len(id) > 8 {
		return id[len(id)-8:]
	}
	return id
}
