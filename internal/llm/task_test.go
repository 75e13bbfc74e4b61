package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"weft/internal/fault"
	"weft/internal/llm"
)

type sumIn struct{ Numbers []int }
type sumOut struct {
	Total int `json:"total"`
}

var sumTask = llm.Task[sumIn, sumOut]{
	Name:   "test.sum",
	System: `Add the numbers. Answer {"total": N}.`,
	Offline: func(_ context.Context, in sumIn) (sumOut, error) {
		t := 0
		for _, n := range in.Numbers {
			t += n
		}
		return sumOut{Total: t}, nil
	},
	Check: func(_ sumIn, out sumOut) error {
		if out.Total < 0 {
			return errors.New("a negative total")
		}
		return nil
	},
}

// fixed is a model-backed provider stand-in that answers every chat with the same text.
type fixed struct {
	llm.Provider
	answer string
	got    llm.ChatRequest
}

func (f *fixed) Offline() bool { return false }
func (f *fixed) Chat(_ context.Context, req llm.ChatRequest) (llm.ChatResponse, error) {
	f.got = req
	return llm.ChatResponse{Content: f.answer}, nil
}

func TestTaskOfflineComputesFromItsInput(t *testing.T) {
	t.Parallel()
	out, err := sumTask.Do(context.Background(), llm.NewOffline(), sumIn{Numbers: []int{2, 3, 5}})
	if err != nil || out.Total != 10 {
		t.Fatalf("Do = %+v, %v; want total 10", out, err)
	}
}

func TestTaskModelAnswerDecodedAndChecked(t *testing.T) {
	t.Parallel()
	p := &fixed{answer: "```json\n{\"total\": 7}\n```"}
	out, err := sumTask.Do(context.Background(), p, sumIn{Numbers: []int{3, 4}})
	if err != nil || out.Total != 7 {
		t.Fatalf("Do = %+v, %v", out, err)
	}
	if p.got.Task != "test.sum" || !p.got.JSON || !strings.Contains(p.got.Messages[1].Content, "[3,4]") {
		t.Fatalf("request = %+v", p.got)
	}
	for _, bad := range []string{"not json", `{"total": -1}`} {
		p := &fixed{answer: bad}
		_, err := sumTask.Do(context.Background(), p, sumIn{})
		if c, code := fault.Classify(err); c != fault.Permanent || code != fault.CodeLLMPermanent || !strings.Contains(err.Error(), "test.sum") {
			t.Fatalf("answer %q: err = %v (%s %s), want a permanent LLM error naming the task", bad, err, c, code)
		}
	}
}
