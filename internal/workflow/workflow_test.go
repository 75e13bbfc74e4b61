package workflow_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"weft/internal/workflow"
)

func f(v float64) *float64 { return &v }

var form = workflow.StartForm{Fields: []workflow.Field{
	{Name: "question", Kind: workflow.Text, Required: true, MaxLength: 20},
	{Name: "notes", Kind: workflow.LongText},
	{Name: "retries", Kind: workflow.Number, Min: f(0), Max: f(5), Step: 1},
	{Name: "score", Kind: workflow.Number, Min: f(0), Max: f(10), Step: 0.1},
	{Name: "review", Kind: workflow.Bool},
	{Name: "lang", Kind: workflow.Select, Options: []workflow.Option{{Value: "en"}, {Value: "zh"}}},
	{Name: "file", Kind: workflow.Upload, Accept: []string{".txt", ".pdf"}, MaxBytes: 10},
}}

func TestStartFormChecksEachField(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		texts map[string]string
		files map[string]workflow.File
		want  map[string]string // field → part of its message; nil: accepted
	}{
		{"ok", map[string]string{"question": "why?", "retries": "2", "score": "7.5", "review": "on", "lang": "zh"},
			map[string]workflow.File{"file": {Name: "a.TXT", Data: []byte("hello")}}, nil},
		{"required", map[string]string{"question": "  "}, nil, map[string]string{"question": "is required"}},
		{"too long", map[string]string{"question": strings.Repeat("x", 21)}, nil, map[string]string{"question": "over the limit of 20"}},
		{"one line", map[string]string{"question": "a\nb"}, nil, map[string]string{"question": "must be one line"}},
		{"control character", map[string]string{"question": "a\x07b"}, nil, map[string]string{"question": "control character (U+0007) at character 2"}},
		{"numbers", map[string]string{"question": "q", "retries": "6", "score": "0.30000000000000004"}, nil,
			map[string]string{"retries": "at most 5", "score": "steps of 0.1"}},
		{"not a number", map[string]string{"question": "q", "retries": "1e1"}, nil, map[string]string{"retries": "not a number"}},
		{"select", map[string]string{"question": "q", "lang": "fr"}, nil, map[string]string{"lang": "not one of the choices"}},
		{"file type and size", map[string]string{"question": "q"}, map[string]workflow.File{"file": {Name: "a.exe", Data: []byte("x")}},
			map[string]string{"file": `".exe" file is not accepted`}},
		{"file size", map[string]string{"question": "q"}, map[string]workflow.File{"file": {Name: "a.txt", Data: make([]byte, 11)}},
			map[string]string{"file": "over the 10 bytes limit"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, err := form.ParseForm(c.texts, c.files)
			if c.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				if v.String("question") != "why?" || !v.Bool("review") || v.String("lang") != "zh" {
					t.Fatalf("values %+v", v)
				}
				if n, _ := v.Number("score"); n != 7.5 {
					t.Fatalf("score %v", n)
				}
				return
			}
			var fe workflow.FieldErrors
			if !errors.As(err, &fe) {
				t.Fatalf("err = %v, want FieldErrors", err)
			}
			for field, part := range c.want {
				if !strings.Contains(fe[field], part) {
					t.Errorf("%s: %q, want %q", field, fe[field], part)
				}
			}
		})
	}
}

func TestStartFormFromJSON(t *testing.T) {
	t.Parallel()
	v, err := form.ParseJSON(json.RawMessage(`{"question": "q", "score": 2.5, "review": true, "file": {"name": "c.pdf", "content_base64": "aGk="}}`))
	if err != nil {
		t.Fatal(err)
	}
	if file, ok := v.File("file"); !ok || string(file.Data) != "hi" || !v.Bool("review") {
		t.Fatalf("values %+v", v)
	}
	_, err = form.ParseJSON(json.RawMessage(`{"question": 7, "review": "yes", "extra": 1, "score": 0.35}`))
	var fe workflow.FieldErrors
	if !errors.As(err, &fe) || fe["question"] != "must be a string" || fe["review"] != "must be true or false" ||
		!strings.Contains(fe["extra"], "not a start field") || !strings.Contains(fe["score"], "steps of 0.1") {
		t.Fatalf("err = %v", err)
	}
}

func TestRedlineWordByWord(t *testing.T) {
	t.Parallel()
	r := workflow.Redline{Before: "The Contractor shall notify within 14 days of the event.",
		After: "The Contractor shall notify within 28 days of becoming aware of the event."}
	var got []string
	for _, op := range r.Ops() {
		got = append(got, op.Kind+":"+op.Text)
	}
	joined := strings.Join(got, "|")
	if !strings.Contains(joined, "delete:14") || !strings.Contains(joined, "insert:28") || strings.Contains(joined, "delete:Contractor") {
		t.Fatalf("ops %q", joined)
	}
	// Putting the kept and inserted runs together gives the new text; kept and deleted, the old.
	var before, after strings.Builder
	for _, op := range r.Ops() {
		if op.Kind != "insert" {
			before.WriteString(op.Text)
		}
		if op.Kind != "delete" {
			after.WriteString(op.Text)
		}
	}
	if before.String() != r.Before || after.String() != r.After {
		t.Fatalf("ops rebuild %q / %q", before.String(), after.String())
	}
	zh := workflow.Redline{Before: "承包人应在14天内通知", After: "承包人应在28天内书面通知"}
	for _, op := range zh.Ops() {
		if op.Kind == "equal" && strings.Contains(op.Text, "14") {
			t.Fatalf("the changed number is kept: %+v", zh.Ops())
		}
	}
}

func TestGenericReviewerRules(t *testing.T) {
	t.Parallel()
	rv := workflow.Review{Thread: workflow.Thread{Reader: workflow.Person{ID: "u1"}}}
	g := workflow.GenericReviewer{}
	if _, err := g.Decide(context.Background(), rv, workflow.Answer{Decision: "reject"}); err == nil || !strings.Contains(err.Error(), "needs a comment") {
		t.Fatalf("reject without a comment: %v", err)
	}
	d, err := g.Decide(context.Background(), rv, workflow.Answer{Decision: "approve", FromForm: true,
		Values: map[string]json.RawMessage{"value": json.RawMessage(`"{\"note\": \"ok\"}"`)}})
	if err != nil {
		t.Fatal(err)
	}
	v := d.Resume.(map[string]any)
	if v["note"] != "ok" || v["decision"] != "approve" || v["editor"].(map[string]string)["reviewer_id"] != "u1" {
		t.Fatalf("resume value %+v", v)
	}
	if _, err := g.Decide(context.Background(), rv, workflow.Answer{Decision: "approve",
		Values: map[string]json.RawMessage{"value": json.RawMessage(`{"decision": "reject"}`)}}); err == nil {
		t.Fatal("a value setting decision was accepted")
	}
}

func TestArtifactValidate(t *testing.T) {
	t.Parallel()
	ok := workflow.Artifact{Key: "pages/home.html", Name: "home.html", ContentType: "text/html; charset=utf-8"}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, a := range []workflow.Artifact{
		{Key: "../x", Name: "x", ContentType: "text/plain"},
		{Key: "a", Name: "a/b", ContentType: "text/plain"},
		{Key: "a", Name: "a", ContentType: "not a type;;"},
		{Key: "a", Name: "a", ContentType: "text/plain", Data: make([]byte, workflow.MaxArtifactBytes+1)},
	} {
		if err := a.Validate(); !errors.Is(err, workflow.ErrArtifactInvalid) {
			t.Errorf("%+v: %v", a.Key, err)
		}
	}
	if !workflow.IsHTMLType("image/svg+xml") || workflow.IsHTMLType("image/png") {
		t.Error("IsHTMLType")
	}
}
