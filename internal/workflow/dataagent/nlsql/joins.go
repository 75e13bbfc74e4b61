package nlsql

import (
	"fmt"
	"slices"
	"strings"
)

// join is one JOIN of a query: table, joined on its columns to those of
// the table it hangs from.
type join struct {
	table  string
	on     []string // "a.x = b.y"
	fanout bool     // reached through a one-to-many edge from the base
	from   string   // the table it hangs from
}

// link is a foreign-key edge seen from one side.
type link struct {
	to        string
	on        []string
	manyToOne bool // from the referencing to the referenced table
}

func (d *domain) links(table string) []link {
	var out []link
	t, _ := d.table(table)
	for _, fk := range t.ForeignKeys {
		out = append(out, link{to: fk.RefTable, on: eqs(table, fk.Columns, fk.RefTable, fk.RefColumns), manyToOne: true})
	}
	for _, o := range d.cat.Tables {
		for _, fk := range o.ForeignKeys {
			if fk.RefTable == table && o.Name != table {
				out = append(out, link{to: o.Name, on: eqs(o.Name, fk.Columns, table, fk.RefColumns)})
			}
		}
	}
	return out
}

func eqs(a string, acols []string, b string, bcols []string) []string {
	out := make([]string, len(acols))
	for i := range acols {
		out[i] = ident(b) + "." + ident(bcols[i]) + " = " + ident(a) + "." + ident(acols[i])
	}
	return out
}

// planJoins connects base to every table of need along foreign keys
// (breadth first: the fewest joins), in the order the tables are reached.
func (d *domain) planJoins(base string, need []string) ([]join, error) {
	type visit struct {
		prev   string
		l      link
		fanout bool
		depth  int
	}
	seen := map[string]visit{base: {}}
	order := []string{base}
	for q := 0; q < len(order); q++ {
		cur := order[q]
		for _, l := range d.links(cur) {
			if _, ok := seen[l.to]; ok {
				continue
			}
			seen[l.to] = visit{prev: cur, l: l, fanout: seen[cur].fanout || !l.manyToOne, depth: seen[cur].depth + 1}
			order = append(order, l.to)
		}
	}
	keep := map[string]bool{}
	for _, t := range need {
		if _, ok := seen[t]; !ok {
			return nil, fmt.Errorf("no foreign-key path joins %s to %s", t, base)
		}
		for x := t; x != base; x = seen[x].prev {
			keep[x] = true
		}
	}
	var out []join
	for _, t := range order[1:] {
		if keep[t] {
			v := seen[t]
			out = append(out, join{table: t, on: v.l.on, fanout: v.fanout, from: v.prev})
		}
	}
	return out, nil
}

// anyFanout reports the first join reached through a one-to-many edge.
func anyFanout(js []join) (join, bool) {
	i := slices.IndexFunc(js, func(j join) bool { return j.fanout })
	if i < 0 {
		return join{}, false
	}
	return js[i], true
}

// reserved are the PostgreSQL key words an identifier may not be bare.
var reserved = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric authorization binary both case cast check
		collate collation column concurrently constraint create cross current_catalog current_date current_role current_schema
		current_time current_timestamp current_user default deferrable desc distinct do else end except false fetch for foreign
		freeze from full grant group having ilike in initially inner intersect into is isnull join lateral leading left like limit
		localtime localtimestamp natural not notnull null offset on only or order outer overlaps placing primary references
		returning right select session_user similar some symmetric table tablesample then to trailing true union unique user
		using variadic verbose when where window with`) {
		reserved[w] = true
	}
}

// ident quotes an identifier when it must be.
func ident(s string) string {
	bare := s != "" && !reserved[s]
	for i, r := range s {
		if !(r >= 'a' && r <= 'z' || r == '_' || (i > 0 && r >= '0' && r <= '9')) {
			bare = false
		}
	}
	if bare {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}

// literal quotes a string constant.
func literal(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

func col(ref ColumnRef) string { return ident(ref.Table) + "." + ident(ref.Column) }
