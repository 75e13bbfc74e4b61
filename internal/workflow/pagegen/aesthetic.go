package pagegen

import (
	"fmt"
	"math"
	"sort"
	"strings"
)

// AestheticScores are the aesthetic scorer's measurements, each scored 0–100.
type AestheticScores struct {
	Overall    float64         `json:"overall"`
	Contrast   ContrastScore   `json:"contrast"`
	TypeScale  TypeScaleScore  `json:"type_scale"`
	Spacing    SpacingScore    `json:"spacing"`
	LineLength LineLengthScore `json:"line_length"`
}

// ContrastScore: the share of text/background pairs that reach WCAG AA.
type ContrastScore struct {
	Score float64     `json:"score"`
	Pairs []PairScore `json:"pairs"`
}

// PairScore is one pair's measured contrast.
type PairScore struct {
	Pair
	FGHex string  `json:"fg_hex"`
	BGHex string  `json:"bg_hex"`
	Ratio float64 `json:"ratio"`
	Pass  bool    `json:"pass"`
}

// TypeScaleScore: how steady the ratio between consecutive sizes is.
type TypeScaleScore struct {
	Score     float64   `json:"score"`
	Ratios    []float64 `json:"ratios"` // h4/body, h3/h4, h2/h3, h1/h2
	Mean      float64   `json:"mean"`
	CV        float64   `json:"cv"` // coefficient of variation of the ratios
	Monotonic bool      `json:"monotonic"`
}

// SpacingScore: the share of spacing values on the unit grid.
type SpacingScore struct {
	Score  float64    `json:"score"`
	Unit   int        `json:"unit"`
	Values []SpaceUse `json:"values"`
	Off    []SpaceUse `json:"off_grid,omitempty"`
}

// SpaceUse is one spacing value the CSS uses.
type SpaceUse struct {
	Name string `json:"name"`
	Px   int    `json:"px"`
}

// LineLengthScore: the share of text blocks whose lines fall in the readable range.
type LineLengthScore struct {
	Score  float64     `json:"score"`
	Blocks []LineBlock `json:"blocks"`
}

// LineBlock is one kind of text block's estimated characters per line at desktop width.
type LineBlock struct {
	Where string `json:"where"`
	Chars int    `json:"chars"`
	Min   int    `json:"min"`
	Max   int    `json:"max"`
	OK    bool   `json:"ok"`
}

// Suggestion is a concrete change the scorer recommends.
type Suggestion struct {
	Area    string `json:"area"` // contrast, type_scale, spacing, line_length
	Message string `json:"message"`
}

// containerPx is the content width at desktop size (render's .wrap max-width).
const containerPx = 1120

// spacingUses lists every spacing value the CSS uses, from the tokens. render_css.go
// reads the same list, so what is measured is what is drawn.
func spacingUses(t *StyleTokens) []SpaceUse {
	sc := t.Spacing.Scale
	at := func(i int) int { return sc[min(i, len(sc)-1)] }
	return []SpaceUse{
		{"section padding", t.Spacing.Section}, {"card gap", t.Spacing.Gap}, {"card padding", at(3)},
		{"hero padding", t.Spacing.Section + at(1)}, {"navigation padding", at(1)}, {"form field gap", at(2)},
		{"button padding", at(1)},
	}
}

// scoreAesthetics measures the tokens and pages.
func scoreAesthetics(t *StyleTokens, schemas []PageSchema) (*AestheticScores, []Suggestion) {
	lang := LangEN
	if len(schemas) > 0 {
		lang = schemas[0].Lang
	}
	sc := &AestheticScores{}
	var sug []Suggestion
	s := schemeOf(t.Palette)
	pairs := pairsOf(schemas)
	_, fixes := enforceAA(t.Palette, pairs) // the change that fixes every pair at once
	pass := 0
	for _, p := range pairs {
		r := ContrastRatio(s[p.FG], s[p.BG])
		ps := PairScore{Pair: p, FGHex: s.hex(p.FG), BGHex: s.hex(p.BG), Ratio: math.Round(r*100) / 100, Pass: r >= p.Min()}
		sc.Contrast.Pairs = append(sc.Contrast.Pairs, ps)
		if ps.Pass {
			pass++
			continue
		}
		sug = append(sug, Suggestion{Area: "contrast", Message: contrastAdvice(fixes, p, r, lang)})
	}
	sc.Contrast.Score = pct(pass, len(sc.Contrast.Pairs))

	sc.TypeScale = measureTypeScale(t.Type)
	if sc.TypeScale.Score < 90 {
		sug = append(sug, Suggestion{Area: "type_scale", Message: typeAdvice(t.Type, sc.TypeScale, lang)})
	}

	sc.Spacing = SpacingScore{Unit: t.Spacing.Unit, Values: spacingUses(t)}
	for _, v := range sc.Spacing.Values {
		if t.Spacing.Unit > 0 && v.Px%t.Spacing.Unit != 0 {
			sc.Spacing.Off = append(sc.Spacing.Off, v)
			near := int(math.Round(float64(v.Px)/float64(t.Spacing.Unit))) * t.Spacing.Unit
			sug = append(sug, Suggestion{Area: "spacing", Message: pick(lang,
				fmt.Sprintf("round the %s from %dpx to %dpx to stay on the %dpx grid", v.Name, v.Px, near, t.Spacing.Unit),
				fmt.Sprintf("将%s从 %dpx 调整为 %dpx，保持 %dpx 网格", zhUse(v.Name), v.Px, near, t.Spacing.Unit))})
		}
	}
	sc.Spacing.Score = pct(len(sc.Spacing.Values)-len(sc.Spacing.Off), len(sc.Spacing.Values))

	sc.LineLength = measureLines(t, schemas)
	for _, b := range sc.LineLength.Blocks {
		if !b.OK {
			sug = append(sug, Suggestion{Area: "line_length", Message: lineAdvice(b, lang)})
		}
	}
	sc.Overall = math.Round((0.4*sc.Contrast.Score+0.2*sc.TypeScale.Score+0.2*sc.Spacing.Score+0.2*sc.LineLength.Score)*10) / 10
	return sc, sug
}

func pct(n, of int) float64 {
	if of == 0 {
		return 100
	}
	return math.Round(float64(n)/float64(of)*1000) / 10
}

// contrastAdvice names the pair's main use, its ratio and the change of its token that
// enforceAA makes (one that fixes every pair of that token together).
func contrastAdvice(fixes []ContrastFix, pr Pair, r float64, lang string) string {
	what := mainUse(pr)
	tok, _ := adjustable(pr)
	change := ""
	for _, f := range fixes {
		if f.Token != tok {
			continue
		}
		verb := pick(lang, "darken", "加深")
		if lightnessOf(mustHex(f.To)) > lightnessOf(mustHex(f.From)) {
			verb = pick(lang, "lighten", "调浅")
		}
		change = pick(lang, fmt.Sprintf(" (%s the %s colour from %s to %s)", verb, f.Token, f.From, f.To),
			fmt.Sprintf("（将%s从 %s %s为 %s）", zhUse(f.Token), f.From, verb, f.To))
		break
	}
	return pick(lang, fmt.Sprintf("raise %s contrast from %s to at least %s%s", what, ratio(r), ratio(pr.Min()), change),
		fmt.Sprintf("将%s的对比度从 %s 提高到至少 %s%s", zhUse(what), ratio(r), ratio(pr.Min()), change))
}

// mainUse is the pair's most prominent use: a button's first.
func mainUse(pr Pair) string {
	uses := append([]string{}, pr.Uses...)
	sort.SliceStable(uses, func(i, j int) bool {
		return strings.Contains(uses[i], "button") && !strings.Contains(uses[j], "button")
	})
	return uses[0]
}

// measureTypeScale looks at the ratios between consecutive sizes (body … h1).
func measureTypeScale(t TypeScale) TypeScaleScore {
	order := []string{"body", "h4", "h3", "h2", "h1"}
	out := TypeScaleScore{Monotonic: true}
	for i := 1; i < len(order); i++ {
		a, b := t.Sizes[order[i-1]], t.Sizes[order[i]]
		if a <= 0 {
			continue
		}
		r := b / a
		if r <= 1 {
			out.Monotonic = false
		}
		out.Ratios = append(out.Ratios, math.Round(r*1000)/1000)
	}
	if len(out.Ratios) == 0 {
		return out
	}
	sum := 0.0
	for _, r := range out.Ratios {
		sum += r
	}
	out.Mean = sum / float64(len(out.Ratios))
	v := 0.0
	for _, r := range out.Ratios {
		v += (r - out.Mean) * (r - out.Mean)
	}
	out.CV = math.Sqrt(v/float64(len(out.Ratios))) / out.Mean
	score := 100 * math.Max(0, 1-out.CV/0.15)
	if out.Mean < 1.1 || out.Mean > 1.6 {
		score *= 0.6
	}
	if !out.Monotonic {
		score *= 0.5
	}
	out.Score = math.Round(score*10) / 10
	out.Mean, out.CV = math.Round(out.Mean*1000)/1000, math.Round(out.CV*1000)/1000
	return out
}

func typeAdvice(t TypeScale, m TypeScaleScore, lang string) string {
	ideal := newTypeScale(t.Family, t.Base, math.Round(m.Mean*1000)/1000)
	return pick(lang,
		fmt.Sprintf("the heading sizes step by ratios %v (varying %.0f%%); use one ratio of %.3f: h1 %.0fpx, h2 %.0fpx, h3 %.0fpx", m.Ratios, m.CV*100, m.Mean, ideal.Sizes["h1"], ideal.Sizes["h2"], ideal.Sizes["h3"]),
		fmt.Sprintf("标题字号之间的比例为 %v（波动 %.0f%%），建议统一为 %.3f：h1 %.0fpx、h2 %.0fpx、h3 %.0fpx", m.Ratios, m.CV*100, m.Mean, ideal.Sizes["h1"], ideal.Sizes["h2"], ideal.Sizes["h3"]))
}

// measureLines estimates characters per line of each kind of text block at the desktop
// width: an average Latin character is about half an em wide, a CJK one a full em.
func measureLines(t *StyleTokens, schemas []PageSchema) LineLengthScore {
	lang := LangEN
	if len(schemas) > 0 {
		lang = schemas[0].Lang
	}
	body := t.Type.Sizes["body"]
	if body <= 0 {
		body = t.Type.Base
	}
	// Readable line lengths: 45–75 characters for running text, 30–60 in a multi-column
	// card; CJK text about half as many characters.
	perChar, lo, hi, cardLo, cardHi := 0.5*body, 45, 75, 30, 60
	if isZH(lang) {
		perChar, lo, hi, cardLo, cardHi = body, 20, 40, 14, 32
	}
	measurePx := float64(t.Measure) * perChar
	if isZH(lang) {
		measurePx = float64(t.Measure) * body
	}
	chars := func(width float64) int { return int(math.Round(math.Min(width, measurePx) / perChar)) }
	pad := float64(spacingUses(t)[2].Px)
	seen := map[string]bool{}
	var out LineLengthScore
	add := func(where string, width float64, card bool) {
		if seen[where] {
			return
		}
		seen[where] = true
		n, a, b := chars(width), lo, hi
		if card {
			a, b = cardLo, cardHi
		}
		out.Blocks = append(out.Blocks, LineBlock{Where: where, Chars: n, Min: a, Max: b, OK: n >= a && n <= b})
	}
	for _, s := range schemas {
		for _, c := range s.Components {
			switch c.Type {
			case CompHero:
				add("hero text", containerPx, false)
			case CompFeatureGrid:
				cols := float64(max(1, c.FeatureGrid.Columns))
				add("feature card text", (containerPx-(cols-1)*float64(t.Spacing.Gap))/cols-2*pad, cols > 1)
			case CompTestimonial:
				add("testimonial quotes", (containerPx-2*float64(t.Spacing.Gap))/3-2*pad, true)
			case CompFAQ:
				add("FAQ answers", containerPx-2*pad, false)
			}
		}
	}
	ok := 0
	for _, b := range out.Blocks {
		if b.OK {
			ok++
		}
	}
	out.Score = pct(ok, len(out.Blocks))
	return out
}

func lineAdvice(b LineBlock, lang string) string {
	if b.Chars < b.Min {
		return pick(lang, fmt.Sprintf("lines of %s are about %d characters long; widen them (fewer columns) to reach %d–%d", b.Where, b.Chars, b.Min, b.Max),
			fmt.Sprintf("%s每行约 %d 个字，建议减少列数使其达到 %d–%d 字", zhUse(b.Where), b.Chars, b.Min, b.Max))
	}
	return pick(lang, fmt.Sprintf("lines of %s are about %d characters long; cap their width at %d characters", b.Where, b.Chars, b.Max),
		fmt.Sprintf("%s每行约 %d 个字，建议将宽度限制在 %d 字以内", zhUse(b.Where), b.Chars, b.Max))
}

var zhWords = map[string]string{
	"the primary button's text": "主按钮文字", "the skip link": "跳转链接", "body text": "正文", "the hero heading": "首屏标题",
	"the hero text": "首屏文字", "the hero button's text": "首屏按钮文字", "the secondary link": "次要链接",
	"the navigation links": "导航链接", "the current page's link": "当前页链接", "section headings": "栏目标题",
	"section labels": "栏目标签", "card titles": "卡片标题", "card text": "卡片文字", "plan names and prices": "套餐名称和价格",
	"plan details": "套餐说明", "the highlighted plan's badge": "推荐套餐标记", "quotes": "评价内容", "quote authors": "评价作者",
	"questions": "问题", "answers": "回答", "form labels and input text": "表单标签和输入文字", "form hints": "表单提示",
	"form field borders": "表单边框", "the footer text and links": "页脚文字和链接", "hero text": "首屏文字",
	"feature card text": "功能卡片文字", "testimonial quotes": "用户评价", "FAQ answers": "常见问题回答",
	"section padding": "栏目内边距", "card gap": "卡片间距", "card padding": "卡片内边距", "hero padding": "首屏内边距",
	"navigation padding": "导航内边距", "form field gap": "表单项间距", "button padding": "按钮内边距",
	TokPrimary: "主色", TokSecondary: "辅色", TokAccent: "点缀色", TokSurface: "背景色", TokText: "文字颜色",
}

func zhUse(s string) string {
	if z, ok := zhWords[s]; ok {
		return z
	}
	return s
}
