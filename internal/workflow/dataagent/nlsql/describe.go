package nlsql

import (
	"fmt"
	"strings"
)

// Describe says in words what the spec computes, in Chinese when zh.
func (s Spec) Describe(zh bool) string {
	var b strings.Builder
	m := s.Measure
	name := m.Name
	if formula := measureFormula(m); m.Agg != "" && !strings.Contains(name, "(") {
		name += " [" + formula + "]"
	}
	switch s.Kind {
	case SpecList:
		b.WriteString(pick(zh, "List "+m.Name, "列出"+m.Name))
	case SpecRatio:
		if len(s.Dims) > 0 && len(m.Numerator) == 0 {
			b.WriteString(pick(zh, "Compute each group's share of "+name, "计算各组在"+name+"中的占比"))
		} else {
			b.WriteString(pick(zh, "Compute the share of "+name+" where "+s.numeratorText(), "计算"+s.numeratorText()+"在"+name+"中的占比"))
		}
	case SpecGrowth:
		b.WriteString(pick(zh, fmt.Sprintf("Compare %s in %s with %s", name, s.Time.Range.Label, s.Baseline.Label),
			fmt.Sprintf("比较%s在%s与%s的变化", name, s.Time.Range.Label, s.Baseline.Label)))
	default:
		b.WriteString(pick(zh, "Compute "+name, "计算"+name))
	}
	if len(s.Dims) > 0 && s.Kind != SpecList {
		var ds []string
		for _, d := range s.Dims {
			if d.Bucket != "" {
				ds = append(ds, d.Bucket+" of "+d.Col.String())
			} else {
				ds = append(ds, d.Col.String())
			}
		}
		b.WriteString(pick(zh, " by "+strings.Join(ds, ", "), "，按"+strings.Join(ds, "、")+"分组"))
	}
	if fs := filterConds(append(append([]Filter(nil), m.Filters...), s.Filters...)); len(fs) > 0 {
		b.WriteString(pick(zh, ", where "+strings.Join(fs, " and "), "，条件："+strings.Join(fs, "，")))
	}
	if s.Time != nil && s.Kind != SpecGrowth {
		b.WriteString(pick(zh, fmt.Sprintf(", for %s (%s on %s)", s.Time.Range.Label, s.Time.Range.Span(), s.Time.Col),
			fmt.Sprintf("，时间：%s（%s，按 %s）", s.Time.Range.Label, s.Time.Range.Span(), s.Time.Col)))
	}
	for _, q := range append(s.Qualifiers, qualifierOf(m)...) {
		b.WriteString(pick(zh, fmt.Sprintf(", counting only %s with %s in %s", q.Entity, q.Key.Table, q.Range.Span()),
			fmt.Sprintf("，仅统计在 %s 内有 %s 记录的 %s", q.Range.Span(), q.Key.Table, q.Entity)))
	}
	if s.Ranked && s.Limit > 0 {
		order := pick(zh, "highest", "最高")
		if s.Ascending {
			order = pick(zh, "lowest", "最低")
		}
		b.WriteString(pick(zh, fmt.Sprintf(", the %d %s", s.Limit, order), fmt.Sprintf("，取%s的前 %d 个", order, s.Limit)))
	}
	return b.String()
}

func qualifierOf(m Measure) []Qualifier {
	if m.Qualifier == nil {
		return nil
	}
	return []Qualifier{*m.Qualifier}
}

func (s Spec) numeratorText() string {
	return strings.Join(filterConds(append(append([]Filter(nil), s.Measure.Numerator...), s.Numerator...)), " and ")
}

// PeriodText names the spec's period for a sentence ("in 2025 Q3 (2025-07-01
// – 2025-09-30)"), or "".
func (s Spec) PeriodText(zh bool) string {
	if s.Time == nil {
		return ""
	}
	r := s.Time.Range
	return pick(zh, fmt.Sprintf("in %s (%s)", r.Label, r.Span()), fmt.Sprintf("%s（%s）", r.Label, r.Span()))
}

// ScopeText names the spec's filters for a sentence ("in 华东, refunded").
func (s Spec) ScopeText(zh bool) string {
	var terms []string
	for _, f := range append(append([]Filter(nil), s.Filters...), s.Numerator...) {
		t := f.Term
		if t == "" {
			t = strings.Join(f.Values, "/")
		}
		terms = append(terms, t)
	}
	if len(terms) == 0 {
		return ""
	}
	return pick(zh, "for "+strings.Join(terms, ", "), strings.Join(terms, "、"))
}

// Chinese reports whether the spec should be told in Chinese.
func (s Spec) Chinese() bool { return s.Language == "zh" }

func pick(zh bool, en, cn string) string {
	if zh {
		return cn
	}
	return en
}
