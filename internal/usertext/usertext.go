// Package usertext is the one rule for text that people type or upload into Weft: document
// titles and bodies, comments, names, run inputs and resume values. Such text is UTF-8 whose
// only control characters are tab, line feed and carriage return (no other C0 or C1 control:
// NUL cannot be stored, BEL, ESC, VT and the rest show as boxes or do worse in a terminal),
// and that holds no invisible direction control (which makes text show in another order
// than it reads). It imports the standard library only; the server, auth and app check their
// entry points with it.
package usertext

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Problem is what kind of character breaks the rule.
type Problem int

// The kinds of character Check refuses.
const (
	// NotUTF8 is a byte that is not part of UTF-8 text.
	NotUTF8 Problem = iota + 1
	// Control is a C0 or C1 control character other than tab, line feed and carriage return.
	Control
	// Direction is a bidirectional embedding, override or isolate (U+202A–U+202E,
	// U+2066–U+2069): invisible, it reorders what a page shows ("Trojan Source"), so
	// "RTL:\u202e 0021" reads "RTL: 1200". The marks U+200E and U+200F, which
	// right-to-left text needs, are allowed.
	Direction
)

// Error is text that breaks the rule: the field it was given in, the first character at
// fault, and where that is.
type Error struct {
	Field   string  // what the text is, as its message names it: "comment", "the input's question"
	Problem Problem // what kind of character
	Char    rune    // the character (utf8.RuneError for NotUTF8)
	Line    int     // 1-based line of the character
	Column  int     // 1-based character of that line (the text's own, when it has one line)
	Lines   bool    // the text has more than one line, so the message names the line too
}

func (e *Error) Error() string {
	at := fmt.Sprintf("at character %d", e.Column)
	if e.Lines {
		at = fmt.Sprintf("at line %d, character %d", e.Line, e.Column)
	}
	switch e.Problem {
	case NotUTF8:
		return fmt.Sprintf("%s holds a byte that is not UTF-8 text %s", e.Field, at)
	case Direction:
		return fmt.Sprintf("%s holds the invisible direction control U+%04X %s, which makes text show in another order than it reads",
			e.Field, e.Char, at)
	}
	return fmt.Sprintf("%s holds a control character (U+%04X) %s", e.Field, e.Char, at)
}

// Check returns an *Error naming field when s breaks the rule, else nil.
func Check(field, s string) error {
	line, col := 1, 0
	for i, r := range s {
		col++
		p := problem(s, i, r)
		if p != 0 {
			return &Error{Field: field, Problem: p, Char: r, Line: line, Column: col,
				Lines: line > 1 || strings.IndexByte(s[i:], '\n') >= 0}
		}
		if r == '\n' {
			line, col = line+1, 0
		}
	}
	return nil
}

// Strip is s without the characters Check refuses (to show a refused text again).
func Strip(s string) string {
	var b strings.Builder
	for i, r := range s {
		if problem(s, i, r) == 0 {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// problem is what is wrong with r, the character at s[i:], or 0.
func problem(s string, i int, r rune) Problem {
	switch {
	case r == utf8.RuneError:
		if _, size := utf8.DecodeRuneInString(s[i:]); size <= 1 {
			return NotUTF8
		}
	case r == '\t' || r == '\n' || r == '\r':
	case r < 0x20 || r >= 0x7F && r <= 0x9F:
		return Control
	case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
		return Direction
	}
	return 0
}

// CheckJSON applies Check to every string of the JSON text b, its objects' keys and their
// values at any depth, written as the character or escaped (\u0007). The field it names is
// what, followed by the string's place: "the input's topics[1]", or "a field name of the
// input's options". nil when none breaks the rule, or when b is not JSON (other checks say
// so).
func CheckJSON(what string, b []byte) error {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	return checkValue(what, v, "")
}

func checkValue(what string, v any, path string) error {
	where := what
	if path != "" {
		where = what + "'s " + path
	}
	switch x := v.(type) {
	case string:
		return Check(where, x)
	case []any:
		for i, e := range x {
			if err := checkValue(what, e, path+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if err := Check("a field name of "+where, k); err != nil {
				return err
			}
			if err := checkValue(what, x[k], joinPath(path, k)); err != nil {
				return err
			}
		}
	}
	return nil
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// StorableJSON reports why PostgreSQL's jsonb would refuse the JSON text b although it is
// valid JSON: an escaped NUL (\u0000) or a UTF-16 surrogate escape that is not half of a
// pair (\ud800 alone). nil when it would store it.
func StorableJSON(b []byte) error {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		if i+1 >= len(b) || b[i+1] != 'u' {
			i++ // another escape: skip its character
			continue
		}
		r, ok := hexRune(b, i+2)
		if !ok {
			i++
			continue
		}
		switch {
		case r == 0:
			return errors.New(`the input holds \u0000 (a NUL character), which cannot be stored`)
		case r >= 0xDC00 && r <= 0xDFFF:
			return errors.New(`the input holds \u` + strconv.FormatUint(uint64(r), 16) + ` (half of a UTF-16 pair without its first half), which cannot be stored`)
		case r >= 0xD800 && r <= 0xDBFF:
			if i+11 < len(b) && b[i+6] == '\\' && b[i+7] == 'u' {
				if lo, ok := hexRune(b, i+8); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					i += 11 // the pair
					continue
				}
			}
			return errors.New(`the input holds \u` + strconv.FormatUint(uint64(r), 16) + ` (half of a UTF-16 pair without its second half), which cannot be stored`)
		}
		i += 5
	}
	return nil
}

// hexRune reads the four hex digits at b[at:].
func hexRune(b []byte, at int) (rune, bool) {
	if at+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[at:at+4]), 16, 32)
	return rune(n), err == nil
}
