package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"weft/internal/fault"
)

// DefaultTimeout bounds one chat-completions call when Config.Timeout is
// zero.
const DefaultTimeout = 60 * time.Second

// maxResponseBytes caps how much of a response body is read.
const maxResponseBytes = 8 << 20

// Config configures an OpenAI-compatible client.
type Config struct {
	// BaseURL is the API root, e.g. "https://api.openai.com/v1"; requests
	// go to BaseURL + "/chat/completions".
	BaseURL string
	Model   string
	// APIKey is sent as "Authorization: Bearer …" when set. It never
	// appears in errors or in the Config's String form.
	APIKey string
	// Timeout bounds each call (DefaultTimeout when zero); a shorter ctx
	// deadline wins.
	Timeout    time.Duration
	HTTPClient *http.Client
}

// String describes the configuration without the API key.
func (c Config) String() string {
	key := "unset"
	if c.APIKey != "" {
		key = "set"
	}
	return fmt.Sprintf("llm.Config{BaseURL:%q Model:%q APIKey:%s Timeout:%s}", c.BaseURL, c.Model, key, c.Timeout)
}

// GoString is String, so %#v does not print the key either.
func (c Config) GoString() string { return c.String() }

// OpenAI is a Provider backed by an OpenAI-compatible chat-completions
// server (OpenAI, Azure-style gateways, vLLM, Ollama, DeepSeek, Qwen …).
type OpenAI struct {
	cfg      Config
	endpoint string
	client   *http.Client
}

var _ Provider = (*OpenAI)(nil)

// NewOpenAI returns a client for cfg. BaseURL (http or https) and Model are
// required.
func NewOpenAI(cfg Config) (*OpenAI, error) {
	cfg.BaseURL = strings.TrimSpace(cfg.BaseURL)
	cfg.Model = strings.TrimSpace(cfg.Model)
	if cfg.BaseURL == "" || cfg.Model == "" {
		return nil, errors.New("llm: openai-compatible provider needs a base URL and a model")
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: base URL %q is not an http(s) URL", cfg.BaseURL)
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("llm: timeout %s is negative", cfg.Timeout)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultTimeout
	}
	client := cfg.HTTPClient
	if client == nil {
		client = &http.Client{}
	}
	return &OpenAI{cfg: cfg, endpoint: strings.TrimRight(cfg.BaseURL, "/") + "/chat/completions", client: client}, nil
}

// Name returns "openai-compatible:" + the model.
func (c *OpenAI) Name() string { return "openai-compatible:" + c.cfg.Model }

// Offline returns false.
func (c *OpenAI) Offline() bool { return false }

// APIError is a non-2xx answer from the server. It is always wrapped in a
// *fault.Error that carries its class.
type APIError struct {
	StatusCode int
	// Message is the server's error message (OpenAI: error.message), with
	// the API key redacted.
	Message string
	Type    string
	Code    string
	// RetryAfter is the server's Retry-After hint, zero when absent.
	RetryAfter time.Duration
}

func (e *APIError) Error() string {
	return fmt.Sprintf("llm: chat completions returned HTTP %d: %s", e.StatusCode, e.Message)
}

// callError is a transport or decoding failure whose text has been
// redacted; the cause stays reachable for errors.Is.
type callError struct {
	msg string
	err error
}

func (e *callError) Error() string { return e.msg }
func (e *callError) Unwrap() error { return e.err }

type chatCompletionRequest struct {
	Model          string          `json:"model"`
	Messages       []Message       `json:"messages"`
	Temperature    float64         `json:"temperature"`
	MaxTokens      int             `json:"max_tokens,omitempty"`
	ResponseFormat *responseFormat `json:"response_format,omitempty"`
}

type responseFormat struct {
	Type string `json:"type"`
}

type chatCompletionResponse struct {
	Model   string `json:"model"`
	Choices []struct {
		Message struct {
			Content *string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

// Chat posts req to {BaseURL}/chat/completions. Errors are classified:
// 429, 5xx and connection failures are fault.Transient (CodeLLMTransient),
// timeouts fault.Transient CodeLLMTimeout, other statuses and unparsable
// answers fault.Permanent CodeLLMPermanent.
func (c *OpenAI) Chat(ctx context.Context, req ChatRequest) (ChatResponse, error) {
	if len(req.Messages) == 0 {
		return ChatResponse{}, invalid("chat request has no messages")
	}
	body := chatCompletionRequest{
		Model:       c.cfg.Model,
		Messages:    req.Messages,
		Temperature: req.Temperature,
		MaxTokens:   req.MaxTokens,
	}
	if req.JSON {
		body.ResponseFormat = &responseFormat{Type: "json_object"}
	}
	payload, err := json.Marshal(body)
	if err != nil {
		return ChatResponse{}, fault.Wrap(fault.Permanent, fault.CodeLLMPermanent, fmt.Errorf("llm: encode request: %w", err))
	}

	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	httpReq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.endpoint, bytes.NewReader(payload))
	if err != nil {
		return ChatResponse{}, fault.Wrap(fault.Permanent, fault.CodeLLMPermanent, c.redacted("build request", err))
	}
	httpReq.Header.Set("Content-Type", "application/json")
	httpReq.Header.Set("Accept", "application/json")
	if c.cfg.APIKey != "" {
		httpReq.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}

	resp, err := c.client.Do(httpReq)
	if err != nil {
		return ChatResponse{}, c.transportError(ctx, "send request", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return ChatResponse{}, c.transportError(ctx, "read response", err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return ChatResponse{}, c.statusError(resp, raw)
	}

	var out chatCompletionResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		return ChatResponse{}, c.permanent(fmt.Sprintf("unparsable chat completions response (%v): %s", err, snippet(raw)))
	}
	if len(out.Choices) == 0 || out.Choices[0].Message.Content == nil {
		return ChatResponse{}, c.permanent("chat completions response has no message content: " + snippet(raw))
	}
	model := out.Model
	if model == "" {
		model = c.cfg.Model
	}
	res := ChatResponse{Content: *out.Choices[0].Message.Content, Model: model}
	if out.Usage != nil {
		res.InputTokens, res.OutputTokens = out.Usage.PromptTokens, out.Usage.CompletionTokens
	}
	return res, nil
}

// transportError classifies a failure to send or read: timeouts (our
// deadline, the caller's, or the transport's) are CodeLLMTimeout, anything
// else CodeLLMTransient.
func (c *OpenAI) transportError(ctx context.Context, op string, err error) error {
	var te interface{ Timeout() bool }
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) || (errors.As(err, &te) && te.Timeout()) {
		return fault.Wrap(fault.Transient, fault.CodeLLMTimeout, c.redacted(op+" (timed out; limit "+c.cfg.Timeout.String()+" or caller deadline)", err))
	}
	return fault.Wrap(fault.Transient, fault.CodeLLMTransient, c.redacted(op, err))
}

// statusError turns a non-2xx response into a classified *APIError.
func (c *OpenAI) statusError(resp *http.Response, raw []byte) error {
	apiErr := &APIError{StatusCode: resp.StatusCode}
	apiErr.Message, apiErr.Type, apiErr.Code = parseErrorBody(raw)
	if apiErr.Message == "" {
		apiErr.Message = http.StatusText(resp.StatusCode)
	}
	apiErr.Message = c.redact(apiErr.Message)
	if s, err := strconv.Atoi(strings.TrimSpace(resp.Header.Get("Retry-After"))); err == nil && s > 0 {
		apiErr.RetryAfter = time.Duration(s) * time.Second
	}
	switch {
	case resp.StatusCode == http.StatusRequestTimeout, resp.StatusCode == http.StatusGatewayTimeout:
		return fault.Wrap(fault.Transient, fault.CodeLLMTimeout, apiErr)
	case resp.StatusCode == http.StatusTooManyRequests, resp.StatusCode >= 500 && resp.StatusCode <= 599:
		return fault.Wrap(fault.Transient, fault.CodeLLMTransient, apiErr)
	}
	return fault.Wrap(fault.Permanent, fault.CodeLLMPermanent, apiErr)
}

// parseErrorBody reads the OpenAI error shape {"error":{"message","type",
// "code"}} and the common variants {"error":"…"}, {"message":"…"},
// {"detail":"…"}; anything else yields a snippet of the body.
func parseErrorBody(raw []byte) (message, typ, code string) {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(raw, &body) == nil {
		var obj struct {
			Message string          `json:"message"`
			Type    string          `json:"type"`
			Code    json.RawMessage `json:"code"`
		}
		var str string
		switch {
		case len(body.Error) > 0 && json.Unmarshal(body.Error, &obj) == nil && obj.Message != "":
			code = strings.Trim(string(obj.Code), `"`)
			if code == "null" {
				code = ""
			}
			return truncateRunes(obj.Message, 500), obj.Type, code
		case len(body.Error) > 0 && json.Unmarshal(body.Error, &str) == nil && str != "":
			return truncateRunes(str, 500), "", ""
		case body.Message != "":
			return truncateRunes(body.Message, 500), "", ""
		case len(body.Detail) > 0 && json.Unmarshal(body.Detail, &str) == nil && str != "":
			return truncateRunes(str, 500), "", ""
		}
	}
	return snippet(raw), "", ""
}

// snippet is a short single-line excerpt of a body for error messages.
func snippet(raw []byte) string {
	return truncateRunes(strings.Join(strings.Fields(string(raw)), " "), 200)
}

// redact removes the API key from text.
func (c *OpenAI) redact(s string) string {
	if c.cfg.APIKey == "" {
		return s
	}
	return strings.ReplaceAll(s, c.cfg.APIKey, "[redacted]")
}

func (c *OpenAI) redacted(op string, err error) error {
	return &callError{msg: c.redact("llm: " + op + ": " + err.Error()), err: err}
}

func (c *OpenAI) permanent(msg string) error {
	return fault.New(fault.Permanent, fault.CodeLLMPermanent, c.redact("llm: "+msg))
}
