package nlsql

import (
	"slices"
)

// dims finds the groupings: time buckets (monthly, by month, 每月), and the
// tables or columns after a grouping word (by region, 各品类), a ranking
// word (top 5 products, 销量最高的5个商品) or "which" (哪个地区).
func (b *builder) dims() {
	for i, it := range b.items {
		if b.used[i] {
			continue
		}
		switch {
		case it.has(mBucket):
			m, _ := it.first(mBucket)
			if m.grouped || (i > 0 && b.items[i-1].has(mGroup)) {
				b.used[i] = true
				b.bucket(m.unit)
			}
		case it.has(mGroup):
			if j := b.near(i, 2, 0, b.isDimItem); j >= 0 && !b.items[j].has(mBucket) {
				b.used[i] = true
				b.dimFrom(j)
			}
		}
	}
	for i, it := range b.items {
		if b.used[i] || !(it.has(mTop) || it.has(mWhich)) {
			continue
		}
		j := b.near(i, 4, 3, b.isDimItem)
		if j < 0 || b.items[j].has(mBucket) {
			continue
		}
		b.used[i] = true
		b.dimFrom(j)
		b.rank(i, it)
	}
}

// isDimItem: a table, or a column that is not a number, or a bucket.
func (b *builder) isDimItem(it item) bool {
	if it.has(mMetric) || it.has(mValue) && !it.has(mTable) && !it.has(mColumn) {
		return false
	}
	if isTableItem(it) || it.has(mBucket) {
		return true
	}
	_, ok := b.column(it, func(c ColumnRef) bool { k := b.d.kindOf(c); return k == KindText || k == KindBool })
	return ok
}

// dimFrom groups by item j: a column, or a table's naming column (or a
// column of that table named right after it: "product category").
func (b *builder) dimFrom(j int) {
	b.used[j] = true
	it := b.items[j]
	if ref, ok := b.column(it, func(c ColumnRef) bool { k := b.d.kindOf(c); return k == KindText || k == KindBool }); ok && !isTableItem(it) {
		b.addDim(Dim{Col: ref, Label: b.d.dimLabel(ref), Name: b.d.displayName(ref, b.zh)})
		return
	}
	table := b.tableOf(j)
	if j+1 < len(b.items) && !b.used[j+1] {
		if ref, ok := b.column(b.items[j+1], func(c ColumnRef) bool { return c.Table == table && b.d.kindOf(c) == KindText }); ok {
			b.used[j+1] = true
			b.addDim(Dim{Col: ref, Label: b.d.dimLabel(ref), Name: b.d.displayName(ref, b.zh)})
			return
		}
	}
	t, _ := b.d.table(table)
	col := t.displayColumn(b.zh)
	if col == "" {
		b.problem("the table %s has no column that names its rows, to group by", "表 %s 没有可用于分组的名称列", table)
		return
	}
	ref := ColumnRef{Table: table, Column: col}
	b.addDim(Dim{Col: ref, Label: b.d.dimLabel(ref), Name: b.d.tableName(table, b.zh)})
}

func (b *builder) addDim(d Dim) {
	if !slices.ContainsFunc(b.spec.Dims, func(x Dim) bool { return x.Col == d.Col && x.Bucket == d.Bucket }) {
		b.spec.Dims = append(b.spec.Dims, d)
	}
}

func (b *builder) bucket(unit string) {
	name := unit
	if b.zh {
		name = map[string]string{"day": "日", "week": "周", "month": "月份", "quarter": "季度", "year": "年份"}[unit]
	}
	b.addDim(Dim{Bucket: unit, Label: unit, Name: name}) // the column is chosen with the time filter's
}

// rank orders by the measure: N from a number near the ranking word,
// else one for "which" (哪个) and a superlative, none for 哪些, ten for "top".
func (b *builder) rank(i int, it item) {
	b.spec.Ranked = true
	for _, x := range b.items { // "which regions had the lowest GMV": the direction may sit elsewhere
		if m, ok := x.first(mTop); ok {
			b.spec.Ascending = !m.desc
			break
		}
	}
	if j := b.near(i, 3, 3, func(x item) bool { return x.isNum && x.num > 0 && x.num <= 1000 }); j >= 0 {
		b.used[j] = true
		b.spec.Limit = b.items[j].num
		return
	}
	switch {
	case it.text == "哪些":
	case it.has(mWhich), it.has(mTop) && it.text != "top":
		b.spec.Limit = 1
	default:
		b.spec.Limit = 10
	}
}

// filters: values (paid, 上海), a note's value sets (华东) and qualified
// entities (active customers) not already the measure.
func (b *builder) filters() {
	byCol := map[ColumnRef]*Filter{}
	var order []ColumnRef
	add := func(ref ColumnRef, values []string, source, term string) {
		f := byCol[ref]
		if f == nil {
			f = &Filter{Col: ref, Source: source, Term: term}
			byCol[ref] = f
			order = append(order, ref)
		} else if term != "" && f.Term != term {
			f.Term += ", " + term
		}
		for _, v := range values {
			if !slices.Contains(f.Values, v) {
				f.Values = append(f.Values, v)
			}
		}
	}
	for i, it := range b.items {
		if b.used[i] {
			continue
		}
		switch {
		case it.has(mValueSet):
			m, _ := it.first(mValueSet)
			b.used[i] = true
			add(m.note.set.Col, m.note.set.Values, m.note.note.ID, it.text)
			b.note(m.note.note.ID)
		case it.has(mQualifier):
			m, _ := it.first(mQualifier)
			b.used[i] = true
			b.spec.Qualifiers = append(b.spec.Qualifiers, *m.note.qual)
			b.note(m.note.note.ID)
		case it.has(mValue):
			m := b.value(it)
			b.used[i] = true
			add(ColumnRef{Table: m.table, Column: m.column}, []string{m.value}, "question", it.text)
		}
	}
	for _, ref := range order {
		b.spec.Filters = append(b.spec.Filters, *byCol[ref])
	}
}

// value picks among a phrase's value readings (a value several columns
// hold): the measure's table's, else a table the text names, else the first.
func (b *builder) value(it item) meaning {
	var vals []meaning
	for _, m := range it.means {
		if m.kind == mValue {
			vals = append(vals, m)
		}
	}
	for _, m := range vals {
		if m.table == b.spec.Measure.Col.Table {
			return m
		}
	}
	tables := map[string]bool{}
	for _, x := range b.items {
		if m, ok := x.first(mTable); ok {
			tables[m.table] = true
		}
	}
	for _, m := range vals {
		if tables[m.table] {
			return m
		}
	}
	return vals[0]
}

func (b *builder) chart() {
	for _, it := range b.items {
		switch {
		case it.has(mNoChart):
			f := false
			b.spec.Chart = &f
		case it.has(mChart):
			t := true
			b.spec.Chart = &t
		}
	}
}
