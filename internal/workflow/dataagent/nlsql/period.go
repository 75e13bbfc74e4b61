package nlsql

import (
	"slices"
	"sort"
	"strings"
)

// shape settles the time filter, the kind (a share, a growth) and checks
// that everything the text named takes part.
func (b *builder) shape() {
	var times []Range
	for i, it := range b.items {
		if it.time != nil {
			b.used[i] = true
			times = append(times, it.time.rng)
		}
	}
	growth, ratio := "", false
	for i, it := range b.items {
		if m, ok := it.first(mGrowth); ok && !b.used[i] {
			b.used[i] = true
			if growth == "" || m.unit == "yoy" {
				growth = m.unit
			}
		}
		if it.has(mRatio) && !b.used[i] {
			b.used[i] = true
			ratio = true
		}
	}
	if growth != "" && b.spec.Kind != SpecList {
		b.growth(times, growth)
	} else if len(times) > 0 {
		b.setTime(times[0])
	}
	if ratio && b.spec.Kind == SpecAggregate {
		b.ratio()
	}
	b.timeBuckets()
	b.checkGrowthBuckets()
	b.checkMentions()
	b.checkMeasures()
	b.checkQualifiers()
}

// checkGrowthBuckets: a growth compares one period with another; broken down by month or
// quarter as well, its query would compare no bucket with anything (each bucket falls in one
// of the two periods), so it is refused rather than answered with empty figures.
func (b *builder) checkGrowthBuckets() {
	if b.spec.Kind != SpecGrowth {
		return
	}
	for _, d := range b.spec.Dims {
		if d.Bucket != "" {
			b.problem("a growth by %[1]s is not defined here: a growth compares one period with another; ask for %[2]s by %[1]s, or for its growth in one period (\"%[2]s growth in 2025 Q3\")",
				"按%[1]s的增长在此没有定义：增长是两个时间段之间的比较；请改问按%[1]s的%[2]s，或某一时间段的增长（“2025年第三季度%[2]s同比增长”）",
				d.Name, b.spec.Measure.Name)
			return
		}
	}
}

// checkMeasures: a second measure, or an aggregation word the measure does
// not take ("average GMV"), is something the query would not answer.
func (b *builder) checkMeasures() {
	seen := map[*noteDef]bool{}
	for i, it := range b.items {
		if b.used[i] {
			continue
		}
		if m, ok := it.first(mMetric); ok && m.note.measure != nil && !seen[m.note] && m.note.note.ID != b.spec.Measure.Source {
			seen[m.note] = true
			b.problem("the question asks for more than one measure (%s and %s); ask for one at a time",
				"问题同时要求多个指标（%s 和 %s），请一次问一个", b.spec.Measure.Name, it.text)
		}
		if m, ok := it.first(mAgg); ok && m.agg != "count?" && m.agg != b.spec.Measure.Agg && b.spec.Measure.Agg != "" {
			if j := b.near(i, 2, 2, func(x item) bool { return isTableItem(x) || hasNumericColumn(b)(x) }); j >= 0 {
				what := b.items[j].text + it.text
				if !b.zh {
					what = it.text + " " + b.items[j].text
				}
				b.problem("the question asks for more than one measure (%s and %s); ask for one at a time",
					"问题同时要求多个指标（%s 和 %s），请一次问一个", b.spec.Measure.Name, what)
				continue
			}
			b.problem("%q cannot be applied to %s, which is already a %s", "“%s”无法作用于 %s（它本身是 %s）", it.text, b.spec.Measure.Name,
				strings.ToUpper(b.spec.Measure.Agg))
		}
	}
}

// checkQualifiers: a qualified entity is defined by its own window ("the
// last 90 days"); counting it over another period is not defined.
func (b *builder) checkQualifiers() {
	qs := b.spec.Qualifiers
	if b.spec.Measure.Qualifier != nil {
		qs = append(qs, *b.spec.Measure.Qualifier)
	}
	if len(qs) == 0 {
		return
	}
	bucket := slices.ContainsFunc(b.spec.Dims, func(d Dim) bool { return d.Bucket != "" })
	if (b.spec.Time != nil && b.spec.Time.Col.Table == qs[0].Entity) || bucket {
		name := qs[0].Name
		if b.spec.Measure.Qualifier != nil {
			name = b.spec.Measure.Name
		}
		b.problem("%q is defined by its own period (%s); the notes do not say what it means for another period",
			"“%s”按其自身的时间段定义（%s），业务说明没有定义它在其他时间段的含义", name, qs[0].Range.Span())
	}
}

// growth compares the latest period named with the earlier one named, or
// with the period before it (the same period a year before for 同比/YoY).
func (b *builder) growth(times []Range, kind string) {
	if len(times) == 0 {
		b.problem("a growth needs a period to measure (for example \"last month\" or \"2025 Q3\")", "计算增长需要一个时间段（例如“上个月”或“2025年第三季度”）")
		return
	}
	sort.SliceStable(times, func(i, j int) bool { return times[i].From.After(times[j].From) })
	cur := times[0]
	base := cur.Previous()
	switch {
	case len(times) > 1:
		base = times[1]
	case kind == "yoy":
		base = cur.YearEarlier()
	}
	b.spec.Kind = SpecGrowth
	b.setTime(cur)
	b.spec.Baseline = &base
}

func (b *builder) setTime(r Range) {
	col, ok := b.timeColumn()
	if !ok {
		b.problem("no date or time column to restrict to %s", "没有可用于限定到 %s 的日期或时间列", r.Label)
		return
	}
	b.spec.Time = &TimeFilter{Col: col, Range: r}
}

// timeColumn is the time column a period applies to: one the text names,
// else the measure table's, else that of a table it references.
func (b *builder) timeColumn() (ColumnRef, bool) {
	for i, it := range b.items {
		if ref, ok := b.column(it, func(c ColumnRef) bool { return b.d.kindOf(c) == KindTime }); ok {
			b.used[i] = true
			return ref, true
		}
	}
	base := b.spec.Measure.Col.Table
	seen := map[string]bool{}
	queue := []string{base}
	for len(queue) > 0 {
		t, _ := b.d.table(queue[0])
		queue = queue[1:]
		if seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		if cols := t.timeColumns(); len(cols) > 0 {
			return ColumnRef{Table: t.Name, Column: cols[0]}, true
		}
		for _, fk := range t.ForeignKeys {
			queue = append(queue, fk.RefTable)
		}
	}
	return ColumnRef{}, false
}

// timeBuckets gives bucket dims their column: the time filter's, or the
// measure's time column.
func (b *builder) timeBuckets() {
	for i := range b.spec.Dims {
		if b.spec.Dims[i].Bucket == "" {
			continue
		}
		if b.spec.Time != nil {
			b.spec.Dims[i].Col = b.spec.Time.Col
			continue
		}
		col, ok := b.timeColumn()
		if !ok {
			b.problem("no date or time column to group by %s", "没有可按 %s 分组的日期或时间列", b.spec.Dims[i].Bucket)
			continue
		}
		b.spec.Dims[i].Col = col
	}
}

// ratio: with groups, each group's share of the total; without, the share
// of rows matching the filters on the measure's own table (refunded
// orders), else of rows matching all the question's filters (GMV from East
// China).
func (b *builder) ratio() {
	b.spec.Kind = SpecRatio
	if len(b.spec.Dims) > 0 || len(b.spec.Measure.Numerator) > 0 {
		return
	}
	var num, rest []Filter
	for _, f := range b.spec.Filters {
		if f.Col.Table == b.spec.Measure.Col.Table {
			num = append(num, f)
		} else {
			rest = append(rest, f)
		}
	}
	if len(num) == 0 {
		num, rest = b.spec.Filters, nil
	}
	if len(num) == 0 {
		b.problem("a share needs the rows it counts (for example \"refunded\" orders or a region)", "计算占比需要说明统计哪些行（例如“退款”订单或某个地区）")
		return
	}
	b.spec.Numerator, b.spec.Filters = num, rest
}

// checkMentions: every table the text names must take part in the query;
// one that does not means the question says something the query would not.
func (b *builder) checkMentions() {
	in := b.spec.tables()
	for i, it := range b.items {
		if m, ok := it.first(mTable); ok && !b.used[i] && !slices.Contains(in, m.table) && !it.has(mMetric) {
			b.problem("the question names %q (table %s), but how it bears on the answer is unclear", "问题提到了“%s”（表 %s），但不清楚它与答案的关系", it.text, m.table)
		}
	}
}

// tables lists the tables the query needs, the measure's first.
func (s Spec) tables() []string {
	var out []string
	add := func(t string) {
		if t != "" && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	add(s.Measure.Col.Table)
	for _, f := range s.AllFilters() {
		add(f.Col.Table)
	}
	for _, d := range s.Dims {
		add(d.Col.Table)
	}
	if s.Time != nil {
		add(s.Time.Col.Table)
	}
	for _, q := range s.Qualifiers {
		add(q.Entity)
	}
	for _, c := range s.ListCols {
		add(c.Table)
	}
	return out
}
