package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Offline is the deterministic provider used when no model is configured.
// It computes every answer from its inputs alone: the same request always
// yields the same result, and nothing is canned.
//
// Scoring, per criterion with rubric items I = distinct non-empty keywords +
// number rules:
//
//   - a keyword found in a chunk (see containsTerm: case-insensitive,
//     full-width folded, CJK substrings) is a credited claim backed by that
//     chunk;
//   - a number rule whose pattern matches in a chunk with a number that
//     satisfies Min/Max is a credited claim backed by that chunk; a matched
//     number that violates a bound is reported in the explanation and earns
//     nothing;
//   - when several chunks back an item, the one with the highest retrieval
//     score is cited (ties: the earlier chunk);
//   - Score = MaxScore × credited ÷ |I|, rounded to 0.1;
//   - Claims = CitedClaims = credited items; Citations = the backing chunks.
//
// Confidence (rounded to 0.01):
//
//   - no evidence chunks: 0.1 (0 when the rubric is empty);
//   - otherwise 0.2 + 0.5·coverage + 0.2·support + 0.1·min(n, 3)/3, where
//     coverage = items the evidence speaks to (credited or bound-violating)
//     ÷ |I|, support = mean retrieval score (clamped to [0, 1]) of the n
//     distinct chunks that spoke to an item. Evidence that mentions nothing
//     in the rubric therefore yields 0.2, full coverage by three or more
//     high-scoring chunks approaches 1.
type Offline struct{}

var _ Provider = (*Offline)(nil)

// NewOffline returns the offline provider.
func NewOffline() *Offline { return &Offline{} }

// Name returns "offline".
func (*Offline) Name() string { return "offline" }

// Offline returns true.
func (*Offline) Offline() bool { return true }

// ScoreCriteria scores each criterion by matching its rubric against its
// evidence (see Offline).
func (o *Offline) ScoreCriteria(ctx context.Context, req ScoreRequest) (ScoreResult, error) {
	patterns, err := req.compile()
	if err != nil {
		return ScoreResult{}, err
	}
	res := ScoreResult{Provider: o.Name(), Offline: true, Scores: make([]CriterionScore, 0, len(req.Criteria))}
	zh := chinese(req.Language)
	for _, c := range req.Criteria {
		if err := ctx.Err(); err != nil {
			return ScoreResult{}, err
		}
		res.Scores = append(res.Scores, scoreOffline(c, patterns[c.ID], req.Evidence[c.ID], zh))
	}
	return res, nil
}

// finding is what the evidence says about one rubric item.
type finding struct {
	text     string // "'high availability'" or "uptime 99.95% ≥ 99.9"
	chunk    *Chunk // nil when the item is missing
	credited bool
}

func scoreOffline(c Criterion, patterns []*regexp.Regexp, evidence []Chunk, zh bool) CriterionScore {
	out := CriterionScore{CriterionID: c.ID, MaxScore: c.MaxScore, Citations: []string{}}

	// Rank chunks by retrieval score, keeping input order on ties.
	chunks := make([]Chunk, len(evidence))
	copy(chunks, evidence)
	sort.SliceStable(chunks, func(i, j int) bool { return chunks[i].Score > chunks[j].Score })
	norm := make([]string, len(chunks))
	folded := make([]string, len(chunks))
	for i, ch := range chunks {
		norm[i] = normalize(ch.Text)
		folded[i] = foldWidth(ch.Text)
	}

	var findings []finding
	seen := map[string]bool{}
	for _, kw := range c.Rubric.Keywords {
		term := normalize(kw)
		if term == "" || seen[term] {
			continue
		}
		seen[term] = true
		f := finding{text: quote(strings.TrimSpace(kw), zh)}
		for i := range chunks {
			if containsTerm(norm[i], term) {
				f.chunk, f.credited = &chunks[i], true
				break
			}
		}
		findings = append(findings, f)
	}
	for j, rule := range c.Rubric.Numbers {
		findings = append(findings, matchNumber(rule, j, patterns[j], chunks, folded, zh))
	}

	total := len(findings)
	if total == 0 {
		out.Explanation = pick(zh, "The rubric has no keywords or number rules; nothing to score.", "评分细则没有关键词或数值规则，无法评分。")
		return out
	}

	var found, violated, missing []string
	spoke := map[string]float64{} // chunk id → retrieval score, for chunks that spoke to an item
	credited := 0
	for _, f := range findings {
		switch {
		case f.chunk == nil:
			missing = append(missing, f.text)
			continue
		case f.credited:
			credited++
			found = append(found, fmt.Sprintf("%s [%s]", f.text, f.chunk.ID))
			if !contains(out.Citations, f.chunk.ID) {
				out.Citations = append(out.Citations, f.chunk.ID)
			}
		default:
			violated = append(violated, fmt.Sprintf("%s [%s]", f.text, f.chunk.ID))
		}
		if s, ok := spoke[f.chunk.ID]; !ok || f.chunk.Score > s {
			spoke[f.chunk.ID] = f.chunk.Score
		}
	}

	out.Claims, out.CitedClaims = credited, credited
	out.Score = math.Min(c.MaxScore, round(c.MaxScore*float64(credited)/float64(total), 1))
	out.Confidence = offlineConfidence(len(chunks), len(spoke), spokeSum(spoke), len(found)+len(violated), total)
	out.Explanation = explain(out.Score, c, credited, total, len(chunks) == 0, found, violated, missing, zh)
	return out
}

// matchNumber applies one number rule to the ranked chunks: the first
// match satisfying the bounds wins; otherwise the first match that violates
// them is reported; otherwise the item is missing.
func matchNumber(rule NumberRule, j int, re *regexp.Regexp, chunks []Chunk, folded []string, zh bool) finding {
	label := rule.label(j)
	var violation *finding
	for i := range chunks {
		text := folded[i]
		for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
			if m[2] < 0 {
				continue
			}
			v, ok := parseNumber(text[m[2]:m[3]])
			if !ok {
				continue
			}
			shown := showNumber(text, m)
			if satisfies(v, rule) {
				return finding{text: strings.TrimSpace(label + " " + shown + boundText(rule, true, zh)), chunk: &chunks[i], credited: true}
			}
			if violation == nil {
				violation = &finding{text: strings.TrimSpace(label + " " + shown + boundText(rule, false, zh)), chunk: &chunks[i]}
			}
		}
	}
	if violation != nil {
		return *violation
	}
	return finding{text: label}
}

// parseNumber reads a captured number, ignoring thousands separators and
// spaces.
func parseNumber(s string) (float64, bool) {
	s = strings.NewReplacer(",", "", " ", "", "_", "").Replace(strings.TrimSpace(s))
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, false
	}
	return v, true
}

// showNumber renders the captured number followed by the unit text that
// follows it inside the match ("99.95%", "3 years", "3年").
func showNumber(text string, m []int) string {
	num := strings.TrimSpace(text[m[2]:m[3]])
	unit := strings.TrimSpace(text[m[3]:m[1]])
	if unit == "" || utf8.RuneCountInString(unit) > 12 {
		return num
	}
	if r, _ := utf8.DecodeRuneInString(unit); unicode.IsLetter(r) && !isCJK(r) {
		return num + " " + unit
	}
	return num + unit
}

func satisfies(v float64, rule NumberRule) bool {
	return (rule.Min == nil || v >= *rule.Min) && (rule.Max == nil || v <= *rule.Max)
}

// boundText describes the bound that was met (ok) or missed.
func boundText(rule NumberRule, ok bool, zh bool) string {
	f := func(p *float64) string { return strconv.FormatFloat(*p, 'f', -1, 64) }
	switch {
	case rule.Min != nil && rule.Max != nil && ok:
		return fmt.Sprintf(pick(zh, " within [%s, %s]", " 在 [%s, %s] 内"), f(rule.Min), f(rule.Max))
	case rule.Min != nil && rule.Max != nil:
		return fmt.Sprintf(pick(zh, " outside [%s, %s]", " 不在 [%s, %s] 内"), f(rule.Min), f(rule.Max))
	case rule.Min != nil && ok:
		return " ≥ " + f(rule.Min)
	case rule.Min != nil:
		return " < " + f(rule.Min)
	case rule.Max != nil && ok:
		return " ≤ " + f(rule.Max)
	case rule.Max != nil:
		return " > " + f(rule.Max)
	}
	return ""
}

func offlineConfidence(chunks, supporting int, supportSum float64, spokenItems, total int) float64 {
	if chunks == 0 {
		return 0.1
	}
	coverage := float64(spokenItems) / float64(total)
	support := 0.0
	if supporting > 0 {
		support = supportSum / float64(supporting)
	}
	breadth := math.Min(float64(supporting), 3) / 3
	return math.Min(1, round(0.2+0.5*coverage+0.2*support+0.1*breadth, 2))
}

func spokeSum(spoke map[string]float64) float64 {
	ids := make([]string, 0, len(spoke))
	for id := range spoke {
		ids = append(ids, id)
	}
	sort.Strings(ids) // a fixed summation order keeps the float result deterministic
	sum := 0.0
	for _, id := range ids {
		sum += math.Max(0, math.Min(1, spoke[id]))
	}
	return sum
}

// explainWords are the phrases of an explanation in one language.
type explainWords struct {
	head                                 string // credited, total
	levelOpen, levelClose                string
	noEvidence, found, violated, missing string
	list, sep, end                       string
}

var (
	explainZH = explainWords{head: "满足 %d/%d 项评分要点", levelOpen: "（", levelClose: "）", noEvidence: "未检索到证据",
		found: "命中", violated: "未达标（不得分）", missing: "缺少", list: "，", sep: "；", end: "。"}
	explainEN = explainWords{head: "%d of %d rubric items met", levelOpen: " (", levelClose: ")", noEvidence: "no evidence retrieved",
		found: "found ", violated: "out of bounds, no credit: ", missing: "missing ", list: ", ", sep: "; ", end: "."}
)

// explain writes the one-sentence explanation of an offline score.
func explain(score float64, c Criterion, credited, total int, noEvidence bool, found, violated, missing []string, zh bool) string {
	w := explainEN
	if zh {
		w = explainZH
	}
	head := fmt.Sprintf(w.head, credited, total)
	if lvl := levelReached(c.Rubric.Levels, score); lvl != "" {
		head += w.levelOpen + lvl + w.levelClose
	}
	parts := []string{head}
	if noEvidence {
		parts = append(parts, w.noEvidence)
	}
	for _, p := range []struct {
		prefix string
		items  []string
	}{{w.found, found}, {w.violated, violated}, {w.missing, missing}} {
		if len(p.items) > 0 {
			parts = append(parts, p.prefix+strings.Join(p.items, w.list))
		}
	}
	return strings.Join(parts, w.sep) + w.end
}

// levelReached names the highest level whose score the given score reaches.
func levelReached(levels []Level, score float64) string {
	best, name := math.Inf(-1), ""
	for _, l := range levels {
		if score >= l.Score && l.Score > best && strings.TrimSpace(l.Description) != "" {
			best, name = l.Score, strings.TrimSpace(l.Description)
		}
	}
	return name
}

func quote(s string, zh bool) string {
	if zh {
		return "「" + s + "」"
	}
	return "'" + s + "'"
}

func pick(zh bool, en, cn string) string {
	if zh {
		return cn
	}
	return en
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

// Chat answers without a model. A structured call (a Task) carries its own
// offline answer, computed from its inputs, and gets it. Free chat gets a
// labelled, deterministic summary of the last user message (its first
// sentence and word count); with JSON set, the same summary as a JSON object.
func (o *Offline) Chat(ctx context.Context, req ChatRequest) (ChatResponse, error) {
	if err := ctx.Err(); err != nil {
		return ChatResponse{}, err
	}
	if len(req.Messages) == 0 {
		return ChatResponse{}, invalid("chat request has no messages")
	}
	if req.Offline != nil {
		content, err := req.Offline(ctx)
		if err != nil {
			return ChatResponse{}, err
		}
		return ChatResponse{Content: content, Model: o.Name()}, nil
	}
	last := req.Messages[len(req.Messages)-1].Content
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			last = req.Messages[i].Content
			break
		}
	}
	first := firstSentence(last, 200)
	words := countWords(last)
	if req.JSON {
		b, err := json.Marshal(struct {
			Offline bool   `json:"offline"`
			Note    string `json:"note"`
			Summary string `json:"summary"`
			Words   int    `json:"words"`
		}{true, "offline provider: no model was called", first, words})
		if err != nil {
			return ChatResponse{}, err
		}
		return ChatResponse{Content: string(b), Model: o.Name()}, nil
	}
	content := fmt.Sprintf("[offline] No model was called. Last user message (%d words) begins: %q", words, first)
	return ChatResponse{Content: content, Model: o.Name()}, nil
}
