package sandbox_test

import (
	"context"
	"os/exec"
	"testing"

	"weft/internal/sandbox"
)

// BenchmarkPythonStart sets the sandbox's cost beside a bare interpreter, in
// one run: python3 doing nothing, and python3 importing pandas and
// matplotlib (what an analysis step pays), each bare and under bubblewrap +
// prlimit.
func BenchmarkPythonStart(b *testing.B) {
	r := sandbox.New(sandbox.Config{})
	if err := r.Check(); err != nil {
		b.Fatalf("sandbox tools missing: %v", err)
	}
	python := r.Config().Python
	for _, code := range []struct{ name, src string }{{"empty", "pass"}, {"pandas", "import pandas, matplotlib.pyplot"}} {
		b.Run(code.name+"/bare", func(b *testing.B) {
			for b.Loop() {
				if out, err := exec.Command(python, "-I", "-B", "-c", code.src).CombinedOutput(); err != nil {
					b.Fatalf("python3: %v %s", err, out)
				}
			}
		})
		b.Run(code.name+"/sandboxed", func(b *testing.B) {
			for b.Loop() {
				if _, err := r.Run(context.Background(), sandbox.Job{Code: code.src}); err != nil {
					b.Fatalf("sandboxed python3: %v", err)
				}
			}
		})
	}
}
