package nlsql

import (
	"regexp"
	"strings"
	"unicode"
)

// Note definition kinds.
const (
	defMetric    = "metric"    // a measure: "GMV means the sum of paid orders' amounts"
	defValueSet  = "valueset"  // a set of values: "华东 = Shanghai, Jiangsu, Zhejiang"
	defQualifier = "qualifier" // a qualified entity: "an active customer ordered in the last 90 days"
	defInfo      = "info"      // a fact the agent reports but does not compute with
)

// noteDef is a note compiled against the catalog.
type noteDef struct {
	note    Note
	terms   []string // the names it defines, as written
	kind    string
	measure *Measure
	set     *Filter
	qual    *Qualifier
	problem string // why it stays informational
}

// name is the note's term for a reader of language zh or not.
func (n *noteDef) name(zh bool) string {
	for _, t := range n.terms {
		if hasHan(t) == zh {
			return t
		}
	}
	if len(n.terms) > 0 {
		return n.terms[0]
	}
	return n.note.ID
}

// label is an SQL output name made from the note's first Latin term.
func (n *noteDef) label() string {
	for _, t := range n.terms {
		if !hasHan(t) {
			if l := snake(t); l != "" {
				return l
			}
		}
	}
	return "value"
}

func snake(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			b.WriteRune(r)
		case b.Len() > 0 && !strings.HasSuffix(b.String(), "_"):
			b.WriteByte('_')
		}
	}
	out := strings.Trim(b.String(), "_")
	if out != "" && out[0] >= '0' && out[0] <= '9' {
		out = "v_" + out
	}
	return out
}

// definitionSep separates a note's term from its definition.
var definitionSep = regexp.MustCompile(`(?i)\s+(?:means|refers to|is defined as|stands for|denotes|is|are)\s+|\s*(?:=|＝|:|：|指的是|是指|定义为|表示|即|指)\s*`)

// negation marks a definition the compiler cannot express (it has no
// negative filters): it stays informational.
var negation = regexp.MustCompile(`(?i)\b(?:not|excluding|except|without|other than)\b|不|除|排除|非`)

var articles = regexp.MustCompile(`(?i)^(?:an?|the)\s+`)

// compileNotes compiles the notes in order, then once more those that
// failed (a note may use a term a later one defines), registering each
// definition's terms in the lexicon.
func (d *domain) compileNotes(notes []Note) {
	defs := make([]*noteDef, len(notes))
	for pass := 0; pass < 2; pass++ {
		for i, n := range notes {
			if defs[i] != nil && defs[i].kind != defInfo {
				continue
			}
			defs[i] = d.compileNote(n)
			d.register(defs[i])
		}
	}
	d.notes = defs
}

// register adds a definition's terms to the lexicon. The terms of a note
// that stays informational are added only where the catalog has no word
// for them ("AOV", "客单价"): a question using one is told why it cannot
// be answered, and the catalog's own words keep their meaning.
func (d *domain) register(def *noteDef) {
	kind := map[string]meaningKind{defMetric: mMetric, defValueSet: mValueSet, defQualifier: mQualifier, defInfo: mInfo}[def.kind]
	for _, t := range def.terms {
		if kind == mInfo && d.mapsToCatalog(t) {
			continue
		}
		d.lex.add(t, meaning{kind: kind, note: def})
	}
}

// mapsToCatalog reports whether any word of text matches a catalog term.
func (d *domain) mapsToCatalog(text string) bool {
	toks := tokenize(text)
	for i := range toks {
		if t := d.lex.match(toks, i); t != nil && (t.has(mTable) || t.has(mColumn) || t.has(mValue)) {
			return true
		}
	}
	return false
}

func (d *domain) compileNote(n Note) *noteDef {
	text := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(n.Text), ".。"))
	def := &noteDef{note: n, kind: defInfo}
	head, body := d.splitNote(text)
	if head == "" || body == "" {
		def.problem = "no term and definition found"
		return def
	}
	outside, syn := parenthesized(head)
	outside = strings.TrimSpace(articles.ReplaceAllString(outside, ""))
	if outside != "" {
		def.terms = append(def.terms, outside)
	}
	def.terms = append(def.terms, syn...)
	if negation.MatchString(body) {
		def.problem = "the definition excludes rows, which the offline model cannot express"
		return def
	}
	p := parse(body, d.lex, d.now, 0, 0)
	switch {
	case d.asValueSet(def, p):
	case d.asMetric(def, p):
	case d.asQualifier(def, head, p):
	case def.problem != "":
	default:
		def.problem = "the definition maps to no measure, value set or qualified entity of the schema"
	}
	return def
}

// splitNote finds the term and its definition: at the first separator
// (means, is, =, 指…), else after the first word naming a table ("an active
// customer | ordered in the last 90 days").
func (d *domain) splitNote(text string) (string, string) {
	if loc := definitionSep.FindStringIndex(text); loc != nil && loc[0] > 0 {
		return strings.TrimSpace(text[:loc[0]]), strings.TrimSpace(text[loc[1]:])
	}
	toks := tokenize(text)
	for i := range toks {
		if t := d.lex.match(toks, i); t != nil && t.has(mTable) {
			end := toks[i+len(t.toks)-1].end
			rest := strings.TrimLeft(text[end:], " ")
			if strings.HasPrefix(rest, "(") || strings.HasPrefix(rest, "（") { // the term's synonyms
				if c := strings.IndexAny(rest, ")）"); c > 0 {
					_, size := firstRune(rest[c:])
					end = len(text) - len(rest) + c + size
				}
			}
			return strings.TrimSpace(text[:end]), strings.TrimSpace(text[end:])
		}
	}
	return "", ""
}

// asValueSet: a definition made only of values of one column.
func (d *domain) asValueSet(def *noteDef, p parsed) bool {
	var common []meaning
	n := 0
	for _, it := range p.items {
		if it.kind == mFollow {
			continue
		}
		if !it.has(mValue) {
			return false
		}
		n++
		var next []meaning
		for _, m := range it.means {
			if m.kind != mValue {
				continue
			}
			if n == 1 {
				next = append(next, m)
				continue
			}
			for _, c := range common {
				if c.table == m.table && c.column == m.column {
					next = append(next, meaning{kind: mValue, table: m.table, column: m.column, value: c.value + "\x00" + m.value})
				}
			}
		}
		common = next
	}
	if n == 0 || len(common) == 0 || len(p.unmapped) > 0 {
		return false
	}
	c := common[0]
	def.kind = defValueSet
	def.set = &Filter{Col: ColumnRef{Table: c.table, Column: c.column}, Values: strings.Split(c.value, "\x00"), Source: def.note.ID}
	return true
}

// asMetric: a definition that computes a number ("the sum of paid orders'
// amounts", "the share of orders whose status is refunded").
func (d *domain) asMetric(def *noteDef, p parsed) bool {
	agg := false
	for _, it := range p.items {
		if it.kind == mAgg || it.kind == mRatio || it.kind == mMetric {
			agg = true
		}
	}
	if !agg || len(p.unmapped) > 0 {
		if agg {
			def.problem = "its words " + quoteList(p.unmapped) + " map to nothing the offline model computes"
		}
		return false
	}
	spec, problems := d.build(p.items, hasHan(def.note.Text) && !hasLatinTerm(def.terms))
	if len(problems) > 0 || len(spec.Dims) > 0 || spec.Time != nil || (spec.Kind != SpecAggregate && spec.Kind != SpecRatio) {
		return false
	}
	m := spec.Measure
	m.Filters = append(append([]Filter(nil), m.Filters...), spec.Filters...)
	if spec.Kind == SpecRatio {
		m.Numerator = spec.Numerator
	}
	for i := range m.Filters {
		m.Filters[i].Source = def.note.ID
	}
	for i := range m.Numerator {
		m.Numerator[i].Source = def.note.ID
	}
	m.Source, m.Label = def.note.ID, def.label()
	def.kind, def.measure = defMetric, &m
	return true
}

func hasLatinTerm(terms []string) bool {
	for _, t := range terms {
		if !hasHan(t) {
			return true
		}
	}
	return false
}

// asQualifier: an entity (named in the term, else the definition's first
// table) with a row of another table, which references it, in a time
// window: "an active customer ordered in the last 90 days".
func (d *domain) asQualifier(def *noteDef, head string, p parsed) bool {
	var tables []string
	var rng *Range
	for _, it := range p.items {
		if m, ok := it.first(mTable); ok {
			tables = append(tables, m.table)
		}
		if it.time != nil && rng == nil {
			r := it.time.rng
			rng = &r
		}
	}
	entity := ""
	hp := parse(head, d.lex, d.now, 0, 0)
	for _, it := range hp.items {
		if m, ok := it.first(mTable); ok {
			entity = m.table
			break
		}
	}
	if entity == "" && len(tables) > 0 {
		entity = tables[0]
	}
	if entity == "" || rng == nil {
		return false
	}
	for _, a := range tables {
		if a == entity {
			continue
		}
		at, _ := d.table(a)
		times := at.timeColumns()
		for _, fk := range at.ForeignKeys {
			if fk.RefTable == entity && len(fk.Columns) == 1 && len(times) > 0 {
				def.kind = defQualifier
				def.qual = &Qualifier{Name: def.name(false), Source: def.note.ID, Entity: entity,
					EntityKey: ColumnRef{Table: entity, Column: fk.RefColumns[0]}, Key: ColumnRef{Table: a, Column: fk.Columns[0]},
					Time: ColumnRef{Table: a, Column: times[0]}, Range: *rng}
				return true
			}
		}
	}
	return false
}

func quoteList(ws []string) string {
	q := make([]string, len(ws))
	for i, w := range ws {
		q[i] = "\"" + w + "\""
	}
	return strings.Join(q, ", ")
}
