package nlsql

import "strings"

// synonym is the first of a comment's synonyms in the reader's language
// (Chinese for zh), or "".
func synonym(comment string, values []string, zh bool) string {
	_, syn := commentGroups(comment, values)
	for _, s := range syn {
		if hasHan(s) == zh {
			return s
		}
	}
	return ""
}

// tableName is what a reader calls a table's rows: its comment's synonym in
// the reader's language, else its name in words.
func (d *domain) tableName(table string, zh bool) string {
	t, _ := d.table(table)
	if s := synonym(t.Comment, nil, zh); s != "" {
		return s
	}
	return splitName(table)
}

// displayName is what a reader calls a column (with its table when the
// column's own name is generic).
func (d *domain) displayName(ref ColumnRef, zh bool) string {
	c, _ := d.column(ref)
	if s := synonym(c.Comment, c.Values, zh); s != "" {
		return s
	}
	name := splitName(ref.Column)
	if zh {
		return d.tableName(ref.Table, true) + name
	}
	if generic[ref.Column] {
		return splitName(singular(ref.Table)) + " " + name
	}
	return name
}

var generic = map[string]bool{"name": true, "amount": true, "value": true, "price": true, "total": true, "quantity": true, "title": true, "status": true, "type": true}

func (d *domain) countName(table string, zh bool) string {
	if zh {
		return d.tableName(table, true) + "数"
	}
	return "number of " + d.tableName(table, false)
}

// dimLabel is a grouping's SQL output name: the table's singular for a
// naming column (regions.name → region), else the column's name.
func (d *domain) dimLabel(ref ColumnRef) string {
	n := strings.ToLower(ref.Column)
	if n == "name" || n == "title" || strings.HasPrefix(n, "name_") || strings.HasSuffix(n, "_name") {
		return singular(ref.Table)
	}
	return ref.Column
}
