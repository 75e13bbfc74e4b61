package llm

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"weft/internal/fault"
)

const testKey = "sk-test-0123456789abcdef"

// fakeServer is a local chat-completions server. reply decides the answer
// to each request; the last request is recorded.
type fakeServer struct {
	*httptest.Server
	mu     sync.Mutex
	auth   string
	path   string
	body   chatCompletionRequest
	called int
}

type bundle struct {
	srv    *fakeServer
	client *OpenAI
}

// setup starts a fake server whose handler is reply and a client for it.
func setup(t *testing.T, timeout time.Duration, reply func(w http.ResponseWriter, r *http.Request, req chatCompletionRequest)) bundle {
	t.Helper()
	fs := &fakeServer{}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req chatCompletionRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error":{"message":"bad json"}}`, http.StatusBadRequest)
			return
		}
		fs.mu.Lock()
		fs.auth, fs.path, fs.body = r.Header.Get("Authorization"), r.URL.Path, req
		fs.called++
		fs.mu.Unlock()
		reply(w, r, req)
	}))
	t.Cleanup(fs.Close)
	client, err := NewOpenAI(Config{BaseURL: fs.URL + "/v1/", Model: "gpt-4o-mini", APIKey: testKey, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	return bundle{srv: fs, client: client}
}

// completion writes a chat-completions answer with content.
func completion(w http.ResponseWriter, content string) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini-2024-07-18",
		"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
	})
}

// apiError writes an OpenAI-style error body.
func apiError(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": message, "type": "invalid_request_error", "code": nil}})
}

func scoreRequest() ScoreRequest {
	return ScoreRequest{
		Criteria: []Criterion{availability(), quality()},
		Evidence: map[string][]Chunk{
			"availability": {{ID: "c-12", Text: "High availability cluster.", Score: 0.9}, {ID: "c-14", Text: "uptime 99.95%", Score: 0.8}},
			"quality":      {{ID: "q-1", Text: "通过ISO 9001质量管理体系认证", Score: 0.7}},
		},
		Language: "zh",
	}
}

func TestOpenAIScoreCriteria(t *testing.T) {
	t.Parallel()
	answer := `{"scores":[
	 {"criterion_id":"availability","score":12,"confidence":0.8,"explanation":"Found HA [c-12] and uptime [c-14]; invented [c-99].","citations":["c-12","c-14","c-99","c-12"],"claims":3,"cited_claims":3},
	 {"criterion_id":"quality","score":"15","confidence":1.4,"explanation":"质量管理体系 [q-1]","citations":["q-1","c-12"],"claims":1,"cited_claims":1},
	 {"criterion_id":"price","score":3,"confidence":0.5,"explanation":"?","citations":[],"claims":0,"cited_claims":0}
	]}`
	b := setup(t, 0, func(w http.ResponseWriter, _ *http.Request, _ chatCompletionRequest) {
		completion(w, "```json\n"+answer+"\n```")
	})

	res, err := b.client.ScoreCriteria(context.Background(), scoreRequest())
	if err != nil {
		t.Fatalf("ScoreCriteria: %v", err)
	}
	if res.Offline || res.Provider != "openai-compatible:gpt-4o-mini" || len(res.Scores) != 2 {
		t.Fatalf("result = %+v", res)
	}
	if len(res.Notes) != 1 || !strings.Contains(res.Notes[0], `unknown criterion "price"`) {
		t.Errorf("result notes = %v", res.Notes)
	}

	a := res.Scores[0]
	if a.CriterionID != "availability" || a.Score != 10 || a.MaxScore != 10 || a.Confidence != 0.8 {
		t.Errorf("availability = %+v", a)
	}
	if !reflect.DeepEqual(a.Citations, []string{"c-12", "c-14"}) {
		t.Errorf("citations = %v, want the invalid c-99 dropped", a.Citations)
	}
	if a.Claims != 3 || a.CitedClaims != 2 {
		t.Errorf("claims = %d/%d, want 2/3", a.CitedClaims, a.Claims)
	}
	if notes := strings.Join(a.Notes, "; "); !strings.Contains(notes, "c-99") || !strings.Contains(notes, "clamped to max score 10") {
		t.Errorf("notes = %q", notes)
	}

	q := res.Scores[1]
	// c-12 exists, but was supplied for another criterion: not evidence here.
	if q.Score != 15 || q.Confidence != 1 || !reflect.DeepEqual(q.Citations, []string{"q-1"}) || q.CitedClaims != 0 {
		t.Errorf("quality = %+v", q)
	}

	// The request: endpoint, key, model, JSON mode, the evidence and its ids.
	b.srv.mu.Lock()
	defer b.srv.mu.Unlock()
	if b.srv.path != "/v1/chat/completions" || b.srv.auth != "Bearer "+testKey {
		t.Errorf("path %q auth %q", b.srv.path, b.srv.auth)
	}
	body := b.srv.body
	if body.Model != "gpt-4o-mini" || body.Temperature != 0 || body.ResponseFormat == nil || body.ResponseFormat.Type != "json_object" {
		t.Errorf("body = %+v", body)
	}
	if len(body.Messages) != 2 || body.Messages[0].Role != "system" || body.Messages[1].Role != "user" {
		t.Fatalf("messages = %+v", body.Messages)
	}
	if !strings.Contains(body.Messages[0].Content, "Chinese") {
		t.Error("system prompt does not ask for Chinese explanations")
	}
	for _, want := range []string{`"chunk_id": "c-14"`, `"chunk_id": "q-1"`, "质量管理体系", `"criterion_id": "quality"`, `"max_score": 20`, "uptime"} {
		if !strings.Contains(body.Messages[1].Content, want) {
			t.Errorf("user prompt lacks %s", want)
		}
	}
}

func TestOpenAIScoreCriteriaRejectsBadAnswers(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"missing criterion": `{"scores":[{"criterion_id":"availability","score":5,"confidence":0.5,"explanation":"x","citations":["c-12"],"claims":1,"cited_claims":1}]}`,
		"not json":          `I think the bid is good.`,
		"no score":          `{"scores":[{"criterion_id":"availability"},{"criterion_id":"quality","score":1}]}`,
	}
	for name, content := range tests {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, 0, func(w http.ResponseWriter, _ *http.Request, _ chatCompletionRequest) { completion(w, content) })
			_, err := b.client.ScoreCriteria(context.Background(), scoreRequest())
			if class, code := fault.Classify(err); class != fault.Permanent || code != fault.CodeLLMPermanent {
				t.Fatalf("classify(%v) = %s %s, want permanent %s", err, class, code, fault.CodeLLMPermanent)
			}
			if name == "missing criterion" && !strings.Contains(err.Error(), `omitted 1 of 2 criteria: "quality"`) {
				t.Errorf("error = %v", err)
			}
		})
	}
}

func TestOpenAIErrorClasses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		status  int
		message string
		class   fault.Class
		code    string
	}{
		{http.StatusTooManyRequests, "Rate limit reached for gpt-4o-mini", fault.Transient, fault.CodeLLMTransient},
		{http.StatusServiceUnavailable, "The server is overloaded", fault.Transient, fault.CodeLLMTransient},
		{http.StatusInternalServerError, "internal error", fault.Transient, fault.CodeLLMTransient},
		{http.StatusUnauthorized, "Incorrect API key provided: " + testKey, fault.Permanent, fault.CodeLLMPermanent},
		{http.StatusBadRequest, "Invalid value for 'temperature'", fault.Permanent, fault.CodeLLMPermanent},
		{http.StatusNotFound, "The model `gpt-9` does not exist", fault.Permanent, fault.CodeLLMPermanent},
		{http.StatusUnprocessableEntity, "unprocessable", fault.Permanent, fault.CodeLLMPermanent},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			t.Parallel()
			b := setup(t, 0, func(w http.ResponseWriter, _ *http.Request, _ chatCompletionRequest) {
				if tt.status == http.StatusTooManyRequests {
					w.Header().Set("Retry-After", "7")
				}
				apiError(w, tt.status, tt.message)
			})
			_, err := b.client.Chat(context.Background(), ChatRequest{Messages: []Message{{Role: "user", Content: "hi"}}})
			if class, code := fault.Classify(err); class != tt.class || code != tt.code {
				t.Fatalf("classify(%v) = %s %s, want %s %s", err, class, code, tt.class, tt.code)
			}
			var apiErr *APIError
			if !errors.As(err, &apiErr) || apiErr.StatusCode != tt.status {
				t.Fatalf("error %v carries no *APIError with status %d", err, tt.status)
			}
			msg := err.Error()
			if strings.Contains(msg, testKey) {
				t.Errorf("error leaks the API key: %s", msg)
			}
			wantMsg := strings.ReplaceAll(tt.message, testKey, "[redacted]")
			if !strings.Contains(msg, wantMsg) || !strings.Contains(msg, "HTTP "+strconv.Itoa(tt.status)) {
				t.Errorf("error %q lacks status %d or message %q", msg, tt.status, wantMsg)
			}
			if tt.status == http.StatusTooManyRequests && apiErr.RetryAfter != 7*time.Second {
				t.Errorf("retry after = %v", apiErr.RetryAfter)
			}
		})
	}
}

func TestOpenAITimeout(t *testing.T) {
	t.Parallel()
	slow := func(w http.ResponseWriter, r *http.Request, _ chatCompletionRequest) {
		select {
		case <-time.After(5 * time.Second):
			completion(w, "late")
		case <-r.Context().Done():
		}
	}

	t.Run("client timeout", func(t *testing.T) {
		t.Parallel()
		b := setup(t, 50*time.Millisecond, slow)
		start := time.Now()
		_, err := b.client.Chat(context.Background(), ChatRequest{Messages: []Message{{Role: "user", Content: "hi"}}})
		if class, code := fault.Classify(err); class != fault.Transient || code != fault.CodeLLMTimeout {
			t.Fatalf("classify(%v) = %s %s, want transient %s", err, class, code, fault.CodeLLMTimeout)
		}
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("error %v does not wrap context.DeadlineExceeded", err)
		}
		if elapsed := time.Since(start); elapsed > 2*time.Second {
			t.Errorf("took %v", elapsed)
		}
	})

	t.Run("caller deadline", func(t *testing.T) {
		t.Parallel()
		b := setup(t, time.Minute, slow)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		_, err := b.client.ScoreCriteria(ctx, scoreRequest())
		if class, code := fault.Classify(err); class != fault.Transient || code != fault.CodeLLMTimeout {
			t.Fatalf("classify(%v) = %s %s, want transient %s", err, class, code, fault.CodeLLMTimeout)
		}
	})
}

func TestOpenAIConnectionRefused(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	client, err := NewOpenAI(Config{BaseURL: url, Model: "m", APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.Chat(context.Background(), ChatRequest{Messages: []Message{{Role: "user", Content: "hi"}}})
	if class, code := fault.Classify(err); class != fault.Transient || code != fault.CodeLLMTransient {
		t.Fatalf("classify(%v) = %s %s, want transient %s", err, class, code, fault.CodeLLMTransient)
	}
}

func TestOpenAIChat(t *testing.T) {
	t.Parallel()
	b := setup(t, 0, func(w http.ResponseWriter, _ *http.Request, req chatCompletionRequest) {
		completion(w, "echo: "+req.Messages[len(req.Messages)-1].Content)
	})
	resp, err := b.client.Chat(context.Background(), ChatRequest{Messages: []Message{{Role: "user", Content: "ping"}}, Temperature: 0.2, MaxTokens: 64})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "echo: ping" || resp.Model != "gpt-4o-mini-2024-07-18" {
		t.Errorf("resp = %+v", resp)
	}
	b.srv.mu.Lock()
	defer b.srv.mu.Unlock()
	if got := b.srv.body; got.Temperature != 0.2 || got.MaxTokens != 64 || got.ResponseFormat != nil {
		t.Errorf("body = %+v", got)
	}
}

func TestOpenAIUnparsableResponse(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"html":       "<html>gateway</html>",
		"no choices": `{"choices":[]}`,
	} {
		b := setup(t, 0, func(w http.ResponseWriter, _ *http.Request, _ chatCompletionRequest) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(body))
		})
		_, err := b.client.Chat(context.Background(), ChatRequest{Messages: []Message{{Role: "user", Content: "hi"}}})
		if class, code := fault.Classify(err); class != fault.Permanent || code != fault.CodeLLMPermanent {
			t.Errorf("%s: classify(%v) = %s %s, want permanent", name, err, class, code)
		}
	}
}

func TestNewOpenAIValidatesConfig(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{{Model: "m"}, {BaseURL: "http://x"}, {BaseURL: "ftp://x", Model: "m"}, {BaseURL: "http://x", Model: "m", Timeout: -1}} {
		if _, err := NewOpenAI(cfg); err == nil {
			t.Errorf("%v accepted", cfg)
		}
	}
}
