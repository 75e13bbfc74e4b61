package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// weftBinary builds the weft binary once for the tests that drive it as a user would.
var weftBinary = sync.OnceValues(func() (string, error) {
	dir, err := os.MkdirTemp("", "weft-bin-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "weft")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		return "", &exec.Error{Name: "go build: " + string(out), Err: err}
	}
	return bin, nil
})

func binary(t *testing.T) string {
	t.Helper()
	bin, err := weftBinary()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

const brewly = "A landing page for Brewly, a coffee subscription for busy professionals. Include pricing plans and a contact form. Use green."

// weftRun runs `weft run` in dir with stdin and returns its output.
func weftRun(t *testing.T, dir, stdin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"run"}, args...)...)
	cmd.Dir, cmd.Stdin = dir, strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// A page-generation session in the terminal: the start form asked, progress streamed with
// seed 001's event names, the feedback asked at refine_gate, the site written to --out, and
// another round on the same thread after the build.
func TestRunPageGenerationInTheTerminal(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, err := weftRun(t, dir, brewly+"\n\ny\nadd a FAQ page\n1\n\nremove testimonials\n\n", "page_generation", "--store", "sqlite:s.db", "--out", "site")
	if err != nil {
		t.Fatalf("weft run: %v\n%s", err, out)
	}
	for _, want := range []string{"[brief_start]", "[brief_complete]", "[style_extracted]", "[registry_complete]", "[generate_progress]",
		"[refine_waiting]", "[refine_start]", "[build_progress]", "[build_complete]", "The aesthetic check suggests",
		"Pages 4 · Build 1 · Rounds of feedback 1", "Pages 4 · Build 2 · Rounds of feedback 2", "site/pages/faq.html"} {
		if !strings.Contains(out, want) {
			t.Errorf("the run's output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"site/pages/index.html", "site/pages/pricing.html", "site/pages/faq.html", "site/pages/contact.html", "site/site.zip"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || len(b) == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	page, _ := os.ReadFile(filepath.Join(dir, "site/pages/index.html"))
	if !bytes.Contains(page, []byte("Brewly")) || bytes.Contains(page, []byte("http://")) || bytes.Contains(page, []byte("https://")) {
		t.Errorf("the home page does not name Brewly or makes an external request")
	}
}

// Ctrl-C at the feedback prompt, then --thread resumes the saved session where it stopped;
// its pages are byte-identical to an uninterrupted session's given the same feedback (seed
// 001 §11). On the memory store, resuming is refused with a message that says why.
func TestRunResumesAfterCtrlC(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cmd := exec.Command(binary(t), "run", "page_generation", "--store", "sqlite:s.db", "--out", "cut")
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_, _ = io.WriteString(stdin, brewly+"\n\ny\n")
	var seen strings.Builder
	r := bufio.NewReader(stdout)
	deadline := time.AfterFunc(60*time.Second, func() { _ = cmd.Process.Kill() })
	defer deadline.Stop()
	for !strings.Contains(seen.String(), "? What should change?") {
		b, err := r.ReadByte()
		if err != nil {
			t.Fatalf("the run ended before asking for feedback: %v\n%s", err, seen.String())
		}
		seen.WriteByte(b)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(r)
	_ = cmd.Wait()
	seen.Write(rest)
	m := regexp.MustCompile(`--thread (page-generation-[0-9a-f]+)`).FindStringSubmatch(seen.String())
	if m == nil || !strings.Contains(seen.String(), "stopped. Resume with") {
		t.Fatalf("Ctrl-C did not say how to resume:\n%s", seen.String())
	}
	thread := m[1]
	if _, err := os.Stat(filepath.Join(dir, "cut/pages/index.html")); err == nil {
		t.Fatal("pages were built before the feedback")
	}

	out, err := weftRun(t, dir, "make the primary colour darker, bigger headings\n1\n\n\n", "page_generation", "--store", "sqlite:s.db", "--out", "cut", "--thread", thread)
	if err != nil || !strings.Contains(out, "resuming thread "+thread) || !strings.Contains(out, "[build_complete]") {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	// The same request and feedback without the interruption.
	if out, err := weftRun(t, dir, brewly+"\n\ny\nmake the primary colour darker, bigger headings\n1\n\n\n", "page_generation", "--store", "sqlite:s.db", "--out", "whole"); err != nil {
		t.Fatalf("uninterrupted run: %v\n%s", err, out)
	}
	for _, f := range []string{"index.html", "pricing.html", "contact.html"} {
		a, errA := os.ReadFile(filepath.Join(dir, "cut/pages", f))
		b, errB := os.ReadFile(filepath.Join(dir, "whole/pages", f))
		if errA != nil || errB != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs between the resumed and the uninterrupted session (%v, %v)", f, errA, errB)
		}
	}

	out, err = weftRun(t, dir, "", "page_generation", "--store", "memory", "--thread", thread)
	if err == nil || !strings.Contains(out, "cannot be resumed") || !strings.Contains(out, "keeps nothing after its process ends") {
		t.Fatalf("resuming on the memory store: %v\n%s", err, out)
	}
}
