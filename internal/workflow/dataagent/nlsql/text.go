package nlsql

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// token is one unit of text: a Latin word (lower-cased and stemmed), a
// number, or a single Han character. Start and End are byte offsets into
// the text that was tokenized.
type token struct {
	text       string
	raw        string
	kind       tokenKind
	start, end int
}

type tokenKind uint8

const (
	tokWord tokenKind = iota
	tokNumber
	tokHan
)

// tokenize splits text into tokens; punctuation and spaces separate tokens
// and are dropped. Full-width letters and digits are folded to ASCII.
func tokenize(text string) []token {
	var out []token
	i := 0
	for i < len(text) {
		r, size := utf8.DecodeRuneInString(text[i:])
		r = foldWidth(r)
		switch {
		case isHan(r):
			out = append(out, token{text: string(r), raw: text[i : i+size], kind: tokHan, start: i, end: i + size})
			i += size
		case isWordRune(r):
			j := i
			var b strings.Builder
			digits := true
			for j < len(text) {
				r2, s2 := utf8.DecodeRuneInString(text[j:])
				r2 = foldWidth(r2)
				if r2 == '.' && digits && b.Len() > 0 && j+1 < len(text) && text[j+1] >= '0' && text[j+1] <= '9' {
					b.WriteRune('.')
					j += s2
					continue
				}
				if r2 == '\'' && b.Len() > 0 { // orders' / customer's
					j += s2
					continue
				}
				if !isWordRune(r2) {
					break
				}
				if !unicode.IsDigit(r2) {
					digits = false
				}
				b.WriteRune(unicode.ToLower(r2))
				j += s2
			}
			w := b.String()
			kind := tokWord
			if digits {
				kind = tokNumber
			} else {
				w = stem(strings.TrimSuffix(w, "'s"))
			}
			out = append(out, token{text: w, raw: text[i:j], kind: kind, start: i, end: j})
			i = j
		default:
			i += size
		}
	}
	return out
}

func isWordRune(r rune) bool {
	return r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r))
}

func isHan(r rune) bool { return unicode.Is(unicode.Han, r) }

// hasHan reports whether s holds a Han character.
func hasHan(s string) bool {
	for _, r := range s {
		if isHan(r) {
			return true
		}
	}
	return false
}

// foldWidth maps full-width ASCII forms (Ａ, ３, ＝) to ASCII.
func foldWidth(r rune) rune {
	if r >= 0xFF01 && r <= 0xFF5E {
		return r - 0xFF01 + '!'
	}
	if r == 0x3000 {
		return ' '
	}
	return r
}

// stem reduces an English word to a crude stem, the same way on both sides
// of every comparison: plural -s/-es/-ies and past -ed.
func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 4 && strings.HasSuffix(w, "sses"):
		return w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:n-1]
	case n > 5 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		return w[:n-2]
	}
	return w
}

// words is text's token texts, for building terms.
func words(text string) []string {
	toks := tokenize(text)
	out := make([]string, len(toks))
	for i, t := range toks {
		out[i] = t.text
	}
	return out
}

// splitName splits an identifier (order_items, signupDate) into words.
func splitName(name string) string {
	var b strings.Builder
	prev := rune(0)
	for _, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.':
			b.WriteByte(' ')
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			b.WriteByte(' ')
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(unicode.ToLower(r))
		}
		prev = r
	}
	return b.String()
}

// parenthesized returns the phrases inside ( ) and （ ） of s, split on
// commas, semicolons, slashes and 、, with the text outside them.
func parenthesized(s string) (outside string, phrases []string) {
	var out strings.Builder
	depth := 0
	var cur strings.Builder
	for _, r := range s {
		switch r {
		case '(', '（':
			depth++
			if depth == 1 {
				cur.Reset()
				continue
			}
		case ')', '）':
			if depth == 1 {
				phrases = append(phrases, splitList(cur.String())...)
				depth--
				continue
			}
			if depth > 0 {
				depth--
			}
		}
		if depth > 0 {
			cur.WriteRune(r)
		} else {
			out.WriteRune(r)
		}
	}
	return strings.TrimSpace(out.String()), phrases
}

// splitList splits a list of phrases on , ; / 、 ， ； and " or " / " and ".
func splitList(s string) []string {
	f := func(r rune) bool { return strings.ContainsRune(",;/、，；|", r) }
	var out []string
	for _, p := range strings.FieldsFunc(s, f) {
		for _, q := range splitWords(p, " and ", " or ", "和", "及", "与") {
			if q = strings.TrimSpace(q); q != "" {
				out = append(out, q)
			}
		}
	}
	return out
}

func splitWords(s string, seps ...string) []string {
	parts := []string{s}
	for _, sep := range seps {
		var next []string
		for _, p := range parts {
			next = append(next, strings.Split(p, sep)...)
		}
		parts = next
	}
	return parts
}
