package pagegen

import (
	"regexp"
	"strings"
	"sync"
	"unicode"
)

// Languages a site is written in.
const (
	LangEN = "en"
	LangZH = "zh-CN"
)

// detectLang is zh-CN when at least a fifth of the request's letters are Han characters.
func detectLang(s string) string {
	han, letters := 0, 0
	for _, r := range s {
		switch {
		case unicode.Is(unicode.Han, r):
			han++
			letters++
		case unicode.IsLetter(r):
			letters++
		}
	}
	if han > 0 && han*5 >= letters {
		return LangZH
	}
	return LangEN
}

func isZH(lang string) bool { return lang == LangZH }

// pick returns en or zh by language.
func pick(lang, en, zh string) string {
	if isZH(lang) {
		return zh
	}
	return en
}

// foldText lower-cases and folds full-width ASCII, so "ＦＡＱ" reads as "faq".
func foldText(s string) string {
	return strings.ToLower(strings.Map(func(r rune) rune {
		switch {
		case r >= 0xFF01 && r <= 0xFF5E:
			return r - 0xFEE0
		case r == 0x3000:
			return ' '
		}
		return r
	}, s))
}

// mentions reports whether folded text contains any of the patterns: an English word
// pattern matches at word boundaries, a Chinese one as a substring.
func mentions(folded string, patterns ...string) bool {
	for _, p := range patterns {
		if matchAt(folded, p) >= 0 {
			return true
		}
	}
	return false
}

var wordREs sync.Map // pattern -> *regexp.Regexp

// matchAt is the byte index of the first match of pattern in folded text, or -1.
func matchAt(folded, pattern string) int {
	loc := wordRE(pattern).FindStringIndex(folded)
	if loc == nil {
		return -1
	}
	return loc[0]
}

// wordRE compiles a pattern of alternatives: those with ASCII letters match at word
// boundaries ("plan" does not match "planet"), the others (Chinese) anywhere, since
// Chinese has no word boundaries.
func wordRE(pattern string) *regexp.Regexp {
	if v, ok := wordREs.Load(pattern); ok {
		return v.(*regexp.Regexp)
	}
	var words, other []string
	for _, alt := range splitAlternatives(pattern) {
		if hasASCIILetter(alt) {
			words = append(words, alt)
		} else {
			other = append(other, alt)
		}
	}
	var parts []string
	if len(words) > 0 {
		parts = append(parts, `\b(?:`+strings.Join(words, "|")+`)\b`)
	}
	if len(other) > 0 {
		parts = append(parts, `(?:`+strings.Join(other, "|")+`)`)
	}
	v, _ := wordREs.LoadOrStore(pattern, regexp.MustCompile(strings.Join(parts, "|")))
	return v.(*regexp.Regexp)
}

// splitAlternatives splits a pattern at its top-level '|'.
func splitAlternatives(p string) []string {
	var out []string
	depth, start := 0, 0
	for i := 0; i < len(p); i++ {
		switch p[i] {
		case '\\':
			i++
		case '(', '[':
			depth++
		case ')', ']':
			depth--
		case '|':
			if depth == 0 {
				out = append(out, p[start:i])
				start = i + 1
			}
		}
	}
	return append(out, p[start:])
}

func hasASCIILetter(s string) bool {
	for _, r := range s {
		if r < 128 && unicode.IsLetter(r) {
			return true
		}
	}
	return false
}

// titleCase capitalises each word of an English phrase.
func titleCase(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		if len(w) > 3 || i == 0 {
			rs := []rune(w)
			rs[0] = unicode.ToUpper(rs[0])
			words[i] = string(rs)
		}
	}
	return strings.Join(words, " ")
}

// sentence capitalises the first letter and ends with a full stop.
func sentence(s, lang string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return s
	}
	if isZH(lang) {
		if !strings.HasSuffix(s, "。") && !strings.HasSuffix(s, "！") {
			s += "。"
		}
		return s
	}
	rs := []rune(s)
	rs[0] = unicode.ToUpper(rs[0])
	s = string(rs)
	if !strings.HasSuffix(s, ".") && !strings.HasSuffix(s, "!") && !strings.HasSuffix(s, "?") {
		s += "."
	}
	return s
}
