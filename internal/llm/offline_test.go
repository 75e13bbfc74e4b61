package llm

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"weft/internal/fault"
)

// availability is an English criterion: two keywords and an uptime bound.
func availability() Criterion {
	return Criterion{
		ID: "availability", Name: "Service availability", Weight: 0.3, MaxScore: 10,
		Rubric: Rubric{
			Keywords: []string{"high availability", "disaster recovery"},
			Numbers:  []NumberRule{{Label: "uptime", Pattern: `uptime[^0-9]{0,20}(\d+(?:\.\d+)?)\s*%`, Min: new(99.9)}},
		},
	}
}

// quality is a Chinese criterion.
func quality() Criterion {
	return Criterion{
		ID: "quality", Name: "质量保证", Weight: 0.2, MaxScore: 20,
		Rubric: Rubric{
			Keywords: []string{"质量管理体系", "ISO 9001", "环境管理体系"},
			Numbers:  []NumberRule{{Label: "质保期", Pattern: `质保期\s*(\d+)\s*年`, Min: new(3.0)}},
		},
	}
}

func scoreOne(t *testing.T, c Criterion, lang string, chunks ...Chunk) CriterionScore {
	t.Helper()
	res, err := NewOffline().ScoreCriteria(context.Background(), ScoreRequest{
		Criteria: []Criterion{c}, Evidence: map[string][]Chunk{c.ID: chunks}, Language: lang,
	})
	if err != nil {
		t.Fatalf("ScoreCriteria: %v", err)
	}
	if !res.Offline || res.Provider != "offline" || len(res.Scores) != 1 {
		t.Fatalf("result = %+v", res)
	}
	s := res.Scores[0]
	checkCitationsSupplied(t, s, chunks)
	return s
}

// checkCitationsSupplied asserts every citation names a supplied chunk.
func checkCitationsSupplied(t *testing.T, s CriterionScore, chunks []Chunk) {
	t.Helper()
	for _, id := range s.Citations {
		found := false
		for _, ch := range chunks {
			found = found || ch.ID == id
		}
		if !found {
			t.Errorf("citation %q was not supplied", id)
		}
	}
}

func TestOfflineScoresFromEvidence(t *testing.T) {
	t.Parallel()
	s := scoreOne(t, availability(), "en",
		Chunk{ID: "c-12", Text: "The platform is deployed for High Availability across two zones.", Score: 0.9},
		Chunk{ID: "c-14", Text: "Guaranteed uptime: 99.95 % per calendar month.", Score: 0.8},
		Chunk{ID: "c-20", Text: "Unrelated pricing table.", Score: 0.4},
	)
	if s.Score != 6.7 || s.MaxScore != 10 {
		t.Errorf("score = %v/%v, want 6.7/10", s.Score, s.MaxScore)
	}
	if !reflect.DeepEqual(s.Citations, []string{"c-12", "c-14"}) {
		t.Errorf("citations = %v", s.Citations)
	}
	if s.Claims != 2 || s.CitedClaims != 2 {
		t.Errorf("claims = %d/%d, want 2/2", s.CitedClaims, s.Claims)
	}
	for _, want := range []string{"2 of 3", "'high availability' [c-12]", "uptime 99.95% ≥ 99.9 [c-14]", "missing 'disaster recovery'"} {
		if !strings.Contains(s.Explanation, want) {
			t.Errorf("explanation %q lacks %q", s.Explanation, want)
		}
	}

	// Different evidence gives a different, still computed, answer.
	other := scoreOne(t, availability(), "en",
		Chunk{ID: "d-1", Text: "A Disaster-Recovery site? No: our disaster recovery site is in Shanghai.", Score: 0.5},
	)
	if other.Score != 3.3 || !reflect.DeepEqual(other.Citations, []string{"d-1"}) {
		t.Errorf("other = %+v", other)
	}
	if other.Confidence >= s.Confidence {
		t.Errorf("confidence with less coverage %v should be below %v", other.Confidence, s.Confidence)
	}

	full := scoreOne(t, availability(), "en",
		Chunk{ID: "a", Text: "high availability", Score: 1},
		Chunk{ID: "b", Text: "disaster recovery drills twice a year", Score: 1},
		Chunk{ID: "c", Text: "uptime 99.99%", Score: 1},
	)
	if full.Score != 10 || full.Confidence != 1 {
		t.Errorf("full coverage = %v, confidence %v; want 10, 1", full.Score, full.Confidence)
	}
}

func TestOfflineChineseKeywords(t *testing.T) {
	t.Parallel()
	s := scoreOne(t, quality(), "zh-CN",
		Chunk{ID: "zh-1", Text: "本公司建立了完善的质量管理\n体系，并通过 iso 9001 认证。", Score: 0.7},
		Chunk{ID: "zh-2", Text: "质保期５年，终身维护。", Score: 0.6}, // full-width digit
	)
	if s.Score != 15 {
		t.Errorf("score = %v, want 15 (3 of 4 items × 20)", s.Score)
	}
	if !reflect.DeepEqual(s.Citations, []string{"zh-1", "zh-2"}) {
		t.Errorf("citations = %v", s.Citations)
	}
	for _, want := range []string{"满足 3/4", "「质量管理体系」 [zh-1]", "「ISO 9001」 [zh-1]", "质保期 5年 ≥ 3 [zh-2]", "缺少「环境管理体系」"} {
		if !strings.Contains(s.Explanation, want) {
			t.Errorf("explanation %q lacks %q", s.Explanation, want)
		}
	}
}

func TestOfflineNumberBounds(t *testing.T) {
	t.Parallel()
	hours := func(min, max *float64) Criterion {
		return Criterion{ID: "response", MaxScore: 5, Rubric: Rubric{
			Numbers: []NumberRule{{Label: "response time", Pattern: `within\s+(\d+)\s*hours`, Min: min, Max: max}},
		}}
	}
	tests := []struct {
		name      string
		c         Criterion
		text      string
		score     float64
		cited     bool
		explained string
	}{
		{"min met", availability(), "uptime 99.95%", 3.3, true, "uptime 99.95% ≥ 99.9 [x]"},
		{"min violated", availability(), "uptime 99.5%", 0, false, "no credit: uptime 99.5% < 99.9 [x]"},
		{"full-width number", availability(), "ＵＰＴＩＭＥ：９９．９５％", 3.3, true, "uptime 99.95% ≥ 99.9 [x]"},
		{"max met", hours(nil, new(4.0)), "on-site within 2 hours", 5, true, "response time 2 hours ≤ 4 [x]"},
		{"max violated", hours(nil, new(4.0)), "on-site within 8 hours", 0, false, "response time 8 hours > 4 [x]"},
		{"range met", hours(new(1.0), new(4.0)), "within 3 hours", 5, true, "within [1, 4] [x]"},
		{"range violated", hours(new(1.0), new(4.0)), "within 0 hours", 0, false, "outside [1, 4] [x]"},
		{"second match satisfies", hours(nil, new(4.0)), "within 8 hours, or within 4 hours on request", 5, true, "4 hours ≤ 4 [x]"},
		{"no match", hours(nil, new(4.0)), "soon", 0, false, "missing response time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := scoreOne(t, tt.c, "", Chunk{ID: "x", Text: tt.text, Score: 0.5})
			if s.Score != tt.score {
				t.Errorf("score = %v, want %v", s.Score, tt.score)
			}
			if got := len(s.Citations) > 0; got != tt.cited {
				t.Errorf("citations = %v, want cited %v", s.Citations, tt.cited)
			}
			if !strings.Contains(s.Explanation, tt.explained) {
				t.Errorf("explanation %q lacks %q", s.Explanation, tt.explained)
			}
		})
	}
}

func TestOfflineZeroEvidence(t *testing.T) {
	t.Parallel()
	s := scoreOne(t, availability(), "")
	if s.Score != 0 || s.Confidence > 0.2 || len(s.Citations) != 0 || s.Claims != 0 {
		t.Errorf("zero evidence = %+v", s)
	}
	if !strings.Contains(s.Explanation, "no evidence") || !strings.Contains(s.Explanation, "missing 'high availability', 'disaster recovery', uptime") {
		t.Errorf("explanation = %q", s.Explanation)
	}

	irrelevant := scoreOne(t, availability(), "", Chunk{ID: "x", Text: "Our translation SLA covers islands.", Score: 0.9})
	if irrelevant.Score != 0 || irrelevant.Confidence > 0.2 {
		t.Errorf("irrelevant evidence = %+v", irrelevant)
	}
}

func TestOfflineKeywordBoundaries(t *testing.T) {
	t.Parallel()
	c := Criterion{ID: "k", MaxScore: 1, Rubric: Rubric{Keywords: []string{"SLA"}}}
	for text, want := range map[string]float64{
		"Our translation team":    0,
		"The SLA is attached":     1,
		"All SLAs are attached":   1,
		"服务等级协议(SLA)见附件":          1,
		"高可用SLA承诺":                1,
		"isolation levels, slang": 0,
	} {
		if s := scoreOne(t, c, "", Chunk{ID: "x", Text: text}); s.Score != want {
			t.Errorf("%q: score %v, want %v", text, s.Score, want)
		}
	}
}

func TestOfflineDeterministic(t *testing.T) {
	t.Parallel()
	req := ScoreRequest{
		Criteria: []Criterion{availability(), quality()},
		Evidence: map[string][]Chunk{
			"availability": {
				{ID: "c-1", Text: "uptime 99.95%", Score: 0.3},
				{ID: "c-2", Text: "uptime 99.99% and high availability", Score: 0.3},
				{ID: "c-3", Text: "high availability", Score: 0.9},
			},
			"quality": {{ID: "q-1", Text: "质量管理体系", Score: 0.5}},
		},
	}
	first, err := NewOffline().ScoreCriteria(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// The highest-scoring chunk backs a keyword; equal scores keep input order.
	if got := first.Scores[0].Citations; !reflect.DeepEqual(got, []string{"c-3", "c-1"}) {
		t.Errorf("citations = %v, want [c-3 c-1]", got)
	}
	for range 50 {
		again, err := NewOffline().ScoreCriteria(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(first, again) {
			t.Fatalf("not deterministic:\n%+v\n%+v", first, again)
		}
	}
}

func TestOfflineRejectsInvalidRequests(t *testing.T) {
	t.Parallel()
	bad := func(mut func(*Criterion)) ScoreRequest {
		c := availability()
		mut(&c)
		return ScoreRequest{Criteria: []Criterion{c}}
	}
	for name, req := range map[string]ScoreRequest{
		"no criteria":   {},
		"empty id":      bad(func(c *Criterion) { c.ID = "" }),
		"zero max":      bad(func(c *Criterion) { c.MaxScore = 0 }),
		"bad pattern":   bad(func(c *Criterion) { c.Rubric.Numbers[0].Pattern = "(" }),
		"no group":      bad(func(c *Criterion) { c.Rubric.Numbers[0].Pattern = `\d+` }),
		"min above max": bad(func(c *Criterion) { c.Rubric.Numbers[0].Max = new(1.0) }),
		"chunk without id": {Criteria: []Criterion{availability()},
			Evidence: map[string][]Chunk{"availability": {{Text: "x"}}}},
	} {
		_, err := NewOffline().ScoreCriteria(context.Background(), req)
		if class, code := fault.Classify(err); class != fault.Validation || code != fault.CodeValidation {
			t.Errorf("%s: classify(%v) = %s %s, want validation", name, err, class, code)
		}
	}
}

func TestOfflineLevels(t *testing.T) {
	t.Parallel()
	c := availability()
	c.Rubric.Levels = []Level{{0, "absent"}, {5, "partial"}, {10, "complete"}}
	s := scoreOne(t, c, "", Chunk{ID: "x", Text: "high availability, uptime 99.95%"})
	if !strings.Contains(s.Explanation, "(partial)") {
		t.Errorf("explanation %q lacks the level reached", s.Explanation)
	}
}

func TestOfflineChat(t *testing.T) {
	t.Parallel()
	p := NewOffline()
	ask := func(content string, asJSON bool) ChatResponse {
		t.Helper()
		resp, err := p.Chat(context.Background(), ChatRequest{JSON: asJSON, Messages: []Message{
			{Role: "system", Content: "You are helpful."},
			{Role: "user", Content: content},
		}})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	a := ask("Summarise the tender. It has three lots and two annexes.", false)
	if a.Model != "offline" || !strings.HasPrefix(a.Content, "[offline]") ||
		!strings.Contains(a.Content, `"Summarise the tender."`) || !strings.Contains(a.Content, "(10 words)") {
		t.Errorf("chat = %+v", a)
	}
	if b := ask("Summarise the tender. It has three lots and two annexes.", false); b != a {
		t.Errorf("not deterministic: %q vs %q", a.Content, b.Content)
	}
	if c := ask("请总结招标文件。共三个标段。", false); !strings.Contains(c.Content, "请总结招标文件。") || c.Content == a.Content {
		t.Errorf("chat zh = %q", c.Content)
	}

	var out struct {
		Offline bool   `json:"offline"`
		Summary string `json:"summary"`
		Words   int    `json:"words"`
	}
	if err := json.Unmarshal([]byte(ask("Hello there. More.", true).Content), &out); err != nil {
		t.Fatal(err)
	}
	if !out.Offline || out.Summary != "Hello there." || out.Words != 3 {
		t.Errorf("json chat = %+v", out)
	}

	if _, err := p.Chat(context.Background(), ChatRequest{}); err == nil {
		t.Error("empty chat request accepted")
	}
}

func TestFromEnv(t *testing.T) {
	t.Parallel()
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}

	p, err := fromEnv(env())
	if err != nil || !p.Offline() || p.Name() != "offline" {
		t.Fatalf("unset: %v %v", p, err)
	}

	_, err = fromEnv(env(EnvProvider, "openai", EnvBaseURL, "http://localhost:8000/v1"))
	if err == nil || !strings.Contains(err.Error(), EnvModel) {
		t.Errorf("missing model: %v", err)
	}
	_, err = fromEnv(env(EnvProvider, "openai"))
	if err == nil || !strings.Contains(err.Error(), EnvBaseURL) || !strings.Contains(err.Error(), EnvModel) {
		t.Errorf("missing both: %v", err)
	}
	if _, err := fromEnv(env(EnvProvider, "claude")); err == nil {
		t.Error("unknown provider accepted")
	}
	if _, err := fromEnv(env(EnvProvider, "openai", EnvBaseURL, "http://x/v1", EnvModel, "m", EnvTimeout, "soon")); err == nil {
		t.Error("bad timeout accepted")
	}

	p, err = fromEnv(env(EnvProvider, "OpenAI", EnvBaseURL, "http://localhost:8000/v1", EnvModel, "qwen2.5", EnvAPIKey, "sk-secret", EnvTimeout, "15"))
	if err != nil {
		t.Fatal(err)
	}
	o, ok := p.(*OpenAI)
	if !ok || o.Offline() || o.Name() != "openai-compatible:qwen2.5" || o.cfg.Timeout.Seconds() != 15 {
		t.Errorf("openai = %v", p)
	}
	if strings.Contains(o.cfg.String(), "sk-secret") {
		t.Error("Config.String leaks the key")
	}
}
