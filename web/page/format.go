// Package page holds the console's pages and the view models they take.
// Each swappable region is one exported component used by the full page,
// its htmx partial and its SSE event alike. It imports nothing from
// internal/, db/, pgx or echo.
package page

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/a-h/templ"
)

func itoa(i int) string { return strconv.Itoa(i) }

// Score formats a score.
func Score(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// Ago formats an age. static/js/times.js writes the same words in the browser (where an
// element carries data-since): keep the two in step.
func Ago(t time.Time, now time.Time) string {
	if t.IsZero() {
		return ""
	}
	d := now.Sub(t)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh %dm ago", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// Clock is when something started, to the millisecond: the time of day, and the date too
// when it was not today (UTC), so an older run's rows do not read as today's.
func Clock(t, now time.Time) string {
	t, now = t.UTC(), now.UTC()
	switch {
	case t.Year() != now.Year():
		return t.Format("2006-01-02 15:04:05")
	case t.YearDay() != now.YearDay():
		return t.Format("Jan 2 15:04:05")
	}
	return t.Format("15:04:05.000")
}

// UnixMS is t in milliseconds since 1970, for data-since (static/js/times.js); "" for the zero time.
func UnixMS(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return strconv.FormatInt(t.UnixMilli(), 10)
}

// When formats a timestamp.
func When(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// PlainText is a document chunk as people read it: Markdown heading marks ("# ", "## ")
// at the start of a line are dropped; everything else is shown as written (and escaped).
func PlainText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if t := strings.TrimLeft(l, "#"); len(t) < len(l) && len(l)-len(t) <= 6 && strings.HasPrefix(t, " ") {
			lines[i] = strings.TrimPrefix(t, " ")
		}
	}
	return strings.Join(lines, "\n")
}

// longWord is the length, in characters, from which Words treats a word as a token that may
// not fit its column: an id, a URL, a word typed without spaces.
const longWord = 24

// longestPart is the length, in characters, of the longest part of word that a browser does
// not break: it may break a word after a hyphen, and around Chinese and Japanese characters.
func longestPart(word string) int {
	longest, n := 0, 0
	for _, r := range word {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) {
			longest, n = max(longest, 1), 0
			continue
		}
		n++
		longest = max(longest, n)
		if r == '-' {
			n = 0
		}
	}
	return longest
}

// Words renders s as text for a table cell: a word with a part longer than longWord characters
// that a browser would not break (longestPart) is marked as a token (class "token", free to
// break at any point), every other word is plain text. A
// cell's words break only where they cannot fit (overflow-wrap: break-word), which makes a
// table column at least as wide as its longest word: a long token would widen the table past
// its card, so only tokens give up their width, and ordinary words never break ("implementatio
// / n" in a squeezed column).
func Words(s string) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		var b strings.Builder
		for s != "" {
			n := strings.IndexFunc(s, unicode.IsSpace)
			if n < 0 {
				n = len(s)
			}
			word, gap := s[:n], len(s[n:])-len(strings.TrimLeftFunc(s[n:], unicode.IsSpace))
			if longestPart(word) > longWord {
				b.WriteString(`<span class="token">` + templ.EscapeString(word) + `</span>`)
			} else {
				b.WriteString(templ.EscapeString(word))
			}
			b.WriteString(s[n : n+gap]) // white space only: nothing to escape
			s = s[n+gap:]
		}
		_, err := io.WriteString(w, b.String())
		return err
	})
}
