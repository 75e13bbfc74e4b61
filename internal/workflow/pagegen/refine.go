package pagegen

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"weft/internal/llm"
)

// Edit operations refine understands.
const (
	OpSetColour  = "set_colour"  // Target: a palette role; Value: #rrggbb
	OpDarken     = "darken"      // Target: a palette role
	OpLighten    = "lighten"     // Target: a palette role
	OpAddPage    = "add_page"    // Target: a page slug (or the unknown word)
	OpRemovePage = "remove_page" // Target: a page slug
	OpAddSection = "add_section" // Target: a component type
	OpRemoveSect = "remove_section"
	OpHeadings   = "headings" // Value: bigger, smaller
	OpTextSize   = "text_size"
	OpFont       = "font"    // Value: serif, sans
	OpSpacing    = "spacing" // Value: more, less, or a px value
	OpRadius     = "radius"  // Value: more, none
	OpTheme      = "theme"   // Value: dark, light
	OpRename     = "rename"  // Value: the new name
	OpHeadline   = "headline"
	OpNoChange   = "no_change"
)

// Edit is one change the feedback asks for. Text is the piece of feedback it came from.
type Edit struct {
	Op     string `json:"op"`
	Target string `json:"target,omitempty"`
	Value  string `json:"value,omitempty"`
	Text   string `json:"text"`
}

// RefineIn is the refine call's input: the feedback and what it may refer to.
type RefineIn struct {
	Feedback string   `json:"feedback"`
	Lang     string   `json:"lang"`
	Pages    []string `json:"pages"`
	Sections []string `json:"sections"`
	Palette  Palette  `json:"palette"`
}

// RefineOut is the feedback read as edits, and the pieces of it that are none.
type RefineOut struct {
	Edits     []Edit      `json:"edits"`
	Unapplied []Unapplied `json:"unapplied"`
}

var refineTask = llm.Task[RefineIn, RefineOut]{
	Name: "pagegen.refine",
	System: `You read a user's feedback on a generated website as edits. Answer {"edits": [{"op","target","value","text"}],
"unapplied": [{"text","reason"}]}. ops: set_colour (target primary|secondary|accent|surface|text, value #rrggbb),
darken, lighten (target a colour role), add_page, remove_page (target home|pricing|about|faq|contact), add_section,
remove_section (target a component type), headings (value bigger|smaller), text_size (bigger|smaller), font
(serif|sans), spacing (more|less|<px>), radius (more|none), theme (dark|light), rename (value), headline (value),
no_change. "text" is the part of the feedback the edit comes from. Put every part you cannot turn into an edit in
unapplied with the reason; never drop any.`,
	Offline: func(_ context.Context, in RefineIn) (RefineOut, error) {
		return parseFeedback(in.Feedback, in.Lang), nil
	},
}

var (
	quoteSpanRE = regexp.MustCompile(`["“「『'‘][^"”」』'’]{1,80}["”」』'’]`)
	clauseRE    = regexp.MustCompile(`(?i)[.;!?\n。；！？]+|,\s*(?:and\s+)?|，|\s+and\s+|\s+then\s+|\s+also\s+|然后|并且|同时|另外|还有`)
	roleRE      = regexp.MustCompile(`(?i)primary|main colou?r|brand colou?r|secondary|accent|highlight|background|backdrop|text colou?r|font colou?r|主色|主题色|品牌色|辅色|次要色|点缀色|强调色|背景|底色|文字颜色|字体颜色`)
	pageWordRE  = regexp.MustCompile(`(?i)(?:add|create|include|make|need|want)\s+(?:a|an|the|one|another)?\s*([a-z&/-]+(?:\s+[a-z&/-]+)?)\s+page|(?:加|增加|添加|新增|加上|需要|做)(?:一个|一页)?([\p{Han}A-Za-z]{1,6}?)(?:页面|页)`)
	dropPageRE  = regexp.MustCompile(`(?i)(?:remove|delete|drop|get rid of|no)\s+(?:the\s+)?([a-z&/-]+(?:\s+[a-z&/-]+)?)\s+page|(?:删除|去掉|移除|删掉|不要)(?:了)?([\p{Han}A-Za-z]{1,6}?)(?:页面|页)`)
	dropSectRE  = regexp.MustCompile(`(?i)(?:remove|delete|drop|hide|get rid of|no more|without|no)\s+(?:the\s+|all\s+)?(testimonials?|reviews?|quotes|faqs?|questions|features?|feature grid|pricing table|plans|contact forms?|forms?)|(?:删除|去掉|移除|删掉|不要|隐藏)(?:了)?(?:用户|客户)?(评价|推荐语|常见问题|问答|功能介绍|功能|价格表|套餐|表单)`)
	addSectRE   = regexp.MustCompile(`(?i)(?:add|include|show|put)\s+(?:some\s+|a\s+|an\s+|the\s+)?(testimonials?|reviews?|quotes|faqs?|faq section|questions|pricing table|pricing section|plans|features?|feature grid|contact form)|(?:加|增加|添加|加上|显示)(?:一些|一个|上)?(?:用户|客户)?(评价|推荐语|常见问题|问答|价格表|套餐|功能介绍|表单)`)
	renameRE    = regexp.MustCompile(`(?i)(?:rename (?:it |the (?:site|product|brand|company) )?to|call it|name it)\s+(.+)|(?:名字|名称|品牌名|品牌)(?:改成|改为|换成|叫)(.+)`)
	headlineRE  = regexp.MustCompile(`(?i)(?:change|set|make) the (?:headline|main heading|hero heading|hero title|title) (?:to|say|read)\s+(.+)|(?:大标题|主标题|首屏标题|标题)(?:改成|改为|换成)(.+)`)
	noChangeRE  = regexp.MustCompile(`(?i)^(?:no changes?(?: needed)?|nothing(?: to change)?|looks (?:good|great|fine)|lgtm|ship it|all good|perfect|keep it(?: as it is)?|it'?s fine|fine|ok(?:ay)?|good|不用改|无需修改|没有修改|不需要修改|可以了|很好|没问题|就这样|不改|挺好)\W*$`)
)

// parseFeedback reads feedback as edits, clause by clause, deterministically. A clause
// that names nothing refine can change is listed back as unapplied, never dropped.
func parseFeedback(feedback, lang string) RefineOut {
	out := RefineOut{Edits: []Edit{}, Unapplied: []Unapplied{}}
	for _, cl := range clauses(feedback) {
		e, ok := parseClause(cl, lang)
		if !ok {
			out.Unapplied = append(out.Unapplied, Unapplied{Text: cl, Reason: pick(lang,
				"not understood: refine changes colours (\"use green\", \"darker primary colour\"), pages (\"add a pricing page\"), sections (\"remove testimonials\"), headings, fonts, spacing, corners, dark mode, the name and the headline",
				"无法理解：可以修改颜色（“用绿色”“主色深一点”）、页面（“加一个价格页”）、栏目（“删除用户评价”）、标题大小、字体、间距、圆角、深色模式、名称和标题文字")})
			continue
		}
		out.Edits = append(out.Edits, e...)
	}
	return out
}

// clauses splits feedback at sentence ends, commas and "and"/"然后", keeping quoted text
// whole.
func clauses(feedback string) []string {
	var quoted []string
	masked := quoteSpanRE.ReplaceAllStringFunc(feedback, func(q string) string {
		quoted = append(quoted, q)
		return fmt.Sprintf("\x00%d\x00", len(quoted)-1)
	})
	var out []string
	for _, part := range clauseRE.Split(masked, -1) {
		part = strings.TrimSpace(part)
		for i, q := range quoted {
			part = strings.ReplaceAll(part, fmt.Sprintf("\x00%d\x00", i), q)
		}
		if part != "" {
			out = append(out, part)
		}
	}
	return out
}

func unquote(s string) string {
	s = strings.TrimSpace(s)
	return strings.TrimSpace(strings.Trim(s, "\"“”「」『』'‘’."))
}

// parseClause reads one clause. Matchers run from the most specific to the least.
func parseClause(cl, lang string) ([]Edit, bool) {
	f := foldText(cl)
	e := func(op, target, value string) []Edit { return []Edit{{Op: op, Target: target, Value: value, Text: cl}} }
	switch {
	case noChangeRE.MatchString(strings.TrimSpace(f)):
		return e(OpNoChange, "", ""), true
	case renameRE.MatchString(cl):
		m := renameRE.FindStringSubmatch(cl)
		return e(OpRename, "", unquote(m[1]+m[2])), true
	case headlineRE.MatchString(cl) && !mentions(f, `bigger|larger|smaller|大一点|小一点|更大|更小|大些|小些`):
		m := headlineRE.FindStringSubmatch(cl)
		return e(OpHeadline, "", unquote(m[1]+m[2])), true
	case pageWordRE.MatchString(f):
		m := pageWordRE.FindStringSubmatch(f)
		return e(OpAddPage, pageSlugOf(m[1]+m[2]), ""), true
	case dropPageRE.MatchString(f):
		m := dropPageRE.FindStringSubmatch(f)
		return e(OpRemovePage, pageSlugOf(m[1]+m[2]), ""), true
	case dropSectRE.MatchString(f):
		m := dropSectRE.FindStringSubmatch(f)
		return e(OpRemoveSect, sectionOf(m[1]+m[2]), ""), true
	case addSectRE.MatchString(f):
		m := addSectRE.FindStringSubmatch(f)
		return e(OpAddSection, sectionOf(m[1]+m[2]), ""), true
	case mentions(f, `dark (?:mode|theme)|make it dark|深色模式|暗色|夜间模式|深色主题`):
		return e(OpTheme, "", "dark"), true
	case mentions(f, `light (?:mode|theme)|浅色模式|亮色模式|浅色主题`):
		return e(OpTheme, "", "light"), true
	}
	if ms := colourMentions(cl); len(ms) > 0 {
		var out []Edit
		for _, m := range ms {
			role := m.role
			if role == "" {
				role = roleIn(f)
			}
			out = append(out, Edit{Op: OpSetColour, Target: role, Value: m.hex, Text: cl})
		}
		return out, true
	}
	bigger := mentions(f, `bigger|larger|huge|more prominent|increase|大一点|大一些|更大|加大|放大|大些`)
	smaller := mentions(f, `smaller|tiny|less prominent|decrease|小一点|小一些|更小|缩小|小些`)
	switch {
	case mentions(f, `headings?|titles?|headlines?|标题`) && (bigger || smaller):
		return e(OpHeadings, "", sizeWord(bigger)), true
	case mentions(f, `text|font size|body|字体|文字|字号|字`) && (bigger || smaller) && !mentions(f, `colou?r|颜色`):
		return e(OpTextSize, "", sizeWord(bigger)), true
	case mentions(f, `sans-serif|sans serif|无衬线`):
		return e(OpFont, "", "sans"), true
	case mentions(f, `serif|衬线`):
		return e(OpFont, "", "serif"), true
	case mentions(f, `darker|deeper|darken|richer|深一点|更深|加深|调暗|暗一点|深一些|深些`):
		return e(OpDarken, roleIn(f), ""), true
	case mentions(f, `lighter|brighter|lighten|paler|浅一点|更浅|调浅|调亮|亮一点|浅一些|淡一点|浅些`):
		return e(OpLighten, roleIn(f), ""), true
	case mentions(f, `more (?:white ?space|spacing|space|breathing room|padding)|airier|more spacious|less cramped|更宽松|留白多|间距大|间距更大|宽松一点`):
		return e(OpSpacing, "", "more"), true
	case mentions(f, `less (?:white ?space|spacing|space|padding)|tighter|more compact|denser|紧凑|间距小|间距更小`):
		return e(OpSpacing, "", "less"), true
	case mentions(f, `square corners|sharp corners|no rounded corners|less rounded|直角|方角|不要圆角`):
		return e(OpRadius, "", "none"), true
	case mentions(f, `round\w* corners|more rounded|softer corners|圆角`):
		return e(OpRadius, "", "more"), true
	}
	return nil, false
}

func sizeWord(bigger bool) string {
	if bigger {
		return "bigger"
	}
	return "smaller"
}

// roleIn is the colour role a clause names, primary when it names none.
func roleIn(f string) string {
	m := roleRE.FindString(f)
	switch {
	case m == "":
		return TokPrimary
	case mentions(m, `secondary|辅色|次要色`):
		return TokSecondary
	case mentions(m, `accent|highlight|点缀色|强调色`):
		return TokAccent
	case mentions(m, `background|backdrop|背景|底色`):
		return TokSurface
	case mentions(m, `text colou?r|font colou?r|文字颜色|字体颜色`):
		return TokText
	}
	return TokPrimary
}

// pageSlugOf maps a page word to its slug ("pricing", "价格" → pricing); an unknown word
// comes back as itself, for the unapplied list.
func pageSlugOf(word string) string {
	w := strings.TrimSpace(word)
	for _, slug := range pageOrder {
		pat := pageWords[slug]
		if slug == PageHome {
			pat = `home|landing|首|主`
		}
		if mentions(w, pat) {
			return slug
		}
	}
	return w
}

// sectionOf maps a section word to its component type.
func sectionOf(word string) string {
	w := strings.TrimSpace(word)
	switch {
	case mentions(w, `testimonials?|reviews?|quotes|评价|推荐语`):
		return CompTestimonial
	case mentions(w, `faqs?|faq section|questions|常见问题|问答`):
		return CompFAQ
	case mentions(w, `pricing table|pricing section|plans|价格表|套餐`):
		return CompPricing
	case mentions(w, `features?|feature grid|功能介绍|功能`):
		return CompFeatureGrid
	case mentions(w, `contact forms?|forms?|表单`):
		return CompContactForm
	}
	return w
}
