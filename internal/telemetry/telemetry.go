// Package telemetry is Weft's OpenTelemetry: a tracer provider configured only by the
// standard OTEL_* environment variables (no endpoint: no provider, nothing exported), the
// W3C trace context a run keeps with its job, a span per node task (a graph.TaskHook), spans
// around LLM calls, a slog handler that adds trace_id and span_id to log lines, and the
// runner's Prometheus metrics.
//
// It imports internal/graph, internal/llm, internal/fault, the OpenTelemetry SDK and the
// Prometheus client; the runner, the platform, the server and cmd use it.
package telemetry

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	"go.opentelemetry.io/contrib/exporters/autoexport"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ScopeName is the instrumentation scope of Weft's own spans.
const ScopeName = "weft"

// ServiceName is the service.name of Weft's spans unless OTEL_SERVICE_NAME says otherwise.
const ServiceName = "weft"

// Propagator is the trace context Weft reads from and writes to requests and jobs: W3C
// traceparent/tracestate and baggage.
var Propagator propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// Enabled reports whether the environment asks for traces to be exported: an OTLP endpoint
// (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) or an exporter named in
// OTEL_TRACES_EXPORTER other than "none", and OTEL_SDK_DISABLED not "true".
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	if e := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); e != "" {
		return !strings.EqualFold(e, "none")
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Tracing is a process's tracer provider.
type Tracing struct {
	// Provider makes Weft's tracers: the SDK's when Enabled, else a no-op one.
	Provider trace.TracerProvider
	// Enabled: spans are recorded and exported.
	Enabled bool
	sdk     *sdktrace.TracerProvider
}

// FromEnv sets up tracing from the OTEL_* environment variables alone (exporter through
// autoexport: OTEL_TRACES_EXPORTER, OTEL_EXPORTER_OTLP_*; sampler: OTEL_TRACES_SAMPLER and
// its argument; batching: OTEL_BSP_*; resource: OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES)
// and installs it as the global provider with the W3C propagator. Without an endpoint it
// installs the no-op provider: nothing is recorded or exported.
func FromEnv(ctx context.Context) (*Tracing, error) {
	otel.SetTextMapPropagator(Propagator)
	if !Enabled(os.Getenv) {
		tp := noop.NewTracerProvider()
		otel.SetTracerProvider(tp)
		return &Tracing{Provider: tp}, nil
	}
	exp, err := autoexport.NewSpanExporter(ctx)
	if err != nil {
		return nil, fmt.Errorf("set up tracing: %w", err)
	}
	res, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithHost(),
		resource.WithAttributes(semconv.ServiceName(ServiceName)), resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("set up tracing: %w", err)
	}
	tp := NewProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	return &Tracing{Provider: tp, Enabled: true, sdk: tp}, nil
}

// Shutdown exports what is buffered and stops the provider (nothing when disabled).
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil || t.sdk == nil {
		return nil
	}
	return t.sdk.Shutdown(ctx)
}

// NewProvider is an SDK tracer provider whose root spans take the trace id WithTraceID put
// in their context (a job's trace id, so its node records' trace_id is the trace's); tests
// build one with an in-memory exporter.
func NewProvider(opts ...sdktrace.TracerProviderOption) *sdktrace.TracerProvider {
	return sdktrace.NewTracerProvider(append([]sdktrace.TracerProviderOption{sdktrace.WithIDGenerator(idGenerator{})}, opts...)...)
}

type traceIDKey struct{}

// WithTraceID returns ctx asking a root span started in it (by NewProvider's tracers) to use
// trace id id (32 hex digits; anything else is ignored).
func WithTraceID(ctx context.Context, id string) context.Context {
	tid, err := trace.TraceIDFromHex(id)
	if err != nil {
		return ctx
	}
	return context.WithValue(ctx, traceIDKey{}, tid)
}

// idGenerator makes random ids, and a root span's trace id from WithTraceID.
type idGenerator struct{}

func (idGenerator) NewIDs(ctx context.Context) (trace.TraceID, trace.SpanID) {
	tid, ok := ctx.Value(traceIDKey{}).(trace.TraceID)
	if !ok || !tid.IsValid() {
		binary.BigEndian.PutUint64(tid[:8], rand.Uint64())
		binary.BigEndian.PutUint64(tid[8:], rand.Uint64()|1)
	}
	return tid, newSpanID()
}

func (idGenerator) NewSpanID(context.Context, trace.TraceID) trace.SpanID { return newSpanID() }

func newSpanID() trace.SpanID {
	var sid trace.SpanID
	binary.BigEndian.PutUint64(sid[:], rand.Uint64()|1)
	return sid
}

// NewTraceID is a random trace id (32 hex digits): a job's when its caller has no trace.
func NewTraceID() string {
	tid, _ := idGenerator{}.NewIDs(context.Background())
	return hex.EncodeToString(tid[:])
}

// TraceID is the trace id of the span in ctx, "" when there is none.
func TraceID(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsValid() {
		return ""
	}
	return sc.TraceID().String()
}

// Traceparent is the W3C traceparent header of the span in ctx, "" when there is none.
func Traceparent(ctx context.Context) string {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ""
	}
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"]
}

// ParseTraceparent is the span context a W3C traceparent names (false when it is not one).
func ParseTraceparent(tp string) (trace.SpanContext, bool) {
	if tp == "" {
		return trace.SpanContext{}, false
	}
	ctx := propagation.TraceContext{}.Extract(context.Background(), propagation.MapCarrier{"traceparent": tp})
	sc := trace.SpanContextFromContext(ctx)
	return sc, sc.IsValid()
}

// Or is tp, or the global provider when tp is nil.
func Or(tp trace.TracerProvider) trace.TracerProvider {
	if tp == nil {
		return otel.GetTracerProvider()
	}
	return tp
}
