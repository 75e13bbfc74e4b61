// Package page holds the console's pages and the view models they take.
// Each swappable region is one exported component used by the full page,
// its htmx partial and its SSE event alike. It imports nothing from
// internal/, db/, pgx or echo.
package page

import (
	"fmt"
	"strconv"
	"time"

	"github.com/a-h/templ"

	"weft/web/component"
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

// PlainText is a document chunk as people read it (component.PlainText).
func PlainText(s string) string { return component.PlainText(s) }

// Words renders s as text for a table cell (component.Words).
func Words(s string) templ.Component { return component.Words(s) }
