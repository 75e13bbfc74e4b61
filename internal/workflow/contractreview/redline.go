package contractreview

import (
	"bytes"
	"fmt"
	"html/template"
	"path/filepath"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/sergi/go-diff/diffmatchpatch"

	"weft/internal/workflow"
)

// Segment operations of a word diff.
const (
	OpEqual  = "equal"
	OpDelete = "delete"
	OpInsert = "insert"
)

// Segment is a run of a word-level diff.
type Segment struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

// WordDiff compares two texts word by word (a Chinese character is a word):
// the redline of a diff, for the review form, the HTML and the DOCX. The
// diff is go-diff's (Myers with semantic cleanup) run over the texts' words,
// each word mapped to one rune.
func WordDiff(a, b string) []Segment {
	vocab := map[string]rune{}
	var words []string
	encode := func(s string) []rune {
		var out []rune
		for _, w := range tokens(s) {
			r, ok := vocab[w]
			if !ok {
				r = rune(0x10000 + len(words)) // above the BMP: never a real character of the text
				vocab[w] = r
				words = append(words, w)
			}
			out = append(out, r)
		}
		return out
	}
	ra, rb := encode(a), encode(b)
	dmp := diffmatchpatch.New()
	dmp.DiffTimeout = 0 // no time limit: the same inputs always give the same diff
	diffs := dmp.DiffCleanupSemantic(dmp.DiffMainRunes(ra, rb, false))
	out := make([]Segment, 0, len(diffs))
	for _, d := range diffs {
		var sb strings.Builder
		for _, r := range d.Text {
			sb.WriteString(words[r-0x10000])
		}
		op := OpEqual
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			op = OpDelete
		case diffmatchpatch.DiffInsert:
			op = OpInsert
		}
		out = append(out, Segment{Op: op, Text: sb.String()})
	}
	return out
}

// tokens splits text into words, runs of spaces, single punctuation marks
// and single CJK characters.
func tokens(s string) []string {
	var out []string
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		j := i + n
		switch {
		case unicode.IsLetter(r) && !unicode.Is(unicode.Han, r) || unicode.IsDigit(r):
			for j < len(s) {
				q, m := utf8.DecodeRuneInString(s[j:])
				if !(unicode.IsLetter(q) && !unicode.Is(unicode.Han, q) || unicode.IsDigit(q) || q == '\'' || q == '’') {
					break
				}
				j += m
			}
		case unicode.IsSpace(r):
			for j < len(s) {
				q, m := utf8.DecodeRuneInString(s[j:])
				if !unicode.IsSpace(q) {
					break
				}
				j += m
			}
		}
		out = append(out, s[i:j])
		i = j
	}
	return out
}

// edit is an approved change placed in the document text.
type edit struct {
	start, end int
	diff       DocumentDiff
}

// documentEdits places the approved diffs in the contract's text (a diff's
// span is relative to its clause), in order, dropping one that overlaps an
// earlier one or no longer matches the text.
func documentEdits(s ReviewGraphState, doc TaskDocument) []edit {
	var out []edit
	for _, d := range s.AllDiffs {
		c, ok := s.PrimaryStructure.Find(d.ClauseID)
		if !ok || d.Span.Start < 0 {
			continue
		}
		start, end := c.BodyStart+d.Span.Start, c.BodyStart+d.Span.End
		if end > len(doc.Text) || doc.Text[start:end] != d.Original {
			continue
		}
		out = append(out, edit{start: start, end: end, diff: d})
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start < out[j].start })
	kept := out[:0]
	for _, e := range out {
		if len(kept) == 0 || e.start >= kept[len(kept)-1].end {
			kept = append(kept, e)
		}
	}
	return kept
}

// piece is a run of the reviewed document: plain text, or a deletion or
// insertion of an approved change.
type piece struct {
	op   string // OpEqual, OpDelete, OpInsert
	text string
	bold bool
	edit *edit
}

// pieces lays out the document with its approved changes, word by word;
// heading text (a clause's number and title) is bold.
func pieces(s ReviewGraphState, doc TaskDocument, edits []edit) []piece {
	var bold []Span
	if s.PrimaryStructure != nil {
		for _, c := range s.PrimaryStructure.Clauses {
			end := c.BodyStart
			if nl := strings.IndexByte(doc.Text[c.HeadingStart:], '\n'); nl >= 0 && c.HeadingStart+nl < end {
				end = c.HeadingStart + nl
			}
			bold = append(bold, Span{c.HeadingStart, end})
		}
	}
	var out []piece
	plain := func(from, to int) {
		for from < to {
			next, isBold := to, false
			for _, b := range bold {
				switch {
				case from >= b.Start && from < b.End:
					next, isBold = min(to, b.End), true
				case b.Start > from && b.Start < next:
					next = b.Start
				}
				if isBold {
					break
				}
			}
			out = append(out, piece{op: OpEqual, text: doc.Text[from:next], bold: isBold})
			from = next
		}
	}
	pos := 0
	for i := range edits {
		e := &edits[i]
		plain(pos, e.start)
		for _, seg := range WordDiff(e.diff.Original, e.diff.Suggested) {
			out = append(out, piece{op: seg.Op, text: seg.Text, edit: e})
		}
		pos = e.end
	}
	plain(pos, len(doc.Text))
	return out
}

// Artifacts builds the files of a finished review: the contract with the
// approved changes as Word tracked changes, and an HTML redline.
func Artifacts(s ReviewGraphState, doc TaskDocument, sum Summary) ([]workflow.Artifact, error) {
	edits := documentEdits(s, doc)
	ps := pieces(s, doc, edits)
	base := fileBase(doc.Filename)
	docx, err := buildDOCX(base, ps)
	if err != nil {
		return nil, fmt.Errorf("build the redline docx: %w", err)
	}
	page, err := buildHTML(s, base, ps, sum)
	if err != nil {
		return nil, fmt.Errorf("build the redline page: %w", err)
	}
	return []workflow.Artifact{
		{Key: "redline.docx", Name: base + "-redline.docx", Data: docx,
			ContentType: "application/vnd.openxmlformats-officedocument.wordprocessingml.document"},
		{Key: "redline.html", Name: base + "-redline.html", Data: page, ContentType: "text/html; charset=utf-8"},
	}, nil
}

// fileBase is a safe download name stem from the uploaded file's name.
func fileBase(name string) string {
	stem := strings.TrimSuffix(filepath.Base(name), filepath.Ext(name))
	var b strings.Builder
	for _, r := range stem {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_' || r == '.' {
			b.WriteRune(r)
		} else if b.Len() > 0 {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-.")
	if out == "" || utf8.RuneCountInString(out) > 80 {
		return "contract"
	}
	return out
}

var pageTmpl = template.Must(template.New("redline").Parse(`<!DOCTYPE html>
<html lang="{{.Lang}}"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body{font:16px/1.55 system-ui,sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;color:#1b1b1b}
del{color:#a40000;background:#fde8e8;text-decoration:line-through}
ins{color:#005a1e;background:#e5f6ea;text-decoration:underline}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ccc;padding:.3rem .6rem;text-align:left;vertical-align:top}
.doc p{margin:.2rem 0;white-space:pre-wrap}.doc b{font-weight:650}.meta{color:#555;font-size:.9rem}
</style></head><body>
<h1>{{.Title}}</h1>
<p class="meta">{{.Notes}}</p>
<table><tr><th>{{.L.Severity}}</th><th>{{.L.Count}}</th></tr>
{{range .Severities}}<tr><td>{{.Name}}</td><td>{{.N}}</td></tr>{{end}}</table>
{{if .Risks}}<h2>{{.L.Risks}}</h2><table><tr><th>{{.L.Clause}}</th><th>{{.L.Severity}}</th><th>{{.L.Risk}}</th><th>{{.L.Cited}}</th></tr>
{{range .Risks}}<tr><td>{{.ClauseID}}</td><td>{{.Severity}}</td><td>{{.Description}}</td><td>{{.Excerpt}}</td></tr>{{end}}</table>{{end}}
{{if .Changes}}<h2>{{.L.Changes}}</h2><table><tr><th>{{.L.Clause}}</th><th>{{.L.Change}}</th><th>{{.L.Approved}}</th></tr>
{{range .Changes}}<tr><td>{{.ClauseID}}</td><td>{{range .Segs}}{{if eq .Op "delete"}}<del>{{.Text}}</del>{{else if eq .Op "insert"}}<ins>{{.Text}}</ins>{{else}}{{.Text}}{{end}}{{end}}</td><td>{{.By}}, {{.At}}</td></tr>{{end}}</table>{{end}}
<h2>{{.L.Contract}}</h2>
<div class="doc">{{range .Paragraphs}}<p>{{range .}}{{if eq .Op "delete"}}<del title="{{.Note}}">{{.Text}}</del>{{else if eq .Op "insert"}}<ins title="{{.Note}}">{{.Text}}</ins>{{else if .Bold}}<b>{{.Text}}</b>{{else}}{{.Text}}{{end}}{{end}}</p>
{{end}}</div>
</body></html>
`))

type htmlRun struct {
	Op, Text, Note string
	Bold           bool
}

type htmlChange struct {
	ClauseID, By, At string
	Segs             []Segment
}

// buildHTML renders the redline page. html/template escapes every piece of
// contract text, so a contract cannot inject markup into the page.
func buildHTML(s ReviewGraphState, base string, ps []piece, sum Summary) ([]byte, error) {
	zh := isChinese(s.Language, "")
	labels := map[string]string{"Severity": "Severity", "Count": "Risks", "Risks": "Risks", "Clause": "Clause", "Risk": "Risk",
		"Cited": "Cited text", "Changes": "Approved changes", "Change": "Change", "Approved": "Approved by", "Contract": "Contract with the approved changes"}
	if zh {
		labels = map[string]string{"Severity": "严重程度", "Count": "风险数", "Risks": "风险", "Clause": "条款", "Risk": "风险",
			"Cited": "引用原文", "Changes": "已批准的修改", "Change": "修改", "Approved": "批准人", "Contract": "合同（含已批准的修改）"}
	}
	type sevRow struct {
		Name string
		N    int
	}
	data := struct {
		Lang, Title, Notes string
		L                  map[string]string
		Severities         []sevRow
		Risks              []RiskPoint
		Changes            []htmlChange
		Paragraphs         [][]htmlRun
	}{Lang: say(zh, "en", "zh"), Title: say(zh, "Contract review: ", "合同审查：") + base, Notes: notes(s, sum), L: labels, Risks: s.AllRisks}
	for _, v := range Severities {
		data.Severities = append(data.Severities, sevRow{v, sum.RisksBySeverity[v]})
	}
	for _, d := range s.AllDiffs {
		data.Changes = append(data.Changes, htmlChange{ClauseID: d.ClauseID, By: d.DecidedBy, At: d.DecidedAt.UTC().Format(time.RFC3339),
			Segs: WordDiff(d.Original, d.Suggested)})
	}
	para := []htmlRun{}
	for _, p := range ps {
		note := ""
		if p.edit != nil {
			note = fmt.Sprintf("%s %s, %s: %s", say(zh, "Approved by", "批准人"), p.edit.diff.DecidedBy,
				p.edit.diff.DecidedAt.UTC().Format(time.RFC3339), p.edit.diff.Reason)
		}
		parts := strings.Split(p.text, "\n")
		if p.op != OpEqual { // a change's line breaks are layout, not paragraphs
			parts = []string{strings.ReplaceAll(p.text, "\n", " ")}
		}
		for i, part := range parts {
			if i > 0 {
				data.Paragraphs = append(data.Paragraphs, para)
				para = []htmlRun{}
			}
			if part != "" {
				para = append(para, htmlRun{Op: p.op, Text: part, Note: note, Bold: p.bold})
			}
		}
	}
	data.Paragraphs = append(data.Paragraphs, para)
	var buf bytes.Buffer
	if err := pageTmpl.Execute(&buf, data); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
