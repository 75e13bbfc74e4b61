// Package doctext turns an uploaded document (.txt, .md, .docx, .pdf) into
// plain UTF-8 text, for the workflows that read documents (contract review,
// bid evaluation). Word and PDF files are read by well-kept tools, not by
// hand: pandoc for .docx and poppler's pdftotext for .pdf (Debian packages
// pandoc and poppler-utils). Each tool runs without a shell, under a timeout,
// with the input and the output size bounded. Every refusal is a typed error
// (*Error, matched with errors.Is against the sentinels below) wrapped in a
// classified fault.Error whose message says what to do.
//
// It imports the standard library and internal/fault only.
package doctext

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"weft/internal/fault"
)

// Sentinels for the ways a document is refused; an *Error wraps one of them.
var (
	// ErrEmpty: the file has no bytes, or no text once read.
	ErrEmpty = errors.New("empty document")
	// ErrTooLarge: the file, or the text read from it, is over the limit.
	ErrTooLarge = errors.New("document too large")
	// ErrUnsupported: the file's extension is not one this package reads.
	ErrUnsupported = errors.New("unsupported document type")
	// ErrNotText: a .txt or .md file that is not UTF-8 text (a binary file renamed).
	ErrNotText = errors.New("not UTF-8 text")
	// ErrNotWord: a .docx file that is not a Word document.
	ErrNotWord = errors.New("not a Word document")
	// ErrNotPDF: a .pdf file that is not a readable PDF.
	ErrNotPDF = errors.New("not a readable PDF")
	// ErrEncrypted: a PDF that needs a password to open.
	ErrEncrypted = errors.New("encrypted PDF")
	// ErrNoTextLayer: a PDF with pages but no text, such as a scan.
	ErrNoTextLayer = errors.New("PDF has no text layer")
	// ErrToolMissing: the tool that reads this kind of file is not installed.
	ErrToolMissing = errors.New("document tool not installed")
	// ErrToolFailed: the tool ran and failed, or ran out of time.
	ErrToolFailed = errors.New("document tool failed")
)

// Error is a refused document: which file, which sentinel (Kind), a message
// for the person who uploaded it, and for ErrToolMissing the Debian package
// to install.
type Error struct {
	Kind     error
	Filename string
	Msg      string
	Package  string
}

func (e *Error) Error() string {
	return fmt.Sprintf("%s: %s", e.Filename, e.Msg)
}

// Unwrap returns the sentinel, so errors.Is(err, doctext.ErrEmpty) works.
func (e *Error) Unwrap() error { return e.Kind }

// Format is the kind of document a Text was read from.
type Format string

// The formats Extract reads.
const (
	FormatText     Format = "txt"
	FormatMarkdown Format = "md"
	FormatDOCX     Format = "docx"
	FormatPDF      Format = "pdf"
)

// Text is a document's text: UTF-8, "\n" line ends, no byte order mark.
type Text struct {
	Body   string `json:"body"`
	Format Format `json:"format"`
	// Tool names the program that read the file ("pandoc", "pdftotext"), empty for text files.
	Tool string `json:"tool,omitempty"`
}

// Limits and defaults.
const (
	// MaxInputBytes bounds an uploaded file.
	MaxInputBytes = 25 << 20
	// MaxTextBytes bounds the text read from it.
	MaxTextBytes = 8 << 20
	// DefaultTimeout bounds one tool run.
	DefaultTimeout = 60 * time.Second
)

// Extractor reads documents. The zero value uses the defaults above and
// finds tools on PATH.
type Extractor struct {
	// MaxInput and MaxText override MaxInputBytes and MaxTextBytes when positive.
	MaxInput, MaxText int
	// Timeout overrides DefaultTimeout when positive.
	Timeout time.Duration
	// LookPath finds a tool; nil means exec.LookPath.
	LookPath func(name string) (string, error)
}

// Extract reads a document with the default Extractor.
func Extract(ctx context.Context, filename string, data []byte) (Text, error) {
	return Extractor{}.Extract(ctx, filename, data)
}

// Extract reads the document named filename (its extension picks the
// reader) whose bytes are data.
func (x Extractor) Extract(ctx context.Context, filename string, data []byte) (Text, error) {
	name := filepath.Base(filename)
	maxIn := orDefault(x.MaxInput, MaxInputBytes)
	switch {
	case len(data) == 0:
		return Text{}, refuse(ErrEmpty, name, "the file is empty")
	case len(data) > maxIn:
		return Text{}, refuse(ErrTooLarge, name, fmt.Sprintf("the file is %s, over the %s limit", size(len(data)), size(maxIn)))
	}
	var (
		t   Text
		err error
	)
	switch ext := strings.ToLower(filepath.Ext(name)); ext {
	case ".txt", ".text":
		t, err = x.plain(name, data, FormatText)
	case ".md", ".markdown":
		t, err = x.plain(name, data, FormatMarkdown)
	case ".docx":
		t, err = x.docx(ctx, name, data)
	case ".pdf":
		t, err = x.pdf(ctx, name, data)
	case ".doc":
		return Text{}, refuse(ErrUnsupported, name, "old Word (.doc) files are not read: save it as .docx")
	default:
		return Text{}, refuse(ErrUnsupported, name, fmt.Sprintf("%q files are not read: upload .txt, .md, .docx or .pdf", ext))
	}
	if err != nil {
		return Text{}, err
	}
	if strings.TrimSpace(t.Body) == "" {
		if t.Format == FormatPDF {
			return Text{}, refuse(ErrNoTextLayer, name, "the PDF has no text layer (a scan?): run OCR on it, or upload the original document")
		}
		return Text{}, refuse(ErrEmpty, name, "the document has no text")
	}
	return t, nil
}

// plain checks that a text file really is UTF-8 text and normalises it.
func (x Extractor) plain(name string, data []byte, f Format) (Text, error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	if !utf8.Valid(data) {
		return Text{}, refuse(ErrNotText, name, "the file is not UTF-8 text (a binary file, or another encoding): save it as UTF-8 text")
	}
	if binaryish(data) {
		return Text{}, refuse(ErrNotText, name, "the file holds binary data, not text")
	}
	if max := orDefault(x.MaxText, MaxTextBytes); len(data) > max {
		return Text{}, refuse(ErrTooLarge, name, fmt.Sprintf("the text is %s, over the %s limit", size(len(data)), size(max)))
	}
	return Text{Body: normalize(string(data)), Format: f}, nil
}

// binaryish reports a NUL byte or a share of control characters (other than
// tab, newline, carriage return and form feed) that text files do not have.
func binaryish(data []byte) bool {
	if bytes.IndexByte(data, 0) >= 0 {
		return true
	}
	controls, runes := 0, 0
	for _, r := range string(data) {
		runes++
		if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' && r != '\f' {
			controls++
		}
	}
	return controls*100 > runes // more than 1%
}

// normalize makes line ends "\n", drops NULs and form feeds between pages,
// and trims trailing spaces of every line.
func normalize(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.ReplaceAll(s, "\f", "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	return strings.TrimSpace(strings.Join(lines, "\n")) + "\n"
}

func refuse(kind error, name, msg string) error {
	return fault.Wrap(fault.Validation, fault.CodeValidation, &Error{Kind: kind, Filename: name, Msg: msg})
}

// missing is the error for a tool that is not installed: the platform's
// fault, not the upload's, so it is classified permanent.
func missing(name, tool, pkg string) error {
	return fault.Wrap(fault.Permanent, fault.CodeUnknown, &Error{Kind: ErrToolMissing, Filename: name, Package: pkg,
		Msg: fmt.Sprintf("%s is not installed on the server, so this file cannot be read: install the Debian package %s", tool, pkg)})
}

func orDefault(v, d int) int {
	if v > 0 {
		return v
	}
	return d
}

// size prints a byte count for people.
func size(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

func (x Extractor) lookPath(name string) (string, error) {
	if x.LookPath != nil {
		return x.LookPath(name)
	}
	return exec.LookPath(name)
}
