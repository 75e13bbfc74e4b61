package nlsql

// ColumnRef names a column of a table.
type ColumnRef struct {
	Table  string `json:"table"`
	Column string `json:"column"`
}

func (c ColumnRef) String() string { return c.Table + "." + c.Column }

// Filter keeps rows whose column holds one of Values.
type Filter struct {
	Col    ColumnRef `json:"col"`
	Values []string  `json:"values"`
	// Source says where the filter comes from: "question", or the id of the
	// note that asks for it.
	Source string `json:"source"`
	// Term is the word the question used ("华东", "refunded").
	Term string `json:"term,omitempty"`
}

// Qualifier keeps the rows of Entity that have a row of Activity (joined
// on Key = EntityKey) whose Time falls in Range: "an active customer
// ordered in the last 90 days".
type Qualifier struct {
	Name      string    `json:"name"`
	Source    string    `json:"source"`
	Entity    string    `json:"entity"`
	EntityKey ColumnRef `json:"entity_key"`
	Key       ColumnRef `json:"key"` // the activity's column referencing the entity
	Time      ColumnRef `json:"time"`
	Range     Range     `json:"range"`
}

// Measure is the number asked for. Agg is sum, avg, count, max or min;
// Column is empty for a count of rows of Table.
type Measure struct {
	Agg    string    `json:"agg"`
	Col    ColumnRef `json:"col"`
	Label  string    `json:"label"` // the SQL output name: gmv, order_count
	Name   string    `json:"name"`  // what the reader calls it: GMV, orders
	Source string    `json:"source,omitempty"`
	// Filters belong to the measure's definition (a GMV counts paid orders).
	Filters []Filter `json:"filters,omitempty"`
	// Qualifier, for a count of a qualified entity (active customers).
	Qualifier *Qualifier `json:"qualifier,omitempty"`
	// Numerator, for a measure that is itself a share (a note's "refund
	// rate"): the rows the share counts.
	Numerator []Filter `json:"numerator,omitempty"`
}

// Dim is a grouping: a column, or a time bucket of a time column.
type Dim struct {
	Col    ColumnRef `json:"col"`
	Bucket string    `json:"bucket,omitempty"` // day, week, month, quarter, year
	Label  string    `json:"label"`
	Name   string    `json:"name"` // what the reader calls it: region, 地区, month, 月份
}

// TimeFilter restricts a time column to a range.
type TimeFilter struct {
	Col   ColumnRef `json:"col"`
	Range Range     `json:"range"`
}

// Spec kinds.
const (
	SpecAggregate = "aggregate" // a measure, maybe grouped
	SpecRatio     = "ratio"     // a share: numerator rows over all rows, or each group over the total
	SpecGrowth    = "growth"    // a measure in a period against a baseline period
	SpecList      = "list"      // rows of a table
)

// Spec is a question understood: what to compute, over which rows.
type Spec struct {
	Kind    string  `json:"kind"`
	Measure Measure `json:"measure"`
	// Numerator: the rows a ratio counts (SpecRatio without Dims).
	Numerator  []Filter    `json:"numerator,omitempty"`
	Dims       []Dim       `json:"dims,omitempty"`
	Filters    []Filter    `json:"filters,omitempty"`
	Qualifiers []Qualifier `json:"qualifiers,omitempty"`
	Time       *TimeFilter `json:"time,omitempty"`
	Baseline   *Range      `json:"baseline,omitempty"` // SpecGrowth
	Limit      int         `json:"limit,omitempty"`
	Ascending  bool        `json:"ascending,omitempty"`
	Ranked     bool        `json:"ranked,omitempty"` // ordered by the measure (top-N, "which")
	ListCols   []ColumnRef `json:"list_cols,omitempty"`
	Notes      []string    `json:"notes,omitempty"` // ids of the notes used
	Chart      *bool       `json:"chart,omitempty"` // asked for (true) or against (false) a chart
	Language   string      `json:"language"`        // "en" or "zh"
	Questions  []string    `json:"questions"`       // the texts it was read from
	// Adjusted says what the builder changed and why (a per-item amount for
	// a per-order one, a distinct count).
	Adjusted []string `json:"adjusted,omitempty"`
}

// AllFilters lists every filter the query must apply: the measure's, the
// question's and, for a share, the numerator's.
func (s Spec) AllFilters() []Filter {
	out := append([]Filter(nil), s.Measure.Filters...)
	out = append(out, s.Filters...)
	out = append(out, s.Numerator...)
	return append(out, s.Measure.Numerator...)
}

// Relation is a join between two tables along a foreign key.
type Relation struct {
	From    string   `json:"from"` // the referencing table
	To      string   `json:"to"`   // the referenced table
	FromCol []string `json:"from_columns"`
	ToCol   []string `json:"to_columns"`
}
