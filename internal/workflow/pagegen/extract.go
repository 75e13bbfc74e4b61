package pagegen

import (
	"regexp"
	"strings"
	"unicode"
)

// What the brief reads from a request's words. Each extractor tries the patterns people
// use, in English and Chinese, and returns "" (or nil) when the request does not say.

var (
	quotedRE   = regexp.MustCompile(`[“"「『《]([^”"」』》\n]{2,40})[”"」』》]`)
	calledRE   = regexp.MustCompile(`\b(?:[Cc]alled|[Nn]amed|[Bb]rand(?:ed)? as)\s+([A-Za-z0-9][\w'&.-]*(?:\s+[A-Z0-9][\w'&.-]*){0,3})`)
	forNameRE  = regexp.MustCompile(`\b[Ff]or\s+([A-Z][\w'&-]*(?:\s+[A-Z][\w'&-]*){0,2})`)
	zhNameRE   = regexp.MustCompile(`(?:名为|名叫|叫做|品牌是|品牌为|名字是|叫)\s*([\p{Han}A-Za-z0-9]{1,12})`)
	latinRE    = regexp.MustCompile(`[A-Z][A-Za-z0-9]+(?:\s+[A-Z][A-Za-z0-9]+)?`)
	headNouns  = `service|app|platform|shop|store|company|studio|agency|tool|product|brand|subscription|startup|restaurant|café|cafe|clinic|school|course|marketplace|community|club|gym|bakery|business|practice|firm|consultancy|salon|hotel|venue|newsletter|podcast|library|api|saas|software|game|event|conference|festival|roastery|kitchen|workshop|camp|tour|boutique|florist`
	topicRE    = regexp.MustCompile(`(?i)\b(?:a|an)\s+((?:[a-z0-9'-]+\s+){0,4}(?:` + headNouns + `))\b`)
	zhTopicRE  = regexp.MustCompile(`(?:一个|一家|一款|一间|一所|个)([\p{Han}A-Za-z0-9]{2,16}?)(?:的)?(?:网站|落地页|官网|主页|页面|站点)`)
	zhTopicRE3 = regexp.MustCompile(`[”」』》"]\s*([\p{Han}]{1,8}?)(?:做|制作|设计|建|打造|搭建)`)
	zhTopicRE2 = regexp.MustCompile(`(?:一个|一家|一款|一间|一所)([\p{Han}]{2,10}?)(?:[，,。]|$)`)
	audienceRE = regexp.MustCompile(`(?i)\b(?:for|aimed at|targeting|designed for|built for|serving)\s+((?:[a-z'-]+\s+){0,3}?(?:` + audPlural + `))\b`)
	zhAudRE    = regexp.MustCompile(`(?:面向|针对|专为|适合|服务于|给)([\p{Han}]{2,10}?)(?:的|人群|用户|使用|提供|打造|设计|[，,。]|$)`)
	audPlural  = `people|professionals|teams|developers|students|parents|families|businesses|owners|founders|freelancers|creators|designers|engineers|homeowners|travell?ers|runners|readers|kids|children|seniors|customers|companies|startups|shops|restaurants|users|lovers|fans|beginners|clinics|schools|musicians|artists|writers|gamers|nurses|doctors|lawyers|marketers|agencies|retailers|hobbyists|drinkers|cooks|makers|gardeners|athletes|patients|couples|clients`
	helpsRE    = regexp.MustCompile(`(?i)\b(?:helps?|serves?|lets?|supports?)\s+((?:[a-z'-]+\s+){0,2}?(?:` + audPlural + `))\b`)
	valueRE    = regexp.MustCompile(`(?i)\b(?:that|which|to|so it|it)\s+((?:helps?|lets?|makes?|saves?|brings?|delivers?|gives?|turns?|keeps?|connects?|finds?|plans?|tracks?|ships?|sends?|roasts?)\s+[^.;!?\n]{3,120})`)
	zhValueRE  = regexp.MustCompile(`(?:帮助|帮|让|使)([^。；;，,\n]{2,60})`)
	featureRE  = regexp.MustCompile(`(?i)\b(?:features?|including|includes?|offers?|with|highlights?)\s*:?\s+([^.;!?\n]+)`)
	zhFeatRE   = regexp.MustCompile(`(?:功能|特色|亮点|包括|包含|支持|提供|有)[:：]?([^。；;！!\n]+)`)
	listSplit  = regexp.MustCompile(`(?i)\s*(?:,|;|\band\b|&|/|、|，|以及|和|及|与)\s*`)
	articleRE  = regexp.MustCompile(`(?i)^(?:(?:features?|including|includes?|with)\s*:?\s*)?(?:a|an|the|our|some)?\s*`)
	notFeature = regexp.MustCompile(`(?i)compan|phone|e-?mail|name|message|field|booking|pric|plan|contact|form|about|faq|question|testimonial|review|page|section|logo|colou?r|font|heading|theme|dark|light|site|website|价格|定价|套餐|联系|表单|关于|常见问题|评价|页面|颜色|色|字体|主题|网站`)
)

var nameStop = map[string]bool{"A": true, "An": true, "The": true, "Our": true, "My": true, "Me": true, "Us": true, "It": true,
	"Make": true, "Use": true, "Include": true, "Add": true, "Build": true, "Create": true, "Please": true, "I": true, "We": true,
	"FAQ": true, "Pricing": true, "About": true, "Contact": true, "Home": true}

// extractName finds the product's name: a quoted name, "called X", "for X" with X
// capitalised, "名为X", or a capitalised Latin word in Chinese text.
func extractName(req, lang string) string {
	if m := quotedRE.FindStringSubmatch(req); m != nil {
		return strings.TrimSpace(m[1])
	}
	if m := calledRE.FindStringSubmatch(req); m != nil {
		return strings.TrimRight(m[1], ".,")
	}
	if isZH(lang) {
		if m := zhNameRE.FindStringSubmatch(req); m != nil {
			n := m[1]
			if i := strings.Index(n, "的"); i > 0 {
				n = n[:i]
			}
			return n
		}
		if m := latinRE.FindString(req); m != "" {
			return m
		}
		return ""
	}
	for _, m := range forNameRE.FindAllStringSubmatch(req, -1) {
		words := strings.Fields(m[1])
		for len(words) > 0 && nameStop[words[0]] {
			words = words[1:]
		}
		if len(words) > 0 {
			return strings.Join(words, " ")
		}
	}
	return ""
}

// extractTopic finds what the product is: "a coffee subscription service", "一家咖啡店".
func extractTopic(req, lang string) string {
	if isZH(lang) {
		for _, re := range []*regexp.Regexp{zhTopicRE, zhTopicRE3, zhTopicRE2} {
			if m := re.FindStringSubmatch(req); m != nil {
				t := strings.TrimSuffix(strings.TrimPrefix(m[1], "个"), "的")
				if !mentions(t, `网站|页面|落地页|官网|主页|站点`) {
					return t
				}
			}
		}
		return ""
	}
	for _, m := range topicRE.FindAllStringSubmatch(req, -1) {
		t := strings.ToLower(strings.TrimSpace(m[1]))
		if !mentions(t, `landing|page|site|website|homepage`) {
			return t
		}
	}
	return ""
}

// extractAudience finds who it is for: "busy professionals", "年轻父母".
func extractAudience(req, lang string) string {
	if isZH(lang) {
		if m := zhAudRE.FindStringSubmatch(req); m != nil {
			return m[1]
		}
		return ""
	}
	for _, re := range []*regexp.Regexp{audienceRE, helpsRE} {
		if m := re.FindStringSubmatch(req); m != nil {
			return strings.ToLower(strings.TrimSpace(m[1]))
		}
	}
	return ""
}

// extractValue finds what it does for them: "helps teams ship faster" → the name plus
// the clause in the third person.
func extractValue(req, lang, name string) string {
	if isZH(lang) {
		if m := zhValueRE.FindStringSubmatch(req); m != nil {
			return sentence(name+"帮助"+strings.TrimPrefix(m[1], "您"), lang)
		}
		return ""
	}
	m := valueRE.FindStringSubmatch(req)
	if m == nil {
		return ""
	}
	clause := strings.TrimSpace(m[1])
	verb, rest, _ := strings.Cut(clause, " ")
	if !strings.HasSuffix(strings.ToLower(verb), "s") {
		verb += "s"
	}
	return sentence(name+" "+strings.ToLower(verb)+" "+rest, lang)
}

// extractFeatures finds a list of features: "features: A, B and C", "包括A、B和C".
func extractFeatures(req, lang string) []string {
	re := featureRE
	if isZH(lang) {
		re = zhFeatRE
	}
	for _, m := range re.FindAllStringSubmatch(req, -1) {
		var items []string
		for _, it := range listSplit.Split(m[1], -1) {
			it = strings.TrimSpace(articleRE.ReplaceAllString(strings.TrimSpace(it), ""))
			if it == "" || notFeature.MatchString(it) || len(strings.Fields(it)) > 6 || len([]rune(it)) > 40 {
				continue
			}
			items = append(items, it)
		}
		if len(items) >= 2 {
			if len(items) > 6 {
				items = items[:6]
			}
			return items
		}
	}
	return nil
}

// capitalise upper-cases the first letter.
func capitalise(s string) string {
	rs := []rune(s)
	if len(rs) > 0 {
		rs[0] = unicode.ToUpper(rs[0])
	}
	return string(rs)
}
