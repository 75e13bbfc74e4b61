package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

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

// DirectionControl finds the first bidirectional embedding, override or isolate control in s
// (U+202A–U+202E, U+2066–U+2069): invisible, they reorder what a page shows ("Trojan
// Source"), so "RTL:\u202e 0021" reads "RTL: 1200". It returns the character's name and its
// line (1-based). The marks U+200E and U+200F, which right-to-left text needs, are allowed.
func DirectionControl(s string) (name string, line int, found bool) {
	line = 1
	for _, r := range s {
		switch {
		case r == '\n':
			line++
		case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
			return fmt.Sprintf("the invisible direction control U+%04X", r), line, true
		}
	}
	return "", 0, false
}

// JSONDirectionControl reports a string of the JSON text b (a key or a value, written as the
// character or escaped) that holds a direction control (DirectionControl), naming where:
// "the input's question holds the invisible direction control U+202E, …". nil when none does,
// or when b is not JSON (other checks say so).
func JSONDirectionControl(b []byte, what string) error {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	var walk func(v any, path string) error
	walk = func(v any, path string) error {
		where := what
		if path != "" {
			where = what + "'s " + path
		}
		switch x := v.(type) {
		case string:
			if name, _, found := DirectionControl(x); found {
				return fmt.Errorf("%s holds %s, which makes text show in another order than it reads", where, name)
			}
		case []any:
			for i, e := range x {
				if err := walk(e, path+"["+strconv.Itoa(i)+"]"); err != nil {
					return err
				}
			}
		case map[string]any:
			for _, k := range slices.Sorted(maps.Keys(x)) {
				e := x[k]
				if name, _, found := DirectionControl(k); found {
					return fmt.Errorf("a field name of %s holds %s, which makes text show in another order than it reads", where, name)
				}
				if err := walk(e, joinPath(path, k)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(v, "")
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
