package component

import (
	"net/url"
	"strconv"
	"strings"

	"weft/internal/workflow"
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
