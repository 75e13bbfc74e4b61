package contractreview

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text helpers the rules and the drafting share: sentences, parties,
// amounts and facts.

// sentence is a span of clause text ending at a full stop.
type sentence struct{ start, end int }

// sentences splits text at ". ", ".\n", "。", "！", "？" and blank lines; a
// full stop between digits (12.5, 14.2) ends nothing.
func sentences(text string) []sentence {
	var out []sentence
	start := skipSpace(text, 0)
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		end := -1
		switch {
		case r == '。' || r == '！' || r == '？':
			end = i + n
		case r == '.':
			next, _ := utf8.DecodeRuneInString(text[i+n:])
			if i+n >= len(text) || unicode.IsSpace(next) {
				end = i + n
			}
		case r == '\n' && strings.HasPrefix(strings.TrimLeft(text[i+1:], " \t"), "\n"):
			end = i
		}
		i += n
		if end >= 0 {
			if e := trimBack(text, start, end); e > start {
				out = append(out, sentence{start, e})
			}
			start = skipSpace(text, i)
			i = max(i, start)
		}
	}
	if e := trimBack(text, start, len(text)); e > start {
		out = append(out, sentence{start, e})
	}
	return out
}

// sentenceAt is the sentence holding offset at.
func sentenceAt(text string, at int) sentence {
	for _, s := range sentences(text) {
		if at >= s.start && at < s.end {
			return s
		}
	}
	return sentence{0, len(text)}
}

// Party roles.
const (
	roleContractor = "contractor"
	roleEmployer   = "employer"
	roleBoth       = "both"
)

var (
	reContractor = regexp.MustCompile(`(?i)\bContractor\b|\bsupplier\b|承包人|承包商|乙方`)
	reEmployer   = regexp.MustCompile(`(?i)\bEmployer\b|\bOwner\b|\bClient\b|\bPurchaser\b|发包人|业主|甲方`)
	reBothParty  = regexp.MustCompile(`(?i)\b(?:either|each|neither|both|a)\s+Part(?:y|ies)\b|任何一方|任一方|双方|各方`)
)

// partyPatterns are the words that name each role.
var partyPatterns = []struct {
	re   *regexp.Regexp
	role string
}{{reBothParty, roleBoth}, {reContractor, roleContractor}, {reEmployer, roleEmployer}}

// partyIn is the first party named in text[from:to): its role, or "" for none.
func partyIn(text string, from, to int) string {
	seg := text[from:to]
	best, role := len(seg)+1, ""
	for _, p := range partyPatterns {
		if loc := p.re.FindStringIndex(seg); loc != nil && loc[0] < best {
			best, role = loc[0], p.role
		}
	}
	return role
}

// lastPartyIn is the last party named in text[from:to): its role, or "" for none.
func lastPartyIn(text string, from, to int) string {
	seg := text[from:to]
	best, role := -1, ""
	for _, p := range partyPatterns {
		for _, loc := range p.re.FindAllStringIndex(seg, -1) {
			if loc[0] > best {
				best, role = loc[0], p.role
			}
		}
	}
	return role
}

// other is the counterparty of a role.
func other(role string) string {
	switch role {
	case roleContractor:
		return roleEmployer
	case roleEmployer:
		return roleContractor
	}
	return role
}

// roleOf resolves our_party to a role: by the word (Contractor, 承包人, …) or
// by the name the contract gives a party (a "party:" fact from 1.1).
func roleOf(ourParty string, facts []Fact) string {
	p := strings.TrimSpace(ourParty)
	switch {
	case p == "":
		return ""
	case reContractor.MatchString(p):
		return roleContractor
	case reEmployer.MatchString(p):
		return roleEmployer
	}
	for _, f := range facts {
		if role, ok := strings.CutPrefix(f.Key, FactPartyPrefix); ok && sameName(f.Value, p) {
			return role
		}
	}
	return ""
}

func sameName(a, b string) bool {
	norm := func(s string) string {
		return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }), " ")
	}
	x, y := norm(a), norm(b)
	return x != "" && y != "" && (strings.Contains(x, y) || strings.Contains(y, x))
}

// hurts reports whether a term that disadvantages victim is a risk for us:
// when it is us, both parties, or either side is unknown (then we assume the worst).
func hurts(victim, us string) bool {
	return victim == "" || us == "" || victim == roleBoth || victim == us
}

// partyRef names a role in the contract's language: "the Contractor",
// "either Party", 承包人, 任何一方.
func partyRef(role string, zh bool) string {
	switch {
	case role == roleContractor && zh:
		return "承包人"
	case role == roleEmployer && zh:
		return "发包人"
	case role == roleBoth && zh:
		return "任何一方"
	case zh:
		return "对方"
	case role == roleContractor:
		return "the Contractor"
	case role == roleEmployer:
		return "the Employer"
	case role == roleBoth:
		return "either Party"
	}
	return "the other Party"
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + s[n:]
}

// money is an amount of a currency.
type money struct {
	amount   float64
	currency string
}

var (
	reMoneyEN = regexp.MustCompile(`(?i)(USD|US\$|EUR|GBP|RMB|CNY|\$|€|£|¥)\s?(\d[\d,]*(?:\.\d+)?)(\s*(?:million|m)\b)?`)
	reMoneyCN = regexp.MustCompile(`[¥￥]?\s?(\d[\d,]*(?:\.\d+)?)\s*(万元|元)`)
)

func parseMoney(s string) (money, bool) {
	if m := reMoneyEN.FindStringSubmatch(s); m != nil {
		v, err := strconv.ParseFloat(strings.ReplaceAll(m[2], ",", ""), 64)
		if err != nil {
			return money{}, false
		}
		if strings.TrimSpace(m[3]) != "" {
			v *= 1e6
		}
		cur := strings.ToUpper(m[1])
		switch cur {
		case "US$", "$":
			cur = "USD"
		case "€":
			cur = "EUR"
		case "£":
			cur = "GBP"
		case "¥", "RMB":
			cur = "CNY"
		}
		return money{v, cur}, true
	}
	if m := reMoneyCN.FindStringSubmatch(s); m != nil {
		v, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
		if err != nil {
			return money{}, false
		}
		if m[2] == "万元" {
			v *= 1e4
		}
		return money{v, "CNY"}, true
	}
	return money{}, false
}

func (m money) String() string {
	whole := strconv.FormatInt(int64(math.Round(m.amount)), 10)
	var b strings.Builder
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return m.currency + " " + b.String()
}

var (
	rePriceEN = regexp.MustCompile(`(?i)["“]?(Contract\s+Price|Accepted\s+Contract\s+Amount|Contract\s+Sum)["”]?[^.;。]{0,60}?\b(?:means|is|shall\s+be|amounts\s+to|of)\b[^.;。\d]{0,30}?((?:USD|US\$|EUR|GBP|RMB|CNY|\$|€|£|¥)\s?\d[\d,]*(?:\.\d+)?(?:\s*million)?)`)
	rePriceCN = regexp.MustCompile(`(签约合同价|合同(?:价格|总价|价款|金额))[^。；]{0,30}?[（(]?\s*([¥￥]?\s?\d[\d,]*(?:\.\d+)?\s*(?:万元|元))`)
	rePartyEN = regexp.MustCompile(`(?i)["“](Contractor|Employer)["”]\s+means\s+([^;\n]+?)(?:\s+and\s+includes|,\s+(?:and|whose|having|a\s+company)\b|;|\.\s|\.$|\n)`)
	// A party named where the contract opens: between Acme Power Ltd (the "Employer") and …
	rePartyNamedEN = regexp.MustCompile(`\b(?:between|and)\s+([A-Z][A-Za-z0-9&.,'’ -]{1,120}?)\s*\((?:the\s+)?["“](Contractor|Employer|Supplier|Purchaser|Owner|Client)["”]\)`)
	rePartyCN      = regexp.MustCompile(`(发包人|承包人)(?:（全称）)?[：:]\s*([^\s，。；,;]+)`)
	reTermEN       = regexp.MustCompile(`["“]([A-Z][A-Za-z'’ ]{1,40})["”]\s+means\s+([^\n]+?)(?:;|\.\s|\.$|\n)`)
)

// extractFacts finds what a clause states that later clauses may use.
func extractFacts(clauseID, text string) []Fact {
	var out []Fact
	add := func(key, value string, loc []int, m money) {
		out = append(out, Fact{Key: key, Value: strings.TrimSpace(value), Amount: m.amount, Currency: m.currency,
			ClauseID: clauseID, Span: Span{loc[0], loc[1]}})
	}
	for _, re := range []*regexp.Regexp{rePriceEN, rePriceCN} {
		if m := re.FindStringSubmatchIndex(text); m != nil {
			if mon, ok := parseMoney(text[m[4]:m[5]]); ok {
				add(FactContractPrice, text[m[4]:m[5]], m[:2], mon)
			}
		}
	}
	for _, m := range rePartyEN.FindAllStringSubmatchIndex(text, -1) {
		add(FactPartyPrefix+strings.ToLower(text[m[2]:m[3]]), text[m[4]:m[5]], m[:2], money{})
	}
	for _, m := range rePartyNamedEN.FindAllStringSubmatchIndex(text, -1) {
		role := roleEmployer
		if reContractor.MatchString(text[m[4]:m[5]]) {
			role = roleContractor
		}
		add(FactPartyPrefix+role, strings.TrimRight(text[m[2]:m[3]], ", "), m[:2], money{})
	}
	for _, m := range rePartyCN.FindAllStringSubmatchIndex(text, -1) {
		role := roleEmployer
		if text[m[2]:m[3]] == "承包人" {
			role = roleContractor
		}
		add(FactPartyPrefix+role, text[m[4]:m[5]], m[:2], money{})
	}
	for _, m := range reTermEN.FindAllStringSubmatchIndex(text, -1) {
		def := text[m[4]:m[5]]
		if len(def) > 200 {
			def = def[:200]
		}
		add(FactTermPrefix+text[m[2]:m[3]], def, m[:2], money{})
	}
	return out
}

// preambleParties are the parties the contract names before its first clause
// ("发包人：上海滨江置业有限公司"), so that our party given by its name resolves
// to its role.
func preambleParties(text string, ds *DocumentStructure) []Fact {
	end := len(text)
	if ds != nil && len(ds.Clauses) > 0 {
		end = ds.Clauses[0].HeadingStart
	}
	if end <= 0 || end > len(text) {
		return nil
	}
	var out []Fact
	for _, f := range extractFacts("", text[:end]) {
		if strings.HasPrefix(f.Key, FactPartyPrefix) {
			out = append(out, f)
		}
	}
	return out
}

// factOf returns the first fact with the key.
func factOf(facts []Fact, key string) (Fact, bool) {
	for _, f := range facts {
		if f.Key == key {
			return f, true
		}
	}
	return Fact{}, false
}

// priorFacts gathers the facts of the clauses reviewed so far, in checklist order.
func priorFacts(s ReviewGraphState) []Fact {
	var out []Fact
	for _, it := range s.ReviewChecklist {
		if f, ok := s.Findings[it.ClauseID]; ok {
			out = append(out, f.Facts...)
		}
	}
	return out
}

// isChinese reports whether the language or the text is Chinese.
func isChinese(lang, text string) bool {
	l := strings.ToLower(lang)
	if l != "" {
		return strings.HasPrefix(l, "zh") || l == "chinese" || l == "中文"
	}
	return hanShare(text) > 0.3
}

// occurrences counts where sub occurs in text, overlapping ones included.
func occurrences(text, sub string) int {
	if sub == "" {
		return 0
	}
	n := 0
	for i := 0; ; {
		j := strings.Index(text[i:], sub)
		if j < 0 {
			return n
		}
		n++
		_, w := utf8.DecodeRuneInString(text[i+j:])
		i += j + w
	}
}

func pct(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + "%" }

// quote quotes words of the contract for a message, on one line.
func quote(s string) string { return fmt.Sprintf("“%s”", strings.Join(strings.Fields(s), " ")) }
