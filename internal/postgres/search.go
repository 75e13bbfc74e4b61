package postgres

import "unicode"

// SearchTokens turns text into the tokens a workflow's store adapter indexes text by (a
// tsvector of the 'simple' configuration over them: documents' chunks, notes) and makes its
// queries of: lower-cased Latin words and numbers (2+ characters), and for Han, Hiragana,
// Katakana and Hangul runs their overlapping bigrams (a single character stands alone). It is the "bigram index for CJK": the same
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
