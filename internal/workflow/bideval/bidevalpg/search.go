package bidevalpg

import (
	"strings"
	"unicode"
)

// SearchTokens turns text into the tokens chunks are indexed by and queries
// are made of: lower-cased Latin words and numbers (2+ characters), and for
// Han, Hiragana, Katakana and Hangul runs their overlapping bigrams (a single
// character stands alone). It is the "bigram index for CJK": the same
// function on both sides makes Chinese search work under any locale.
func SearchTokens(text string) []string {
	var out []string
	var word []rune
	var cjk []rune
	flushWord := func() {
		if len(word) >= 2 {
			out = append(out, string(word))
		}
		word = word[:0]
	}
	flushCJK := func() {
		switch {
		case len(cjk) == 1:
			out = append(out, string(cjk))
		case len(cjk) > 1:
			for i := 0; i+1 < len(cjk); i++ {
				out = append(out, string(cjk[i:i+2]))
			}
		}
		cjk = cjk[:0]
	}
	for _, r := range text {
		switch {
		case isCJK(r):
			flushWord()
			cjk = append(cjk, r)
		case r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			flushCJK()
			word = append(word, unicode.ToLower(r))
		case r >= 0xFF10 && r <= 0xFF19: // full-width digits
			flushCJK()
			word = append(word, '0'+(r-0xFF10))
		default:
			flushWord()
			flushCJK()
		}
	}
	flushWord()
	flushCJK()
	return out
}

func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// searchDocument is the chunks.search value of a chunk.
func searchDocument(text string) string { return strings.Join(SearchTokens(text), " ") }

// searchQuery is an OR tsquery of text's tokens (empty: nothing to find).
// Tokens only hold letters and digits, so they need no quoting.
func searchQuery(text string) string {
	seen := map[string]bool{}
	var terms []string
	for _, t := range SearchTokens(text) {
		if !seen[t] && !stopWords[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	return strings.Join(terms, " | ")
}

var stopWords = map[string]bool{"the": true, "and": true, "of": true, "to": true, "in": true, "for": true, "a": true,
	"an": true, "is": true, "on": true, "with": true, "by": true, "or": true, "be": true, "are": true, "at": true, "as": true}
