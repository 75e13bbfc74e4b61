package bideval

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// ScoreProblem is why a reviewer's score cannot be recorded.
type ScoreProblem int

// The reasons ParseScore refuses a score.
const (
	// ScoreNotDecimal is text other than a plain decimal (hex, an exponent, Inf, words).
	ScoreNotDecimal ScoreProblem = iota + 1
	// ScoreTooPrecise has a digit after the first decimal place that is not 0.
	ScoreTooPrecise
	// ScoreBelowZero is negative.
	ScoreBelowZero
	// ScoreAboveMax is above the criterion's maximum score.
	ScoreAboveMax
)

// ScoreError is a reviewer's score that ParseScore refuses; the caller names the criterion
// ("Delivery: …" in the console's form, "scores.C2: …" in the API).
type ScoreError struct {
	Text    string // the score as sent
	Max     float64
	Problem ScoreProblem
}

func (e *ScoreError) Error() string {
	switch e.Problem {
	case ScoreTooPrecise:
		return fmt.Sprintf("%s has more than one decimal place: scores go in steps of 0.1, as the report shows them", e.Text)
	case ScoreBelowZero:
		return fmt.Sprintf("%s is below 0", e.Text)
	case ScoreAboveMax:
		return fmt.Sprintf("%s is above the maximum score of %s", e.Text, strconv.FormatFloat(e.Max, 'f', -1, 64))
	}
	return fmt.Sprintf("%q is not a decimal number such as 7 or 7.5", e.Text)
}

// decimalScore is a score as people and programs write one: digits with an optional
// decimal point and sign (strconv.ParseFloat also reads hex, exponents, underscores, Inf
// and NaN, which no reviewer means). Its groups are the whole and the decimal digits.
var decimalScore = regexp.MustCompile(`^[+-]?([0-9]*)(?:\.([0-9]*))?$`)

// ParseScore reads a reviewer's score from its decimal text (the console's form field, the
// API's JSON number as written): a decimal with at most one decimal place (7, 7.0, 0.3, 7.50;
// not 0.30000000000000004) from 0 to max. The value is the decimal itself, so 0.3 is
// recorded as 0.3. The console and the API read scores with it alike; a refusal is a
// *ScoreError.
func ParseScore(text string, max float64) (float64, error) {
	m := decimalScore.FindStringSubmatch(text)
	if m == nil || m[1] == "" && m[2] == "" {
		return 0, &ScoreError{Text: text, Max: max, Problem: ScoreNotDecimal}
	}
	if len(strings.TrimRight(m[2], "0")) > 1 {
		return 0, &ScoreError{Text: text, Max: max, Problem: ScoreTooPrecise}
	}
	// Plain decimal digits always parse; one too large for a float64 is +Inf, above max.
	v, _ := strconv.ParseFloat(text, 64)
	switch {
	case v < 0:
		return 0, &ScoreError{Text: text, Max: max, Problem: ScoreBelowZero}
	case v > max:
		return 0, &ScoreError{Text: text, Max: max, Problem: ScoreAboveMax}
	}
	return v + 0, nil // -0 is 0
}
