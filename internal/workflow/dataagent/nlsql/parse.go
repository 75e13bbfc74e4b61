package nlsql

import (
	"strings"
	"time"
)

// item is one unit of a parsed text: a matched phrase with its readings, a
// time expression, a number, or a word nothing matched.
type item struct {
	kind  meaningKind // for a phrase: its first reading's kind
	means []meaning
	time  *timeExpr
	num   int // a number (kind 0, isNum)
	isNum bool
	text  string // the text as written
	// part is the index of the text (base question, follow-up, feedback)
	// the item came from.
	part int
}

func (it item) has(k meaningKind) bool {
	for _, m := range it.means {
		if m.kind == k {
			return true
		}
	}
	return false
}

func (it item) first(k meaningKind) (meaning, bool) {
	for _, m := range it.means {
		if m.kind == k {
			return m, true
		}
	}
	return meaning{}, false
}

// parsed is a text read against a lexicon.
type parsed struct {
	items    []item
	unmapped []string
}

// match is the longest phrase at toks[i] of the domain lexicon or the
// vocabulary; the domain wins a tie.
func match(domain *lexicon, toks []token, i int) *term {
	var t *term
	if domain != nil {
		t = domain.match(toks, i)
	}
	if v := vocabulary.match(toks, i); v != nil && (t == nil || len(v.toks) > len(t.toks)) {
		t = v
	}
	return t
}

var hanNumerals = "零一二三四五六七八九十两百"

// parse reads text: time expressions first, then the longest phrase of the
// domain lexicon (catalog and notes) or the fixed vocabulary at each token
// (the domain wins a tie), numbers, and what is left unmapped.
//
// year, when not 0, is the year a quarter named without one belongs to
// (that of the question a follow-up follows).
func parse(text string, domain *lexicon, now time.Time, part, year int) parsed {
	times := findTimes(text, now, year)
	toks := tokenize(text)
	var p parsed
	var miss []token
	flush := func() {
		if len(miss) > 0 {
			p.unmapped = append(p.unmapped, strings.TrimSpace(text[miss[0].start:miss[len(miss)-1].end]))
			miss = nil
		}
	}
	ti := 0
	for i := 0; i < len(toks); {
		tok := toks[i]
		for ti < len(times) && times[ti].end <= tok.start {
			te := times[ti]
			p.items = append(p.items, item{kind: 0, time: &te, text: text[te.start:te.end], part: part})
			ti++
		}
		if ti < len(times) && tok.start >= times[ti].start && tok.start < times[ti].end {
			flush()
			i++
			continue
		}
		t := match(domain, toks, i)
		if t != nil && len(t.toks) == 1 && tok.kind == tokHan && len(miss) > 0 && i+1 < len(toks) &&
			toks[i+1].kind == tokHan && match(domain, toks, i+1) == nil && !t.has(mStop) {
			// One known character inside an unknown word (周 in 库存周转) is part of it.
			miss = append(miss, tok)
			i++
			continue
		}
		switch {
		case t != nil:
			flush()
			n := len(t.toks)
			if !t.has(mStop) {
				p.items = append(p.items, item{kind: t.means[0].kind, means: t.means, text: text[tok.start:toks[i+n-1].end], part: part})
			}
			i += n
		case tok.kind == tokNumber:
			flush()
			n, _ := number(tok.text)
			p.items = append(p.items, item{isNum: true, num: n, text: tok.raw, part: part})
			i++
		case tok.kind == tokHan && strings.Contains(hanNumerals, tok.text):
			flush()
			j := i
			for j < len(toks) && toks[j].kind == tokHan && strings.Contains(hanNumerals, toks[j].text) {
				j++
			}
			raw := text[tok.start:toks[j-1].end]
			n, _ := number(raw)
			p.items = append(p.items, item{isNum: true, num: n, text: raw, part: part})
			i = j
		default:
			miss = append(miss, tok)
			i++
		}
	}
	flush()
	for ; ti < len(times); ti++ {
		te := times[ti]
		p.items = append(p.items, item{time: &te, text: text[te.start:te.end], part: part})
	}
	return p
}
