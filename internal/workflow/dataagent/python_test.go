package dataagent_test

import (
	"bytes"
	"strings"
	"testing"

	"weft/internal/sandbox"
	"weft/internal/workflow/dataagent"
)

// The Python step: real python3 with pandas and matplotlib under
// bubblewrap, its chart stored as an artifact, its findings in the report;
// and the degraded path when the sandbox cannot run.
func TestPythonStep(t *testing.T) {
	t.Parallel()
	pool := demoPool(t)

	t.Run("a grouped answer is analysed in the sandbox with a chart", func(t *testing.T) {
		t.Parallel()
		a := newAgent(t, pool, func(d *dataagent.Deps) { d.Python = sandbox.New(sandbox.Config{}) })
		r := a.start(t, "python", "Monthly GMV in 2025", false)
		s := r.res.State
		if s.Status != dataagent.StatusAnswered || len(s.Steps) != 3 || s.Steps[1].Tool != dataagent.ToolPython {
			t.Fatalf("status %s, steps %+v", s.Status, s.Steps)
		}
		py := s.Steps[1]
		if py.Status != dataagent.StepDone || py.Python == nil || py.Python.Chart == nil {
			t.Fatalf("python step %s: %+v (reason %q)", py.Status, py.Python, py.Reason)
		}
		png, ok := a.artifacts.Get("python", py.Python.Chart.Key)
		if !ok || !bytes.HasPrefix(png.Data, []byte("\x89PNG\r\n\x1a\n")) || png.ContentType != "image/png" {
			t.Errorf("chart artifact %q missing or not a PNG", py.Python.Chart.Key)
		}
		if len(py.Findings) < 2 || !strings.Contains(strings.Join(py.Findings, " "), "From 2025-01 to 2025-12") {
			t.Errorf("findings = %q", py.Findings)
		}
		for _, want := range []string{"## Step 2 · Python", "![chart](" + py.Python.Chart.Name + ")", py.Findings[0]} {
			if !strings.Contains(s.Report.Markdown, want) {
				t.Errorf("the report lacks %q", want)
			}
		}
	})

	t.Run("without python3 the step is refused, naming the package, and the report goes on", func(t *testing.T) {
		t.Parallel()
		a := newAgent(t, pool, func(d *dataagent.Deps) {
			d.Python = sandbox.New(sandbox.Config{Python: "/usr/bin/nonexistent-python3"})
		})
		r := a.start(t, "no-python", "GMV by region in 2025 Q3", false)
		s := r.res.State
		if s.Status != dataagent.StatusAnswered || len(s.Steps) != 3 {
			t.Fatalf("status %s, steps %+v", s.Status, s.Steps)
		}
		py := s.Steps[1]
		if py.Status != dataagent.StepDegraded || !strings.Contains(py.Reason, "install the Debian package python3") {
			t.Errorf("python step %s: %q", py.Status, py.Reason)
		}
		if count(r.nodes, dataagent.NodePythonAnalyze) != 0 || count(r.nodes, dataagent.NodeReportGenerator) != 1 {
			t.Errorf("nodes %v: the degraded path skips PythonAnalyze", r.nodes)
		}
		if !strings.Contains(s.Report.Markdown, "Left out (degraded)") || !strings.Contains(s.Report.Summary, "Guangdong") {
			t.Errorf("report:\n%s", s.Report.Markdown)
		}
		if got, _ := answer(t, s); got == nil || len(got.Rows) != 8 {
			t.Errorf("the SQL answer is missing from the degraded report")
		}
	})

	t.Run("code that fails in the sandbox takes the degraded path", func(t *testing.T) {
		t.Parallel()
		p := newScripted(map[string][]any{"dataagent.python_generate": {map[string]string{"code": "import socket\nsocket.create_connection(('1.1.1.1', 80), timeout=2)\n"}}})
		a := newAgent(t, pool, func(d *dataagent.Deps) { d.Python, d.LLM = sandbox.New(sandbox.Config{}), p })
		s := a.start(t, "python-fails", "GMV by region in 2025 Q3", false).res.State
		if py := s.Steps[1]; py.Status != dataagent.StepDegraded || !strings.Contains(py.Reason, "Network is unreachable") {
			t.Errorf("python step %s: %q", py.Status, py.Reason)
		}
		if s.Status != dataagent.StatusAnswered {
			t.Errorf("status %s", s.Status)
		}
	})
}

// The report streams as custom events, a section at a time, and is stored
// as Markdown with the result as CSV.
func TestReportStreamsAndIsStored(t *testing.T) {
	t.Parallel()
	pool := demoPool(t)
	a := newAgent(t, pool, nil)
	r := a.start(t, "stream", "2025年第三季度各地区的GMV", false)
	s := r.res.State
	var text strings.Builder
	for i, c := range r.chunks {
		if c.Seq != i || c.Turn != 1 {
			t.Fatalf("chunk %d = %+v", i, c)
		}
		text.WriteString(c.Text)
	}
	if len(r.chunks) < 4 || !r.chunks[len(r.chunks)-1].Done {
		t.Fatalf("%d chunks, the last done: %v", len(r.chunks), len(r.chunks) > 0 && r.chunks[len(r.chunks)-1].Done)
	}
	if text.String() != s.Report.Markdown {
		t.Errorf("the streamed text differs from the report")
	}
	md, ok := a.artifacts.Get("stream", "turns/1/report.md")
	if !ok || string(md.Data) != s.Report.Markdown {
		t.Errorf("report.md missing or different")
	}
	csv, ok := a.artifacts.Get("stream", "turns/1/step-1.csv")
	if !ok || !strings.HasPrefix(string(csv.Data), "region,gmv\n") || strings.Count(string(csv.Data), "\n") != 9 {
		t.Errorf("step-1.csv = %q", csv.Data)
	}
	for _, want := range []string{"## 结论", "广东", "```sql", "GROUP BY regions.name_zh", "## 使用的业务说明"} {
		if !strings.Contains(s.Report.Markdown, want) {
			t.Errorf("the report lacks %q:\n%s", want, s.Report.Markdown)
		}
	}
	if len(s.Report.Artifacts) != 2 {
		t.Errorf("report artifacts = %+v", s.Report.Artifacts)
	}
}
