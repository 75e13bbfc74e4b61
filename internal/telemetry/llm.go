package telemetry

import (
	"context"
	"strings"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"

	"weft/internal/fault"
	"weft/internal/llm"
)

// LLM wraps p so that each call is a span (client kind) in the caller's trace, with the
// provider, the model, the token counts when the server reports them, and the latency
// (OpenTelemetry's gen_ai attributes, plus weft.latency_ms).
func LLM(p llm.Provider, tp trace.TracerProvider) llm.Provider {
	if p == nil {
		return nil
	}
	provider, model, _ := strings.Cut(p.Name(), ":")
	if model == "" {
		model = provider
	}
	return tracedLLM{Provider: p, tracer: Or(tp).Tracer(ScopeName), provider: provider, model: model}
}

type tracedLLM struct {
	llm.Provider
	tracer          trace.Tracer
	provider, model string
}

func (t tracedLLM) start(ctx context.Context, op, task string) (context.Context, trace.Span, time.Time) {
	ctx, span := t.tracer.Start(ctx, op+" "+t.model, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(semconv.GenAIOperationNameKey.String(op), semconv.GenAIProviderNameKey.String(t.provider),
			semconv.GenAIRequestModel(t.model), attribute.Bool("weft.llm.offline", t.Offline())))
	if task != "" {
		span.SetAttributes(attribute.String("weft.llm.task", task))
	}
	return ctx, span, time.Now()
}

func end(span trace.Span, began time.Time, err error) {
	span.SetAttributes(attribute.Float64("weft.latency_ms", float64(time.Since(began).Microseconds())/1000))
	if err != nil {
		class, code := fault.Classify(err)
		span.SetAttributes(attribute.String("error.type", string(class)), attribute.String("weft.error_class", string(class)),
			attribute.String("weft.error_code", code))
		span.RecordError(err)
		span.SetStatus(codes.Error, code)
	}
	span.End()
}

func (t tracedLLM) Chat(ctx context.Context, req llm.ChatRequest) (llm.ChatResponse, error) {
	ctx, span, began := t.start(ctx, "chat", req.Task)
	res, err := t.Provider.Chat(ctx, req)
	if err == nil {
		if res.Model != "" {
			span.SetAttributes(semconv.GenAIResponseModel(res.Model))
		}
		if res.InputTokens > 0 || res.OutputTokens > 0 {
			span.SetAttributes(semconv.GenAIUsageInputTokens(res.InputTokens), semconv.GenAIUsageOutputTokens(res.OutputTokens))
		}
	}
	end(span, began, err)
	return res, err
}

func (t tracedLLM) ScoreCriteria(ctx context.Context, req llm.ScoreRequest) (llm.ScoreResult, error) {
	ctx, span, began := t.start(ctx, "score_criteria", "")
	span.SetAttributes(attribute.Int("weft.llm.criteria", len(req.Criteria)))
	res, err := t.Provider.ScoreCriteria(ctx, req)
	end(span, began, err)
	return res, err
}
