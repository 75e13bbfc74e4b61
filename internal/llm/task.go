package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"weft/internal/fault"
)

// Task is a structured provider call: what the model is asked (a system
// prompt and the input, as JSON), the shape of its answer (Out, decoded from
// a JSON object), and how the offline provider computes the same answer from
// the same input, deterministically. Workflows declare their model calls as
// Tasks, so each call has one definition that both kinds of provider serve.
type Task[In, Out any] struct {
	// Name identifies the call, e.g. "contractreview.clause_risks".
	Name string
	// System is the system prompt: what to do and the answer's JSON shape.
	System string
	// Prompt renders the input as the user message; nil sends the input as JSON.
	Prompt func(In) string
	// Offline computes the answer without a model. Required.
	Offline func(ctx context.Context, in In) (Out, error)
	// Check, when set, validates a decoded answer (a model's answer can be
	// anything); its error makes the call fail as permanent.
	Check func(in In, out Out) error
}

// Do asks p. The offline provider answers with t.Offline; a model-backed one
// gets the prompts, and its answer is decoded into Out and checked. A
// provider's errors pass through classified; an answer that is not the JSON
// asked for is a permanent LLM error naming the task.
func (t Task[In, Out]) Do(ctx context.Context, p Provider, in In) (Out, error) {
	var zero Out
	if t.Offline == nil {
		return zero, fmt.Errorf("llm task %s: no offline answer defined", t.Name)
	}
	user := ""
	if t.Prompt != nil {
		user = t.Prompt(in)
	} else {
		b, err := json.Marshal(in)
		if err != nil {
			return zero, fmt.Errorf("llm task %s: encode input: %w", t.Name, err)
		}
		user = string(b)
	}
	req := ChatRequest{
		Task: t.Name, JSON: true,
		Messages: []Message{{Role: "system", Content: t.System}, {Role: "user", Content: user}},
		Offline: func(ctx context.Context) (string, error) {
			out, err := t.Offline(ctx, in)
			if err != nil {
				return "", err
			}
			b, err := json.Marshal(out)
			return string(b), err
		},
	}
	resp, err := p.Chat(ctx, req)
	if err != nil {
		return zero, err
	}
	var out Out
	if err := json.Unmarshal([]byte(stripFence(resp.Content)), &out); err != nil {
		return zero, fault.Wrap(fault.Permanent, fault.CodeLLMPermanent,
			fmt.Errorf("llm task %s: the answer is not the JSON asked for: %w", t.Name, err))
	}
	if t.Check != nil {
		if err := t.Check(in, out); err != nil {
			return zero, fault.Wrap(fault.Permanent, fault.CodeLLMPermanent, fmt.Errorf("llm task %s: %w", t.Name, err))
		}
	}
	return out, nil
}

// stripFence removes a Markdown code fence that some models put around JSON.
func stripFence(s string) string {
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "```") {
		return s
	}
	t = strings.TrimPrefix(t, "```")
	t = strings.TrimPrefix(t, "json")
	return strings.TrimSuffix(strings.TrimSpace(t), "```")
}
