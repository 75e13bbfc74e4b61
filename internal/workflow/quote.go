package workflow

import (
	"sort"
	"unicode/utf8"
)

// QuoteRun is a run of a Quote's text: plain (Mark nil) or marked.
type QuoteRun struct {
	Text string
	Mark *Mark
}

// Runs splits the quote's text into plain and marked runs, in order. A mark outside the
// text, empty, or not on character boundaries is left out; one that overlaps an earlier mark
// keeps only its part after it. The runs put together are the text.
func (q Quote) Runs() []QuoteRun {
	marks := make([]Mark, 0, len(q.Marks))
	for _, m := range q.Marks {
		if m.Start < 0 || m.End > len(q.Text) || m.Start >= m.End || !boundary(q.Text, m.Start) || !boundary(q.Text, m.End) {
			continue
		}
		marks = append(marks, m)
	}
	sort.SliceStable(marks, func(i, j int) bool { return marks[i].Start < marks[j].Start })
	var out []QuoteRun
	pos := 0
	for i := range marks {
		m := marks[i]
		if m.End <= pos {
			continue // inside an earlier mark
		}
		m.Start = max(m.Start, pos)
		if m.Start > pos {
			out = append(out, QuoteRun{Text: q.Text[pos:m.Start]})
		}
		out = append(out, QuoteRun{Text: q.Text[m.Start:m.End], Mark: &m})
		pos = m.End
	}
	if pos < len(q.Text) {
		out = append(out, QuoteRun{Text: q.Text[pos:]})
	}
	return out
}

// boundary reports whether byte offset i of s starts a character (or ends s).
func boundary(s string, i int) bool {
	return i == len(s) || utf8.RuneStart(s[i])
}
