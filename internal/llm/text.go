package llm

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// foldWidth maps full-width ASCII variants (Ａ, ９, ％, ．) to ASCII and the
// ideographic space to a space, so "９９．９５％" reads as "99.95%".
func foldWidth(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 0xFF01 && r <= 0xFF5E:
			return r - 0xFEE0
		case r == 0x3000:
			return ' '
		}
		return r
	}, s)
}

// isCJK reports whether r is a Chinese, Japanese or Korean character.
func isCJK(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// isWordRune reports whether r is part of an alphabetic word: letters and
// digits outside CJK scripts (CJK text has no word boundaries).
func isWordRune(r rune) bool {
	return (unicode.IsLetter(r) || unicode.IsDigit(r)) && !isCJK(r)
}

// normalize prepares text for keyword matching: full-width folded,
// lower-cased, whitespace runs collapsed to one space, and whitespace next to
// a CJK character removed (a line break inside "质量管理\n体系" still
// matches).
func normalize(s string) string {
	rs := []rune(strings.ToLower(foldWidth(s)))
	var b strings.Builder
	b.Grow(len(s))
	var prev rune // last rune written, 0 at the start
	for i := 0; i < len(rs); {
		if !unicode.IsSpace(rs[i]) {
			b.WriteRune(rs[i])
			prev = rs[i]
			i++
			continue
		}
		j := i
		for j < len(rs) && unicode.IsSpace(rs[j]) {
			j++
		}
		if prev != 0 && j < len(rs) && !isCJK(prev) && !isCJK(rs[j]) {
			b.WriteByte(' ')
			prev = ' '
		}
		i = j
	}
	return b.String()
}

// containsTerm reports whether the normalized text contains the normalized
// term. A term that starts (ends) with a letter or digit must start (end) at
// a word boundary, so "sla" does not match inside "translation"; a plural
// "s"/"es" after the term is allowed. CJK terms match as plain substrings.
func containsTerm(text, term string) bool {
	if term == "" {
		return false
	}
	first, _ := utf8.DecodeRuneInString(term)
	last, _ := utf8.DecodeLastRuneInString(term)
	for from := 0; from <= len(text)-len(term); {
		i := strings.Index(text[from:], term)
		if i < 0 {
			return false
		}
		start := from + i
		end := start + len(term)
		if startOK(text, start, first) && endOK(text, end, last) {
			return true
		}
		_, size := utf8.DecodeRuneInString(text[start:])
		from = start + size
	}
	return false
}

func startOK(text string, start int, first rune) bool {
	if !isWordRune(first) || start == 0 {
		return true
	}
	before, _ := utf8.DecodeLastRuneInString(text[:start])
	return !isWordRune(before)
}

func endOK(text string, end int, last rune) bool {
	if !isWordRune(last) {
		return true
	}
	rest := text[end:]
	for _, suffix := range []string{"", "s", "es"} {
		if !strings.HasPrefix(rest, suffix) {
			continue
		}
		after, _ := utf8.DecodeRuneInString(rest[len(suffix):])
		if len(rest) == len(suffix) || !isWordRune(after) {
			return true
		}
	}
	return false
}

// firstSentence returns the first sentence of s (up to . ! ? followed by a
// space or the end, or a CJK full stop), at most limit runes.
func firstSentence(s string, limit int) string {
	s = strings.Join(strings.Fields(s), " ")
	rs := []rune(s)
	end := len(rs)
	for i, r := range rs {
		if r == '。' || r == '！' || r == '？' {
			end = i + 1
			break
		}
		if (r == '.' || r == '!' || r == '?') && (i+1 == len(rs) || rs[i+1] == ' ') {
			end = i + 1
			break
		}
	}
	if end > limit {
		return string(rs[:limit]) + "…"
	}
	return string(rs[:end])
}

// countWords counts words: runs of non-space, non-CJK characters count as
// one word each and every CJK character counts as one.
func countWords(s string) int {
	n := 0
	inWord := false
	for _, r := range s {
		switch {
		case isCJK(r):
			n++
			inWord = false
		case unicode.IsSpace(r) || unicode.IsPunct(r) && !inWord:
			inWord = false
		default:
			if !inWord {
				n++
				inWord = true
			}
		}
	}
	return n
}

// truncateRunes shortens s to at most limit runes, marking the cut.
func truncateRunes(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	return string([]rune(s)[:limit]) + "…"
}
