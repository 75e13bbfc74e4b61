package nlsql

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Range is a half-open time interval [From, To) with its name.
type Range struct {
	From  time.Time `json:"from"`
	To    time.Time `json:"to"`
	Label string    `json:"label"`
	// Unit is the calendar unit the range spans (day, week, month, quarter,
	// year) or "span" for a rolling window; growth compares it with the
	// range just before it.
	Unit string `json:"unit"`
	// Days is the length of a rolling window in days (Unit "span").
	Days int `json:"days,omitempty"`
}

// Previous is the range of the same unit just before r.
func (r Range) Previous() Range {
	switch r.Unit {
	case "year":
		return calendar(r.From.AddDate(-1, 0, 0), "year")
	case "quarter":
		return calendar(r.From.AddDate(0, -3, 0), "quarter")
	case "month":
		return calendar(r.From.AddDate(0, -1, 0), "month")
	case "week":
		return calendar(r.From.AddDate(0, 0, -7), "week")
	case "day":
		return calendar(r.From.AddDate(0, 0, -1), "day")
	}
	d := r.To.Sub(r.From)
	p := Range{From: r.From.Add(-d), To: r.From, Unit: "span", Days: r.Days}
	p.Label = p.span()
	return p
}

// YearEarlier is the same range a year before.
func (r Range) YearEarlier() Range {
	if r.Unit == "span" {
		p := Range{From: r.From.AddDate(-1, 0, 0), To: r.To.AddDate(-1, 0, 0), Unit: "span", Days: r.Days}
		p.Label = p.span()
		return p
	}
	return calendar(r.From.AddDate(-1, 0, 0), r.Unit)
}

func (r Range) span() string {
	return r.From.Format("2006-01-02") + " – " + r.To.AddDate(0, 0, -1).Format("2006-01-02")
}

// Span names the range by its first and last day.
func (r Range) Span() string { return r.span() }

// calendar is the calendar unit (day, week, month, quarter, year) holding t.
func calendar(t time.Time, unit string) Range {
	y, m, d := t.Date()
	loc := t.Location()
	var r Range
	switch unit {
	case "year":
		r = Range{From: time.Date(y, 1, 1, 0, 0, 0, 0, loc), To: time.Date(y+1, 1, 1, 0, 0, 0, 0, loc)}
		r.Label = strconv.Itoa(y)
	case "quarter":
		q := (int(m) - 1) / 3
		r = Range{From: time.Date(y, time.Month(q*3+1), 1, 0, 0, 0, 0, loc), To: time.Date(y, time.Month(q*3+4), 1, 0, 0, 0, 0, loc)}
		r.Label = fmt.Sprintf("%d Q%d", y, q+1)
	case "month":
		r = Range{From: time.Date(y, m, 1, 0, 0, 0, 0, loc), To: time.Date(y, m+1, 1, 0, 0, 0, 0, loc)}
		r.Label = r.From.Format("2006-01")
	case "week": // ISO weeks start on Monday
		day := time.Date(y, m, d, 0, 0, 0, 0, loc)
		off := (int(day.Weekday()) + 6) % 7
		r = Range{From: day.AddDate(0, 0, -off), To: day.AddDate(0, 0, 7-off)}
		r.Label = "week of " + r.From.Format("2006-01-02")
	default:
		r = Range{From: time.Date(y, m, d, 0, 0, 0, 0, loc), To: time.Date(y, m, d+1, 0, 0, 0, 0, loc)}
		r.Label = r.From.Format("2006-01-02")
		unit = "day"
	}
	r.Unit = unit
	return r
}

// timeExpr is a time expression found in a text, at bytes [start, end).
type timeExpr struct {
	rng        Range
	start, end int
	// quarter is set (1–4) for a quarter named without its year; rng is
	// then resolved against the other expressions' year.
	quarter int
}

type timeRule struct {
	re *regexp.Regexp
	// make builds the range from the submatches; ok false skips the match.
	make func(m []string, now time.Time) (timeExpr, bool)
}

var monthNames = map[string]int{"jan": 1, "feb": 2, "mar": 3, "apr": 4, "may": 5, "jun": 6, "jul": 7, "aug": 8, "sep": 9, "sept": 9, "oct": 10, "nov": 11, "dec": 12,
	"january": 1, "february": 2, "march": 3, "april": 4, "june": 6, "july": 7, "august": 8, "september": 9, "october": 10, "november": 11, "december": 12}

var ordinals = map[string]int{"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4,
	"一": 1, "二": 2, "三": 3, "四": 4, "1": 1, "2": 2, "3": 3, "4": 4}

// number reads a small Arabic or Chinese number (三, 十二, 两).
func number(s string) (int, bool) {
	if n, err := strconv.Atoi(s); err == nil {
		return n, true
	}
	digits := map[rune]int{'零': 0, '一': 1, '二': 2, '两': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7, '八': 8, '九': 9}
	n, cur := 0, 0
	for _, r := range s {
		switch {
		case r == '十':
			if cur == 0 {
				cur = 1
			}
			n += cur * 10
			cur = 0
		case r == '百':
			if cur == 0 {
				cur = 1
			}
			n += cur * 100
			cur = 0
		default:
			d, ok := digits[r]
			if !ok {
				return 0, false
			}
			cur = d
		}
	}
	return n + cur, s != ""
}

func quarterOf(y, q int, loc *time.Location) Range {
	return calendar(time.Date(y, time.Month(q*3-2), 1, 0, 0, 0, 0, loc), "quarter")
}

func rolling(now time.Time, n int, unit string) Range {
	today := calendar(now, "day").From
	var from time.Time
	switch unit {
	case "week":
		from = today.AddDate(0, 0, -7*n)
	case "month":
		from = today.AddDate(0, -n, 0)
	case "year":
		from = today.AddDate(-n, 0, 0)
	default:
		from = today.AddDate(0, 0, -n)
	}
	r := Range{From: from, To: today, Unit: "span", Days: int(today.Sub(from).Hours()/24 + 0.5)}
	r.Label = r.span()
	return r
}

func relative(now time.Time, which, unit string) Range {
	cur := calendar(now, unit)
	switch which {
	case "last", "previous", "past", "prior":
		return cur.Previous()
	case "before":
		return cur.Previous().Previous()
	}
	return cur
}

var zhUnits = map[string]string{"天": "day", "日": "day", "周": "week", "星期": "week", "个月": "month", "月": "month", "年": "year", "个季度": "quarter", "季度": "quarter"}

var enUnit = func(s string) string { return strings.TrimSuffix(strings.ToLower(s), "s") }

var timeRules = []timeRule{
	// Rolling windows: "last 90 days", "past 3 months", 最近30天, 近三个月.
	{regexp.MustCompile(`(?i)\b(?:last|past|previous)\s+(\d+)\s+(days?|weeks?|months?|years?)\b`), func(m []string, now time.Time) (timeExpr, bool) {
		n, _ := strconv.Atoi(m[1])
		return timeExpr{rng: rolling(now, n, enUnit(m[2]))}, n > 0
	}},
	{regexp.MustCompile(`(?:最近|近|过去|前)\s*([0-9一二三四五六七八九十两百]+)\s*(天|日|周|星期|个月|月|年)`), func(m []string, now time.Time) (timeExpr, bool) {
		n, ok := number(m[1])
		return timeExpr{rng: rolling(now, n, zhUnits[m[2]])}, ok && n > 0
	}},
	// Quarters with their year: "2025 Q3", "Q3 2025", "third quarter of 2025", 2025年第三季度, 2025年Q3.
	{regexp.MustCompile(`(?i)\b(\d{4})\s*[- ]?\s*q([1-4])\b`), func(m []string, now time.Time) (timeExpr, bool) {
		y, _ := strconv.Atoi(m[1])
		q, _ := strconv.Atoi(m[2])
		return timeExpr{rng: quarterOf(y, q, now.Location())}, true
	}},
	{regexp.MustCompile(`(?i)\bq([1-4])\s*(?:of\s+)?(\d{4})\b`), func(m []string, now time.Time) (timeExpr, bool) {
		y, _ := strconv.Atoi(m[2])
		q, _ := strconv.Atoi(m[1])
		return timeExpr{rng: quarterOf(y, q, now.Location())}, true
	}},
	{regexp.MustCompile(`(?i)\b(first|second|third|fourth|1st|2nd|3rd|4th)\s+quarter\s+(?:of\s+)?(\d{4})\b`), func(m []string, now time.Time) (timeExpr, bool) {
		y, _ := strconv.Atoi(m[2])
		return timeExpr{rng: quarterOf(y, ordinals[strings.ToLower(m[1])], now.Location())}, true
	}},
	{regexp.MustCompile(`(\d{4})\s*年(?:的)?\s*(?:第\s*([1-4一二三四])\s*季度|([1-4一二三四])\s*季度|[Qq]\s*([1-4]))`), func(m []string, now time.Time) (timeExpr, bool) {
		y, _ := strconv.Atoi(m[1])
		q := ordinals[m[2]+m[3]+m[4]]
		return timeExpr{rng: quarterOf(y, q, now.Location())}, q > 0
	}},
	// Months with their year: "March 2025", "2025-03", 2025年3月.
	{regexp.MustCompile(`(?i)\b(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\s+(?:of\s+)?(\d{4})\b`), func(m []string, now time.Time) (timeExpr, bool) {
		y, _ := strconv.Atoi(m[2])
		mo := monthNames[strings.ToLower(m[1])]
		return timeExpr{rng: calendar(time.Date(y, time.Month(mo), 1, 0, 0, 0, 0, now.Location()), "month")}, mo > 0
	}},
	{regexp.MustCompile(`\b(\d{4})-(\d{2})\b`), func(m []string, now time.Time) (timeExpr, bool) {
		y, _ := strconv.Atoi(m[1])
		mo, _ := strconv.Atoi(m[2])
		return timeExpr{rng: calendar(time.Date(y, time.Month(mo), 1, 0, 0, 0, 0, now.Location()), "month")}, mo >= 1 && mo <= 12
	}},
	{regexp.MustCompile(`(\d{4})\s*年\s*([0-9一二三四五六七八九十]{1,3})\s*月份?`), func(m []string, now time.Time) (timeExpr, bool) {
		y, _ := strconv.Atoi(m[1])
		mo, ok := number(m[2])
		return timeExpr{rng: calendar(time.Date(y, time.Month(mo), 1, 0, 0, 0, 0, now.Location()), "month")}, ok && mo >= 1 && mo <= 12
	}},
	// Relative calendar units: "last month", "this quarter", "previous year", 上个月, 本季度, 去年, 前年.
	{regexp.MustCompile(`(?i)\b(last|previous|prior|this|current)\s+(week|month|quarter|year)\b`), func(m []string, now time.Time) (timeExpr, bool) {
		return timeExpr{rng: relative(now, strings.ToLower(m[1]), strings.ToLower(m[2]))}, true
	}},
	{regexp.MustCompile(`(?i)\b(?:(year|month|quarter)[- ]to[- ]date|ytd|mtd)\b`), func(m []string, now time.Time) (timeExpr, bool) {
		unit := strings.ToLower(m[1])
		if unit == "" {
			unit = "year"
			if strings.EqualFold(m[0], "mtd") {
				unit = "month"
			}
		}
		r := calendar(now, unit)
		r.To = calendar(now, "day").To
		return timeExpr{rng: r}, true
	}},
	{regexp.MustCompile(`(?i)\b(yesterday|today)\b`), func(m []string, now time.Time) (timeExpr, bool) {
		which := "this"
		if strings.EqualFold(m[1], "yesterday") {
			which = "last"
		}
		return timeExpr{rng: relative(now, which, "day")}, true
	}},
	{regexp.MustCompile(`(上上个?月|上一?个?月|本月|这个月|当月|上一?个?季度|本季度|这个季度|当季|去年|今年|本年|前年|上周|本周|这周|昨天|今天)`), func(m []string, now time.Time) (timeExpr, bool) {
		w := m[1]
		switch {
		case strings.HasPrefix(w, "上上"):
			return timeExpr{rng: relative(now, "before", "month")}, true
		case strings.HasSuffix(w, "季度") || w == "当季":
			return timeExpr{rng: relative(now, map[bool]string{true: "last", false: "this"}[strings.HasPrefix(w, "上")], "quarter")}, true
		case strings.HasSuffix(w, "月"):
			return timeExpr{rng: relative(now, map[bool]string{true: "last", false: "this"}[strings.HasPrefix(w, "上")], "month")}, true
		case strings.HasSuffix(w, "周"):
			return timeExpr{rng: relative(now, map[bool]string{true: "last", false: "this"}[strings.HasPrefix(w, "上")], "week")}, true
		case w == "去年":
			return timeExpr{rng: relative(now, "last", "year")}, true
		case w == "前年":
			return timeExpr{rng: relative(now, "before", "year")}, true
		case w == "昨天":
			return timeExpr{rng: relative(now, "last", "day")}, true
		case w == "今天":
			return timeExpr{rng: relative(now, "this", "day")}, true
		}
		return timeExpr{rng: relative(now, "this", "year")}, true
	}},
	// Years: "in 2024", 2024年.
	{regexp.MustCompile(`\b((?:19|20)\d{2})\b\s*(?:年度?)?`), func(m []string, now time.Time) (timeExpr, bool) {
		y, _ := strconv.Atoi(m[1])
		return timeExpr{rng: calendar(time.Date(y, 1, 1, 0, 0, 0, 0, now.Location()), "year")}, true
	}},
	// A quarter without its year: "Q2", "the second quarter", 第二季度.
	{regexp.MustCompile(`(?i)\bq([1-4])\b|\b(first|second|third|fourth)\s+quarter\b|第?([1-4一二三四])\s*季度`), func(m []string, now time.Time) (timeExpr, bool) {
		q := ordinals[strings.ToLower(m[1]+m[2]+m[3])]
		return timeExpr{quarter: q, rng: quarterOf(now.Year(), q, now.Location())}, q > 0
	}},
}

// findTimes lists the time expressions of text in order of appearance. A
// quarter named without its year takes the year of another expression (the
// first), else year (when not 0), else now's.
func findTimes(text string, now time.Time, year int) []timeExpr {
	taken := make([]bool, len(text))
	var out []timeExpr
	for _, rule := range timeRules {
		for _, loc := range rule.re.FindAllStringSubmatchIndex(text, -1) {
			start, end := loc[0], loc[1]
			for end > start && text[end-1] == ' ' {
				end--
			}
			if overlaps(taken, start, end) {
				continue
			}
			m := make([]string, len(loc)/2)
			for i := range m {
				if loc[2*i] >= 0 {
					m[i] = text[loc[2*i]:loc[2*i+1]]
				}
			}
			te, ok := rule.make(m, now)
			if !ok {
				continue
			}
			te.start, te.end = start, end
			for i := start; i < end; i++ {
				taken[i] = true
			}
			out = append(out, te)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	for _, te := range out {
		if te.quarter == 0 && te.rng.Unit != "span" {
			year = te.rng.From.Year()
			break
		}
	}
	for i := range out {
		if out[i].quarter > 0 && year > 0 {
			out[i].rng = quarterOf(year, out[i].quarter, now.Location())
		}
	}
	return out
}

func overlaps(taken []bool, start, end int) bool {
	for i := start; i < end; i++ {
		if taken[i] {
			return true
		}
	}
	return false
}
