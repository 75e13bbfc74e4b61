package contractreview

// The reviewed contract as a Word document whose approved changes are real
// tracked changes (w:del / w:ins with the approving reviewer as w:author and
// the decision time as w:date), so Word or LibreOffice shows them for
// acceptance.
//
// The WordprocessingML is written by hand, with archive/zip and
// encoding/xml's escaping: no Go OOXML library served to this project writes
// tracked changes (unioffice is paid, gooxml is not served, and the served
// docx libraries only fill templates), and the document needs only five
// small parts: content types, two relationship files, settings (track
// revisions on) and the body of paragraphs and runs.

import (
	"archive/zip"
	"bytes"
	"encoding/xml"
	"fmt"
	"strings"
	"time"
)

const wNS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"

// zipTime is every part's time in the zip: a fixed one, so the same review
// always gives the same bytes (the artifact store skips an identical rewrite).
var zipTime = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

var docxParts = []struct{ name, body string }{
	{"[Content_Types].xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">` +
		`<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>` +
		`<Default Extension="xml" ContentType="application/xml"/>` +
		`<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>` +
		`<Override PartName="/word/settings.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.settings+xml"/>` +
		`<Override PartName="/docProps/core.xml" ContentType="application/vnd.openxmlformats-package.core-properties+xml"/>` +
		`</Types>`},
	{"_rels/.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
		`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>` +
		`<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties" Target="docProps/core.xml"/>` +
		`</Relationships>`},
	{"word/_rels/document.xml.rels", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
		`<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/settings" Target="settings.xml"/>` +
		`</Relationships>`},
	{"word/settings.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:settings xmlns:w="` + wNS + `"><w:trackRevisions/></w:settings>`},
}

// buildDOCX writes the document: a title, then one paragraph per line of
// the contract, heading text bold, approved changes as tracked changes.
func buildDOCX(title string, ps []piece) ([]byte, error) {
	var body strings.Builder
	body.WriteString(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>` + "\n")
	body.WriteString(`<w:document xmlns:w="` + wNS + `"><w:body>`)
	body.WriteString(`<w:p><w:pPr><w:jc w:val="center"/></w:pPr><w:r><w:rPr><w:b/><w:sz w:val="32"/></w:rPr><w:t xml:space="preserve">`)
	body.WriteString(esc(title))
	body.WriteString(`</w:t></w:r></w:p><w:p>`)
	id := 0
	for _, p := range ps {
		if p.op != OpEqual {
			id++
			body.WriteString(change(p, id))
			continue
		}
		for i, line := range strings.Split(p.text, "\n") {
			if i > 0 {
				body.WriteString(`</w:p><w:p>`)
			}
			if line != "" {
				body.WriteString(run(line, p.bold, "w:t"))
			}
		}
	}
	body.WriteString(`</w:p><w:sectPr><w:pgSz w:w="11906" w:h="16838"/>` +
		`<w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="708" w:footer="708" w:gutter="0"/></w:sectPr>`)
	body.WriteString(`</w:body></w:document>`)

	core := `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/">` +
		`<dc:title>` + esc(title) + `</dc:title><dc:creator>Weft contract review</dc:creator></cp:coreProperties>`

	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	parts := append(docxParts[:len(docxParts):len(docxParts)],
		struct{ name, body string }{"word/document.xml", body.String()},
		struct{ name, body string }{"docProps/core.xml", core})
	for _, part := range parts {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: part.name, Method: zip.Deflate, Modified: zipTime})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write([]byte(part.body)); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// change writes a deletion or insertion as a tracked change.
func change(p piece, id int) string {
	tag, textTag := "w:ins", "w:t"
	if p.op == OpDelete {
		tag, textTag = "w:del", "w:delText"
	}
	d := p.edit.diff
	author := d.DecidedBy
	if author == "" {
		author = "reviewer"
	}
	date := d.DecidedAt.UTC().Format("2006-01-02T15:04:05Z")
	text := strings.ReplaceAll(p.text, "\n", " ") // a line break inside a change is the layout's
	return fmt.Sprintf(`<%s w:id="%d" w:author="%s" w:date="%s">%s</%s>`, tag, id, esc(author), date, run(text, false, textTag), tag)
}

func run(text string, bold bool, textTag string) string {
	props := ""
	if bold {
		props = `<w:rPr><w:b/></w:rPr>`
	}
	return `<w:r>` + props + `<` + textTag + ` xml:space="preserve">` + esc(text) + `</` + textTag + `></w:r>`
}

// esc escapes text for XML, dropping the characters XML 1.0 cannot hold and
// turning tabs into spaces.
func esc(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case r < 0x20 && r != '\n' && r != '\r', r == 0xFFFE, r == 0xFFFF, r >= 0xD800 && r <= 0xDFFF:
			return -1
		}
		return r
	}, s)
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
