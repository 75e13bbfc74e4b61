package page

import (
	"testing"
	"time"
)

func TestClock(t *testing.T) {
	now := time.Date(2026, 11, 22, 9, 30, 0, 0, time.UTC)
	for _, c := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 11, 22, 0, 0, 1, 250e6, time.UTC), "00:00:01.250"},
		{time.Date(2026, 11, 21, 23, 59, 59, 0, time.UTC), "Nov 21 23:59:59"},
		{time.Date(2025, 11, 22, 9, 0, 0, 0, time.UTC), "2025-11-22 09:00:00"},
		{time.Date(2026, 11, 22, 10, 0, 0, 0, time.FixedZone("CET", 3600)), "09:00:00.000"},
	} {
		if got := Clock(c.at, now); got != c.want {
			t.Errorf("Clock(%v) = %q, want %q", c.at, got, c.want)
		}
	}
}
