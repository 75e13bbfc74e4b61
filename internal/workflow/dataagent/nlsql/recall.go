package nlsql

import (
	"slices"
	"time"
)

// Recall lists the tables of cat a question touches: those its words name
// (tables, columns, values, and the tables behind the notes' definitions),
// with the tables that join them, in catalog order.
func Recall(q Question) []string {
	d := newDomain(q.Catalog, q.Notes, q.Now)
	var named []string
	add := func(t string) {
		if t != "" && !slices.Contains(named, t) {
			named = append(named, t)
		}
	}
	for i, text := range append(append([]string(nil), q.Parts...), q.Feedback...) {
		for _, it := range parse(text, d.lex, q.Now, i, 0).items {
			for _, m := range it.means {
				add(m.table)
				if m.note != nil {
					for _, t := range m.note.tables() {
						add(t)
					}
				}
			}
		}
	}
	if u := Understand(q); u.Feasible {
		for _, t := range u.Spec.tables() {
			add(t)
		}
	}
	rel := Relations(q.Catalog, named)
	out := []string{}
	for _, t := range q.Catalog.Tables {
		if slices.Contains(rel.Tables, t.Name) {
			out = append(out, t.Name)
		}
	}
	return out
}

// tables lists the tables a definition reads.
func (n *noteDef) tables() []string {
	var out []string
	switch {
	case n.measure != nil:
		out = append(out, n.measure.Col.Table)
		for _, f := range append(append([]Filter(nil), n.measure.Filters...), n.measure.Numerator...) {
			out = append(out, f.Col.Table)
		}
	case n.set != nil:
		out = append(out, n.set.Col.Table)
	case n.qual != nil:
		out = append(out, n.qual.Entity, n.qual.Key.Table)
	}
	return out
}

// Schema is a set of tables with the joins that connect them.
type Schema struct {
	Tables    []string   `json:"tables"`
	Relations []Relation `json:"relations"`
}

// Relations connects tables along cat's foreign keys (the fewest joins
// from the first table), adding the tables in between. Tables no foreign
// key reaches stay, unconnected.
func Relations(cat Catalog, tables []string) Schema {
	var out Schema
	if len(tables) == 0 {
		return out
	}
	d := &domain{cat: cat, lex: newLexicon(), now: time.Time{}}
	out.Tables = []string{tables[0]}
	for _, t := range tables[1:] {
		js, err := d.planJoins(tables[0], []string{t})
		if err != nil {
			if !slices.Contains(out.Tables, t) {
				out.Tables = append(out.Tables, t)
			}
			continue
		}
		for _, j := range js {
			if !slices.Contains(out.Tables, j.table) {
				out.Tables = append(out.Tables, j.table)
			}
			r := j.relation(d)
			if !slices.ContainsFunc(out.Relations, func(x Relation) bool { return x.From == r.From && x.To == r.To }) {
				out.Relations = append(out.Relations, r)
			}
		}
	}
	return out
}

// relation is the foreign key a join follows, from the referencing table.
func (j join) relation(d *domain) Relation {
	for _, pair := range [][2]string{{j.table, j.from}, {j.from, j.table}} {
		t, _ := d.table(pair[0])
		for _, fk := range t.ForeignKeys {
			if fk.RefTable == pair[1] {
				return Relation{From: pair[0], To: pair[1], FromCol: fk.Columns, ToCol: fk.RefColumns}
			}
		}
	}
	return Relation{From: j.from, To: j.table}
}

// CheckRelations reports a relation that is not a foreign key of cat.
func CheckRelations(cat Catalog, rels []Relation) error {
	for _, r := range rels {
		t, ok := cat.Table(r.From)
		found := false
		for _, fk := range t.ForeignKeys {
			if ok && fk.RefTable == r.To && slices.Equal(fk.Columns, r.FromCol) && slices.Equal(fk.RefColumns, r.ToCol) {
				found = true
			}
		}
		if !found {
			return &RelationError{Relation: r}
		}
	}
	return nil
}

// RelationError names a relation that is no foreign key.
type RelationError struct{ Relation Relation }

func (e *RelationError) Error() string {
	return "no foreign key joins " + e.Relation.From + " to " + e.Relation.To + " on the columns given"
}
