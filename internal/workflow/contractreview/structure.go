package contractreview

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The heading kinds the structure parser knows.
const (
	kindFIDIC     = "fidic"      // 1, 1.1, 14.2, "Clause 20.1", "Sub-Clause 4.1"
	kindArticle   = "article"    // Article 5, ARTICLE IV, 第十四条, 第十四条之一
	kindCNSection = "cn_section" // 一、
	kindCNItem    = "cn_item"    // （一）
)

var (
	reFIDIC     = regexp.MustCompile(`^(?:(?i:sub-clause|clause)\s+)?(\d{1,3}(?:\.\d{1,3}){0,3})\.?(?:[ \t　]+(.*))?$`)
	reArticleEN = regexp.MustCompile(`^(?i:article)\s+(\d{1,3}|[IVXLC]{1,7})\b[ \t　]*[.:\-–—]?(?:[ \t　]*(.*))?$`)
	reArticleCN = regexp.MustCompile(`^第([零〇一二两三四五六七八九十百\d]{1,6})条(?:之([一二三四五六七八九十\d]{1,3}))?(?:[ \t　:：、]+(.*)|$)`)
	reSectionCN = regexp.MustCompile(`^([一二三四五六七八九十]{1,3})、[ \t　]*(.*)$`)
	reItemCN    = regexp.MustCompile(`^[（(]([一二三四五六七八九十]{1,3})[)）][ \t　]*(.*)$`)
)

// heading is a line the parser took for a clause heading.
type heading struct {
	kind   string
	num    []int // the clause number's components, for ordering
	label  string
	rest   string // the line after the label
	start  int    // offset of the label
	restAt int    // offset of rest
	lineAt int    // offset of the next line
}

// ParseStructure splits a contract's text into its numbered clauses. It
// knows FIDIC numbering (14, 14.2, "Sub-Clause 4.1", "Clause 20.1"),
// "Article 5" and Chinese numbering (第十四条, 第十四条之一, 一、, （一）).
// A heading starts a line; a number inside a sentence, or one that goes
// backwards in the numbering ("14.2 of the Conditions" wrapped onto a new
// line), does not start a clause.
//
// A table of contents at the top (its headings with no bodies, then the same
// headings again) is skipped: the clauses are read from where the first heading
// comes again.
func ParseStructure(documentID, text string) DocumentStructure {
	p := parser{text: text, last: map[string][]int{}}
	p.scan(0)
	if from := tocEnd(text, p.clauses); from > 0 {
		p = parser{text: text, last: map[string][]int{}}
		p.scan(from)
	}
	ds := DocumentStructure{DocumentID: documentID, Style: p.style(), Clauses: p.clauses}
	if ds.Clauses == nil {
		ds.Clauses = []Clause{}
	}
	return ds
}

type parser struct {
	text    string
	clauses []Clause
	kindOf  []string         // heading kind of each clause
	open    []int            // stack of indexes of open clauses, by level
	last    map[string][]int // ordering key → last number accepted
	ids     map[string]int   // clause id → times seen
}

func (p *parser) scan(from int) {
	p.ids = map[string]int{}
	for off := from; off < len(p.text); {
		end := strings.IndexByte(p.text[off:], '\n')
		next := len(p.text)
		if end >= 0 {
			next = off + end + 1
			end = off + end
		} else {
			end = len(p.text)
		}
		line := p.text[off:end]
		trimmed := strings.TrimLeftFunc(line, unicode.IsSpace)
		lead := len(line) - len(trimmed)
		if h, ok := p.match(strings.TrimRightFunc(trimmed, unicode.IsSpace), off+lead); ok {
			h.lineAt = next
			p.add(h)
		}
		off = next
	}
	p.closeAll()
}

// tocEnd is where the contract proper starts after a table of contents: the
// line that repeats the first clause's heading, when every clause before it is
// a bare heading (the last one may have swallowed the rest, its numbering going
// backwards from there); 0 when there is no table of contents.
func tocEnd(text string, clauses []Clause) int {
	if len(clauses) < 2 {
		return 0
	}
	norm := func(s string) string {
		return strings.ToLower(strings.Join(strings.Fields(strings.TrimRight(s, ".·… \t0123456789")), " "))
	}
	first := clauses[0]
	title := norm(first.Title)
	off := first.BodyStart
	for off < len(text) {
		end := strings.IndexByte(text[off:], '\n')
		next := len(text)
		if end >= 0 {
			next = off + end + 1
		}
		line := strings.TrimSpace(text[off : next-min(1, next-off)])
		if rest, ok := strings.CutPrefix(line, first.Label); ok && off > first.HeadingStart && norm(rest) == title {
			break
		}
		off = next
	}
	if off >= len(text) {
		return 0
	}
	bare := 0
	for _, c := range clauses {
		if c.HeadingStart >= off {
			break
		}
		if !contentsLines(text[c.BodyStart:c.BodyEnd]) && c.BodyEnd <= off {
			return 0 // a clause with a body before the repeat: no table of contents
		}
		bare++
	}
	if bare < 2 {
		return 0
	}
	return off
}

// contentsLines reports whether a body is what a table of contents puts under
// a heading: nothing, page numbers, or entries ending in a dot leader and a page
// number ("Definitions ........ 3").
func contentsLines(body string) bool {
	for _, line := range strings.Split(body, "\n") {
		line = strings.TrimSpace(line)
		rest := strings.TrimRight(strings.TrimRight(line, "0123456789"), " \t")
		if line != "" && rest != "" && !strings.HasSuffix(rest, "..") && !strings.HasSuffix(rest, "…") && !strings.HasSuffix(rest, "··") {
			return false
		}
	}
	return true
}

// match recognises a heading line and checks that its number follows the
// numbering so far.
func (p *parser) match(line string, at int) (heading, bool) {
	h := heading{start: at}
	sub := func(m []int, i int) string {
		if m[2*i] < 0 {
			return ""
		}
		return line[m[2*i]:m[2*i+1]]
	}
	setRest := func(m []int, i int) {
		if m[2*i] >= 0 {
			h.rest, h.restAt = line[m[2*i]:m[2*i+1]], at+m[2*i]
		}
	}
	switch {
	case reArticleCN.MatchString(line):
		m := reArticleCN.FindStringSubmatchIndex(line)
		n, ok := cnNumber(sub(m, 1))
		if !ok {
			return h, false
		}
		h.kind, h.num, h.label = kindArticle, []int{n, 0}, line[:labelEnd(m)]
		if s := sub(m, 2); s != "" {
			if h.num[1], ok = cnNumber(s); !ok {
				return h, false
			}
		}
		setRest(m, 3)
	case reItemCN.MatchString(line):
		m := reItemCN.FindStringSubmatchIndex(line)
		n, _ := cnNumber(sub(m, 1))
		h.kind, h.num, h.label = kindCNItem, []int{n}, strings.TrimSpace(line[:m[4]])
		setRest(m, 2)
	case reSectionCN.MatchString(line):
		m := reSectionCN.FindStringSubmatchIndex(line)
		n, _ := cnNumber(sub(m, 1))
		h.kind, h.num, h.label = kindCNSection, []int{n}, strings.TrimSpace(line[:m[4]])
		setRest(m, 2)
	case reArticleEN.MatchString(line):
		m := reArticleEN.FindStringSubmatchIndex(line)
		n, ok := arabicOrRoman(sub(m, 1))
		if !ok {
			return h, false
		}
		h.kind, h.num, h.label = kindArticle, []int{n, 0}, strings.TrimRight(line[:m[3]], " ")
		setRest(m, 2)
		if !titleStart(h.rest) {
			return h, false
		}
	case reFIDIC.MatchString(line):
		m := reFIDIC.FindStringSubmatchIndex(line)
		for _, part := range strings.Split(sub(m, 1), ".") {
			n, _ := strconv.Atoi(part)
			h.num = append(h.num, n)
		}
		h.kind, h.label = kindFIDIC, line[:m[3]]
		setRest(m, 2)
		if !titleStart(h.rest) {
			return h, false
		}
	default:
		return h, false
	}
	return h, p.follows(h)
}

// labelEnd is where a Chinese article's label (第十四条 or 第十四条之一) ends.
func labelEnd(m []int) int {
	if m[4] >= 0 {
		return m[5]
	}
	return m[3] + len("条")
}

// titleStart reports whether the text after an English number can start a
// heading: a capital letter or a Chinese character (not "of the Conditions",
// "days after").
func titleStart(rest string) bool {
	r, _ := utf8.DecodeRuneInString(rest)
	return unicode.IsUpper(r) || unicode.Is(unicode.Han, r) || r == '"' || r == '“'
}

// follows checks that h's number comes after the last one of its kind (in
// the same parent, for Chinese items and sections), with a plausible gap.
func (p *parser) follows(h heading) bool {
	last, seen := p.last[p.orderKey(h)]
	if !seen {
		return h.num[0] <= 100
	}
	if compareNums(h.num, last) <= 0 {
		return false
	}
	return h.num[0]-last[0] <= 30
}

func compareNums(a, b []int) int {
	for i := 0; i < len(a) || i < len(b); i++ {
		x, y := -1, -1
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	return 0
}

// orderKey groups the headings whose numbers must increase: FIDIC numbers
// and articles over the whole document, Chinese items and sections under an
// article within their parent (（一） starts again in every article).
func (p *parser) orderKey(h heading) string {
	if h.kind == kindCNItem || h.kind == kindCNSection && p.insideArticle() {
		return h.kind + "/" + p.parentFor(h)
	}
	return h.kind
}

func (p *parser) insideArticle() bool {
	for _, i := range p.open {
		if p.kindOf[i] == kindArticle {
			return true
		}
	}
	return false
}

// level places a heading in the outline: FIDIC numbers by their depth
// (Article 5 is level 1, so 5.1 is its child); an article at 1; a Chinese
// section at 1, or under the open article; a Chinese item under whatever is open.
func (p *parser) level(h heading) int {
	switch h.kind {
	case kindFIDIC:
		return len(h.num)
	case kindArticle:
		return 1
	case kindCNSection:
		if p.insideArticle() {
			return p.topLevel() + 1
		}
		return 1
	default: // kindCNItem
		return p.topLevel() + 1
	}
}

// topLevel is the level of the innermost open clause that is not a Chinese item.
func (p *parser) topLevel() int {
	for i := len(p.open) - 1; i >= 0; i-- {
		if p.kindOf[p.open[i]] != kindCNItem {
			return p.clauses[p.open[i]].Level
		}
	}
	return 0
}

// parentFor is the id of the clause a heading would hang under ("" for none).
func (p *parser) parentFor(h heading) string {
	if i := p.encloser(h); i >= 0 {
		return p.clauses[p.open[i]].ID
	}
	return ""
}

// encloser is the position in p.open of the innermost open clause that h
// belongs under, or -1: one of a lower level, and for a FIDIC number one
// whose number is its prefix (4.1 does not belong under 1).
func (p *parser) encloser(h heading) int {
	lvl := p.level(h)
	for i := len(p.open) - 1; i >= 0; i-- {
		c := p.clauses[p.open[i]]
		if c.Level >= lvl {
			continue
		}
		if h.kind == kindFIDIC && !strings.HasPrefix(numberID(h.num), strings.SplitN(c.ID, "-", 2)[0]+".") {
			continue
		}
		return i
	}
	return -1
}

func (p *parser) add(h heading) {
	lvl := p.level(h)
	in := p.encloser(h)
	parent := ""
	if in >= 0 {
		parent = p.clauses[p.open[in]].ID
	}
	// Close the open clauses h does not belong under.
	for len(p.open) > in+1 {
		p.close(p.open[len(p.open)-1], h.start)
		p.open = p.open[:len(p.open)-1]
	}
	if len(p.clauses) > 0 {
		prev := &p.clauses[len(p.clauses)-1]
		if prev.BodyEnd == 0 {
			prev.BodyEnd = trimBack(p.text, prev.BodyStart, h.start)
		}
	}
	c := Clause{ID: p.clauseID(h, parent), Label: h.label, Level: lvl, Parent: parent, HeadingStart: h.start}
	c.Title, c.BodyStart = p.splitTitle(h)
	p.last[p.orderKey(h)] = h.num
	p.kindOf = append(p.kindOf, h.kind)
	p.clauses = append(p.clauses, c)
	p.open = append(p.open, len(p.clauses)-1)
}

func numberID(num []int) string {
	parts := make([]string, len(num))
	for i, n := range num {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ".")
}

func (p *parser) clauseID(h heading, parent string) string {
	var id string
	switch h.kind {
	case kindFIDIC:
		id = numberID(h.num)
	case kindArticle:
		id = strconv.Itoa(h.num[0])
		if h.num[1] > 0 {
			id += "-" + strconv.Itoa(h.num[1])
		}
	case kindCNSection:
		id = strconv.Itoa(h.num[0])
		if parent != "" {
			id = parent + "." + id
		}
	default:
		id = parent + "(" + strconv.Itoa(h.num[0]) + ")"
	}
	if n := p.ids[id]; n > 0 {
		p.ids[id] = n + 1
		return fmt.Sprintf("%s#%d", id, n+1)
	}
	p.ids[id] = 1
	return id
}

// splitTitle separates a heading's title from a body that starts on the
// same line. A title is short and reads like one ("Limitation of
// Liability", "工程款支付"); a sentence is body.
func (p *parser) splitTitle(h heading) (title string, bodyStart int) {
	rest := h.rest
	if rest == "" {
		return "", skipSpace(p.text, h.lineAt)
	}
	cut, after := -1, -1
	for _, sep := range []string{". ", ": ", "：", "。", "  ", "　", " - ", " – ", " — "} {
		if i := strings.Index(rest, sep); i > 0 && (cut < 0 || i < cut) {
			cut, after = i, i+len(sep)
		}
	}
	if cut < 0 {
		if looksLikeTitle(strings.TrimSuffix(rest, ".")) {
			return strings.TrimSuffix(rest, "."), skipSpace(p.text, h.lineAt)
		}
		return "", h.restAt
	}
	if head := strings.TrimSpace(rest[:cut]); rest[cut:after] != "。" && looksLikeTitle(head) {
		return head, skipSpace(p.text, h.restAt+after)
	}
	return "", h.restAt
}

// looksLikeTitle: at most 60 characters, and in English no verb of a
// sentence and mostly capitalised words (of those with 4 letters or more); in Chinese at most 20 characters with no comma.
func looksLikeTitle(s string) bool {
	n := utf8.RuneCountInString(s)
	if n == 0 || n > 60 {
		return false
	}
	if hanShare(s) > 0.5 {
		return n <= 20 && !strings.ContainsAny(s, "，,；;")
	}
	lower := " " + strings.ToLower(s) + " "
	for _, verb := range []string{" shall ", " will ", " may ", " must ", " is ", " are "} {
		if strings.Contains(lower, verb) {
			return false
		}
	}
	words, caps := 0, 0
	for _, w := range strings.Fields(s) {
		r, _ := utf8.DecodeRuneInString(w)
		if utf8.RuneCountInString(w) < 4 {
			continue // of, and, the
		}
		words++
		if unicode.IsUpper(r) {
			caps++
		}
	}
	return words > 0 && caps*10 >= words*6
}

func hanShare(s string) float64 {
	han, all := 0, 0
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsPunct(r) {
			continue
		}
		all++
		if unicode.Is(unicode.Han, r) {
			han++
		}
	}
	if all == 0 {
		return 0
	}
	return float64(han) / float64(all)
}

func skipSpace(text string, at int) int {
	for at < len(text) {
		r, n := utf8.DecodeRuneInString(text[at:])
		if !unicode.IsSpace(r) {
			break
		}
		at += n
	}
	return at
}

// trimBack moves end back over white space, not before start.
func trimBack(text string, start, end int) int {
	for end > start {
		r, n := utf8.DecodeLastRuneInString(text[:end])
		if !unicode.IsSpace(r) {
			break
		}
		end -= n
	}
	return max(end, start)
}

func (p *parser) close(i, at int) {
	c := &p.clauses[i]
	c.End = trimBack(p.text, c.BodyStart, at)
	if c.BodyEnd == 0 || c.BodyEnd > c.End {
		c.BodyEnd = min(trimBack(p.text, c.BodyStart, at), c.End)
	}
	if c.BodyStart > c.End {
		c.BodyStart = c.End
	}
}

func (p *parser) closeAll() {
	if len(p.clauses) > 0 {
		if prev := &p.clauses[len(p.clauses)-1]; prev.BodyEnd == 0 {
			prev.BodyEnd = trimBack(p.text, prev.BodyStart, len(p.text))
		}
	}
	for len(p.open) > 0 {
		p.close(p.open[len(p.open)-1], len(p.text))
		p.open = p.open[:len(p.open)-1]
	}
}

func (p *parser) style() string {
	counts := map[string]int{}
	for i, c := range p.clauses {
		switch {
		case p.kindOf[i] == kindCNItem || p.kindOf[i] == kindCNSection || strings.HasPrefix(c.Label, "第"):
			counts["chinese"]++
		case p.kindOf[i] == kindArticle:
			counts["article"]++
		default:
			counts["fidic"]++
		}
	}
	best, n := "none", 0
	for _, s := range []string{"fidic", "article", "chinese"} {
		if counts[s] > n {
			best, n = s, counts[s]
		}
	}
	return best
}

var cnDigits = map[rune]int{'零': 0, '〇': 0, '一': 1, '二': 2, '两': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7, '八': 8, '九': 9}

// cnNumber reads a Chinese (十四, 二十一, 一百零五) or Arabic numeral.
func cnNumber(s string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, true
	}
	total, cur := 0, 0
	for _, r := range s {
		switch {
		case r == '十':
			if cur == 0 {
				cur = 1
			}
			total += cur * 10
			cur = 0
		case r == '百':
			total += cur * 100
			cur = 0
		default:
			d, ok := cnDigits[r]
			if !ok {
				return 0, false
			}
			cur = d
		}
	}
	total += cur
	return total, total > 0
}

var romans = map[byte]int{'I': 1, 'V': 5, 'X': 10, 'L': 50, 'C': 100}

func arabicOrRoman(s string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, n > 0
	}
	s = strings.ToUpper(s)
	total := 0
	for i := 0; i < len(s); i++ {
		v := romans[s[i]]
		if i+1 < len(s) && romans[s[i+1]] > v {
			total -= v
		} else {
			total += v
		}
	}
	return total, total > 0
}

// ClauseText is the clause's text with its sub-clauses: what the review reads.
func (c Clause) Text(doc string) string { return doc[c.BodyStart:c.End] }

// Find returns the clause with the given id.
func (ds *DocumentStructure) Find(id string) (Clause, bool) {
	if ds == nil {
		return Clause{}, false
	}
	for _, c := range ds.Clauses {
		if c.ID == id {
			return c, true
		}
	}
	return Clause{}, false
}
