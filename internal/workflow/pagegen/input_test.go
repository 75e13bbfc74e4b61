package pagegen_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"image"
	"image/png"
	"strings"
	"testing"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/workflow/pagegen"
)

// Bad input gets a clear typed error before anything runs: an empty request, a logo over
// 5 MB or not an image, feedback over 10 KB.
func TestInputLimits(t *testing.T) {
	t.Parallel()
	big := make([]byte, 10<<20)
	copy(big, pagegen.DemoLogo())
	tests := []struct {
		name string
		err  func() error
		want error
		code string
	}{
		{"empty request", func() error { return pagegen.Request{Text: "  \n"}.Validate() }, pagegen.ErrEmptyRequest, pagegen.CodeEmptyRequest},
		{"10 MB logo", func() error {
			return pagegen.Request{Text: "a site", Logo: &pagegen.Asset{Name: "logo.png", Data: big}}.Validate()
		}, pagegen.ErrLogoTooLarge, pagegen.CodeLogoTooLarge},
		{"a PDF as logo", func() error {
			return pagegen.Request{Text: "a site", Logo: &pagegen.Asset{Name: "logo.pdf", Data: []byte("%PDF-1.7 not an image")}}.Validate()
		}, pagegen.ErrLogoNotImage, pagegen.CodeLogoNotImage},
		{"50 KB feedback", func() error { return pagegen.CheckFeedback(strings.Repeat("make it bluer ", 50<<10/14)) }, pagegen.ErrFeedbackTooLarge, pagegen.CodeFeedbackTooLarge},
		{"blank feedback", func() error { _, err := pagegen.Resume(" "); return err }, pagegen.ErrFeedbackEmpty, pagegen.CodeFeedbackEmpty},
		{"raw input with an unknown field", func() error {
			return pagegen.CheckInput(json.RawMessage(`{"user_input": "a site", "page_schemas": []}`))
		}, pagegen.ErrInputInvalid, pagegen.CodeInputInvalid},
		{"raw input without a request", func() error { return pagegen.CheckInput(json.RawMessage(`{"aesthetic_enabled": true}`)) }, pagegen.ErrEmptyRequest, pagegen.CodeEmptyRequest},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.err()
			var ie *pagegen.InputError
			if !errors.Is(err, tc.want) || !errors.As(err, &ie) || ie.Code != tc.code || ie.Message == "" {
				t.Fatalf("err = %v, want %v with code %s", err, tc.want, tc.code)
			}
			if class, code := fault.Classify(err); class != fault.Validation || code != tc.code {
				t.Errorf("classified %s %s, want validation %s", class, code, tc.code)
			}
		})
	}
	ok := []error{
		pagegen.Request{Text: "a site", Logo: &pagegen.Asset{Name: "logo.png", Data: pagegen.DemoLogo()}}.Validate(),
		pagegen.CheckFeedback(strings.Repeat("x", pagegen.MaxFeedbackBytes)),
		pagegen.CheckInput(json.RawMessage(`{"user_feedback": "use green"}`)),
		pagegen.CheckInput(json.RawMessage(`{"user_input": "a site", "aesthetic_enabled": true}`)),
	}
	for i, err := range ok {
		if err != nil {
			t.Errorf("acceptable input %d refused: %v", i, err)
		}
	}
}

// A decompression bomb (a small file that decodes to a huge image) is refused by its
// dimensions, before decoding.
func TestLogoDimensionsLimited(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, 8000, 6000))); err != nil {
		t.Fatal(err)
	}
	if buf.Len() > pagegen.MaxLogoBytes {
		t.Skipf("the test image is %d bytes", buf.Len())
	}
	err := pagegen.Request{Text: "a site", Logo: &pagegen.Asset{Name: "huge.png", Data: buf.Bytes()}}.Validate()
	if !errors.Is(err, pagegen.ErrLogoTooLarge) || !strings.Contains(err.Error(), "8000×6000") {
		t.Fatalf("err = %v", err)
	}
}

// A bad logo that reaches the graph (bypassing Request.Validate) fails style_extractor
// with the same validation error, not retried; nothing is built.
func TestBadLogoInTheGraph(t *testing.T) {
	t.Parallel()
	b := setup(t)
	res, err := b.g.Invoke(b.ctx, graph.Config{ThreadID: "bad-logo"}, graph.Update(graph.Set("user_input", "A site for Crumb"),
		graph.Set("assets", []pagegen.Asset{{Kind: "logo", Name: "logo.png", Data: []byte("<svg>not a raster image</svg>")}})))
	var ne *graph.NodeError
	if !errors.As(err, &ne) || ne.Node != pagegen.NodeStyle || ne.Attempt != 1 || !errors.Is(err, pagegen.ErrLogoNotImage) {
		t.Fatalf("err = %v", err)
	}
	if res.State.BuildArtifacts != nil || len(b.arts.Keys("bad-logo")) != 0 {
		t.Fatal("something was built from a bad logo")
	}
}

func TestExampleInputAndSubject(t *testing.T) {
	t.Parallel()
	if err := pagegen.CheckInput(pagegen.ExampleInput); err != nil {
		t.Fatalf("the example input is refused: %v", err)
	}
	if got := pagegen.SubjectOf(pagegen.ExampleInput); !strings.HasPrefix(got, "A landing page for Brewly") || len([]rune(got)) > 80 {
		t.Errorf("subject = %q", got)
	}
	if got := pagegen.SubjectOf(json.RawMessage(`{"user_feedback": "use  green"}`)); got != "use green" {
		t.Errorf("subject of a feedback round = %q", got)
	}
	b := setup(t)
	ws, err := b.g.InputWrites(pagegen.ExampleInput)
	if err != nil || len(ws) != 2 {
		t.Fatalf("the example input as writes: %v, %v", ws, err)
	}
}
