package nlsql

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// render writes the query of s. Where a join would repeat the measure's
// rows (a per-order amount joined to order items, to group by product), it
// sums the per-row amount of the joined table instead when that table has
// one of the same name, counts distinct rows, or refuses (an average) with
// the reason; s.Adjusted records the change.
func (d *domain) render(s *Spec) (string, error) {
	base := s.Measure.Col.Table
	joins, err := d.planJoins(base, s.tables()[1:])
	if err != nil {
		return "", err
	}
	if fo, ok := anyFanout(joins); ok && s.Kind != SpecList {
		if base, joins, err = d.avoidFanout(s, fo); err != nil {
			return "", err
		}
	}
	var q strings.Builder
	dims, groups := d.dimExprs(s)
	selects := append(dims, d.measureExprs(s)...)
	q.WriteString("SELECT " + strings.Join(selects, ",\n       "))
	q.WriteString("\nFROM " + ident(base))
	for _, j := range joins {
		q.WriteString("\nJOIN " + ident(j.table) + " ON " + strings.Join(j.on, " AND "))
	}
	if where := d.where(s); len(where) > 0 {
		q.WriteString("\nWHERE " + strings.Join(where, "\n  AND "))
	}
	if len(groups) > 0 && s.Kind != SpecList {
		q.WriteString("\nGROUP BY " + strings.Join(groups, ", "))
	}
	if order := d.orderBy(s); order != "" {
		q.WriteString("\nORDER BY " + order)
	}
	if s.Limit > 0 {
		q.WriteString("\nLIMIT " + strconv.Itoa(s.Limit))
	}
	return q.String(), nil
}

// avoidFanout rewrites the measure so that the join through fo does not
// count a row of the base table more than once.
func (d *domain) avoidFanout(s *Spec, fo join) (string, []join, error) {
	m := &s.Measure
	base := m.Col.Table
	switch {
	case m.Agg == "count" && m.Qualifier == nil:
		t, _ := d.table(base)
		if len(t.PrimaryKey) != 1 {
			return "", nil, fmt.Errorf("counting %s per %s would count a row once per %s row, and %s has no single-column key to count distinct rows by", base, fo.table, fo.table, base)
		}
		m.Agg, m.Col.Column = "count_distinct", t.PrimaryKey[0]
		s.Adjusted = append(s.Adjusted, fmt.Sprintf("counts distinct %s.%s: joining %s repeats each %s row", base, m.Col.Column, fo.table, singular(base)))
	case m.Agg == "max" || m.Agg == "min":
	case m.Agg == "sum":
		many, _ := d.table(fo.table)
		if _, ok := many.Column(m.Col.Column); !ok || fo.from != base || Kind(columnType(many, m.Col.Column)) != KindNumber {
			return "", nil, fmt.Errorf("summing %s per %s would repeat each %s row once per %s row, and %s has no %s of its own", col(m.Col), fo.table, singular(base), singular(fo.table), fo.table, m.Col.Column)
		}
		old := m.Col
		m.Col = ColumnRef{Table: fo.table, Column: m.Col.Column}
		s.Adjusted = append(s.Adjusted, fmt.Sprintf("sums %s instead of %s: one %s has several %s", col(m.Col), col(old), singular(base), strings.ReplaceAll(fo.table, "_", " ")))
		joins, err := d.planJoins(fo.table, s.tables()[1:])
		if err != nil {
			return "", nil, err
		}
		if fo2, again := anyFanout(joins); again {
			return d.avoidFanout(s, fo2)
		}
		return fo.table, joins, nil
	default:
		return "", nil, fmt.Errorf("the %s of %s per %s cannot be computed from these tables: one %s has several %s rows", m.Agg, col(m.Col), fo.table, singular(base), fo.table)
	}
	joins, err := d.planJoins(base, s.tables()[1:])
	return base, joins, err
}

func columnType(t Table, name string) string {
	c, _ := t.Column(name)
	return c.Type
}

// dimExprs returns the grouping expressions with their output names, and
// the expressions to GROUP BY.
func (d *domain) dimExprs(s *Spec) (selects, groups []string) {
	if s.Kind == SpecList {
		for _, c := range s.ListCols {
			selects = append(selects, col(c))
		}
		return selects, nil
	}
	for _, dm := range s.Dims {
		e := col(dm.Col)
		if dm.Bucket != "" {
			e = bucketExpr(dm.Bucket, e)
		}
		selects = append(selects, e+" AS "+ident(dm.Label))
		groups = append(groups, e)
	}
	return selects, groups
}

func bucketExpr(unit, e string) string {
	format := map[string]string{"day": "YYYY-MM-DD", "week": `IYYY-"W"IW`, "month": "YYYY-MM", "quarter": `YYYY-"Q"Q`, "year": "YYYY"}[unit]
	return "to_char(date_trunc(" + literal(unit) + ", " + e + "), " + literal(format) + ")"
}

// aggExpr is the measure's aggregate, restricted by cond (FILTER) when set.
func aggExpr(m Measure, cond string) string {
	filter := ""
	if cond != "" {
		filter = " FILTER (WHERE " + cond + ")"
	}
	switch m.Agg {
	case "count":
		return "COUNT(*)" + filter
	case "count_distinct":
		return "COUNT(DISTINCT " + col(m.Col) + ")" + filter
	case "avg":
		return "ROUND(AVG(" + col(m.Col) + ")" + filter + ", 2)"
	}
	return strings.ToUpper(m.Agg) + "(" + col(m.Col) + ")" + filter
}

func (d *domain) measureExprs(s *Spec) []string {
	m := s.Measure
	switch s.Kind {
	case SpecList:
		return nil
	case SpecGrowth:
		cur, prev := rangeCond(s.Time.Col, s.Time.Range), rangeCond(s.Time.Col, *s.Baseline)
		c, p := aggExpr(m, cur), aggExpr(m, prev)
		return []string{c + " AS " + ident("current_"+m.Label), p + " AS " + ident("previous_"+m.Label),
			"ROUND((" + c + " - " + p + ")::numeric / NULLIF(" + p + ", 0), 4) AS growth"}
	case SpecRatio:
		if len(s.Dims) > 0 && len(m.Numerator) == 0 {
			a := aggExpr(m, "")
			return []string{a + " AS " + ident(m.Label), "ROUND(" + a + "::numeric / NULLIF(SUM(" + a + ") OVER (), 0), 4) AS share"}
		}
		num := append(append([]Filter(nil), m.Numerator...), s.Numerator...)
		whole := m
		whole.Numerator = nil
		part, all := aggExpr(whole, strings.Join(filterConds(num), " AND ")), aggExpr(whole, "")
		return []string{part + " AS part", all + " AS total", "ROUND(" + part + "::numeric / NULLIF(" + all + ", 0), 4) AS share"}
	}
	return []string{aggExpr(m, "") + " AS " + ident(m.Label)}
}

// where lists the conditions every row must meet.
func (d *domain) where(s *Spec) []string {
	conds := filterConds(append(append([]Filter(nil), s.Measure.Filters...), s.Filters...))
	if s.Time != nil {
		r := s.Time.Range
		if s.Kind == SpecGrowth && s.Baseline != nil {
			if s.Baseline.From.Before(r.From) {
				r.From = s.Baseline.From
			}
			if s.Baseline.To.After(r.To) {
				r.To = s.Baseline.To
			}
		}
		conds = append(conds, rangeCond(s.Time.Col, r))
	}
	qs := s.Qualifiers
	if s.Measure.Qualifier != nil {
		qs = append([]Qualifier{*s.Measure.Qualifier}, qs...)
	}
	for i, q := range qs {
		alias := "q" + strconv.Itoa(i+1)
		conds = append(conds, "EXISTS (SELECT 1 FROM "+ident(q.Key.Table)+" AS "+alias+" WHERE "+alias+"."+ident(q.Key.Column)+" = "+col(q.EntityKey)+
			" AND "+rangeCond(ColumnRef{Table: alias, Column: q.Time.Column}, q.Range)+")")
	}
	return conds
}

func filterConds(fs []Filter) []string {
	var out []string
	for _, f := range fs {
		if len(f.Values) == 1 {
			out = append(out, col(f.Col)+" = "+literal(f.Values[0]))
			continue
		}
		vals := make([]string, len(f.Values))
		for i, v := range f.Values {
			vals[i] = literal(v)
		}
		out = append(out, col(f.Col)+" IN ("+strings.Join(vals, ", ")+")")
	}
	return out
}

func rangeCond(c ColumnRef, r Range) string {
	return col(c) + " >= " + literal(dateLiteral(r.From)) + " AND " + col(c) + " < " + literal(dateLiteral(r.To))
}

func dateLiteral(t interface{ Format(string) string }) string { return t.Format("2006-01-02") }

func (d *domain) orderBy(s *Spec) string {
	switch {
	case s.Kind == SpecList:
		if len(s.ListCols) > 0 {
			return col(s.ListCols[0])
		}
	case len(s.Dims) == 0:
	case s.Kind == SpecGrowth:
		return "growth DESC NULLS LAST"
	case s.Kind == SpecRatio:
		return "share DESC"
	case s.Ranked || !slices.ContainsFunc(s.Dims, func(d Dim) bool { return d.Bucket != "" }):
		dir := "DESC"
		if s.Ascending {
			dir = "ASC"
		}
		return ident(s.Measure.Label) + " " + dir + ", 1"
	default:
		labels := make([]string, len(s.Dims))
		for i, dm := range s.Dims {
			labels[i] = ident(dm.Label)
		}
		return strings.Join(labels, ", ")
	}
	return ""
}
