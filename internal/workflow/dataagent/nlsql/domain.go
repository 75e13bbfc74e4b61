package nlsql

import (
	"strings"
	"time"
)

// domain is a catalog's vocabulary, with the notes compiled against it.
type domain struct {
	cat   Catalog
	lex   *lexicon
	notes []*noteDef
	now   time.Time
}

// newDomain builds the vocabulary of cat (table and column names, their
// comments' synonyms, the values of small text columns and the names a
// column's comment gives them) and compiles the notes against it.
func newDomain(cat Catalog, notes []Note, now time.Time) *domain {
	d := &domain{cat: cat, lex: newLexicon(), now: now}
	for _, t := range cat.Tables {
		tm := meaning{kind: mTable, table: t.Name}
		d.lex.add(splitName(t.Name), tm)
		d.lex.add(splitName(singular(t.Name)), tm)
		_, syn := parenthesized(t.Comment)
		for _, s := range syn {
			d.lex.add(s, tm)
		}
		for _, c := range t.Columns {
			d.addColumn(t, c)
		}
	}
	d.compileNotes(notes)
	return d
}

func (d *domain) addColumn(t Table, c Column) {
	cm := meaning{kind: mColumn, table: t.Name, column: c.Name}
	if !t.isKey(c.Name) {
		d.lex.add(splitName(c.Name), cm)
	}
	valueSyn, colSyn := commentGroups(c.Comment, c.Values)
	for _, s := range colSyn {
		d.lex.add(s, cm)
	}
	for _, v := range c.Values {
		vm := meaning{kind: mValue, table: t.Name, column: c.Name, value: v}
		d.lex.add(v, vm)
		for _, s := range valueSyn[v] {
			d.lex.add(s, vm)
		}
	}
}

// commentGroups splits a column comment's parenthesized groups into the
// names of the column's values (a group right after a value) and synonyms
// of the column (the other groups).
func commentGroups(comment string, values []string) (map[string][]string, []string) {
	valueSyn := map[string][]string{}
	var colSyn []string
	lower := strings.ToLower(comment)
	for i := 0; i < len(comment); {
		open := strings.IndexAny(comment[i:], "(（")
		if open < 0 {
			break
		}
		open += i
		closeRel := strings.IndexAny(comment[open:], ")）")
		if closeRel < 0 {
			break
		}
		end := open + closeRel
		_, size := firstRune(comment[open:])
		inner := comment[open+size : end]
		before := strings.TrimSpace(lower[:open])
		owner := ""
		for _, v := range values {
			if lv := strings.ToLower(v); strings.HasSuffix(before, lv) && (len(lv) > len(owner)) {
				owner = v
			}
		}
		if owner != "" {
			valueSyn[owner] = append(valueSyn[owner], splitList(inner)...)
		} else {
			colSyn = append(colSyn, splitList(inner)...)
		}
		_, csize := firstRune(comment[end:])
		i = end + csize
	}
	return valueSyn, colSyn
}

func firstRune(s string) (rune, int) {
	for _, r := range s {
		return r, len(string(r))
	}
	return 0, 0
}

// tableOf returns the table, or false.
func (d *domain) table(name string) (Table, bool) { return d.cat.Table(name) }

// column returns a column's catalog entry.
func (d *domain) column(ref ColumnRef) (Column, bool) {
	t, ok := d.cat.Table(ref.Table)
	if !ok {
		return Column{}, false
	}
	return t.Column(ref.Column)
}

// kindOf is a column's kind.
func (d *domain) kindOf(ref ColumnRef) string {
	c, ok := d.column(ref)
	if !ok {
		return ""
	}
	return Kind(c.Type)
}
