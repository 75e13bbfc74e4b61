package telemetry_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"weft/internal/llm"
	"weft/internal/telemetry"
)

// TestLLMCallSpans: a chat call to an OpenAI-compatible server is a client span, the child
// of its caller's, with the provider, the model asked for and the one that answered, and the
// token counts the server reported; a refused call is an error span with its class and code.
func TestLLMCallSpans(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string }
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		if req.Messages[0].Content == "refuse" {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"model": "tiny-2026-01",
			"choices": []map[string]any{{"index": 0, "finish_reason": "stop", "message": map[string]any{"role": "assistant", "content": "pong"}}},
			"usage":   map[string]any{"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}})
	}))
	defer srv.Close()
	client, err := llm.NewOpenAI(llm.Config{BaseURL: srv.URL, Model: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	exp := tracetest.NewInMemoryExporter()
	tp := telemetry.NewProvider(sdktrace.WithSyncer(exp))
	p := telemetry.LLM(client, tp)
	ctx, node := tp.Tracer("t").Start(context.Background(), "node score")
	res, err := p.Chat(ctx, llm.ChatRequest{Messages: []llm.Message{{Role: "user", Content: "ping"}}, Task: "probe"})
	if err != nil || res.Content != "pong" || res.InputTokens != 12 || res.OutputTokens != 5 {
		t.Fatalf("chat: %+v %v", res, err)
	}
	if _, err := p.Chat(ctx, llm.ChatRequest{Messages: []llm.Message{{Role: "user", Content: "refuse"}}}); err == nil {
		t.Fatal("a refused call succeeded")
	}
	node.End()
	ss := spans(exp.GetSpans()).where(func(s tracetest.SpanStub) bool { return s.Name == "chat tiny" })
	if len(ss) != 2 {
		t.Fatalf("LLM spans: %+v", exp.GetSpans())
	}
	ok, refused := ss[0], ss[1]
	for _, s := range ss {
		if s.SpanKind != trace.SpanKindClient || s.Parent.SpanID() != node.SpanContext().SpanID() ||
			attr(s, "gen_ai.provider.name").AsString() != "openai-compatible" || attr(s, "gen_ai.request.model").AsString() != "tiny" ||
			attr(s, "gen_ai.operation.name").AsString() != "chat" || attr(s, "weft.llm.offline").AsBool() {
			t.Errorf("span %s: kind %v, parent %v, attributes %v", s.Name, s.SpanKind, s.Parent.SpanID(), s.Attributes)
		}
	}
	if attr(ok, "gen_ai.usage.input_tokens").AsInt64() != 12 || attr(ok, "gen_ai.usage.output_tokens").AsInt64() != 5 ||
		attr(ok, "gen_ai.response.model").AsString() != "tiny-2026-01" || attr(ok, "weft.llm.task").AsString() != "probe" || ok.Status.Code == codes.Error {
		t.Errorf("the answered call: %v", ok.Attributes)
	}
	if refused.Status.Code != codes.Error || attr(refused, "weft.error_class").AsString() == "" || attr(refused, "weft.error_code").AsString() == "" {
		t.Errorf("the refused call: status %+v, attributes %v", refused.Status, refused.Attributes)
	}
}
