package dataagent

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"

	"weft/internal/graph"
	"weft/internal/sandbox"
	"weft/internal/workflow"
)

// resultRows is how many first rows a model sees of a result.
const resultRows = 20

// pythonGenerate writes the analysis code for the data of the last sql step.
func (w *wf) pythonGenerate(ctx context.Context, s State) (graph.Command, error) {
	st, ok := s.current()
	data := lastData(s.Steps[:s.Current])
	if !ok || data == nil {
		return graph.Command{}, graph.Permanent(errors.New("python generate: no data from a sql step"))
	}
	head := data.Rows
	if len(head) > resultRows {
		head = head[:resultRows]
	}
	out, err := pythonTask.Do(ctx, w.d.LLM, pythonIn{Question: s.Query.Standalone, Instruction: st.Instruction,
		Columns: data.Columns, Head: head, Rows: len(data.Rows), Language: s.language()})
	if err != nil {
		return graph.Command{}, err
	}
	return graph.Update(keyPythonCode.Set(out.Code)), nil
}

// pythonExecute runs the code in the sandbox with the data as result.csv.
// A failure, or a sandbox that cannot run (a missing Debian package), takes
// the degraded path: the step is marked degraded and the report goes on
// without it. The chart is stored as an artifact.
func (w *wf) pythonExecute(ctx context.Context, s State) (graph.Command, error) {
	st, _ := s.current()
	data := lastData(s.Steps[:s.Current])
	degrade := func(reason string, run *PythonRun) (graph.Command, error) {
		st.Status, st.Reason, st.Python = StepDegraded, reason, run
		return graph.Update(keySteps.Set(s.withStep(st))), nil
	}
	if w.d.Python == nil {
		return degrade("no Python sandbox is configured", nil)
	}
	if data == nil {
		return degrade("no data from a sql step", nil)
	}
	res, err := w.d.Python.Run(ctx, sandbox.Job{Code: s.PythonCode, Files: map[string][]byte{"result.csv": data.CSV()}})
	run := &PythonRun{Stdout: res.Stdout, Stderr: res.Stderr, ExitCode: res.ExitCode}
	var fail *sandbox.Failure
	switch {
	case errors.Is(err, sandbox.ErrUnavailable):
		run.Error = err.Error()
		return degrade(err.Error(), run)
	case errors.As(err, &fail):
		run.Error = err.Error()
		return degrade(err.Error(), run)
	case err != nil:
		return graph.Command{}, err
	}
	if png, ok := res.Files["chart.png"]; ok {
		ref, err := w.d.Artifacts.PutArtifact(ctx, workflow.Artifact{Key: fmt.Sprintf("turns/%d/chart-step-%d.png", s.Turn, st.Step),
			Name: fmt.Sprintf("chart-turn-%d-step-%d.png", s.Turn, st.Step), ContentType: "image/png", Data: png})
		if err != nil {
			return graph.Command{}, fmt.Errorf("store chart: %w", err)
		}
		run.Chart = &ref
	}
	st.Python = run
	return graph.Update(keySteps.Set(s.withStep(st))), nil
}

// pythonAnalyze states the analysis' findings.
func (w *wf) pythonAnalyze(ctx context.Context, s State) (graph.Command, error) {
	st, _ := s.current()
	data := lastData(s.Steps[:s.Current])
	in := analyzeIn{Question: s.Query.Standalone, Language: s.language()}
	if st.Python != nil {
		in.Stdout = st.Python.Stdout
	}
	if data != nil {
		in.Columns = data.Columns
	}
	out, err := analyzeTask.Do(ctx, w.d.LLM, in)
	if err != nil {
		return graph.Command{}, err
	}
	st.Findings, st.Status = out.Findings, StepDone
	return graph.Update(keySteps.Set(s.withStep(st))), nil
}

// CSV is the result as CSV with a header row.
func (r ResultSet) CSV() []byte {
	var b bytes.Buffer
	cw := csv.NewWriter(&b)
	header := make([]string, len(r.Columns))
	for i, c := range r.Columns {
		header[i] = c.Name
	}
	_ = cw.Write(header)
	_ = cw.WriteAll(r.Rows)
	return b.Bytes()
}

// language is the turn's language: that of its latest message.
func (s State) language() string {
	if s.Intent.Language != "" {
		return s.Intent.Language
	}
	return "en"
}
