package nlsql

import "testing"

func TestTimeExpressions(t *testing.T) {
	t.Parallel()
	cases := []struct{ text, from, to string }{
		{"last month", "2025-12-01", "2026-01-01"},
		{"this month", "2026-01-01", "2026-02-01"},
		{"last quarter", "2025-10-01", "2026-01-01"},
		{"last year", "2025-01-01", "2026-01-01"},
		{"2025 Q3", "2025-07-01", "2025-10-01"},
		{"Q3 2025", "2025-07-01", "2025-10-01"},
		{"the third quarter of 2024", "2024-07-01", "2024-10-01"},
		{"March 2025", "2025-03-01", "2025-04-01"},
		{"2025-03", "2025-03-01", "2025-04-01"},
		{"in 2024", "2024-01-01", "2025-01-01"},
		{"last 90 days", "2025-10-17", "2026-01-15"},
		{"year to date", "2026-01-01", "2026-01-16"},
		{"上个月", "2025-12-01", "2026-01-01"},
		{"上上个月", "2025-11-01", "2025-12-01"},
		{"本季度", "2026-01-01", "2026-04-01"},
		{"去年", "2025-01-01", "2026-01-01"},
		{"前年", "2024-01-01", "2025-01-01"},
		{"2025年第三季度", "2025-07-01", "2025-10-01"},
		{"2025年Q2", "2025-04-01", "2025-07-01"},
		{"2025年3月", "2025-03-01", "2025-04-01"},
		{"2024年", "2024-01-01", "2025-01-01"},
		{"最近30天", "2025-12-16", "2026-01-15"},
		{"近三个月", "2025-10-15", "2026-01-15"},
	}
	for _, c := range cases {
		ts := findTimes(c.text, asOf, 0)
		if len(ts) != 1 {
			t.Errorf("%q: %d expressions", c.text, len(ts))
			continue
		}
		r := ts[0].rng
		if day(r.From) != c.from || day(r.To) != c.to {
			t.Errorf("%q = [%s, %s), want [%s, %s)", c.text, day(r.From), day(r.To), c.from, c.to)
		}
	}
	// A quarter without its year takes the other expression's year.
	ts := findTimes("2025 Q3 compared with Q2", asOf, 0)
	if len(ts) != 2 || day(ts[1].rng.From) != "2025-04-01" {
		t.Errorf("Q2 read as %+v", ts)
	}
	// Top-5 is no time.
	if ts := findTimes("前5个商品", asOf, 0); len(ts) != 0 {
		t.Errorf("前5个 read as a time: %+v", ts)
	}
}

func day(t interface{ Format(string) string }) string { return t.Format("2006-01-02") }
