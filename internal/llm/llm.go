// Package llm is Weft's language-model boundary: the Provider interface the
// workflows call (criterion scoring with cited evidence for bid evaluation,
// and a generic chat call for the other workflows), a deterministic offline
// provider that computes its answers from its inputs alone, and a client for
// OpenAI-compatible chat-completions servers. Failures are classified with
// internal/fault (transient, permanent, timeout) so the runner can decide
// whether to retry.
//
// It imports the standard library and internal/fault only.
package llm

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"

	"weft/internal/fault"
)

// Provider scores criteria and answers chat requests. Implementations are
// safe for concurrent use.
type Provider interface {
	// Name identifies the provider, e.g. "offline" or
	// "openai-compatible:gpt-4o-mini".
	Name() string
	// Offline reports whether results were computed without a model; the
	// UI labels such results.
	Offline() bool
	// ScoreCriteria scores every criterion of req from its evidence and
	// explains each score citing chunk ids.
	ScoreCriteria(ctx context.Context, req ScoreRequest) (ScoreResult, error)
	// Chat is a generic completion call for other workflows.
	Chat(ctx context.Context, req ChatRequest) (ChatResponse, error)
}

// Criterion is one weighted criterion of a tender's rule pack.
type Criterion struct {
	ID       string  `json:"id"`
	Name     string  `json:"name"`
	Weight   float64 `json:"weight"`
	MaxScore float64 `json:"max_score"`
	Rubric   Rubric  `json:"rubric"`
}

// Rubric says what earns credit for a criterion. Each keyword and each
// number rule is one rubric item of equal value.
type Rubric struct {
	// Keywords are phrases whose presence in the evidence earns credit;
	// matching is case-insensitive and works for CJK text.
	Keywords []string `json:"keywords,omitempty"`
	// Numbers are quantities the evidence must state within bounds.
	Numbers []NumberRule `json:"numbers,omitempty"`
	// Levels optionally names score bands (e.g. 0 "absent", 5 "partial",
	// 10 "complete"); providers use them to describe the score reached.
	Levels []Level `json:"levels,omitempty"`
}

// NumberRule finds a number in the evidence and checks it against bounds. A
// number satisfying every bound that is set earns credit.
type NumberRule struct {
	Label string `json:"label"`
	// Pattern is a Go regexp with at least one capture group; the first
	// group captures the number ("1,000" and full-width digits are
	// accepted). It may include unit text, e.g. `(\d+(?:\.\d+)?)\s*%`.
	// Matching is case-insensitive.
	Pattern string   `json:"pattern"`
	Min     *float64 `json:"min,omitempty"`
	Max     *float64 `json:"max,omitempty"`
}

// Level is a named score band: a score at or above Score reaches it.
type Level struct {
	Score       float64 `json:"score"`
	Description string  `json:"description"`
}

// Chunk is one retrieved piece of evidence.
type Chunk struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	// Score is the retrieval score, expected in [0, 1].
	Score float64 `json:"score"`
}

// ScoreRequest asks for a score per criterion.
type ScoreRequest struct {
	Criteria []Criterion
	// Evidence maps a criterion id to the chunks retrieved for it.
	Evidence map[string][]Chunk
	// Language is the language explanations are written in ("zh", "en";
	// empty means English).
	Language string
}

// CriterionScore is the score of one criterion.
type CriterionScore struct {
	CriterionID string  `json:"criterion_id"`
	Score       float64 `json:"score"` // 0..MaxScore
	MaxScore    float64 `json:"max_score"`
	Confidence  float64 `json:"confidence"` // 0..1
	Explanation string  `json:"explanation"`
	// Citations are the ids of the chunks backing the score; every id was
	// supplied as evidence for this criterion.
	Citations []string `json:"citations"`
	// Claims is the number of scoring claims made; CitedClaims of them are
	// backed by a cited chunk.
	Claims      int `json:"claims"`
	CitedClaims int `json:"cited_claims"`
	// Notes record corrections made while validating a model's answer
	// (clamped scores, dropped citations). Empty for the offline provider.
	Notes []string `json:"notes,omitempty"`
}

// ScoreResult is the answer to a ScoreRequest: one score per requested
// criterion, in request order.
type ScoreResult struct {
	Scores   []CriterionScore `json:"scores"`
	Provider string           `json:"provider"`
	Offline  bool             `json:"offline"`
	// Notes record corrections that concern no single criterion (entries
	// for unknown or repeated criterion ids that were dropped).
	Notes []string `json:"notes,omitempty"`
}

// Message is one chat message.
type Message struct {
	Role    string `json:"role"` // "system", "user" or "assistant"
	Content string `json:"content"`
}

// ChatRequest is a generic chat completion request.
type ChatRequest struct {
	Messages []Message
	// JSON asks for a JSON object as the answer.
	JSON        bool
	Temperature float64
	// MaxTokens caps the answer; zero leaves it to the server.
	MaxTokens int
	// Task names a structured call (see Task), for logs and tests; empty for free chat.
	Task string
	// Offline, when set, is the answer the offline provider gives: computed from the
	// same inputs as the messages, deterministically. Model-backed providers ignore it.
	Offline func(ctx context.Context) (string, error)
}

// ChatResponse is the answer to a ChatRequest.
type ChatResponse struct {
	Content string
	Model   string
	// InputTokens and OutputTokens are the server's usage counts (0: not reported).
	InputTokens, OutputTokens int
}

// Validate checks a score request before any provider work: criterion ids
// are present and unique, maximum scores are positive, number rules compile
// with a capture group and have consistent bounds, and evidence chunks have
// ids. Errors are classified fault.Validation.
func (r ScoreRequest) Validate() error {
	_, err := r.compile()
	return err
}

// compile validates the request and compiles every number rule, keyed by
// criterion id.
func (r ScoreRequest) compile() (map[string][]*regexp.Regexp, error) {
	if len(r.Criteria) == 0 {
		return nil, invalid("score request has no criteria")
	}
	patterns := make(map[string][]*regexp.Regexp, len(r.Criteria))
	for i, c := range r.Criteria {
		if strings.TrimSpace(c.ID) == "" {
			return nil, invalid(fmt.Sprintf("criterion %d has an empty id", i))
		}
		if _, dup := patterns[c.ID]; dup {
			return nil, invalid(fmt.Sprintf("criterion id %q is repeated", c.ID))
		}
		if !(c.MaxScore > 0) || math.IsInf(c.MaxScore, 0) {
			return nil, invalid(fmt.Sprintf("criterion %q: max score must be a positive number, got %v", c.ID, c.MaxScore))
		}
		res := make([]*regexp.Regexp, len(c.Rubric.Numbers))
		for j, n := range c.Rubric.Numbers {
			re, err := regexp.Compile("(?i)" + n.Pattern)
			if err != nil {
				return nil, invalid(fmt.Sprintf("criterion %q: number rule %q: invalid pattern: %v", c.ID, n.label(j), err))
			}
			if re.NumSubexp() < 1 {
				return nil, invalid(fmt.Sprintf("criterion %q: number rule %q: pattern needs a capture group for the number", c.ID, n.label(j)))
			}
			if n.Min != nil && n.Max != nil && *n.Min > *n.Max {
				return nil, invalid(fmt.Sprintf("criterion %q: number rule %q: min %v exceeds max %v", c.ID, n.label(j), *n.Min, *n.Max))
			}
			res[j] = re
		}
		patterns[c.ID] = res
		for _, ch := range r.Evidence[c.ID] {
			if strings.TrimSpace(ch.ID) == "" {
				return nil, invalid(fmt.Sprintf("criterion %q: an evidence chunk has an empty id", c.ID))
			}
		}
	}
	return patterns, nil
}

// label names a number rule in messages.
func (n NumberRule) label(i int) string {
	if strings.TrimSpace(n.Label) != "" {
		return strings.TrimSpace(n.Label)
	}
	return fmt.Sprintf("number rule %d", i+1)
}

func invalid(msg string) error {
	return fault.New(fault.Validation, fault.CodeValidation, "llm: "+msg)
}

// chinese reports whether explanations should be written in Chinese.
func chinese(language string) bool {
	l := strings.ToLower(strings.TrimSpace(language))
	return l == "zh" || strings.HasPrefix(l, "zh-") || strings.HasPrefix(l, "zh_") || l == "chinese" || l == "中文"
}
