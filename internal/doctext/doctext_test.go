package doctext_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"weft/internal/doctext"
	"weft/internal/fault"
)

const sample = `# Contract Agreement

1.1 Definitions

The "Contract Price" means USD 12,500,000.

第十四条 工程款支付

发包人应在收到付款申请后28天内支付。
`

// needTool skips the test when a tool is not installed, naming its Debian package.
func needTool(t *testing.T, cmd, pkg string) {
	t.Helper()
	if _, err := exec.LookPath(cmd); err != nil {
		t.Skipf("%s is not installed: apt-get install %s", cmd, pkg)
	}
}

// run runs a tool for a fixture and fails the test on error.
func run(t *testing.T, dir, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}

func read(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// docxFixture makes a Word document from markdown with pandoc.
func docxFixture(t *testing.T, dir, base, markdown string) string {
	t.Helper()
	needTool(t, "pandoc", "pandoc")
	md := filepath.Join(dir, base+".md")
	if err := os.WriteFile(md, []byte(markdown), 0o600); err != nil {
		t.Fatal(err)
	}
	run(t, dir, "pandoc", "-f", "markdown", "-t", "docx", "-o", base+".docx", base+".md")
	return filepath.Join(dir, base+".docx")
}

// pdfFixtures are made once per test binary: LibreOffice is slow to start.
type pdfFixtures struct {
	text, image, encrypted string // paths; encrypted is "" without qpdf
	skip                   string
}

var pdfOnce = sync.OnceValue(func() *pdfFixtures {
	f := &pdfFixtures{}
	for _, tl := range [][2]string{{"pandoc", "pandoc"}, {"soffice", "libreoffice-writer-nogui"}} {
		if _, err := exec.LookPath(tl[0]); err != nil {
			f.skip = tl[0] + " is not installed: apt-get install " + tl[1]
			return f
		}
	}
	dir, err := os.MkdirTemp("", "doctext-pdf-")
	if err != nil {
		f.skip = err.Error()
		return f
	}
	// An image-only page: a PNG with no text, put in a Word document by pandoc.
	img := image.NewGray(image.Rect(0, 0, 240, 120))
	for y := range 120 {
		for x := range 240 {
			img.SetGray(x, y, color.Gray{Y: uint8((x * y) % 251)})
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	files := map[string][]byte{"scan.png": buf.Bytes(), "text.md": []byte(sample), "scan.md": []byte("![](scan.png)\n")}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			f.skip = err.Error()
			return f
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	steps := [][]string{
		{"pandoc", "-o", "text.docx", "text.md"},
		{"pandoc", "-o", "scan.docx", "scan.md"},
		// A profile of its own, so parallel test binaries do not share LibreOffice's lock.
		{"soffice", "-env:UserInstallation=file://" + filepath.Join(dir, "profile"), "--headless",
			"--convert-to", "pdf", "--outdir", dir, "text.docx", "scan.docx"},
	}
	for _, s := range steps {
		cmd := exec.CommandContext(ctx, s[0], s[1:]...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			f.skip = "making PDF fixtures failed: " + err.Error() + ": " + string(out)
			return f
		}
	}
	f.text, f.image = filepath.Join(dir, "text.pdf"), filepath.Join(dir, "scan.pdf")
	if _, err := exec.LookPath("qpdf"); err == nil {
		cmd := exec.CommandContext(ctx, "qpdf", "--encrypt", "user-secret", "owner-secret", "256", "--", "text.pdf", "locked.pdf")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err == nil {
			f.encrypted = filepath.Join(dir, "locked.pdf")
		} else {
			f.skip = "qpdf failed: " + string(out)
		}
	}
	return f
})

func pdfs(t *testing.T) *pdfFixtures {
	t.Helper()
	f := pdfOnce()
	if f.skip != "" {
		t.Skip(f.skip)
	}
	return f
}

// wantRefused checks the sentinel, the class and that the message says what to do.
func wantRefused(t *testing.T, err error, kind error, class fault.Class, msgPart string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("err = %v, want %v", err, kind)
	}
	if c, _ := fault.Classify(err); c != class {
		t.Errorf("class = %s, want %s (err %v)", c, class, err)
	}
	var de *doctext.Error
	if !errors.As(err, &de) || !strings.Contains(de.Error(), msgPart) {
		t.Errorf("message %q does not say %q", err, msgPart)
	}
}

func TestPlainText(t *testing.T) {
	t.Parallel()
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10")
	cases := []struct {
		name, file string
		data       []byte
		want       string // text wanted, or "" when refused
		kind       error
		msg        string
	}{
		{"markdown with BOM and CRLF", "c.md", []byte("\xef\xbb\xbf# Title  \r\n\r\n第一条 总则\r\n"), "# Title\n\n第一条 总则\n", nil, ""},
		{"text", "c.TXT", []byte("1.1 Definitions\n"), "1.1 Definitions\n", nil, ""},
		{"empty file", "c.txt", nil, "", doctext.ErrEmpty, "empty"},
		{"only blanks", "c.txt", []byte(" \n\t\n"), "", doctext.ErrEmpty, "no text"},
		{"binary renamed .txt", "c.txt", png, "", doctext.ErrNotText, "UTF-8"},
		{"GBK text", "c.txt", []byte{0xb5, 0xda, 0xd2, 0xbb, 0xcc, 0xf5}, "", doctext.ErrNotText, "save it as UTF-8"},
		{"NUL bytes", "c.md", []byte("abc\x00def"), "", doctext.ErrNotText, "binary"},
		{"old Word", "c.doc", []byte("x"), "", doctext.ErrUnsupported, ".docx"},
		{"spreadsheet", "c.xlsx", []byte("x"), "", doctext.ErrUnsupported, ".txt, .md, .docx or .pdf"},
		{"not a Word document", "c.docx", []byte("just text"), "", doctext.ErrNotWord, "not a Word"},
		{"zip without a document", "c.docx", zipOf(t, "hello.txt"), "", doctext.ErrNotWord, "not a Word"},
		{"not a PDF", "c.pdf", []byte("<html>"), "", doctext.ErrNotPDF, "not a PDF"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := doctext.Extract(context.Background(), tc.file, tc.data)
			if tc.kind != nil {
				wantRefused(t, err, tc.kind, fault.Validation, tc.msg)
				return
			}
			if err != nil || got.Body != tc.want {
				t.Fatalf("Extract = %q, %v; want %q", got.Body, err, tc.want)
			}
		})
	}
}

func zipOf(t *testing.T, names ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range names {
		w, _ := zw.Create(n)
		_, _ = w.Write([]byte("x"))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestTooLarge(t *testing.T) {
	t.Parallel()
	big := bytes.Repeat([]byte("The Contractor shall pay. "), (30<<20)/26+1) // 30 MB
	_, err := doctext.Extract(context.Background(), "big.txt", big)
	wantRefused(t, err, doctext.ErrTooLarge, fault.Validation, "over the 25.0 MB limit")
}

func TestDOCX(t *testing.T) {
	t.Parallel()
	path := docxFixture(t, t.TempDir(), "contract", sample)
	got, err := doctext.Extract(context.Background(), path, read(t, path))
	if err != nil {
		t.Fatalf("Extract: %v", err)
	}
	for _, want := range []string{"Contract Agreement", "1.1 Definitions", "USD 12,500,000", "第十四条 工程款支付", "28天内支付"} {
		if !strings.Contains(got.Body, want) {
			t.Errorf("text lacks %q:\n%s", want, got.Body)
		}
	}
	if got.Format != doctext.FormatDOCX || got.Tool != "pandoc" {
		t.Errorf("format %q tool %q", got.Format, got.Tool)
	}

	// The text limit applies to the tool's output too.
	_, err = doctext.Extractor{MaxText: 20}.Extract(context.Background(), path, read(t, path))
	wantRefused(t, err, doctext.ErrTooLarge, fault.Validation, "text read from it")
}

func TestPDF(t *testing.T) {
	t.Parallel()
	f := pdfs(t)
	ctx := context.Background()

	got, err := doctext.Extract(ctx, "contract.pdf", read(t, f.text))
	if err != nil {
		t.Fatalf("text PDF: %v", err)
	}
	for _, want := range []string{"1.1 Definitions", "USD 12,500,000", "第十四条 工程款支付"} {
		if !strings.Contains(got.Body, want) {
			t.Errorf("PDF text lacks %q:\n%s", want, got.Body)
		}
	}
	if got.Format != doctext.FormatPDF || got.Tool != "pdftotext" {
		t.Errorf("format %q tool %q", got.Format, got.Tool)
	}

	_, err = doctext.Extract(ctx, "scan.pdf", read(t, f.image))
	wantRefused(t, err, doctext.ErrNoTextLayer, fault.Validation, "no text layer")

	data := read(t, f.text)
	_, err = doctext.Extract(ctx, "cut.pdf", data[:len(data)/3])
	if !errors.Is(err, doctext.ErrNotPDF) && !errors.Is(err, doctext.ErrNoTextLayer) {
		t.Errorf("a truncated PDF: err = %v, want not readable or no text", err)
	}
}

func TestEncryptedPDF(t *testing.T) {
	t.Parallel()
	f := pdfs(t)
	if f.encrypted == "" {
		t.Skip("qpdf is not installed: apt-get install qpdf")
	}
	_, err := doctext.Extract(context.Background(), "locked.pdf", read(t, f.encrypted))
	wantRefused(t, err, doctext.ErrEncrypted, fault.Validation, "encrypted with a password")
}

func TestToolMissing(t *testing.T) {
	t.Parallel()
	none := doctext.Extractor{LookPath: func(string) (string, error) { return "", exec.ErrNotFound }}
	cases := []struct{ file, pkg string }{{"c.docx", "pandoc"}, {"c.pdf", "poppler-utils"}}
	for _, tc := range cases {
		data := zipOf(t, "word/document.xml")
		if strings.HasSuffix(tc.file, ".pdf") {
			data = []byte("%PDF-1.4\n")
		}
		_, err := none.Extract(context.Background(), tc.file, data)
		wantRefused(t, err, doctext.ErrToolMissing, fault.Permanent, "install the Debian package "+tc.pkg)
	}
}

func TestToolTimeout(t *testing.T) {
	t.Parallel()
	needTool(t, "pandoc", "pandoc")
	path := docxFixture(t, t.TempDir(), "slow", sample)
	_, err := doctext.Extractor{Timeout: time.Nanosecond}.Extract(context.Background(), path, read(t, path))
	if !errors.Is(err, doctext.ErrToolFailed) || !strings.Contains(err.Error(), "took longer than") {
		t.Fatalf("err = %v, want a timeout", err)
	}
}
