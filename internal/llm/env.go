package llm

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Environment variables read by FromEnv.
const (
	EnvProvider = "WEFT_LLM_PROVIDER" // "offline" (default) or "openai"
	EnvBaseURL  = "WEFT_LLM_BASE_URL"
	EnvModel    = "WEFT_LLM_MODEL"
	EnvAPIKey   = "WEFT_LLM_API_KEY"
	EnvTimeout  = "WEFT_LLM_TIMEOUT" // a Go duration ("30s") or whole seconds ("30")
)

// FromEnv chooses the provider from the environment: the offline provider
// when WEFT_LLM_PROVIDER is unset or "offline", an OpenAI-compatible client
// when it is "openai" (WEFT_LLM_BASE_URL and WEFT_LLM_MODEL then required;
// WEFT_LLM_API_KEY optional, for local servers that need none).
func FromEnv() (Provider, error) { return fromEnv(os.Getenv) }

func fromEnv(getenv func(string) string) (Provider, error) {
	switch kind := strings.ToLower(strings.TrimSpace(getenv(EnvProvider))); kind {
	case "", "offline":
		return NewOffline(), nil
	case "openai", "openai-compatible":
		cfg := Config{
			BaseURL: strings.TrimSpace(getenv(EnvBaseURL)),
			Model:   strings.TrimSpace(getenv(EnvModel)),
			APIKey:  strings.TrimSpace(getenv(EnvAPIKey)),
		}
		var missing []string
		if cfg.BaseURL == "" {
			missing = append(missing, EnvBaseURL)
		}
		if cfg.Model == "" {
			missing = append(missing, EnvModel)
		}
		if len(missing) > 0 {
			return nil, fmt.Errorf("llm: %s=%s needs %s to be set", EnvProvider, kind, strings.Join(missing, " and "))
		}
		if raw := strings.TrimSpace(getenv(EnvTimeout)); raw != "" {
			d, err := parseTimeout(raw)
			if err != nil {
				return nil, fmt.Errorf("llm: %s=%q: %w", EnvTimeout, raw, err)
			}
			cfg.Timeout = d
		}
		p, err := NewOpenAI(cfg)
		if err != nil {
			return nil, err // not a typed nil inside the interface
		}
		return p, nil
	default:
		return nil, fmt.Errorf("llm: %s=%q is not a provider; use \"offline\" or \"openai\"", EnvProvider, kind)
	}
}

func parseTimeout(raw string) (time.Duration, error) {
	d, err := time.ParseDuration(raw)
	if err != nil {
		secs, serr := strconv.Atoi(raw)
		if serr != nil {
			return 0, errors.New("not a duration such as 30s or a number of seconds")
		}
		d = time.Duration(secs) * time.Second
	}
	if d <= 0 {
		return 0, errors.New("timeout must be positive")
	}
	return d, nil
}
