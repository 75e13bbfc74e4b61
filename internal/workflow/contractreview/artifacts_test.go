package contractreview_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	cr "weft/internal/workflow/contractreview"
)

// reviewDemo reviews a demo contract, approving every change as Li Na.
func reviewDemo(t *testing.T, i int) (bundle, cr.ReviewGraphState, int) {
	t.Helper()
	b := setup(t, false)
	res, pauses := b.approveAll(t, b.run(t, cr.DemoContracts()[i].Start("demo")))
	return b, res.State, pauses
}

func artifact(t *testing.T, b bundle, key string) []byte {
	t.Helper()
	a, ok := b.arts.Get(b.cfg.ThreadID, key)
	if !ok {
		t.Fatalf("no artifact %s (have %v)", key, b.arts.Keys(b.cfg.ThreadID))
	}
	return a.Data
}

// zipPart reads one part of a zip (a DOCX or an ODT).
func zipPart(t *testing.T, data []byte, name string) string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("open zip: %v", err)
	}
	for _, f := range zr.File {
		if f.Name == name {
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			b, err := io.ReadAll(rc)
			if err != nil {
				t.Fatal(err)
			}
			return string(b)
		}
	}
	t.Fatalf("no part %s", name)
	return ""
}

// wellFormed parses every token of an XML document.
func wellFormed(t *testing.T, doc string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(doc))
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
	}
}

// The English demo on the Silver Book checklist: every clause with changes
// pauses; the DOCX holds each approved change as a tracked change by the
// reviewer at the decision time.
func TestDemoReviewDOCX(t *testing.T) {
	t.Parallel()
	b, s, pauses := reviewDemo(t, 0)
	if s.Summary.ClausesReviewed != 10 || pauses != 6 || s.Summary.DiffsApproved != 6 {
		t.Fatalf("reviewed %d clauses, %d pauses, %d approved: %s", s.Summary.ClausesReviewed, pauses, s.Summary.DiffsApproved, s.SummaryNotes)
	}
	if got := rulesOf(s.AllRisks); !slices.Equal(got, []string{cr.RuleClaimNotice, cr.RuleLiabilityCap, cr.RuleModel, cr.RulePaymentTerms,
		cr.RuleTermination, cr.RuleUnlimitedIndemnity}) {
		t.Errorf("risks = %v", got)
	}
	if !s.Offline || s.Provider != "offline" {
		t.Errorf("provider %q offline %v", s.Provider, s.Offline)
	}
	docx := artifact(t, b, "redline.docx")
	doc := zipPart(t, docx, "word/document.xml")
	wellFormed(t, doc)
	for _, want := range []string{
		`<w:del w:id="`, `w:author="Li Na" w:date="2026-03-02T10:15:00Z"><w:r><w:delText xml:space="preserve">14</w:delText>`,
		`<w:ins w:id="`, `<w:t xml:space="preserve">28</w:t>`, `<w:b/></w:rPr><w:t xml:space="preserve">17.6 Limitation of Liability</w:t>`,
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("document.xml lacks %s", want)
		}
	}
	if n := strings.Count(doc, "<w:ins "); n < 6 {
		t.Errorf("%d insertions, want one or more per approved change (6)", n)
	}
	if !strings.Contains(zipPart(t, docx, "word/settings.xml"), "<w:trackRevisions/>") {
		t.Error("track changes is not on")
	}
	if len(s.Artifacts) != 2 || s.Artifacts[0].Name != "epc_silver_book_en-redline.docx" {
		t.Errorf("artifacts = %+v", s.Artifacts)
	}
}

// The same review twice gives the same bytes (the artifact store skips an
// identical rewrite, so a replayed summarize writes nothing new).
func TestArtifactsDeterministic(t *testing.T) {
	t.Parallel()
	b1, _, _ := reviewDemo(t, 1)
	b2, _, _ := reviewDemo(t, 1)
	for _, key := range []string{"redline.docx", "redline.html"} {
		if !bytes.Equal(artifact(t, b1, key), artifact(t, b2, key)) {
			t.Errorf("%s differs between two identical reviews", key)
		}
	}
}

// Contract text reaches the HTML and the DOCX escaped.
func TestArtifactsEscape(t *testing.T) {
	t.Parallel()
	b := setup(t, true)
	text := `20.1 Claims <b>& "notices"</b>
The Contractor shall give notice of a claim within 14 days <script>alert('x')</script> after the event.
`
	b.run(t, contract("Contractor", text))
	page := string(artifact(t, b, "redline.html"))
	if strings.Contains(page, "<script>") || strings.Contains(page, "<b>&") {
		t.Errorf("the page carries the contract's markup unescaped")
	}
	for _, want := range []string{"&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;", "<del title=", ">14</del><ins title=", ">28</ins>"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	doc := zipPart(t, artifact(t, b, "redline.docx"), "word/document.xml")
	wellFormed(t, doc)
	if !strings.Contains(doc, "&lt;script&gt;") || !strings.Contains(doc, "&lt;b&gt;&amp; &#34;notices&#34;&lt;/b&gt;") {
		t.Errorf("document.xml does not hold the escaped text")
	}
}

// soffice converts a file with LibreOffice headless, with a profile of its
// own (parallel runs would fight over a shared one).
func soffice(dir, format, file string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	profile := "file://" + filepath.Join(dir, "profile-"+strings.ReplaceAll(format, ":", "-"))
	out := filepath.Join(dir, format[:strings.IndexByte(format+":", ':')])
	cmd := exec.CommandContext(ctx, "soffice", "-env:UserInstallation="+profile, "--headless", "--convert-to", format, "--outdir", out, file)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("soffice --convert-to %s: %w\n%s", format, err, b)
	}
	ext := format[:strings.IndexByte(format+":", ':')]
	return filepath.Join(out, strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))+"."+ext), nil
}

// LibreOffice opens the DOCX and shows both the deleted and the inserted
// text; converted to OpenDocument, the changes are tracked changes by the
// reviewer, not plain text.
func TestDOCXOpensInLibreOffice(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("soffice"); err != nil {
		t.Skip("soffice is not installed: apt-get install libreoffice-writer-nogui")
	}
	b, _, _ := reviewDemo(t, 0)
	dir := t.TempDir()
	path := filepath.Join(dir, "reviewed.docx")
	if err := os.WriteFile(path, artifact(t, b, "redline.docx"), 0o600); err != nil {
		t.Fatal(err)
	}
	var (
		txtPath, odtPath string
		txtErr, odtErr   error
		wg               sync.WaitGroup
	)
	wg.Go(func() { txtPath, txtErr = soffice(dir, "txt:Text", path) })
	wg.Go(func() { odtPath, odtErr = soffice(dir, "odt", path) })
	wg.Wait()
	if err := errors.Join(txtErr, odtErr); err != nil {
		t.Fatal(err)
	}
	txt, err := os.ReadFile(txtPath)
	if err != nil {
		t.Fatal(err)
	}
	// The text export shows a deletion followed by its insertion.
	for _, want := range []string{"within 1428 days", "shall not exceed 10100% of the Contract Price", "within 9056 days", "at its solereasonable discretion"} {
		if !strings.Contains(string(txt), want) {
			t.Errorf("LibreOffice's text lacks %q", want)
		}
	}
	odt, err := os.ReadFile(odtPath)
	if err != nil {
		t.Fatal(err)
	}
	content := zipPart(t, odt, "content.xml")
	regions := regexp.MustCompile(`(?s)<text:changed-region.*?</text:changed-region>`).FindAllString(content, -1)
	var dels, ins int
	for _, r := range regions {
		if !strings.Contains(r, "<dc:creator>Li Na</dc:creator>") || !strings.Contains(r, "<dc:date>2026-03-02T10:15:00") {
			t.Errorf("a tracked change without the reviewer and date: %s", r)
		}
		switch {
		case strings.Contains(r, "<text:deletion>"):
			dels++
		case strings.Contains(r, "<text:insertion>"):
			ins++
		}
	}
	if dels < 4 || ins < 6 {
		t.Errorf("LibreOffice sees %d deletions and %d insertions, want at least 4 and 6", dels, ins)
	}
	if !regexp.MustCompile(`<text:deletion>.*?14.*?</text:deletion>`).MatchString(content) {
		t.Error("the deleted 14 is not a tracked deletion")
	}
}
