package runner

import (
	"errors"
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
