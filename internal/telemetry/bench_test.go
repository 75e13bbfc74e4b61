package telemetry_test

import (
	"context"
	"strconv"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"weft/internal/graph"
	"weft/internal/telemetry"
)

type linearState struct {
	Count int
	Name  string
}

// linear10 is graph's BenchmarkLinear10 graph: ten nodes in a row, each adding one.
func linear10(b *testing.B) *graph.Graph[linearState] {
	bld := graph.New[linearState]()
	prev := graph.START
	for i := range 10 {
		name := "n" + strconv.Itoa(i)
		bld.AddNode(name, func(_ context.Context, s linearState) (graph.Command, error) {
			return graph.Update(graph.Set("Count", s.Count+1)), nil
		})
		bld.AddEdge(prev, name)
		prev = name
	}
	bld.AddEdge(prev, graph.END)
	g, err := bld.Compile()
	if err != nil {
		b.Fatal(err)
	}
	return g
}

// BenchmarkLinear10 runs graph's Linear10 (no checkpointer) as the runner runs a job, with
// tracing off (the no-op provider the process has without OTEL_EXPORTER_OTLP_ENDPOINT: the
// attempt's span is not recording, so no node spans and no task events), and on (an SDK
// provider exporting to memory: the attempt's span, a span per node with its §10 fields).
// The baseline is the graph alone. Compare ns/op of the three: off/baseline is the cost of
// tracing an operator has not asked for.
func BenchmarkLinear10(b *testing.B) {
	in := graph.Update(graph.Set("Name", "bench"))
	g := linear10(b)
	run := func(b *testing.B, tp trace.TracerProvider, reset func()) {
		tracer := tp.Tracer(telemetry.ScopeName)
		traceID := telemetry.NewTraceID()
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			if reset != nil && i%512 == 0 {
				reset()
			}
			// What runner.process does around a run.
			ctx, span := tracer.Start(telemetry.WithTraceID(context.Background(), traceID), "run linear10")
			var modes graph.StreamMode
			var sink func(graph.Event) bool
			if span.IsRecording() {
				tasks := telemetry.NewTasks(tracer, traceID, "t")
				ctx = graph.WithTaskHook(ctx, tasks.Hook)
				modes = graph.ModeTasks
				sink = func(ev graph.Event) bool {
					if res, ok := ev.Data.(graph.TaskResult); ok {
						tasks.Result(ctx, res, "", "")
					}
					return true
				}
			}
			out, err := g.Run(ctx, graph.Config{}, in, modes, sink)
			span.End()
			if err != nil || len(out.Interrupts) > 0 {
				b.Fatal(err)
			}
		}
	}
	b.Run("baseline", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := g.Invoke(context.Background(), graph.Config{}, in); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("tracing_off", func(b *testing.B) { run(b, noop.NewTracerProvider(), nil) })
	b.Run("tracing_on", func(b *testing.B) {
		exp := tracetest.NewInMemoryExporter()
		tp := telemetry.NewProvider(sdktrace.WithSyncer(exp))
		defer func() { _ = tp.Shutdown(context.Background()) }()
		run(b, tp, exp.Reset)
	})
}
