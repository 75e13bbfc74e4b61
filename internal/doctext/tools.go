package doctext

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"weft/internal/fault"
)

// tool is an external reader: its command name and the Debian package that
// installs it.
type tool struct{ cmd, pkg string }

var (
	pandoc    = tool{"pandoc", "pandoc"}
	pdftotext = tool{"pdftotext", "poppler-utils"}
)

// docx reads a Word document with pandoc, after checking that the file is a
// zip holding word/document.xml (so a renamed file gets a clear message, not
// pandoc's).
func (x Extractor) docx(ctx context.Context, name string, data []byte) (Text, error) {
	if !isWordZip(data) {
		return Text{}, refuse(ErrNotWord, name, "the file is not a Word (.docx) document")
	}
	// --sandbox: the document cannot make pandoc read files or the network.
	// +RTS -M: a heap cap, against a document built to exhaust memory.
	out, err := x.run(ctx, name, pandoc, data, "+RTS", "-M1024m", "-RTS", "--sandbox", "-f", "docx", "-t", "plain", "--wrap=none")
	if err != nil {
		var te *toolError
		if errors.As(err, &te) {
			return Text{}, refuse(ErrNotWord, name, "pandoc could not read it as a Word document: "+te.msg())
		}
		return Text{}, err
	}
	return Text{Body: normalize(out), Format: FormatDOCX, Tool: pandoc.cmd}, nil
}

func isWordZip(data []byte) bool {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return false
	}
	for _, f := range zr.File {
		if f.Name == "word/document.xml" {
			return true
		}
	}
	return false
}

// pdf reads a PDF's text layer with pdftotext -layout.
func (x Extractor) pdf(ctx context.Context, name string, data []byte) (Text, error) {
	if !bytes.HasPrefix(bytes.TrimLeft(data[:min(len(data), 1024)], "\x00\t\r\n "), []byte("%PDF-")) {
		return Text{}, refuse(ErrNotPDF, name, "the file is not a PDF")
	}
	out, err := x.run(ctx, name, pdftotext, data, "-layout", "-enc", "UTF-8", "-", "-")
	if err != nil {
		var te *toolError
		if !errors.As(err, &te) {
			return Text{}, err
		}
		if strings.Contains(te.stderr, "Incorrect password") {
			return Text{}, refuse(ErrEncrypted, name, "the PDF is encrypted with a password: upload a copy without one")
		}
		return Text{}, refuse(ErrNotPDF, name, "pdftotext could not read it: "+te.msg())
	}
	return Text{Body: normalize(out), Format: FormatPDF, Tool: pdftotext.cmd}, nil
}

// toolError is a tool that ran and exited non-zero.
type toolError struct {
	tool   string
	code   int
	stderr string
}

func (e *toolError) Error() string {
	return fmt.Sprintf("%s exited with %d: %s", e.tool, e.code, e.msg())
}

// msg is the tool's first line of complaint, kept short.
func (e *toolError) msg() string {
	s := strings.TrimSpace(e.stderr)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	if s == "" {
		s = fmt.Sprintf("exit status %d", e.code)
	}
	return s
}

// run feeds data to the tool on stdin and returns its stdout: no shell, a
// timeout, and stdout and stderr capped (the tool is killed when its output
// passes the text limit).
func (x Extractor) run(ctx context.Context, name string, t tool, data []byte, args ...string) (string, error) {
	path, err := x.lookPath(t.cmd)
	if err != nil {
		return "", missing(name, t.cmd, t.pkg)
	}
	timeout := x.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	runCtx, kill := context.WithCancel(ctx)
	defer kill()

	cmd := exec.CommandContext(runCtx, path, args...)
	cmd.Stdin = bytes.NewReader(data)
	stdout := &capped{max: orDefault(x.MaxText, MaxTextBytes), onOver: kill}
	stderr := &capped{max: 64 << 10}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.Env = append(cmd.Environ(), "LC_ALL=C.UTF-8")
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	switch {
	case stdout.over:
		return "", refuse(ErrTooLarge, name, fmt.Sprintf("the text read from it is over the %s limit", size(stdout.max)))
	case ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded):
		return "", fault.Wrap(fault.Permanent, fault.CodeTimeout, &Error{Kind: ErrToolFailed, Filename: name,
			Msg: fmt.Sprintf("%s took longer than %s to read it", t.cmd, timeout)})
	case ctx.Err() != nil:
		return "", ctx.Err()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return "", &toolError{tool: t.cmd, code: ee.ExitCode(), stderr: stderr.String()}
	}
	if err != nil {
		return "", fault.Wrap(fault.Permanent, fault.CodeUnknown, &Error{Kind: ErrToolFailed, Filename: name,
			Msg: fmt.Sprintf("could not run %s: %v", t.cmd, err)})
	}
	return stdout.String(), nil
}

// capped is an output buffer that keeps at most max bytes; past that it
// records the overflow, calls onOver once and drops the rest. (The buffer is
// a field, not embedded: an embedded bytes.Buffer's ReadFrom would let
// io.Copy bypass Write and the cap.)
type capped struct {
	buf    bytes.Buffer
	max    int
	over   bool
	onOver func()
}

func (c *capped) Write(p []byte) (int, error) {
	if c.over {
		return len(p), nil
	}
	if c.buf.Len()+len(p) > c.max {
		c.over = true
		if c.onOver != nil {
			c.onOver()
		}
		return len(p), nil
	}
	return c.buf.Write(p)
}

func (c *capped) String() string { return c.buf.String() }
