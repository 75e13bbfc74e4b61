package bideval

import (
	"strconv"
	"strings"
	"time"
)

// How bid evaluation's pages and views word its figures and outcomes.

// Money formats an amount with its currency: "CNY 1,200,000", "CNY 1,200.50".
func Money(amount float64, currency string) string {
	s := strconv.FormatFloat(amount, 'f', 2, 64)
	whole, frac, _ := strings.Cut(s, ".")
	neg := strings.HasPrefix(whole, "-")
	out := groupDigits(strings.TrimPrefix(whole, "-"))
	if frac != "00" {
		out += "." + frac
	}
	if neg {
		out = "-" + out
	}
	if currency != "" {
		out = currency + " " + out
	}
	return out
}

// groupDigits puts a comma between each group of three digits: "1200000" is "1,200,000".
func groupDigits(digits string) string {
	var b strings.Builder
	for i, r := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// OutcomeLabel is an evaluation's outcome in words: passed without a review, or what the
// review decided (an approval accepts the scores; it does not make the bid a winner).
func OutcomeLabel(o string) string {
	switch o {
	case OutcomePassed:
		return "Passed"
	case OutcomeApproved:
		return "Scores approved in review"
	case OutcomeRejected:
		return "Rejected in review"
	case OutcomeScoresEdited:
		return "Scores edited in review"
	case OutcomeDisqualified:
		return "Disqualified by a hard rule"
	}
	return strings.ReplaceAll(o, "_", " ")
}

// WithdrawnNote says who withdrew a bid document and when ("" when at is nil):
// "Withdrawn by pm@demo.weft on 2026-11-23 18:35 UTC".
func WithdrawnNote(at *time.Time, by string) string {
	if at == nil {
		return ""
	}
	if by == "" {
		by = "someone"
	}
	return "Withdrawn by " + by + " on " + at.UTC().Format("2006-01-02 15:04") + " UTC"
}
