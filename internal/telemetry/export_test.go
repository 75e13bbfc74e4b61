package telemetry_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"weft/internal/telemetry"
)

// TestExportThroughTheEnvironmentAlone points the standard OTEL_* variables at a real
// OTLP/HTTP receiver (protobuf, as a collector takes it): FromEnv exports there, with the
// service name and the sampler the environment names. Without an endpoint nothing is
// recorded.
func TestExportThroughTheEnvironmentAlone(t *testing.T) {
	// (t.Setenv: not parallel. FromEnv installs the global provider: put it back after.)
	prevTP, prevProp := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	t.Cleanup(func() { otel.SetTracerProvider(prevTP); otel.SetTextMapPropagator(prevProp) })

	for _, k := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_TRACES_EXPORTER", "OTEL_SDK_DISABLED"} {
		t.Setenv(k, "")
	}
	off, err := telemetry.FromEnv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, span := off.Provider.Tracer("t").Start(context.Background(), "nothing"); off.Enabled || span.IsRecording() {
		t.Fatalf("without an endpoint: enabled %v, span recording %v", off.Enabled, span.IsRecording())
	}

	var mu sync.Mutex
	var got []*collectortrace.ExportTraceServiceRequest
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		req := &collectortrace.ExportTraceServiceRequest{}
		if err := proto.Unmarshal(b, req); err != nil || r.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "not an OTLP protobuf export", http.StatusBadRequest)
			return
		}
		mu.Lock()
		got, paths = append(got, req), append(paths, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		_, _ = w.Write(out)
	}))
	defer srv.Close()
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", srv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_SERVICE_NAME", "weft-under-test")
	t.Setenv("OTEL_TRACES_SAMPLER", "always_on")
	on, err := telemetry.FromEnv(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !on.Enabled || otel.GetTracerProvider() != on.Provider {
		t.Fatalf("with an endpoint: enabled %v, global provider installed %v", on.Enabled, otel.GetTracerProvider() == on.Provider)
	}
	ctx := telemetry.WithTraceID(context.Background(), "4bf92f3577b34da6a3ce929d0e0e4736")
	ctx, span := on.Provider.Tracer(telemetry.ScopeName).Start(ctx, "run probe", trace.WithSpanKind(trace.SpanKindConsumer))
	_, child := on.Provider.Tracer(telemetry.ScopeName).Start(ctx, "node probe")
	child.End()
	span.End()
	if err := on.Shutdown(context.Background()); err != nil { // flushes the batch
		t.Fatal(err)
	}

	mu.Lock()
	defer mu.Unlock()
	names := map[string]string{} // span name → trace id
	service := ""
	for _, req := range got {
		for _, rs := range req.ResourceSpans {
			for _, kv := range rs.Resource.Attributes {
				if kv.Key == "service.name" {
					service = kv.Value.GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					names[s.Name] = trace.TraceID(s.TraceId).String()
				}
			}
		}
	}
	if len(paths) == 0 || paths[0] != "/v1/traces" || service != "weft-under-test" ||
		names["run probe"] != "4bf92f3577b34da6a3ce929d0e0e4736" || names["node probe"] != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("the receiver got paths %v, service %q, spans %v", paths, service, names)
	}
}
