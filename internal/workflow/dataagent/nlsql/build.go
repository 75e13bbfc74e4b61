package nlsql

import (
	"fmt"
	"slices"
	"strings"
)

// builder turns parsed items into a Spec.
type builder struct {
	d        *domain
	items    []item
	zh       bool
	used     []bool
	spec     Spec
	problems []string
	// mentioned lists the tables the text names (tables, and the tables of
	// the columns and values it names): each must take part in the query.
	mentioned []string
}

// build reads items into a Spec; problems say what could not be mapped.
func (d *domain) build(items []item, zh bool) (Spec, []string) {
	b := &builder{d: d, items: items, zh: zh, used: make([]bool, len(items))}
	b.spec.Language = map[bool]string{true: "zh", false: "en"}[zh]
	for _, it := range items {
		for _, m := range it.means {
			if (m.kind == mTable || m.kind == mColumn || m.kind == mValue) && !slices.Contains(b.mentioned, m.table) {
				b.mentioned = append(b.mentioned, m.table)
			}
		}
	}
	b.spec.Kind = SpecAggregate
	if !b.measure() {
		return b.spec, b.problems
	}
	b.dims()
	b.filters()
	b.shape()
	b.chart()
	return b.spec, b.problems
}

// problem records why the text cannot be answered, in the reader's
// language: en and zh are formats taking the same arguments.
func (b *builder) problem(en, zh string, args ...any) {
	b.problems = append(b.problems, fmt.Sprintf(pick(b.zh, en, zh), args...))
}

// near finds the nearest unused item satisfying ok: first up to after items
// after i, then up to before items before it. -1 when none.
func (b *builder) near(i, after, before int, ok func(item) bool) int {
	for j := i + 1; j < len(b.items) && j <= i+after; j++ {
		if !b.used[j] && ok(b.items[j]) {
			return j
		}
	}
	for j := i - 1; j >= 0 && j >= i-before; j-- {
		if !b.used[j] && ok(b.items[j]) {
			return j
		}
	}
	return -1
}

// column picks among an item's column readings (same-named columns of
// several tables): one whose table the text names, else one whose table
// has a time column (a fact table), else the first.
func (b *builder) column(it item, ok func(ColumnRef) bool) (ColumnRef, bool) {
	var cands []ColumnRef
	for _, m := range it.means {
		if m.kind == mColumn {
			if ref := (ColumnRef{Table: m.table, Column: m.column}); ok(ref) {
				cands = append(cands, ref)
			}
		}
	}
	if len(cands) == 0 {
		return ColumnRef{}, false
	}
	named := b.namedTables()
	for _, c := range cands {
		if slices.Contains(named, c.Table) {
			return c, true
		}
	}
	for _, c := range cands {
		if t, _ := b.d.table(c.Table); len(t.timeColumns()) > 0 {
			return c, true
		}
	}
	return cands[0], true
}

// namedTables lists the tables the text names as tables or through their
// values (not through a column name two tables share).
func (b *builder) namedTables() []string {
	var out []string
	for _, it := range b.items {
		for _, m := range it.means {
			if (m.kind == mTable || m.kind == mValue) && !slices.Contains(out, m.table) {
				out = append(out, m.table)
			}
		}
	}
	return out
}

func (b *builder) isNumeric(ref ColumnRef) bool { return b.d.kindOf(ref) == KindNumber }

func hasNumericColumn(b *builder) func(item) bool {
	return func(it item) bool {
		_, ok := b.column(it, b.isNumeric)
		return ok && !it.has(mMetric)
	}
}

func isTableItem(it item) bool { return it.has(mTable) && !it.has(mMetric) }

// measure finds what to compute. It reports false (with a problem) when
// nothing in the text says.
func (b *builder) measure() bool {
	for _, it := range b.items { // a note's term whose definition could not be used
		if m, ok := it.first(mInfo); ok {
			b.problem("%q is defined by the note %q, but the offline model cannot use that definition: %s",
				"“%s”由业务说明“%s”定义，但离线模型无法使用该定义：%s", it.text, m.note.note.Text, m.note.problem)
			return false
		}
	}
	for i, it := range b.items { // a note's metric: GMV, 销量
		if m, ok := it.first(mMetric); ok && m.note.measure != nil {
			b.used[i] = true
			b.useMetric(m.note)
			return true
		}
	}
	for i, it := range b.items { // an aggregation word and its target
		if m, ok := it.first(mAgg); ok && m.agg != "count?" && b.aggregate(i, m.agg) {
			return true
		}
	}
	for i, it := range b.items { // "active customers": how many
		if m, ok := it.first(mQualifier); ok {
			b.used[i] = true
			b.countQualified(m.note)
			return true
		}
	}
	for i, it := range b.items { // "the share of orders", 订单占比: a share of rows
		if it.has(mRatio) {
			if j := b.near(i, 3, 2, isTableItem); j >= 0 {
				b.used[j] = true
				b.count(b.tableOf(j))
				return true
			}
		}
	}
	for i, it := range b.items { // 多少订单, 退款订单有多少
		if m, ok := it.first(mAgg); ok && m.agg == "count?" {
			before := 0
			if b.zh {
				before = 2
			}
			if j := b.near(i, 2, before, isTableItem); j >= 0 {
				b.used[i], b.used[j] = true, true
				b.count(b.tableOf(j))
				return true
			}
		}
	}
	return b.implicitMeasure()
}

func (b *builder) tableOf(i int) string { return b.tableOfItem(b.items[i]) }

func (b *builder) tableOfItem(it item) string {
	m, _ := it.first(mTable)
	return m.table
}

func (b *builder) useMetric(n *noteDef) {
	m := *n.measure
	m.Filters = append([]Filter(nil), m.Filters...)
	m.Name = n.name(b.zh)
	b.spec.Measure = m
	b.note(n.note.ID)
	if len(m.Numerator) > 0 {
		b.spec.Kind = SpecRatio
	}
}

func (b *builder) note(id string) {
	if !slices.Contains(b.spec.Notes, id) {
		b.spec.Notes = append(b.spec.Notes, id)
	}
}

// aggregate reads the aggregation word at i with its target.
func (b *builder) aggregate(i int, agg string) bool {
	if agg == "count" {
		after, before := 4, 1
		if b.zh {
			after, before = 3, 2
		}
		if j := b.near(i, after, before, func(it item) bool { return it.has(mQualifier) }); j >= 0 {
			m, _ := b.items[j].first(mQualifier)
			b.used[i], b.used[j] = true, true
			b.countQualified(m.note)
			return true
		}
		if b.zh { // 订单数: the table comes first
			if j := b.near(i, 0, 2, isTableItem); j >= 0 {
				b.used[i], b.used[j] = true, true
				b.count(b.tableOf(j))
				return true
			}
		}
		if j := b.near(i, after, before, isTableItem); j >= 0 {
			b.used[i], b.used[j] = true, true
			b.count(b.tableOf(j))
			return true
		}
		return false
	}
	j := b.near(i, 4, 3, hasNumericColumn(b))
	if j < 0 {
		return false
	}
	ref, _ := b.column(b.items[j], b.isNumeric)
	b.used[i], b.used[j] = true, true
	b.spec.Measure = Measure{Agg: agg, Col: ref, Label: agg + "_" + ref.Column, Name: b.aggName(agg, ref)}
	if agg == "sum" {
		b.spec.Measure.Label = "total_" + ref.Column
	}
	return true
}

func (b *builder) aggName(agg string, ref ColumnRef) string {
	col := b.d.displayName(ref, b.zh)
	if b.zh {
		return map[string]string{"sum": "总", "avg": "平均", "max": "最大", "min": "最小"}[agg] + col
	}
	return map[string]string{"sum": "total ", "avg": "average ", "max": "largest ", "min": "smallest "}[agg] + col
}

func (b *builder) count(table string) {
	b.spec.Measure = Measure{Agg: "count", Col: ColumnRef{Table: table}, Label: singular(table) + "_count", Name: b.d.countName(table, b.zh)}
}

func (b *builder) countQualified(n *noteDef) {
	q := *n.qual
	b.spec.Measure = Measure{Agg: "count", Col: ColumnRef{Table: q.Entity}, Label: n.label() + "_count", Name: n.name(b.zh),
		Source: n.note.ID, Qualifier: &q}
	if !strings.HasSuffix(b.spec.Measure.Label, "count") {
		b.spec.Measure.Label = n.label() + "_count"
	}
	b.note(n.note.ID)
}

// implicitMeasure: no aggregation word. A superlative over a number column
// (the largest amount) is its maximum; a number column with a grouping is
// summed; named rows with nothing to compute are listed.
func (b *builder) implicitMeasure() bool {
	for i, it := range b.items {
		if m, ok := it.first(mTop); ok {
			if j := b.near(i, 3, 2, hasNumericColumn(b)); j >= 0 {
				ref, _ := b.column(b.items[j], b.isNumeric)
				if k := b.near(i, 4, 3, func(x item) bool { return isTableItem(x) && !x.has(mColumn) && b.tableOfItem(x) != ref.Table }); k >= 0 {
					continue // a superlative over another table's rows ranks them: the largest regions
				}
				b.used[i], b.used[j] = true, true
				agg := map[bool]string{true: "max", false: "min"}[m.desc]
				b.spec.Measure = Measure{Agg: agg, Col: ref, Label: agg + "_" + ref.Column, Name: b.aggName(agg, ref)}
				return true
			}
		}
	}
	for i, it := range b.items { // "the regions with the most customers", 客户最多的地区: a count
		if !it.has(mTop) {
			continue
		}
		after, before := 2, 0
		if b.zh {
			after, before = 0, 2
		}
		if j := b.near(i, after, before, isTableItem); j >= 0 && (b.otherTable(j) || b.groupColumn(j)) {
			b.used[j] = true
			b.count(b.tableOf(j))
			return true
		}
	}
	grouped := slices.ContainsFunc(b.items, func(it item) bool { return it.has(mGroup) || it.has(mTop) || it.has(mWhich) })
	for i, it := range b.items {
		if ref, ok := b.column(it, b.isNumeric); ok && grouped && !it.has(mMetric) {
			b.used[i] = true
			b.spec.Measure = Measure{Agg: "sum", Col: ref, Label: "total_" + ref.Column, Name: b.aggName("sum", ref)}
			return true
		}
	}
	for i, it := range b.items {
		if isTableItem(it) && !slices.ContainsFunc(b.items, func(it item) bool { return it.has(mAgg) }) {
			b.used[i] = true
			b.list(b.tableOf(i))
			return true
		}
	}
	b.problem(noMeasure+" (a measure such as a total, an average or a count)", noMeasureZH+"（例如合计、平均值或数量）")
	return false
}

// otherTable reports whether a table other than item j's is named: the one
// to group by.
func (b *builder) otherTable(j int) bool {
	for i, it := range b.items {
		if i != j && isTableItem(it) && b.tableOf(i) != b.tableOf(j) {
			return true
		}
	}
	return false
}

// groupColumn reports whether a column that is not a number is named (not as a table): the
// one to group by ("which segment placed the most orders", "which status has the most
// orders").
func (b *builder) groupColumn(j int) bool {
	for i, it := range b.items {
		if i == j || isTableItem(it) || it.has(mMetric) {
			continue
		}
		if _, ok := b.column(it, func(c ColumnRef) bool { return !b.isNumeric(c) && b.d.kindOf(c) != KindTime }); ok {
			return true
		}
	}
	return false
}

func (b *builder) list(table string) {
	t, _ := b.d.table(table)
	b.spec.Kind = SpecList
	b.spec.Measure = Measure{Col: ColumnRef{Table: table}, Name: b.d.tableName(table, b.zh)}
	if c := t.displayColumn(b.zh); c != "" {
		b.spec.ListCols = append(b.spec.ListCols, ColumnRef{Table: table, Column: c})
	}
	b.spec.Limit = 100
}

const (
	noMeasure   = "nothing in the question says what to compute"
	noMeasureZH = "问题中没有说明要计算什么"
)
