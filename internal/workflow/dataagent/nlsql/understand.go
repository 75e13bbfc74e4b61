package nlsql

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Question is what Understand reads: a question and what modifies it (a
// follow-up's "only East China", a reviewer's "by month instead"), a
// catalog, the business notes recalled for it, and the time it is asked at.
type Question struct {
	// Parts are the question, then each follow-up, in order.
	Parts []string `json:"parts"`
	// Feedback are a reviewer's remarks, applied after the parts like
	// follow-ups; their words that map to nothing are reported in Ignored
	// rather than making the question unanswerable ("looks good but only
	// East China").
	Feedback []string `json:"feedback,omitempty"`
	// Lenient are indexes of Parts read like feedback (a reviewer's remark an
	// earlier turn applied, carried into its follow-up): their words that
	// map to nothing are ignored.
	Lenient []int     `json:"lenient,omitempty"`
	Catalog Catalog   `json:"catalog"`
	Notes   []Note    `json:"notes"`
	Now     time.Time `json:"now"`
}

// Understanding is a question read against a catalog: the query that
// answers it, or why there is none.
type Understanding struct {
	Feasible bool   `json:"feasible"`
	Spec     Spec   `json:"spec"`
	SQL      string `json:"sql,omitempty"`
	// Missing are the phrases of the question nothing in the catalog or the
	// notes matches; Problems every reason it cannot be answered.
	Missing  []string `json:"missing,omitempty"`
	Problems []string `json:"problems,omitempty"`
	Ignored  []string `json:"ignored,omitempty"`
	// Definitions are the notes used, compiled ("GMV = SUM(orders.amount)
	// where orders.status = 'paid'").
	Definitions []Definition `json:"definitions,omitempty"`
}

// Definition is a note as the model understood it.
type Definition struct {
	NoteID  string `json:"note_id"`
	Term    string `json:"term"`
	Kind    string `json:"kind"`
	Meaning string `json:"meaning"`
}

// Understand reads q. It never guesses: a phrase it cannot map, a table it
// cannot join, a measure it cannot compute leaves Feasible false with the
// reasons.
func Understand(q Question) Understanding {
	var u Understanding
	if len(q.Parts) == 0 || strings.TrimSpace(q.Parts[0]) == "" {
		u.Problems = []string{"there is no question"}
		return u
	}
	d := newDomain(q.Catalog, q.Notes, q.Now)
	var items []item
	texts := append(append([]string(nil), q.Parts...), q.Feedback...)
	year := 0
	for i, text := range texts {
		p := parse(text, d.lex, q.Now, i, year)
		for _, it := range p.items {
			if it.time != nil && it.time.quarter == 0 && it.time.rng.Unit != "span" && year == 0 {
				year = it.time.rng.From.Year()
			}
		}
		if i < len(q.Parts) && !slices.Contains(q.Lenient, i) {
			u.Missing = append(u.Missing, p.unmapped...)
		} else {
			u.Ignored = append(u.Ignored, p.unmapped...)
		}
		if i == 0 {
			items = p.items
		} else {
			items = override(items, p.items)
		}
	}
	zh := hasHan(q.Parts[len(q.Parts)-1])
	spec, problems := d.build(items, zh)
	spec.Questions = texts
	var missing []string
	for _, m := range u.Missing {
		missing = append(missing, fmt.Sprintf(pick(zh, "nothing in the schema %s or its notes matches %q", "数据集 %s 及其业务说明中没有与“%s”对应的内容"), q.Catalog.Schema, m))
	}
	if len(missing) > 0 { // the unmapped words are why nothing could be computed
		problems = slices.DeleteFunc(problems, func(p string) bool { return strings.HasPrefix(p, noMeasure) || strings.HasPrefix(p, noMeasureZH) })
	}
	problems = append(missing, problems...)
	u.Spec, u.Problems = spec, problems
	u.Definitions = d.definitions(spec.Notes, zh)
	if len(problems) > 0 {
		return u
	}
	sql, err := d.render(&u.Spec)
	if err != nil {
		u.Problems = append(u.Problems, err.Error())
		return u
	}
	u.SQL, u.Feasible = sql, true
	return u
}

// override applies a follow-up's items to a question's: a period replaces
// the period, a value replaces the values of its column, a measure the
// measure, a ranking the ranking; a grouping is added (or replaces, with
// "instead", 换成).
func override(base, mod []item) []item {
	has := func(ks ...meaningKind) bool {
		return slices.ContainsFunc(mod, func(it item) bool { return slices.ContainsFunc(ks, it.has) })
	}
	instead := slices.ContainsFunc(mod, func(it item) bool {
		return it.has(mFollow) && slices.Contains([]string{"instead", "换成", "改成", "改为"}, strings.ToLower(it.text))
	})
	cols := map[ColumnRef]bool{}
	for _, it := range mod {
		for _, m := range it.means {
			if m.kind == mValue {
				cols[ColumnRef{Table: m.table, Column: m.column}] = true
			}
			if (m.kind == mValueSet) && m.note.set != nil {
				cols[m.note.set.Col] = true
			}
		}
	}
	modTime, modMeasure := slices.ContainsFunc(mod, func(it item) bool { return it.time != nil }), has(mMetric, mAgg)
	modRank, modGroup := has(mTop, mWhich), has(mGroup, mBucket) && instead
	var out []item
	target := false // the item after a dropped grouping word is what it grouped by
	for _, it := range base {
		wasTarget := target && (it.has(mTable) || it.has(mColumn))
		target = modGroup && it.has(mGroup)
		drop := wasTarget || (it.time != nil && modTime) ||
			(modMeasure && (it.has(mMetric) || it.has(mAgg) || it.has(mQualifier))) ||
			(modRank && (it.has(mTop) || it.has(mWhich) || it.isNum)) ||
			(modGroup && (it.has(mGroup) || it.has(mBucket))) ||
			(has(mChart, mNoChart) && (it.has(mChart) || it.has(mNoChart)))
		for _, m := range it.means {
			if m.kind == mValue && cols[ColumnRef{Table: m.table, Column: m.column}] ||
				m.kind == mValueSet && m.note.set != nil && cols[m.note.set.Col] {
				drop = true
			}
		}
		if !drop {
			out = append(out, it)
		}
	}
	return append(out, mod...)
}

// definitions describes the notes a spec used.
func (d *domain) definitions(ids []string, zh bool) []Definition {
	var out []Definition
	for _, def := range d.notes {
		if !slices.Contains(ids, def.note.ID) {
			continue
		}
		out = append(out, Definition{NoteID: def.note.ID, Term: def.name(zh), Kind: def.kind, Meaning: def.meaning()})
	}
	return out
}

// meaning writes a compiled note as a formula.
func (n *noteDef) meaning() string {
	switch n.kind {
	case defMetric:
		m := n.measure
		s := measureFormula(*m)
		if fs := filterConds(m.Filters); len(fs) > 0 {
			s += " where " + strings.Join(fs, " and ")
		}
		if len(m.Numerator) > 0 {
			s = "share of " + s + " with " + strings.Join(filterConds(m.Numerator), " and ")
		}
		return s
	case defValueSet:
		return filterConds([]Filter{*n.set})[0]
	case defQualifier:
		q := n.qual
		return fmt.Sprintf("%s with a row of %s (%s = %s) where %s is in %s", q.Entity, q.Key.Table, col(q.Key), col(q.EntityKey), col(q.Time), q.Range.Span())
	}
	return n.problem
}

func measureFormula(m Measure) string {
	switch {
	case m.Agg == "count" && m.Col.Column == "":
		return "COUNT(" + m.Col.Table + ")"
	case m.Agg == "count_distinct":
		return "COUNT(DISTINCT " + col(m.Col) + ")"
	}
	return strings.ToUpper(m.Agg) + "(" + col(m.Col) + ")"
}
