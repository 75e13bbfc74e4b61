package component

import (
	"context"
	"io"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"weft/internal/workflow"

	"github.com/a-h/templ"
)

// ArtifactURL is where the console serves a thread's artifact: a path of its own, outside
// the console's pages, answered with a sandbox Content-Security-Policy (an HTML artifact
// cannot script the console). Keys keep their slashes, so the pages of a generated site
// link to each other relatively.
func ArtifactURL(thread, key string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return "/files/" + url.PathEscape(thread) + "/" + strings.Join(parts, "/")
}

// DownloadURL is ArtifactURL asking for a download (Content-Disposition: attachment).
func DownloadURL(thread, key string) string { return ArtifactURL(thread, key) + "?download=1" }

func num(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func itoa(n int) string { return strconv.Itoa(n) }

func headingLevel(l int) int {
	if l < 2 || l > 4 {
		return 3
	}
	return l
}

func colClass(c workflow.Column) string {
	switch c.Type {
	case workflow.ColNumber:
		return "num"
	case workflow.ColWide:
		return "wide"
	}
	return ""
}

func cellColumn(t workflow.Table, i int) workflow.Column {
	if i < len(t.Columns) {
		return t.Columns[i]
	}
	return workflow.Column{}
}

func widths(p workflow.PagePreview) []int {
	if len(p.Widths) > 0 {
		return p.Widths
	}
	return []int{1280, 390}
}

func widthLabel(w int) string {
	switch {
	case w <= 480:
		return "phone · " + itoa(w) + " px"
	case w <= 900:
		return "tablet · " + itoa(w) + " px"
	}
	return "desktop · " + itoa(w) + " px"
}

func percent(done, total int) string {
	if total <= 0 {
		return "0"
	}
	return itoa(done * 100 / total)
}

func itemField(d workflow.ItemDecisions, it workflow.DecisionItem) string {
	return d.Name + "." + it.ID
}

func feedbackField(d workflow.ItemDecisions, it workflow.DecisionItem) string {
	return d.Name + "." + it.ID + ".feedback"
}

func markLabel(m string) string {
	switch m {
	case workflow.MarkCited:
		return "Cited"
	case workflow.MarkShortfall:
		return "Shortfall"
	}
	return ""
}

func markTitle(m string) string {
	switch m {
	case workflow.MarkCited:
		return "The result rests on this chunk: it is among the citations"
	case workflow.MarkShortfall:
		return "Named as where it falls short; the result does not rest on it"
	}
	return ""
}

func markClass(m string) string {
	if m == workflow.MarkShortfall {
		return "named"
	}
	return m
}

func planStatus(s string) string {
	if s == "" {
		return "pending"
	}
	return s
}

func maxLen(n int) string {
	if n <= 0 {
		return "100000"
	}
	return itoa(n)
}

// frameClass sizes a preview frame: a desktop page is drawn at its width and scaled down to
// the card (static/css/app.css), a phone's at its own.
func frameClass(w int) string {
	if w <= 480 {
		return "phone"
	}
	return "desktop"
}

// PlainText is a document chunk as people read it: Markdown heading marks ("# ", "## ")
// at the start of a line are dropped; everything else is shown as written (and escaped).
func PlainText(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if t := strings.TrimLeft(l, "#"); len(t) < len(l) && len(l)-len(t) <= 6 && strings.HasPrefix(t, " ") {
			lines[i] = strings.TrimPrefix(t, " ")
		}
	}
	return strings.Join(lines, "\n")
}

func citeTitle(c workflow.Citation) string { return "Open this chunk in " + c.Document }

// longWord is the length, in characters, from which Words treats a word as a token that may
// not fit its column: an id, a URL, a word typed without spaces.
const longWord = 24

// longestPart is the length, in characters, of the longest part of word that a browser does
// not break: it may break a word after a hyphen, and around Chinese and Japanese characters.
func longestPart(word string) int {
	longest, n := 0, 0
	for _, r := range word {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana) {
			longest, n = max(longest, 1), 0
			continue
		}
		n++
		longest = max(longest, n)
		if r == '-' {
			n = 0
		}
	}
	return longest
}

// Words renders s as text for a table cell: a word with a part longer than longWord characters
// that a browser would not break (longestPart) is marked as a token (class "token", free to
// break at any point), every other word is plain text. A
// cell's words break only where they cannot fit (overflow-wrap: break-word), which makes a
// table column at least as wide as its longest word: a long token would widen the table past
// its card, so only tokens give up their width, and ordinary words never break ("implementatio
// / n" in a squeezed column).
func Words(s string) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		var b strings.Builder
		for s != "" {
			n := strings.IndexFunc(s, unicode.IsSpace)
			if n < 0 {
				n = len(s)
			}
			word, gap := s[:n], len(s[n:])-len(strings.TrimLeftFunc(s[n:], unicode.IsSpace))
			if longestPart(word) > longWord || identifier(word) {
				b.WriteString(`<span class="token">` + templ.EscapeString(word) + `</span>`)
			} else {
				b.WriteString(templ.EscapeString(word))
			}
			b.WriteString(s[n : n+gap]) // white space only: nothing to escape
			s = s[n+gap:]
		}
		_, err := io.WriteString(w, b.String())
		return err
	})
}

// identifier reports whether word is a name from the code (a node, an error code, a
// channel: snake_case or UPPER_CASE with underscores), which reads whole nowhere and may
// break anywhere rather than stretch a narrow column.
func identifier(word string) bool {
	return strings.Contains(strings.Trim(word, "_"), "_") && !strings.ContainsFunc(word, unicode.IsSpace)
}
