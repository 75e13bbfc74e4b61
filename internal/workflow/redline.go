package workflow

import (
	"strings"
	"unicode"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// DiffOp is one run of a redline: text kept, deleted or inserted.
type DiffOp struct {
	Kind string // "equal", "delete", "insert"
	Text string
}

// Ops computes the redline word by word with diff-match-patch (sergi/go-diff): words and
// the spaces between them are the units, so a change never splits a word.
func (r Redline) Ops() []DiffOp {
	dmp := diffmatchpatch.New()
	// Map each word (and each run of spaces or punctuation) to one rune, diff the rune
	// strings, then map back: the library's line mode, with words as the lines.
	a, b, words := wordsToRunes(r.Before, r.After)
	diffs := dmp.DiffMainRunes(a, b, false)
	diffs = dmp.DiffCleanupSemantic(diffs)
	ops := make([]DiffOp, 0, len(diffs))
	for _, d := range diffs {
		var sb strings.Builder
		for _, c := range d.Text {
			sb.WriteString(words[runeIndex(c)])
		}
		kind := "equal"
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			kind = "delete"
		case diffmatchpatch.DiffInsert:
			kind = "insert"
		}
		if n := len(ops); n > 0 && ops[n-1].Kind == kind {
			ops[n-1].Text += sb.String()
			continue
		}
		ops = append(ops, DiffOp{Kind: kind, Text: sb.String()})
	}
	return ops
}

// wordsToRunes splits both texts into tokens (words, CJK characters one by one, and runs of
// other characters) and encodes each distinct token as one rune.
func wordsToRunes(a, b string) ([]rune, []rune, []string) {
	index := map[string]rune{}
	var words []string
	enc := func(s string) []rune {
		var out []rune
		for _, tok := range tokens(s) {
			r, ok := index[tok]
			if !ok {
				r = indexRune(len(words))
				index[tok] = r
				words = append(words, tok)
			}
			out = append(out, r)
		}
		return out
	}
	ra, rb := enc(a), enc(b)
	return ra, rb, words
}

// indexRune encodes token number i as a rune that survives the diff's strings: never a
// surrogate half, which a Go string cannot hold.
func indexRune(i int) rune {
	r := rune(i + 1)
	if r >= 0xD800 {
		r += 0x800
	}
	return r
}

func runeIndex(r rune) int {
	if r >= 0xE000 {
		r -= 0x800
	}
	return int(r - 1)
}

func tokens(s string) []string {
	var out []string
	start := -1
	kind := 0 // 1 word, 2 other
	flush := func(i int) {
		if start >= 0 {
			out = append(out, s[start:i])
		}
		start = -1
	}
	for i, r := range s {
		switch {
		case unicode.Is(unicode.Han, r):
			flush(i)
			out = append(out, string(r))
			kind = 0
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if kind != 1 {
				flush(i)
				start, kind = i, 1
			}
		default:
			if kind != 2 {
				flush(i)
				start, kind = i, 2
			}
		}
	}
	flush(len(s))
	return out
}
