package bideval

import (
	"strings"
	"unicode/utf8"
)

// ChunkSize is the target size of a chunk in characters.
const ChunkSize = 480

// SplitChunks splits a document into chunks: paragraphs (separated by blank
// lines or Markdown headings) joined until a chunk would pass ChunkSize;
// one longer paragraph is cut at sentence ends. The same text always gives
// the same chunks, so chunk ids (document id + position) are stable.
func SplitChunks(text string) []string {
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	var paras []string
	for _, block := range strings.Split(text, "\n\n") {
		var cur []string
		for _, line := range strings.Split(block, "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "#") && len(cur) > 0 {
				paras = append(paras, strings.Join(cur, "\n"))
				cur = nil
			}
			if strings.TrimSpace(line) != "" {
				cur = append(cur, strings.TrimRight(line, " \t"))
			}
		}
		if len(cur) > 0 {
			paras = append(paras, strings.Join(cur, "\n"))
		}
	}
	var out []string
	var cur strings.Builder
	flush := func() {
		if s := strings.TrimSpace(cur.String()); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	for _, p := range paras {
		for _, piece := range cutLong(p) {
			if cur.Len() > 0 && utf8.RuneCountInString(cur.String())+utf8.RuneCountInString(piece) > ChunkSize {
				flush()
			}
			if cur.Len() > 0 {
				cur.WriteString("\n\n")
			}
			cur.WriteString(piece)
		}
	}
	flush()
	return out
}

// cutLong cuts a paragraph longer than ChunkSize at sentence ends.
func cutLong(p string) []string {
	if utf8.RuneCountInString(p) <= ChunkSize {
		return []string{p}
	}
	var out []string
	var cur []rune
	for _, r := range p {
		cur = append(cur, r)
		end := r == '.' || r == '。' || r == '；' || r == ';' || r == '!' || r == '?' || r == '！' || r == '？'
		if (end && len(cur) >= ChunkSize/2) || len(cur) >= ChunkSize {
			out = append(out, strings.TrimSpace(string(cur)))
			cur = nil
		}
	}
	if s := strings.TrimSpace(string(cur)); s != "" {
		out = append(out, s)
	}
	return out
}
