package postgres_test

import (
	"slices"
	"testing"

	"weft/internal/postgres"
)

// Search tokens: lower-cased words and numbers of two characters or more, full-width digits
// as digits, and the overlapping bigrams of CJK runs (a lone character stands alone).
func TestSearchTokens(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"ISO 9001 certificate", []string{"iso", "9001", "certificate"}},
		{"a 7x24 SLA", []string{"7x24", "sla"}},
		{"质保期", []string{"质保", "保期"}},
		{"质 保", []string{"质", "保"}},
		{"warranty 质保期 24个月", []string{"warranty", "质保", "保期", "24", "个月"}},
		{"２４ months", []string{"24", "months"}},
		{"", nil},
	} {
		if got := postgres.SearchTokens(c.in); !slices.Equal(got, c.want) {
			t.Errorf("SearchTokens(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
