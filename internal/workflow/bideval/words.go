package bideval

import (
	"strconv"
	"strings"
)

// How bid evaluation's pages and views word its figures.

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
