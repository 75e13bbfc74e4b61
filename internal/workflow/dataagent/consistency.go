package dataagent

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"weft/internal/workflow/dataagent/nlsql"
)

// checkConsistency checks sql against the recalled schema and what the
// question (with its notes) requires: one read-only SELECT; every table in
// the analysis schema and recalled, every column in its table; the filters
// the question and the notes ask for present (a GMV query filters paid
// orders, "华东" restricts to its regions, the period bounds its time
// column); the aggregation the question asks for; a GROUP BY exactly when
// the question groups. It returns the reasons it fails, none when it
// passes.
func checkConsistency(sql string, spec nlsql.Spec, cat nlsql.Catalog) []string {
	f, err := analyzeSQL(sql)
	if err != nil {
		return []string{err.Error()}
	}
	var out []string
	out = append(out, f.checkTables(cat)...)
	out = append(out, f.checkColumns(cat)...)
	for _, flt := range spec.AllFilters() {
		if !f.hasFilter(cat, flt) {
			out = append(out, fmt.Sprintf("the question requires %s (%s) but the SQL does not filter on it",
				filterText(flt), sourceText(flt)))
		}
	}
	out = append(out, f.checkTime(cat, spec)...)
	out = append(out, f.checkAggregation(spec)...)
	return out
}

func filterText(f nlsql.Filter) string {
	if len(f.Values) == 1 {
		return fmt.Sprintf("%s = '%s'", f.Col, f.Values[0])
	}
	return fmt.Sprintf("%s IN ('%s')", f.Col, strings.Join(f.Values, "', '"))
}

func sourceText(f nlsql.Filter) string {
	if f.Source == "question" || f.Source == "" {
		return fmt.Sprintf("the question says %q", f.Term)
	}
	return "business note " + f.Source
}

func (f *sqlFacts) checkTables(cat nlsql.Catalog) []string {
	var out []string
	for _, t := range f.tables {
		if t.schema == "" && f.ctes[t.name] {
			continue
		}
		if t.schema != "" && t.schema != cat.Schema {
			out = append(out, fmt.Sprintf("the table %s.%s is outside the analysis schema %s", t.schema, t.name, cat.Schema))
			continue
		}
		if _, ok := cat.Table(t.name); !ok {
			out = append(out, fmt.Sprintf("the table %s is not in the recalled schema (%s)", t.name, tableNames(cat)))
		}
	}
	return out
}

func tableNames(cat nlsql.Catalog) string {
	var names []string
	for _, t := range cat.Tables {
		names = append(names, t.Name)
	}
	return strings.Join(names, ", ")
}

// checkColumns: a qualified column exists in its table; an unqualified one
// in a table of the query or among its output names.
func (f *sqlFacts) checkColumns(cat nlsql.Catalog) []string {
	var out []string
	for _, c := range f.columns {
		if c.qualifier != "" {
			table, known := f.aliases[c.qualifier]
			if !known {
				out = append(out, fmt.Sprintf("the column %s.%s names %q, which no FROM item is called", c.qualifier, c.name, c.qualifier))
				continue
			}
			if t, ok := cat.Table(table); ok && !hasColumn(t, c.name) {
				out = append(out, fmt.Sprintf("the table %s has no column %s", table, c.name))
			}
			continue
		}
		if f.outputs[c.name] || len(f.resolve(cat, c)) > 0 || f.hasDerivedSource() {
			continue
		}
		out = append(out, fmt.Sprintf("no table of the query has a column %s", c.name))
	}
	return out
}

func hasColumn(t nlsql.Table, name string) bool {
	_, ok := t.Column(name)
	return ok
}

// hasDerivedSource: the query reads a subquery or a WITH query, whose
// columns are not in the catalog.
func (f *sqlFacts) hasDerivedSource() bool {
	for _, t := range f.aliases {
		if t == "" {
			return true
		}
	}
	return false
}

// resolve lists the tables a column reference may mean.
func (f *sqlFacts) resolve(cat nlsql.Catalog, c colRef) []string {
	if c.qualifier != "" {
		if t := f.aliases[c.qualifier]; t != "" {
			return []string{t}
		}
		return nil
	}
	var out []string
	for _, t := range f.tables {
		if tb, ok := cat.Table(t.name); ok && hasColumn(tb, c.name) && !slices.Contains(out, t.name) {
			out = append(out, t.name)
		}
	}
	return out
}

func (f *sqlFacts) predsOn(cat nlsql.Catalog, ref nlsql.ColumnRef) []pred {
	var out []pred
	for _, p := range f.preds {
		if p.col.name == ref.Column && slices.Contains(f.resolve(cat, p.col), ref.Table) {
			out = append(out, p)
		}
	}
	return out
}

// hasFilter: a predicate col = v or col IN (…) with exactly the filter's values.
func (f *sqlFacts) hasFilter(cat nlsql.Catalog, flt nlsql.Filter) bool {
	want := slices.Clone(flt.Values)
	slices.Sort(want)
	for _, p := range f.predsOn(cat, flt.Col) {
		if p.op != "=" && p.op != "in" {
			continue
		}
		got := slices.Clone(p.values)
		slices.Sort(got)
		if slices.Equal(got, slices.Compact(want)) {
			return true
		}
	}
	return false
}

// checkTime: each period the question names bounds its time column (>= or
// > its first day, < its end or <= its last day, or BETWEEN them).
func (f *sqlFacts) checkTime(cat nlsql.Catalog, spec nlsql.Spec) []string {
	type period struct {
		col nlsql.ColumnRef
		r   nlsql.Range
	}
	var ps []period
	if spec.Time != nil {
		ps = append(ps, period{spec.Time.Col, spec.Time.Range})
		if spec.Baseline != nil {
			ps = append(ps, period{spec.Time.Col, *spec.Baseline})
		}
	}
	qs := spec.Qualifiers
	if spec.Measure.Qualifier != nil {
		qs = append(qs, *spec.Measure.Qualifier)
	}
	for _, q := range qs {
		ps = append(ps, period{q.Time, q.Range})
	}
	var out []string
	for _, p := range ps {
		if !f.bounds(cat, p.col, p.r) {
			out = append(out, fmt.Sprintf("the question asks for %s (%s), but the SQL does not restrict %s to it", p.r.Label, p.r.Span(), p.col))
		}
	}
	return out
}

func (f *sqlFacts) bounds(cat nlsql.Catalog, col nlsql.ColumnRef, r nlsql.Range) bool {
	from, to, last := day(r.From), day(r.To), day(r.To.AddDate(0, 0, -1))
	lower, upper := false, false
	for _, p := range f.predsOn(cat, col) {
		v := ""
		if len(p.values) > 0 {
			v = p.values[0]
		}
		switch {
		case (p.op == ">=" || p.op == ">") && strings.HasPrefix(v, from):
			lower = true
		case p.op == "<" && strings.HasPrefix(v, to), p.op == "<=" && strings.HasPrefix(v, last):
			upper = true
		case p.op == "between" && len(p.values) == 2 && strings.HasPrefix(p.values[0], from) &&
			(strings.HasPrefix(p.values[1], last) || strings.HasPrefix(p.values[1], to)):
			lower, upper = true, true
		}
	}
	return lower && upper
}

func day(t time.Time) string { return t.Format("2006-01-02") }

// checkAggregation: the measure's aggregate is computed; a list computes
// none; the query groups exactly when the question does.
func (f *sqlFacts) checkAggregation(spec nlsql.Spec) []string {
	var out []string
	aggs := map[string]bool{"sum": true, "avg": true, "count": true, "max": true, "min": true}
	has := func(name string, distinct bool) bool {
		return slices.ContainsFunc(f.funcs, func(fn funcRef) bool { return fn.name == name && (!distinct || fn.distinct) })
	}
	m := spec.Measure
	switch {
	case spec.Kind == nlsql.SpecList:
		if slices.ContainsFunc(f.funcs, func(fn funcRef) bool { return aggs[fn.name] }) {
			out = append(out, "the question lists rows, but the SQL aggregates them")
		}
	case m.Agg == "count_distinct":
		if !has("count", true) {
			out = append(out, "the question counts distinct rows, but the SQL has no COUNT(DISTINCT …)")
		}
	case m.Agg != "" && !has(m.Agg, false):
		out = append(out, fmt.Sprintf("the question asks for %s (%s), but the SQL computes no %s()", m.Name, strings.ToUpper(m.Agg), strings.ToUpper(m.Agg)))
	}
	if want := len(spec.Dims) > 0 && spec.Kind != nlsql.SpecList; want != f.grouped {
		if want {
			out = append(out, fmt.Sprintf("the question groups by %s, but the SQL has no GROUP BY", dimNames(spec.Dims)))
		} else {
			out = append(out, "the question asks for one figure, but the SQL groups its rows")
		}
	}
	return out
}

func dimNames(ds []nlsql.Dim) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Label)
	}
	return strings.Join(out, ", ")
}
