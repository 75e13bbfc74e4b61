package contractreview_test

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"weft/internal/checkpoint"
	"weft/internal/doctext"
	"weft/internal/graph"
	"weft/internal/llm"
	"weft/internal/workflow"
	cr "weft/internal/workflow/contractreview"
)

// definition is the plug-in on the in-memory checkpointer, reading documents with docs.
func definition(t *testing.T, docs doctext.Extractor) workflow.Definition {
	t.Helper()
	def, err := cr.Definition(cr.Deps{Provider: llm.NewOffline(), Checkpointer: checkpoint.NewMemory(), Documents: docs})
	if err != nil {
		t.Fatal(err)
	}
	return def
}

// startValues are a start form's values for a contract file.
func startValues(name, text string, more workflow.Values) workflow.Values {
	v := workflow.Values{cr.FieldContract: workflow.File{Name: name, Data: []byte(text)}, cr.FieldOurParty: "Contractor"}
	for k, x := range more {
		v[k] = x
	}
	return v
}

// TestStartForm: the form's values become the run's input, the uploaded file read into the
// primary document; max_retries 0 means no redraft (not the default).
func TestStartForm(t *testing.T) {
	t.Parallel()
	def := definition(t, doctext.Extractor{})
	if def.Name != cr.Name || def.Start == nil || def.Review == nil || def.Views.Panel == nil || def.Views.Report == nil {
		t.Fatalf("definition %+v", def)
	}
	cases := []struct {
		name       string
		more       workflow.Values
		lang, dom  string
		maxRetries int // after init
	}{
		{"defaults", nil, "", "", cr.DefaultMaxRetries},
		{"no redrafts, FIDIC Silver Book, English", workflow.Values{cr.FieldMaxRetries: 0.0, cr.FieldDomain: cr.DomainSilverBook, cr.FieldLanguage: "en"},
			"en", cr.DomainFIDIC, 0},
		{"five redrafts, detected language", workflow.Values{cr.FieldMaxRetries: 5.0, cr.FieldDomain: cr.DomainNone, cr.FieldLanguage: cr.LanguageAuto},
			"", "", 5},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			st, err := def.Start.Start(context.Background(), workflow.StartRequest{TenantID: "demo", Actor: "u_pm"},
				startValues("dir/capped.txt", capContract, tc.more))
			if err != nil {
				t.Fatal(err)
			}
			var in cr.ReviewGraphState
			if err := json.Unmarshal(st.Input, &in); err != nil {
				t.Fatal(err)
			}
			if len(in.Documents) != 1 || in.Documents[0].Filename != "capped.txt" || in.Documents[0].Text != capContract ||
				in.Language != tc.lang || in.DomainID != tc.dom || in.OurParty != "Contractor" || !strings.HasPrefix(in.TaskID, "cr_") {
				t.Fatalf("input = %+v", in)
			}
			if st.Subject != "capped.txt · for Contractor" {
				t.Errorf("subject %q", st.Subject)
			}
			if named, err := def.Describe(context.Background(), "demo", []string{st.Subject, "thread x"}); err != nil || len(named) != 1 ||
				named[st.Subject] != (workflow.Subject{Title: "capped.txt", Detail: "contract review for Contractor"}) {
				t.Errorf("described as %+v (%v)", named, err)
			}
			g := def.Graph.(*graph.Graph[cr.ReviewGraphState])
			ws, err := g.InputWrites(st.Input)
			if err != nil {
				t.Fatal(err)
			}
			res, err := g.Invoke(context.Background(), graph.Config{ThreadID: t.Name()}, graph.Update(ws...))
			if err != nil {
				t.Fatal(err)
			}
			if res.State.MaxRetries != tc.maxRetries {
				t.Errorf("max_retries after init = %d, want %d", res.State.MaxRetries, tc.maxRetries)
			}
		})
	}
}

// TestStartRefusals: a contract that cannot be read is refused on its field, saying why; a
// missing tool names the Debian package to install.
func TestStartRefusals(t *testing.T) {
	t.Parallel()
	var docx bytes.Buffer
	zw := zip.NewWriter(&docx)
	w, _ := zw.Create("word/document.xml")
	_, _ = w.Write([]byte(`<w:document/>`))
	_ = zw.Close()
	noTools := definition(t, doctext.Extractor{LookPath: func(name string) (string, error) { return "", errors.New("not found") }})
	def := definition(t, doctext.Extractor{})
	cases := []struct {
		name  string
		def   workflow.Definition
		v     workflow.Values
		field string
		says  string
	}{
		{"a Word file without pandoc", noTools, startValues("c.docx", docx.String(), nil), cr.FieldContract, "install the Debian package pandoc"},
		{"a PDF without pdftotext", noTools, startValues("c.pdf", "%PDF-1.4\n", nil), cr.FieldContract, "install the Debian package poppler-utils"},
		{"a binary file renamed .txt", def, startValues("c.txt", "\x00\x01\x02binary", nil), cr.FieldContract, "binary data"},
		{"a party of spaces", def, startValues("c.txt", capContract, workflow.Values{cr.FieldOurParty: "  "}), cr.FieldOurParty, "name our party"},
		{"an unknown checklist", def, startValues("c.txt", capContract, workflow.Values{cr.FieldDomain: "nec/ecc"}), cr.FieldDomain, "no checklist"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := tc.def.Start.Start(context.Background(), workflow.StartRequest{}, tc.v)
			var fe workflow.FieldErrors
			if !errors.As(err, &fe) || !strings.Contains(fe[tc.field], tc.says) {
				t.Fatalf("err = %v, want %s: …%s…", err, tc.field, tc.says)
			}
		})
	}
}

// thread is the bundle's thread as the platform hands it to a review or a view.
func (b bundle) thread(t *testing.T) workflow.Thread {
	t.Helper()
	snap := b.snapshot(t)
	raw, err := json.Marshal(snap.Values)
	if err != nil {
		t.Fatal(err)
	}
	return workflow.Thread{ThreadID: b.cfg.ThreadID, State: raw, CheckpointID: snap.Checkpoint.ID, Next: snap.Next, Interrupts: snap.Interrupts,
		Reader: workflow.Person{ID: "u_li", Name: "Li Na", Role: "reviewer"}, Now: decidedAt}
}

func (b bundle) review(t *testing.T) workflow.Review {
	th := b.thread(t)
	return workflow.Review{Thread: th, Interrupt: th.Interrupts[0]}
}

// TestReviewForm: a paused clause's form shows its text with each risk's words marked, its
// risks, what earlier clauses said that the review used, and each pending change as a
// redline to approve or reject.
func TestReviewForm(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	b.run(t, contract("Contractor", capContract, cr.ChecklistItem{ClauseID: "1.1"}, cr.ChecklistItem{ClauseID: "17.6", ClauseName: "责任限制"}))
	f, err := cr.Reviewer{}.Form(context.Background(), b.review(t))
	if err != nil {
		t.Fatal(err)
	}
	s := b.snapshot(t).Values
	if f.Subject != "Clause 17.6 Limitation of Liability" || !strings.HasPrefix(f.SubjectDetail, "clause 2 of 2 · contract.txt · for Contractor") ||
		len(f.Reasons) != 1 || f.Reasons[0].Key != "changes_proposed" {
		t.Errorf("subject %q · %q, reasons %+v", f.Subject, f.SubjectDetail, f.Reasons)
	}
	quote := find[workflow.Quote](f.Blocks)
	if quote.Text != s.CurrentClauseText || len(quote.Marks) != len(s.CurrentRisks) || len(quote.Marks) != 2 {
		t.Fatalf("quote %+v, risks %+v", quote, s.CurrentRisks)
	}
	for i, m := range quote.Marks {
		rk := s.CurrentRisks[i]
		if quote.Text[m.Start:m.End] != rk.Excerpt || m.Class != rk.Severity || m.Label != []string{"R1", "R2"}[i] || !strings.Contains(m.Note, rk.Description) {
			t.Errorf("mark %d = %+v, cites %q; risk %+v", i, m, quote.Text[m.Start:m.End], rk)
		}
	}
	risks := find[workflow.Table](f.Blocks)
	if len(risks.Rows) != 2 || risks.Rows[0].Cells[0].Text != "R1" || risks.Rows[0].Cells[1].Badge != s.CurrentRisks[0].Severity {
		t.Errorf("risk table %+v", risks.Rows)
	}
	if kv := find[workflow.KeyValues](f.Blocks); len(kv.Items) != 1 || kv.Items[0].Key != "Contract Price (clause 1.1)" || kv.Items[0].Value != "USD 20,000,000" {
		t.Errorf("earlier clauses %+v", kv.Items)
	}
	items := f.Inputs[0].(workflow.ItemDecisions)
	if items.Name != cr.AnswerItems || !items.ApproveAll || len(items.Items) != 2 {
		t.Fatalf("items %+v", items)
	}
	for i, it := range items.Items {
		p := s.PendingDiffs[i]
		red := it.Blocks[0].(workflow.Redline)
		if it.ID != p.DiffID || red.Before != p.Original || red.After != p.Suggested || red.Note != p.Reason || !strings.Contains(it.Title, "answers R") {
			t.Errorf("item %d = %+v; diff %+v", i, it, p)
		}
	}
	if got := []string{f.Choices[0].Value, f.Choices[1].Value}; !slices.Equal(got, []string{cr.DecisionSubmit, cr.DecisionApproveAll}) {
		t.Errorf("choices %v", got)
	}

	// After a rejection with feedback, the form shows the re-proposal and says why.
	pending := s.PendingDiffs
	b.decide(t, cr.Decisions{Items: map[string]cr.Decision{pending[0].DiffID: {Verdict: cr.Approve}, pending[1].DiffID: {Verdict: cr.Reject, Feedback: "42 days"}}})
	f, err = cr.Reviewer{}.Form(context.Background(), b.review(t))
	if err != nil {
		t.Fatal(err)
	}
	items = f.Inputs[0].(workflow.ItemDecisions)
	if f.Reasons[0].Key != "reproposed" || len(items.Items) != 1 || !strings.Contains(items.Items[0].Blocks[0].(workflow.Notice).Text, "“42 days”") {
		t.Errorf("re-proposal form: reasons %+v, items %+v", f.Reasons, items.Items)
	}
}

// find is the first block of type T, looking inside sections (the zero T when there is none).
func find[T workflow.Block](bs []workflow.Block) T {
	v, _ := findIn[T](bs)
	return v
}

func findIn[T workflow.Block](bs []workflow.Block) (T, bool) {
	for _, b := range bs {
		if v, ok := b.(T); ok {
			return v, true
		}
		if s, ok := b.(workflow.Section); ok {
			if v, ok := findIn[T](s.Blocks); ok {
				return v, true
			}
		}
	}
	var zero T
	return zero, false
}

// TestDecide: the answer on a paused clause, from the API (JSON values) or the console's
// form (texts), becomes the update_state writes of seed §7, applied as clause_validate; an
// answer that does not fit the pause is refused, naming the fields at fault.
func TestDecide(t *testing.T) {
	t.Parallel()
	b := setup(t, false)
	b.run(t, contract("Contractor", capContract, cr.ChecklistItem{ClauseID: "17.6"}))
	rv := b.review(t)
	pending := b.snapshot(t).Values.PendingDiffs
	capID, noticeID := pending[0].DiffID, pending[1].DiffID
	items := func(kv ...string) json.RawMessage {
		m := map[string]map[string]string{}
		for i := 0; i+2 < len(kv); i += 3 {
			m[kv[i]] = map[string]string{"decision": kv[i+1], "feedback": kv[i+2]}
		}
		raw, _ := json.Marshal(m)
		return raw
	}
	vals := func(kv ...any) map[string]json.RawMessage {
		out := map[string]json.RawMessage{}
		for i := 0; i < len(kv); i += 2 {
			raw, ok := kv[i+1].(json.RawMessage)
			if !ok {
				raw, _ = json.Marshal(kv[i+1])
			}
			out[kv[i].(string)] = raw
		}
		return out
	}
	cases := []struct {
		name      string
		a         workflow.Answer
		decisions map[string]string // user_decisions written
		feedback  map[string]string
		summary   []string // the verdicts, in pending order
		code      string   // a refusal's code …
		field     string   // … and the field at fault
	}{
		{"per change, from the API", workflow.Answer{Decision: cr.DecisionSubmit, Values: vals("items", items(capID, "approve", "", noticeID, "reject", "Ask for 42 days"), "clause_id", "17.6")},
			map[string]string{capID: "approve", noticeID: "reject"}, map[string]string{noticeID: "Ask for 42 days"},
			[]string{"approved", "rejected: re-propose from the feedback"}, "", ""},
		{"per change, from the form", workflow.Answer{Decision: cr.DecisionSubmit, FromForm: true, Values: vals("items", items(capID, "approve", "", noticeID, "reject", ""))},
			map[string]string{capID: "approve", noticeID: "reject"}, map[string]string{}, []string{"approved", "rejected"}, "", ""},
		{"approve all, one rejected first", workflow.Answer{Decision: cr.DecisionApproveAll, FromForm: true, Values: vals("items", items(capID, "", "", noticeID, "reject", ""))},
			map[string]string{capID: "approve", noticeID: "reject"}, map[string]string{}, []string{"approved", "rejected"}, "", ""},
		{"approve all from the API", workflow.Answer{Values: vals("approve_all", true)},
			map[string]string{capID: "approve", noticeID: "approve"}, map[string]string{}, []string{"approved", "approved"}, "", ""},
		{"an unknown diff", workflow.Answer{Values: vals("items", items(capID, "approve", "", noticeID, "approve", "", "dffff", "approve", ""))},
			nil, nil, nil, cr.CodeUnknownDiff, "items.dffff"},
		{"another clause", workflow.Answer{Values: vals("clause_id", "20.1", "approve_all", true)}, nil, nil, nil, cr.CodeNotPaused, "clause_id"},
		{"a change left undecided", workflow.Answer{FromForm: true, Values: vals("items", items(capID, "approve", "", noticeID, "", "why?"))},
			nil, nil, nil, "", "items." + noticeID},
		{"feedback too long", workflow.Answer{Values: vals("items", items(capID, "approve", "", noticeID, "reject", strings.Repeat("x", cr.MaxFeedback+1)))},
			nil, nil, nil, "", "items." + noticeID},
		{"an unknown choice", workflow.Answer{Decision: "approve", Values: vals("approve_all", true)}, nil, nil, nil, "", "decision"},
		{"an unknown key", workflow.Answer{Values: vals("scores", 3)}, nil, nil, nil, "", "scores"},
		{"items of the wrong shape", workflow.Answer{Values: vals("items", []string{"approve"})}, nil, nil, nil, "", "items"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := cr.Reviewer{}.Decide(context.Background(), rv, tc.a)
			if tc.field != "" {
				var ae *workflow.AnswerError
				if !errors.As(err, &ae) || ae.Fields[tc.field] == "" || ae.Code != tc.code {
					t.Fatalf("err = %v, want a refusal %q naming %s", err, tc.code, tc.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.AsNode != cr.NodeClauseValidate || len(d.Update) != 4 {
				t.Fatalf("decision %+v", d)
			}
			got := map[string]any{}
			for _, w := range d.Update {
				got[w.Channel] = w.Value
			}
			if dec, _ := got["user_decisions"].(map[string]string); !maps.Equal(dec, tc.decisions) {
				t.Errorf("user_decisions = %v, want %v", dec, tc.decisions)
			}
			if fb, _ := got["user_feedback"].(map[string]string); !maps.Equal(fb, tc.feedback) {
				t.Errorf("user_feedback = %v, want %v", fb, tc.feedback)
			}
			if got["decided_by"] != "Li Na" {
				t.Errorf("decided_by = %v", got["decided_by"])
			}
			var verdicts []string
			for _, kv := range d.Summary {
				verdicts = append(verdicts, kv.Value)
			}
			if !slices.Equal(verdicts, tc.summary) {
				t.Errorf("summary %v, want %v", verdicts, tc.summary)
			}
		})
	}
}

// TestPanelAndReport: the panel says how far the review got and what it found so far; the
// report, once the review is complete, counts the risks by severity, shows the approved
// changes as redlines and offers the DOCX and the HTML.
func TestPanelAndReport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setup(t, false)
	b.run(t, contract("Contractor", capContract, cr.ChecklistItem{ClauseID: "1.1"}, cr.ChecklistItem{ClauseID: "17.6"}))
	panel, err := cr.Panel(ctx, b.thread(t))
	if err != nil {
		t.Fatal(err)
	}
	p := panel[0].(workflow.Progress)
	if p.Done != 1 || p.Total != 2 || p.Label != "Clause 2 of 2 · 17.6 Limitation of Liability" {
		t.Errorf("progress %+v", p)
	}
	if n := find[workflow.Notice](panel); !strings.Contains(n.Text, "Clause 17.6 waits for a decision on 2 proposed changes") {
		t.Errorf("notice %+v", n)
	}
	rows := find[workflow.Table](panel).Rows
	if len(rows) != 2 || rows[0].Cells[4].Text != "reviewed" || rows[1].Cells[4].Text != "waiting for you" || !rows[1].Highlight ||
		rows[1].Cells[2].Badges[0].Text != "2 high" || rows[0].Cells[3].Text != "none" {
		t.Errorf("findings rows %+v", rows)
	}
	if rep, err := cr.Report(ctx, b.thread(t)); rep != nil || err != nil {
		t.Errorf("a report before the end: %v, %v", rep, err)
	}

	pending := b.snapshot(t).Values.PendingDiffs
	b.decide(t, cr.Decisions{Items: map[string]cr.Decision{pending[0].DiffID: {Verdict: cr.Approve}, pending[1].DiffID: {Verdict: cr.Reject}}})
	th := b.thread(t)
	panel, _ = cr.Panel(ctx, th)
	if p := panel[0].(workflow.Progress); p.Done != p.Total || !strings.HasPrefix(p.Label, "Review complete: 2 clauses reviewed") {
		t.Errorf("progress at the end %+v", p)
	}
	rep, err := cr.Report(ctx, th)
	if err != nil {
		t.Fatal(err)
	}
	stats := rep[0].(workflow.Stats)
	if stats.Items[1].Value != "2" || stats.Items[3].Value != "1" || stats.Items[4].Value != "1" {
		t.Errorf("stats %+v", stats)
	}
	dl := find[workflow.Downloads](rep)
	if len(dl.Items) != 2 || dl.Items[0].Key != "redline.docx" || dl.Items[1].Key != "redline.html" {
		t.Errorf("downloads %+v", dl)
	}
	red := find[workflow.Redline](rep)
	if red.Before != pending[0].Original || red.After != pending[0].Suggested || !strings.Contains(red.Note, "Approved by Li Na, 2026-03-02 10:15 UTC") {
		t.Errorf("approved change %+v", red)
	}
	sev := find[workflow.Table](rep)
	if sev.Rows[1].Cells[0].Text != cr.SeverityHigh || sev.Rows[1].Cells[1].Text != "2" || sev.Rows[1].Cells[2].Text != "1" {
		t.Errorf("risks by severity %+v", sev.Rows)
	}
}
