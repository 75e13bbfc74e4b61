package pagegen

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"strconv"
	"strings"

	"weft/internal/llm"
)

// BriefIn is the brief's model call input.
type BriefIn struct {
	Request string `json:"request"`
	Lang    string `json:"lang"`
}

// BriefOut is the brief: the product doc, the pages and the forms' data model.
type BriefOut struct {
	ProductDoc ProductDoc `json:"product_doc"`
	Pages      []Page     `json:"pages"`
	DataModel  DataModel  `json:"data_model"`
}

var briefTask = llm.Task[BriefIn, BriefOut]{
	Name: "pagegen.brief",
	System: `You write the brief for a small marketing website from a user's request. Answer one JSON object:
{"product_doc": {"request", "lang", "name", "topic", "audience", "value_proposition", "features": [{"title","body"}],
  "sections": [component types of the home page], "plans": [{"name","price","period","features":[],"highlight"}],
  "faq": [{"q","a"}], "testimonials": [{"text","author","role"}]},
 "pages": [{"slug": "home|pricing|about|contact|faq", "title", "file", "purpose"}],
 "data_model": {"entities": [{"name","title","fields":[{"name","label","type","required","autocomplete"}]}]}}.
Write in the request's language (lang "en" or "zh-CN"). Include only pages the request implies; home always.`,
	Offline: func(_ context.Context, in BriefIn) (BriefOut, error) { return offlineBrief(in), nil },
	Check: func(in BriefIn, out BriefOut) error {
		if strings.TrimSpace(out.ProductDoc.Name) == "" || len(out.Pages) == 0 || out.Pages[0].Slug != PageHome {
			return errors.New("a brief needs a product name and pages starting with home")
		}
		for _, p := range out.Pages {
			if pageMeta(p.Slug, in.Lang).Slug == "" {
				return fmt.Errorf("unknown page %q", p.Slug)
			}
		}
		return nil
	},
}

// Page slugs.
const (
	PageHome    = "home"
	PagePricing = "pricing"
	PageAbout   = "about"
	PageContact = "contact"
	PageFAQ     = "faq"
)

// pageOrder is the order pages appear in (and in the navigation).
var pageOrder = []string{PageHome, PagePricing, PageAbout, PageFAQ, PageContact}

// pageMeta is a page's title, file and purpose in a language; a zero Page for an
// unknown slug.
func pageMeta(slug, lang string) Page {
	m := map[string][3]string{
		PageHome:    {"Home", "首页", "Say what the product is, for whom, and why"},
		PagePricing: {"Pricing", "价格", "Compare plans and choose one"},
		PageAbout:   {"About", "关于我们", "Tell the story and the people behind it"},
		PageContact: {"Contact", "联系我们", "Let visitors get in touch"},
		PageFAQ:     {"FAQ", "常见问题", "Answer common questions"},
	}
	v, ok := m[slug]
	if !ok {
		return Page{}
	}
	file := slug + ".html"
	if slug == PageHome {
		file = "index.html"
	}
	return Page{Slug: slug, Title: pick(lang, v[0], v[1]), File: file, Purpose: v[2]}
}

// pageWords are the words that imply each page.
var pageWords = map[string]string{
	PagePricing: `pric\w*|plans?|tiers?|subscriptions?|cost|packages?|价格|定价|套餐|订阅|收费|价目`,
	PageAbout:   `about|our story|team|mission|history|founders?|关于|团队|故事|使命|品牌故事`,
	PageContact: `contact|get in touch|email us|forms?|book\w*|reservations?|appointments?|enquir\w*|inquir\w*|联系|表单|预约|预订|咨询|订位|订座|留言`,
	PageFAQ:     `faqs?|questions|q&a|常见问题|问答|疑问`,
}

// pagesFor lists the pages the request implies, home first.
func pagesFor(folded, lang string) []Page {
	pages := []Page{pageMeta(PageHome, lang)}
	if mentions(folded, `one-page|single-page|one page|single page|单页`) {
		return pages
	}
	for _, slug := range pageOrder[1:] {
		if mentions(folded, pageWords[slug]) {
			pages = append(pages, pageMeta(slug, lang))
		}
	}
	return pages
}

// homeSections are the home page's sections between navigation and footer.
func homeSections(folded string, single bool) []string {
	s := []string{CompHero, CompFeatureGrid}
	if !mentions(folded, `no testimonials|without testimonials|不要评价|不要用户评价`) {
		s = append(s, CompTestimonial)
	}
	if single {
		if mentions(folded, pageWords[PagePricing]) {
			s = append(s, CompPricing)
		}
		if mentions(folded, pageWords[PageFAQ]) {
			s = append(s, CompFAQ)
		}
		if mentions(folded, pageWords[PageContact]) {
			s = append(s, CompContactForm)
		}
	}
	return s
}

func offlineBrief(in BriefIn) BriefOut {
	req, lang := in.Request, in.Lang
	if lang == "" {
		lang = detectLang(req)
	}
	folded := foldText(req)
	doc := ProductDoc{Request: req, Lang: lang}
	doc.Topic = extractTopic(req, lang)
	doc.Name = extractName(req, lang)
	if doc.Name == "" {
		doc.Name = nameFromTopic(doc.Topic, lang)
	}
	if doc.Topic == "" {
		doc.Topic = pick(lang, "service", "服务")
	}
	doc.Audience = extractAudience(req, lang)
	if doc.Audience == "" {
		doc.Audience = pick(lang, "people looking for a better "+doc.Topic, "顾客")
	}
	doc.ValueProposition = extractValue(req, lang, doc.Name)
	if doc.ValueProposition == "" {
		doc.ValueProposition = pick(lang,
			fmt.Sprintf("%s is the %s made for %s: simple to start, easy to love.", doc.Name, doc.Topic, doc.Audience),
			fmt.Sprintf("%s为%s提供省心的%s。", doc.Name, doc.Audience, doc.Topic))
	}
	doc.Features = featuresFor(extractFeatures(req, lang), doc)
	pages := pagesFor(folded, lang)
	doc.Sections = homeSections(folded, len(pages) == 1)
	if hasPage(pages, PagePricing) || containsStr(doc.Sections, CompPricing) {
		doc.Plans = plansFor(req, folded, doc)
	}
	dm := dataModelFor(folded, lang, hasPage(pages, PageContact) || containsStr(doc.Sections, CompContactForm))
	doc.FAQ = faqFor(doc, pages, dm)
	doc.Testimonials = testimonialsFor(doc)
	return BriefOut{ProductDoc: doc, Pages: pages, DataModel: dm}
}

func hasPage(pages []Page, slug string) bool {
	for _, p := range pages {
		if p.Slug == slug {
			return true
		}
	}
	return false
}

func containsStr(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// nameFromTopic names a product the request left unnamed after what it is.
func nameFromTopic(topic, lang string) string {
	if topic == "" {
		return pick(lang, "Our Studio", "我们的品牌")
	}
	if isZH(lang) {
		return topic
	}
	words := strings.Fields(topic)
	if len(words) > 3 {
		words = words[len(words)-3:]
	}
	return titleCase(strings.Join(words, " "))
}

// featuresFor turns the features the request listed into cards, topped up to three
// with ones drawn from the doc.
func featuresFor(items []string, doc ProductDoc) []Feature {
	lang := doc.Lang
	var out []Feature
	for i, it := range items {
		out = append(out, Feature{Title: capitalise(it), Body: featureBody(it, doc, i)})
	}
	extra := [][2]string{
		{pick(lang, "Made for "+doc.Audience, "专为"+doc.Audience+"设计"), pick(lang, "Every detail of "+doc.Name+" starts from what "+doc.Audience+" need day to day.", doc.Name+"的每个细节都从"+doc.Audience+"的日常需求出发。")},
		{pick(lang, "Simple to start", "上手简单"), pick(lang, "Set up in minutes, with no training and nothing to install.", "几分钟即可开始，无需培训，也无需安装。")},
		{pick(lang, "People who answer", "真人支持"), pick(lang, "Questions go to a real person who knows "+doc.Name+" inside out.", "有问题时，由熟悉"+doc.Name+"的真人为您解答。")},
	}
	for i := 0; len(out) < 3 && i < len(extra); i++ {
		out = append(out, Feature{Title: extra[i][0], Body: extra[i][1]})
	}
	return out
}

func featureBody(item string, doc ProductDoc, i int) string {
	if isZH(doc.Lang) {
		forms := []string{"%s让%s省时省心。", "有了%s，%s可以专注于真正重要的事。", "%s开箱即用，%s随时可用。"}
		return fmt.Sprintf(forms[i%len(forms)], item, doc.Audience)
	}
	forms := []string{"%s, built so %s spend less time on setup and more on what matters.",
		"%s that work the way %s already do.", "%s included from day one, with nothing extra for %s to configure."}
	return fmt.Sprintf(forms[i%len(forms)], capitalise(item), doc.Audience)
}

var (
	planNameRE = regexp.MustCompile(`(?i)\b(free|basic|starter|standard|plus|pro|premium|business|team|enterprise)\b`)
	zhPlanRE   = regexp.MustCompile(`(免费|基础|入门|标准|专业|高级|团队|企业)版`)
	priceRE    = regexp.MustCompile(`([$€£¥￥])\s?(\d+(?:[.,]\d{1,2})?)|(\d+(?:\.\d+)?)\s*(元|块|美元|dollars?|usd|euros?)`)
)

// plansFor builds pricing plans from the plan names and prices the request gives, or
// three tiers when it gives none.
func plansFor(req, folded string, doc ProductDoc) []Plan {
	lang := doc.Lang
	var names []string
	seen := map[string]bool{}
	if isZH(lang) {
		for _, m := range zhPlanRE.FindAllStringSubmatch(req, -1) {
			if !seen[m[0]] {
				names, seen[m[0]] = append(names, m[0]), true
			}
		}
	} else {
		for _, m := range planNameRE.FindAllStringSubmatch(folded, -1) {
			if !seen[m[1]] {
				names, seen[m[1]] = append(names, capitalise(m[1])), true
			}
		}
	}
	if len(names) < 2 {
		names = []string{pick(lang, "Starter", "入门版"), pick(lang, "Pro", "专业版"), pick(lang, "Team", "团队版")}
	}
	var prices []string
	for _, m := range priceRE.FindAllStringSubmatch(req, -1) {
		if m[1] != "" {
			prices = append(prices, m[1]+m[2])
		} else if strings.Contains("元块", m[4]) || isZH(lang) {
			prices = append(prices, "¥"+m[3])
		} else {
			prices = append(prices, "$"+m[3])
		}
	}
	period := pick(lang, "/month", "/月")
	if mentions(folded, `per year|yearly|annual\w*|a year|每年|年付|包年`) {
		period = pick(lang, "/year", "/年")
	}
	base := []int{9, 29, 79}
	if isZH(lang) {
		base = []int{29, 99, 299}
	}
	plans := make([]Plan, len(names))
	for i, n := range names {
		p := Plan{Name: n, Period: period}
		switch {
		case strings.EqualFold(n, "free") || strings.HasPrefix(n, "免费"):
			p.Price, p.Period = pick(lang, "Free", "免费"), ""
		case i < len(prices):
			p.Price = prices[i]
		default:
			p.Price = pick(lang, "$", "¥") + strconv.Itoa(base[min(i, 2)]*(1+i/3))
		}
		for j := 0; j <= min(i+1, len(doc.Features)-1); j++ {
			p.Features = append(p.Features, doc.Features[j].Title)
		}
		seats := []int{1, 5, 25}[min(i, 2)]
		p.Features = append(p.Features, pick(lang, map[bool]string{true: "1 seat", false: fmt.Sprintf("%d seats", seats)}[seats == 1], fmt.Sprintf("%d 个席位", seats)))
		plans[i] = p
	}
	plans[min(1, len(plans)-1)].Highlight = true
	return plans
}

// dataModelFor lists the forms the site needs: a contact message whenever there is a
// contact page, a booking when the request books things, a newsletter signup when it
// mentions one. Fields follow the request's words (phone, company, guests).
func dataModelFor(folded, lang string, contact bool) DataModel {
	var dm DataModel
	f := func(name, en, zh, typ string, req bool, ac string) FormField {
		return FormField{Name: name, Label: pick(lang, en, zh), Type: typ, Required: req, Autocomplete: ac}
	}
	person := []FormField{f("name", "Your name", "您的姓名", "text", true, "name"), f("email", "Email address", "电子邮箱", "email", true, "email")}
	if mentions(folded, `phone|call|电话|手机`) {
		person = append(person, f("phone", "Phone number", "电话号码", "tel", false, "tel"))
	}
	if contact {
		fields := append([]FormField{}, person...)
		if mentions(folded, `compan\w*|business\w*|b2b|公司|企业`) {
			fields = append(fields, f("company", "Company", "公司名称", "text", false, "organization"))
		}
		fields = append(fields, f("message", "How can we help?", "您想咨询什么？", "textarea", true, ""))
		dm.Entities = append(dm.Entities, Entity{Name: "contact_message", Title: pick(lang, "Send us a message", "给我们留言"), Fields: fields})
	}
	if mentions(folded, `book\w*|reservations?|reserve|appointments?|预约|预订|订位|订座`) {
		fields := append([]FormField{}, person...)
		fields = append(fields, f("date", "Date", "日期", "date", true, ""), f("time", "Time", "时间", "time", true, ""))
		if mentions(folded, `restaurant|table|dinner|guests?|party|餐厅|订座|订位|人数`) {
			fields = append(fields, f("guests", "Number of guests", "人数", "number", true, ""))
		}
		dm.Entities = append(dm.Entities, Entity{Name: "booking", Title: pick(lang, "Book a time", "在线预约"), Fields: fields})
	}
	if mentions(folded, `newsletter|mailing list|subscribe for updates|email updates|订阅|邮件列表|资讯`) {
		dm.Entities = append(dm.Entities, Entity{Name: "newsletter_signup", Title: pick(lang, "Get the newsletter", "订阅我们的资讯"),
			Fields: []FormField{f("email", "Email address", "电子邮箱", "email", true, "email")}})
	}
	return dm
}

// faqFor answers the questions a visitor asks, from the doc itself.
func faqFor(doc ProductDoc, pages []Page, dm DataModel) []QA {
	lang := doc.Lang
	out := []QA{
		{pick(lang, "What is "+doc.Name+"?", doc.Name+"是什么？"), doc.ValueProposition},
		{pick(lang, "Who is it for?", "适合哪些人使用？"), pick(lang, sentence(doc.Name+" is made for "+doc.Audience, lang), sentence(doc.Name+"专为"+doc.Audience+"打造", lang))},
	}
	if len(doc.Plans) > 0 {
		p := doc.Plans[0]
		out = append(out, QA{pick(lang, "How much does it cost?", "价格是多少？"),
			pick(lang, fmt.Sprintf("Plans start at %s%s. You can change plan at any time.", p.Price, p.Period),
				fmt.Sprintf("套餐起价%s%s，可随时更换套餐。", p.Price, p.Period))})
	}
	if len(dm.Entities) > 0 {
		out = append(out, QA{pick(lang, "How do I get in touch?", "如何联系你们？"),
			pick(lang, "Use the form on our contact page; we answer within one working day.", "请使用联系页面的表单，我们会在一个工作日内回复。")})
	}
	return out
}

// testimonialsFor writes three quotes about the doc's features, by people drawn
// deterministically from the product's name.
func testimonialsFor(doc ProductDoc) []Quote {
	en := []string{"Alex Chen", "Maria Santos", "Sam Patel", "Jordan Lee", "Priya Nair", "Tom Becker"}
	zh := []string{"王女士", "李先生", "陈女士", "张先生", "刘女士", "赵先生"}
	h := fnv.New32a()
	h.Write([]byte(doc.Name))
	start := int(h.Sum32() % uint32(len(en)))
	var out []Quote
	for i := 0; i < 3 && i < len(doc.Features); i++ {
		f := doc.Features[i]
		author := en[(start+i)%len(en)]
		text := fmt.Sprintf("%s changed how we work. %s is the part we would not give up.", doc.Name, f.Title)
		role := []string{"Customer", "Early adopter", "Long-time customer"}[i]
		if isZH(doc.Lang) {
			author = zh[(start+i)%len(zh)]
			text = fmt.Sprintf("用了%s之后，我们的工作方式完全不同了。最离不开的是「%s」。", doc.Name, f.Title)
			role = []string{"用户", "早期用户", "老用户"}[i]
		}
		out = append(out, Quote{Text: text, Author: author, Role: role})
	}
	return out
}
