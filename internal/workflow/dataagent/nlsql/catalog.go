// Package nlsql is the data agent's offline language model: it reads a
// question (English or Chinese) against a database catalog and a set of
// business notes, and either writes the PostgreSQL query that answers it or
// says what it could not map. Nothing in it knows a particular schema: the
// words it understands come from the catalog (table and column names, the
// synonyms a comment lists in parentheses, the values of small text
// columns) and from the notes ("GMV means the sum of paid orders'
// amounts", "华东 = Shanghai, Jiangsu, Zhejiang", "an active customer
// ordered in the last 90 days"), plus a fixed bilingual vocabulary of
// analysis words (total, average, top, by, 各, 占比, 环比, last month, 去年…).
//
// Conventions it reads from a catalog:
//   - a comment's parenthesized phrases are synonyms of its table or column:
//     "Orders placed by customers (订单, purchase)";
//   - in a column's comment, a parenthesized group right after one of the
//     column's values names that value: "paid (已支付), refunded (已退款)".
//
// It imports the standard library only.
package nlsql

import (
	"slices"
	"strings"
)

// Catalog is what the agent knows of a schema.
type Catalog struct {
	Schema string  `json:"schema"`
	Tables []Table `json:"tables"`
}

// Table is one table (or view) of the schema.
type Table struct {
	Name        string       `json:"name"`
	Comment     string       `json:"comment,omitempty"`
	Columns     []Column     `json:"columns"`
	PrimaryKey  []string     `json:"primary_key,omitempty"`
	ForeignKeys []ForeignKey `json:"foreign_keys,omitempty"`
	Rows        int64        `json:"rows,omitempty"` // the planner's estimate
}

// Column is one column. Values lists the distinct values of a text column
// with few of them (empty otherwise).
type Column struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"` // as PostgreSQL names it: integer, numeric(12,2), text, timestamp without time zone
	Comment string   `json:"comment,omitempty"`
	Values  []string `json:"values,omitempty"`
}

// ForeignKey is a reference from Columns of the table to RefColumns of RefTable.
type ForeignKey struct {
	Columns    []string `json:"columns"`
	RefTable   string   `json:"ref_table"`
	RefColumns []string `json:"ref_columns"`
}

// Note is a business note: a definition or a fact about the data, in plain
// language.
type Note struct {
	ID    string  `json:"id"`
	Title string  `json:"title,omitempty"`
	Text  string  `json:"text"`
	Score float64 `json:"score,omitempty"`
}

// Table returns the named table.
func (c Catalog) Table(name string) (Table, bool) {
	for _, t := range c.Tables {
		if t.Name == name {
			return t, true
		}
	}
	return Table{}, false
}

// Column returns the named column.
func (t Table) Column(name string) (Column, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

// Subset keeps the named tables (in catalog order), and only the foreign
// keys between them.
func (c Catalog) Subset(names []string) Catalog {
	out := Catalog{Schema: c.Schema}
	for _, t := range c.Tables {
		if !slices.Contains(names, t.Name) {
			continue
		}
		t2 := t
		t2.ForeignKeys = nil
		for _, fk := range t.ForeignKeys {
			if slices.Contains(names, fk.RefTable) {
				t2.ForeignKeys = append(t2.ForeignKeys, fk)
			}
		}
		out.Tables = append(out.Tables, t2)
	}
	return out
}

// Column kinds.
const (
	KindNumber = "number"
	KindText   = "text"
	KindTime   = "time"
	KindBool   = "bool"
	KindOther  = "other"
)

// Kind classifies a PostgreSQL type name.
func Kind(typ string) string {
	t := strings.ToLower(typ)
	switch {
	case strings.HasPrefix(t, "timestamp"), t == "date":
		return KindTime
	case strings.HasPrefix(t, "numeric"), strings.HasPrefix(t, "decimal"), t == "integer", t == "bigint", t == "smallint",
		t == "real", t == "double precision", t == "money", t == "int", t == "int4", t == "int8", t == "int2", t == "float8", t == "float4":
		return KindNumber
	case t == "text", strings.HasPrefix(t, "character"), strings.HasPrefix(t, "varchar"), strings.HasPrefix(t, "char"), t == "citext":
		return KindText
	case t == "boolean", t == "bool":
		return KindBool
	}
	return KindOther
}

// isKey reports whether the column is the table's primary key or part of a
// foreign key.
func (t Table) isKey(col string) bool {
	if slices.Contains(t.PrimaryKey, col) {
		return true
	}
	for _, fk := range t.ForeignKeys {
		if slices.Contains(fk.Columns, col) {
			return true
		}
	}
	return false
}

// timeColumns lists the table's date and timestamp columns.
func (t Table) timeColumns() []string {
	var out []string
	for _, c := range t.Columns {
		if Kind(c.Type) == KindTime {
			out = append(out, c.Name)
		}
	}
	return out
}

// displayColumn is the column that names a row of the table: a text column
// called name/title (one with Chinese values for a Chinese question), else
// the primary key, else the first text column.
func (t Table) displayColumn(zh bool) string {
	var named, first string
	for _, c := range t.Columns {
		if Kind(c.Type) != KindText || t.isKey(c.Name) {
			continue
		}
		n := strings.ToLower(c.Name)
		isName := n == "name" || n == "title" || strings.HasPrefix(n, "name_") || strings.HasSuffix(n, "_name") || strings.HasSuffix(n, "_title")
		if zh && isName && len(c.Values) > 0 && hasHan(c.Values[0]) {
			return c.Name
		}
		if zh && isName && hasHan(c.Comment) && strings.Contains(strings.ToLower(c.Comment), "chinese") {
			return c.Name
		}
		if isName && named == "" && !strings.HasSuffix(n, "_zh") {
			named = c.Name
		}
		if first == "" {
			first = c.Name
		}
	}
	switch {
	case named != "":
		return named
	case len(t.PrimaryKey) == 1:
		return t.PrimaryKey[0]
	}
	return first
}

// singular is a table name's singular noun: orders → order, order_items →
// order_item, categories → category.
func singular(name string) string {
	switch {
	case strings.HasSuffix(name, "ies") && len(name) > 4:
		return name[:len(name)-3] + "y"
	case strings.HasSuffix(name, "ses") && len(name) > 4:
		return name[:len(name)-2]
	case strings.HasSuffix(name, "s") && !strings.HasSuffix(name, "ss") && len(name) > 2:
		return name[:len(name)-1]
	}
	return name
}
