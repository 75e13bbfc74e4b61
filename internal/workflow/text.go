package workflow

import (
	"errors"
	"fmt"
	"unicode/utf8"
)

// CheckText refuses text a person typed or sent that holds a character that shows as
// nothing or a box, or reorders what a page shows: C0 and C1 control characters other than
// tab, newline and carriage return, and the invisible direction controls (U+202A–U+202E,
// U+2066–U+2069). The error names the character and its position (1-based, in characters).
func CheckText(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("is not valid UTF-8 text")
	}
	pos := 0
	for _, r := range s {
		pos++
		switch {
		case r == '\t' || r == '\n' || r == '\r':
		case r < 0x20 || r == 0x7F || (r >= 0x80 && r <= 0x9F):
			return fmt.Errorf("holds a control character (U+%04X) at character %d", r, pos)
		case r >= 0x202A && r <= 0x202E, r >= 0x2066 && r <= 0x2069:
			return fmt.Errorf("holds the invisible direction control U+%04X at character %d", r, pos)
		}
	}
	return nil
}
