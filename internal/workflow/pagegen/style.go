package pagegen

import (
	"hash/fnv"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/lucasb-eyer/go-colorful"
)

// colourWord is a colour named in English or Chinese.
type colourWord struct {
	pattern string
	hex     string
}

// colourWords maps colour names to a mid-strength sRGB value of that name (longer names
// first, so "navy blue" wins over "blue" and "深蓝" over "蓝").
var colourWords = []colourWord{
	{"navy(?: blue)?", "#1e3a8a"}, {"sky blue", "#0ea5e9"}, {"dark green|forest green", "#166534"}, {"light blue", "#60a5fa"},
	{"red", "#dc2626"}, {"crimson", "#b91c1c"}, {"orange", "#ea580c"}, {"amber", "#d97706"}, {"yellow", "#eab308"},
	{"gold(?:en)?", "#b8860b"}, {"lime", "#65a30d"}, {"green", "#16a34a"}, {"emerald", "#059669"}, {"teal", "#0d9488"},
	{"cyan", "#0891b2"}, {"blue", "#2563eb"}, {"indigo", "#4f46e5"}, {"purple", "#9333ea"}, {"violet", "#7c3aed"},
	{"magenta", "#c026d3"}, {"pink", "#db2777"}, {"brown|coffee(?:-| )colou?red|chocolate", "#7c4a2d"},
	{"black", "#111111"}, {"gr[ae]y", "#6b7280"}, {"beige|cream", "#f5efe0"}, {"white", "#ffffff"},
	{"深蓝色?|藏青色?|海军蓝", "#1e3a8a"}, {"天蓝色?", "#0ea5e9"}, {"深绿色?|墨绿色?", "#166534"}, {"浅蓝色?", "#60a5fa"},
	{"大红|红色", "#dc2626"}, {"橙色|橘色", "#ea580c"}, {"金黄色?|金色", "#b8860b"}, {"黄色", "#eab308"}, {"绿色", "#16a34a"},
	{"青色", "#0d9488"}, {"蓝色", "#2563eb"}, {"紫色", "#9333ea"}, {"粉红色?|粉色", "#db2777"}, {"棕色|咖啡色|褐色", "#7c4a2d"},
	{"黑色", "#111111"}, {"灰色", "#6b7280"}, {"米色|米白色?", "#f5efe0"}, {"白色", "#ffffff"},
}

// topicColours associates a product's subject with a colour when the request names none.
var topicColours = []colourWord{
	{"coffee|espresso|café|cafe|bakery|咖啡|烘焙", "#6f4e37"}, {"tea|matcha|茶", "#4d7c0f"},
	{"eco|green energy|plants?|garden\\w*|organic|farm\\w*|环保|植物|花园|有机|农场", "#15803d"},
	{"ocean|sea|surf\\w*|swim\\w*|water|boat\\w*|海|游泳|水", "#0369a1"},
	{"health\\w*|medical|clinic|dental|care|医疗|健康|诊所|牙科", "#0f766e"},
	{"financ\\w*|bank\\w*|invest\\w*|insurance|account\\w*|金融|银行|投资|保险|财务", "#1e3a8a"},
	{"restaurant|food|pizza|burger|kitchen|bbq|餐厅|美食|披萨|厨房|火锅", "#c2410c"},
	{"kids?|children|toys?|school|儿童|玩具|学校", "#d97706"},
	{"software|saas|app|ai|cloud|developer\\w*|tech\\w*|api|软件|云|科技|开发", "#4f46e5"},
	{"beauty|flowers?|florist|wedding|salon|spa|美容|鲜花|婚礼|美发", "#be185d"},
	{"luxury|jewel\\w*|watch\\w*|奢侈|珠宝|手表", "#7c5c1e"},
	{"fitness|gym|yoga|sport\\w*|run\\w*|健身|瑜伽|运动", "#dc2626"},
}

var hexRE = regexp.MustCompile(`#(?:[0-9a-fA-F]{6}|[0-9a-fA-F]{3})\b`)

// mention is a colour found in text, where it was found, and the role words around it.
type mention struct {
	at   int
	hex  string
	role string // primary, secondary, accent, surface, text, or "" for none said
}

// colourMentions finds hex codes and colour words in the text, in order of appearance.
// A role word just before a colour ("background #fafafa", "主色改成蓝色", "accent in
// gold") assigns it.
func colourMentions(text string) []mention {
	folded := foldText(text)
	var out []mention
	taken := make([]bool, len(folded)+1)
	claim := func(i, j int) bool {
		for k := i; k < j; k++ {
			if taken[k] {
				return false
			}
		}
		for k := i; k < j; k++ {
			taken[k] = true
		}
		return true
	}
	for _, loc := range hexRE.FindAllStringIndex(folded, -1) {
		if claim(loc[0], loc[1]) {
			out = append(out, mention{at: loc[0], hex: folded[loc[0]:loc[1]]})
		}
	}
	for _, w := range colourWords {
		re := colourRE(w.pattern)
		for _, loc := range re.FindAllStringIndex(folded, -1) {
			if claim(loc[0], loc[1]) {
				out = append(out, mention{at: loc[0], hex: w.hex})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].at < out[j].at })
	for i := range out {
		out[i].role = roleBefore(folded, out[i].at)
		if c, err := parseHex(out[i].hex); err == nil {
			out[i].hex = hexOf(c)
		}
	}
	return out
}

func colourRE(p string) *regexp.Regexp { return wordRE(p) }

var roleWords = []struct {
	role string
	re   *regexp.Regexp
}{
	{TokSurface, regexp.MustCompile(`background|backdrop|背景|底色`)},
	{TokText, regexp.MustCompile(`text colou?r|font colou?r|文字颜色|字体颜色`)},
	{TokAccent, regexp.MustCompile(`accent|highlight|点缀|强调|辅助色`)},
	{TokSecondary, regexp.MustCompile(`secondary|次要|第二`)},
	{TokPrimary, regexp.MustCompile(`primary|main colou?r|brand colou?r|主色|主题色|品牌色`)},
}

// roleBefore finds a role word in the 30 bytes before position at (within the clause).
func roleBefore(folded string, at int) string {
	start := max(0, at-30)
	for start > 0 && start < len(folded) && !isRuneStart(folded[start]) {
		start--
	}
	window := folded[start:at]
	if i := strings.LastIndexAny(window, ".;,，。；、"); i >= 0 {
		window = window[i:]
	}
	best, bestAt := "", -1
	for _, r := range roleWords {
		if loc := r.re.FindAllStringIndex(window, -1); loc != nil && loc[len(loc)-1][0] > bestAt {
			best, bestAt = r.role, loc[len(loc)-1][0]
		}
	}
	return best
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// hueOf and fromHue work in HSL degrees.
func hueOf(c colorful.Color) float64 { h, _, _ := c.Hsl(); return h }

// rotateHue turns c's hue by deg, setting its saturation and lightness.
func rotateHue(c colorful.Color, deg, s, l float64) colorful.Color {
	h := math.Mod(hueOf(c)+deg+360, 360)
	return colorful.Hsl(h, s, l).Clamped()
}

// chroma is c's CIE LCh chroma (about 0 for greys, up to about 1.3).
func chroma(c colorful.Color) float64 { _, ch, _ := c.Hcl(); return ch }

// paletteFromMentions assigns colours the request named to palette roles: explicit roles
// first, then primary, secondary, accent in order of mention.
func paletteFromMentions(ms []mention, dark bool) Palette {
	var p Palette
	set := map[string]bool{}
	assign := func(role, hex string) {
		if set[role] {
			return
		}
		p = setToken(p, role, hex)
		set[role] = true
	}
	for _, m := range ms {
		if m.role != "" {
			assign(m.role, m.hex)
		}
	}
	for _, m := range ms {
		if m.role != "" {
			continue
		}
		c := mustHex(m.hex)
		if chroma(c) < 0.06 && (lightnessOf(c) > 90 || lightnessOf(c) < 12) && !set[TokPrimary] && len(ms) > 1 {
			// "black and gold": a bare black or white goes to the surface or text, not the brand
			if lightnessOf(c) > 90 {
				assign(TokSurface, m.hex)
			} else if dark {
				assign(TokSurface, m.hex)
			} else {
				assign(TokText, m.hex)
			}
			continue
		}
		for _, role := range []string{TokPrimary, TokSecondary, TokAccent} {
			if !set[role] {
				assign(role, m.hex)
				break
			}
		}
	}
	return p
}

// completePalette fills the roles a palette lacks from its primary: secondary is the
// primary turned 30°, accent its complement, the surface white (or near-black when dark),
// the text an ink of the primary's hue.
func completePalette(p Palette, dark bool) Palette {
	prim := mustHex(p.Primary)
	_, s, l := prim.Hsl()
	if p.Secondary == "" {
		p.Secondary = hexOf(rotateHue(prim, 30, math.Min(s, 0.65), math.Min(math.Max(l, 0.3), 0.45)))
	}
	if p.Accent == "" {
		p.Accent = hexOf(rotateHue(prim, 180, math.Max(0.55, math.Min(s, 0.8)), 0.45))
	}
	_, ap, bp := prim.Lab()
	n := math.Hypot(ap, bp)
	tint := func(l, c float64) string {
		if n == 0 {
			return hexOf(colorful.Lab(l, 0, 0))
		}
		return hexOf(colorful.Lab(l, ap/n*c, bp/n*c))
	}
	if p.Surface == "" {
		if dark {
			p.Surface = tint(0.1, 0.02)
		} else {
			p.Surface = "#ffffff"
		}
	}
	if p.Text == "" {
		if lightnessOf(mustHex(p.Surface)) < 50 {
			p.Text = tint(0.95, 0.01)
		} else {
			p.Text = tint(0.16, 0.03)
		}
	}
	return p
}

// paletteFromSwatches picks palette roles from a logo's quantised colours: the surface is
// its most common light neutral (or white), the text its darkest neutral (or an ink of
// the primary), the primary its most common chromatic colour, secondary and accent the
// chromatic colours most different from it in hue.
func paletteFromSwatches(sw []Swatch, dark bool) Palette {
	var chromatic, neutral []colorful.Color
	for _, s := range sw {
		c := mustHex(s.Hex)
		if chroma(c) >= 0.12 && s.Share >= 0.01 {
			chromatic = append(chromatic, c)
		} else {
			neutral = append(neutral, c)
		}
	}
	var p Palette
	switch {
	case len(chromatic) > 0:
		p.Primary = hexOf(chromatic[0])
	case len(neutral) > 0:
		darkest := neutral[0]
		for _, c := range neutral {
			if lightnessOf(c) < lightnessOf(darkest) {
				darkest = c
			}
		}
		p.Primary = hexOf(darkest)
	default:
		p.Primary = "#2563eb"
	}
	prim := mustHex(p.Primary)
	hueGap := func(c colorful.Color) float64 {
		d := math.Abs(hueOf(c) - hueOf(prim))
		return math.Min(d, 360-d)
	}
	for _, c := range chromatic[min(1, len(chromatic)):] {
		if p.Secondary == "" && hueGap(c) >= 20 {
			p.Secondary = hexOf(c)
		}
	}
	var far colorful.Color
	farGap := 0.0
	for _, c := range chromatic {
		if g := hueGap(c); g > farGap && hexOf(c) != p.Secondary {
			far, farGap = c, g
		}
	}
	if farGap >= 60 {
		p.Accent = hexOf(far)
	}
	for _, c := range neutral {
		if !dark && lightnessOf(c) > 92 && p.Surface == "" {
			p.Surface = hexOf(c)
		}
		if lightnessOf(c) < 25 && (p.Text == "" || lightnessOf(c) < lightnessOf(mustHex(p.Text))) && !dark {
			p.Text = hexOf(c)
		}
	}
	return completePalette(p, dark)
}

// defaultPrimary is the colour of the request's subject (coffee → coffee brown, finance →
// navy …), or a hue drawn from a hash of the product's name: the same name, the same hue.
func defaultPrimary(request, name string) string {
	folded := foldText(request)
	for _, w := range topicColours {
		if colourRE(w.pattern).MatchString(folded) {
			return w.hex
		}
	}
	h := fnv.New32a()
	h.Write([]byte(strings.ToLower(name)))
	return hexOf(colorful.Hsl(float64(h.Sum32()%360), 0.6, 0.4))
}
