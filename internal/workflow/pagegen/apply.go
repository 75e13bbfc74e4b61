package pagegen

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// site is what refine edits: the doc, the pages, the forms and the tokens (copies).
type site struct {
	doc    ProductDoc
	pages  []Page
	dm     DataModel
	tokens StyleTokens
}

// ratios are the modular scales headings step through.
var ratios = []float64{ratioMinorThird, ratioMajorThird, ratioPerfectFourth, ratioAugFourth, 1.5}

var pxRE = regexp.MustCompile(`(\d{1,3})\s*px`)

// report collects what refine did and what it could not do, in the site's language.
type report struct {
	lang      string
	applied   []string
	unapplied []Unapplied
}

func (r *report) did(en, zh string, args ...any) {
	r.applied = append(r.applied, fmt.Sprintf(pick(r.lang, en, zh), args...))
}

func (r *report) no(e Edit, en, zh string, args ...any) {
	r.unapplied = append(r.unapplied, Unapplied{Text: e.Text, Reason: fmt.Sprintf(pick(r.lang, en, zh), args...)})
}

// applyEdits applies edits in order and says, for each, what it did or why it could not.
func applyEdits(st *site, edits []Edit) (applied []string, unapplied []Unapplied) {
	r := &report{lang: st.doc.Lang}
	for _, e := range edits {
		switch e.Op {
		case OpNoChange:
			r.did("kept the pages as they are", "页面保持不变")
		case OpSetColour, OpDarken, OpLighten, OpTheme:
			applyColour(st, e, r)
		case OpHeadings, OpTextSize, OpFont:
			applyType(st, e, r)
		case OpAddPage:
			addPage(st, e, r)
		case OpRemovePage:
			removePage(st, e, r)
		case OpAddSection, OpRemoveSect:
			editSection(st, e, r)
		case OpSpacing:
			applySpacing(st, e, r)
		case OpRadius:
			radius := 0
			if e.Value == "more" {
				radius = min(24, st.tokens.Radius+8)
			}
			st.tokens.Radius = radius
			r.did("set corner radius to %dpx", "圆角改为 %dpx", radius)
		case OpRename, OpHeadline:
			applyContent(st, e, r)
		default:
			r.no(e, "refine has no %q operation", "不支持的操作 %q", e.Op)
		}
	}
	return r.applied, r.unapplied
}

// applyColour sets, darkens or lightens a palette colour, or switches the theme.
func applyColour(st *site, e Edit, r *report) {
	lang := st.doc.Lang
	switch e.Op {
	case OpSetColour:
		c, err := parseHex(e.Value)
		if err != nil || !isColourRole(e.Target) {
			r.no(e, "%q is not a colour role and #rrggbb value", "%q 不是有效的颜色设置", e.Target+" "+e.Value)
			return
		}
		old := tokenOf(st.tokens.Palette, e.Target)
		st.tokens.Palette = setToken(st.tokens.Palette, e.Target, hexOf(c))
		if e.Target == TokPrimary { // the secondary follows the brand colour it was derived from
			st.tokens.Palette.Secondary = hexOf(rotateHue(c, 30, 0.6, 0.4))
		}
		r.did("set the %s colour from %s to %s", "将%s从 %s 改为 %s", roleName(e.Target, lang), old, hexOf(c))
	case OpTheme:
		dark := e.Value == "dark"
		st.tokens.Dark = dark
		p := st.tokens.Palette
		p.Surface, p.Text = "", ""
		st.tokens.Palette = completePalette(p, dark)
		r.did("switched to a %s theme", "切换为%s主题", pick(lang, e.Value, map[bool]string{true: "深色", false: "浅色"}[dark]))
	default:
		if !isColourRole(e.Target) {
			r.no(e, "%q is not a colour role", "%q 不是颜色角色", e.Target)
			return
		}
		d := 12.0
		if e.Target == TokSurface {
			d = 6
		}
		if e.Op == OpDarken {
			d = -d
		}
		old := tokenOf(st.tokens.Palette, e.Target)
		nc := hexOf(shiftLightness(mustHex(old), d))
		if nc == old {
			r.no(e, "the %s colour %s cannot get any %s", "%s %s 已无法再%s", roleName(e.Target, lang), old, pick(lang, strings.TrimSuffix(e.Op, "en")+"er", map[bool]string{true: "加深", false: "调浅"}[e.Op == OpDarken]))
			return
		}
		st.tokens.Palette = setToken(st.tokens.Palette, e.Target, nc)
		r.did("made the %s colour %s: %s → %s", "将%s%s：%s → %s", roleName(e.Target, lang),
			pick(lang, map[bool]string{true: "darker", false: "lighter"}[e.Op == OpDarken], map[bool]string{true: "加深", false: "调浅"}[e.Op == OpDarken]), old, nc)
	}
}

// applyType changes the type scale: heading steps, body size, family.
func applyType(st *site, e Edit, r *report) {
	lang := st.doc.Lang
	switch e.Op {
	case OpHeadings:
		i := slices.Index(ratios, st.tokens.Type.Ratio)
		if i < 0 {
			i = 1
		}
		j := i + 1
		if e.Value == "smaller" {
			j = i - 1
		}
		if j < 0 || j >= len(ratios) {
			r.no(e, "the headings are already at the %s end of the type scale", "标题已经是最%s的了", pick(lang, map[bool]string{true: "largest", false: "smallest"}[e.Value == "bigger"], map[bool]string{true: "大", false: "小"}[e.Value == "bigger"]))
			return
		}
		before := st.tokens.Type.Sizes["h1"]
		st.tokens.Type = newTypeScale(st.tokens.Type.Family, st.tokens.Type.Base, ratios[j])
		r.did("made the headings %s: type scale %.3f → %.3f (h1 %.0fpx → %.0fpx)", "标题%s：字号比例 %.3f → %.3f（h1 %.0fpx → %.0fpx）",
			pick(lang, e.Value, map[bool]string{true: "更大", false: "更小"}[e.Value == "bigger"]), ratios[i], ratios[j], before, st.tokens.Type.Sizes["h1"])
	case OpTextSize:
		base := st.tokens.Type.Base + 2
		if e.Value == "smaller" {
			base = st.tokens.Type.Base - 2
		}
		if base < 14 || base > 22 {
			r.no(e, "body text stays between 14px and 22px", "正文字号需保持在 14px 到 22px 之间")
			return
		}
		st.tokens.Type = newTypeScale(st.tokens.Type.Family, base, st.tokens.Type.Ratio)
		r.did("set body text to %.0fpx", "正文字号改为 %.0fpx", base)
	case OpFont:
		st.tokens.Type.Family = e.Value
		r.did("switched to a %s typeface", "改用%s字体", pick(lang, e.Value, map[string]string{"serif": "衬线", "sans": "无衬线"}[e.Value]))
	}
}

// applyContent renames the product or sets the home page's headline.
func applyContent(st *site, e Edit, r *report) {
	if e.Op == OpRename {
		if e.Value == "" || len([]rune(e.Value)) > 40 {
			r.no(e, "a name is 1 to 40 characters", "名称需为 1 到 40 个字符")
			return
		}
		old := st.doc.Name
		st.doc.Name = e.Value
		st.doc.ValueProposition = strings.ReplaceAll(st.doc.ValueProposition, old, e.Value)
		st.doc.FAQ = faqFor(st.doc, st.pages, st.dm)
		st.doc.Testimonials = testimonialsFor(st.doc)
		r.did("renamed %s to %s", "将名称从 %s 改为 %s", old, e.Value)
		return
	}
	if e.Value == "" || len([]rune(e.Value)) > 120 {
		r.no(e, "a headline is 1 to 120 characters", "标题需为 1 到 120 个字符")
		return
	}
	st.doc.Headline = e.Value
	r.did("set the home page headline to %q", "首页标题改为“%s”", e.Value)
}

func removePage(st *site, e Edit, r *report) {
	lang := st.doc.Lang
	switch {
	case e.Target == PageHome:
		r.no(e, "the home page stays: every site has one", "首页不能删除")
	case !hasPage(st.pages, e.Target):
		r.no(e, "there is no %s page to remove", "没有可删除的“%s”页面", e.Target)
	default:
		st.pages = slices.DeleteFunc(st.pages, func(p Page) bool { return p.Slug == e.Target })
		r.did("removed the %s page", "删除了“%s”页面", pageMeta(e.Target, lang).Title)
	}
}

func addPage(st *site, e Edit, r *report) {
	lang := st.doc.Lang
	meta := pageMeta(e.Target, lang)
	switch {
	case meta.Slug == "":
		r.no(e, "there is no %q page kind; pages are home, pricing, about, FAQ and contact", "不支持“%s”页面；可用的页面有首页、价格、关于我们、常见问题和联系我们", e.Target)
		return
	case hasPage(st.pages, meta.Slug):
		r.no(e, "the site already has a %s page", "网站已经有“%s”页面", meta.Title)
		return
	}
	var pages []Page
	for _, slug := range pageOrder {
		if slug == meta.Slug {
			pages = append(pages, meta)
		} else if i := slices.IndexFunc(st.pages, func(p Page) bool { return p.Slug == slug }); i >= 0 {
			pages = append(pages, st.pages[i])
		}
	}
	st.pages = pages
	folded := foldText(st.doc.Request)
	switch meta.Slug {
	case PagePricing:
		if len(st.doc.Plans) == 0 {
			st.doc.Plans = plansFor(st.doc.Request, folded, st.doc)
		}
		st.doc.Removed = slices.DeleteFunc(st.doc.Removed, func(s string) bool { return s == CompPricing })
	case PageContact:
		if len(st.dm.Entities) == 0 {
			st.dm = dataModelFor(folded, lang, true)
		}
		st.doc.Removed = slices.DeleteFunc(st.doc.Removed, func(s string) bool { return s == CompContactForm })
	case PageFAQ:
		st.doc.Removed = slices.DeleteFunc(st.doc.Removed, func(s string) bool { return s == CompFAQ })
	}
	st.doc.FAQ = faqFor(st.doc, st.pages, st.dm)
	r.did("added the %s page", "新增了“%s”页面", meta.Title)
}

func editSection(st *site, e Edit, r *report) {
	lang := st.doc.Lang
	name := sectionName(e.Target, lang)
	if name == "" || e.Target == CompNav || e.Target == CompFooter || e.Target == CompHero {
		r.no(e, "%q is not a section refine can add or remove", "“%s”不是可以增删的栏目", e.Target)
		return
	}
	if e.Op == OpRemoveSect {
		inUse := slices.Contains(st.doc.Sections, e.Target)
		for _, p := range st.pages {
			inUse = inUse || slices.Contains(componentsOf(p.Slug, st.doc.Sections, len(st.dm.Entities), st.doc.Removed), e.Target)
		}
		if !inUse {
			r.no(e, "there are no %s to remove", "没有可删除的%s", name)
			return
		}
		st.doc.Sections = slices.DeleteFunc(st.doc.Sections, func(s string) bool { return s == e.Target })
		if !slices.Contains(st.doc.Removed, e.Target) {
			st.doc.Removed = append(st.doc.Removed, e.Target)
		}
		r.did("removed the %s from every page", "从所有页面删除了%s", name)
		// A page left with nothing but its banner goes too ("remove the FAQ" on a
		// site with a FAQ page): an empty page is no page.
		for _, p := range slices.Clone(st.pages) {
			if p.Slug != PageHome && !slices.ContainsFunc(componentsOf(p.Slug, st.doc.Sections, len(st.dm.Entities), st.doc.Removed),
				func(c string) bool { return c != CompNav && c != CompHero && c != CompFooter }) {
				removePage(st, Edit{Op: OpRemovePage, Target: p.Slug, Text: e.Text}, r)
			}
		}
		return
	}
	st.doc.Removed = slices.DeleteFunc(st.doc.Removed, func(s string) bool { return s == e.Target })
	if slices.Contains(st.doc.Sections, e.Target) {
		r.no(e, "the home page already has %s", "首页已经有%s", name)
		return
	}
	folded := foldText(st.doc.Request)
	switch e.Target {
	case CompPricing:
		if len(st.doc.Plans) == 0 {
			st.doc.Plans = plansFor(st.doc.Request, folded, st.doc)
		}
	case CompContactForm:
		if len(st.dm.Entities) == 0 {
			st.dm = dataModelFor(folded, lang, true)
		}
	case CompTestimonial:
		if len(st.doc.Testimonials) == 0 {
			st.doc.Testimonials = testimonialsFor(st.doc)
		}
	}
	st.doc.Sections = append(st.doc.Sections, e.Target)
	r.did("added %s to the home page", "在首页添加了%s", name)
}

func applySpacing(st *site, e Edit, r *report) {
	sp := st.tokens.Spacing
	unit := max(1, sp.Unit)
	grid := func(v float64) int { return max(unit, int(math.Round(v/float64(unit)))*unit) }
	before := sp.Section
	switch {
	case pxRE.MatchString(e.Text):
		n, _ := strconv.Atoi(pxRE.FindStringSubmatch(e.Text)[1])
		sp.Section = n
	case e.Value == "more":
		sp.Section, sp.Gap = grid(float64(sp.Section)*1.25), grid(float64(sp.Gap)*1.25)
	default:
		sp.Section, sp.Gap = grid(float64(sp.Section)*0.75), grid(float64(sp.Gap)*0.75)
	}
	st.tokens.Spacing = sp
	r.did("set section padding %dpx → %dpx", "栏目内边距 %dpx → %dpx", before, sp.Section)
}

func isColourRole(r string) bool {
	return slices.Contains([]string{TokPrimary, TokSecondary, TokAccent, TokSurface, TokText}, r)
}

func tokenOf(p Palette, tok string) string {
	switch tok {
	case TokPrimary:
		return p.Primary
	case TokSecondary:
		return p.Secondary
	case TokAccent:
		return p.Accent
	case TokSurface:
		return p.Surface
	case TokText:
		return p.Text
	}
	return ""
}

func roleName(tok, lang string) string {
	if isZH(lang) {
		return zhUse(tok)
	}
	if tok == TokSurface {
		return "background"
	}
	return tok
}

func sectionName(typ, lang string) string {
	for _, c := range catalogue {
		if c.typ == typ {
			if isZH(lang) {
				return map[string]string{CompFeatureGrid: "功能介绍", CompPricing: "价格表", CompTestimonial: "用户评价",
					CompFAQ: "常见问题", CompContactForm: "表单", CompHero: "首屏", CompNav: "导航", CompFooter: "页脚"}[typ]
			}
			return strings.ToLower(c.name)
		}
	}
	return ""
}
