package usertext_test

import (
	"errors"
	"testing"

	"weft/internal/usertext"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		field, in, want string
	}{
		{"the title", "Price list v2", ""},
		{"the comment", "line one\r\nline two\tindented", ""},
		{"the title", "שלום \u200f1200\u200e 标书 ✓ \ufffd", ""}, // direction marks, other scripts, a real U+FFFD
		{"comment", "ring the bell\a now", "comment holds a control character (U+0007) at character 14"},
		{"the title", "\x1b[31mred", "the title holds a control character (U+001B) at character 1"},
		{"the title", "a\vb", "the title holds a control character (U+000B) at character 2"},
		{"the title", "SLA\x00v2", "the title holds a control character (U+0000) at character 4"},
		{"the title", "DEL\x7f", "the title holds a control character (U+007F) at character 4"},
		{"the title", "标书\u0085", "the title holds a control character (U+0085) at character 3"}, // C1 NEL, counted in characters
		{"the file", "# Price\n\nTotal: \u202e0021\u202c CNY", "the file holds the invisible direction control U+202E at line 3, character 8, " +
			"which makes text show in another order than it reads"},
		{"the name", "ci\u2066x", "the name holds the invisible direction control U+2066 at character 3, which makes text show in another order than it reads"},
		{"the file", "ok\n\xffno", "the file holds a byte that is not UTF-8 text at line 2, character 1"},
		{"the comment", "bell\a\nthen more", "the comment holds a control character (U+0007) at line 1, character 5"},
	} {
		err := usertext.Check(tt.field, tt.in)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("Check(%q): %q, want %q", tt.in, got, tt.want)
		}
	}
	var ue *usertext.Error
	if err := usertext.Check("comment", "a\ab"); !errors.As(err, &ue) || ue.Problem != usertext.Control || ue.Char != '\a' || ue.Column != 2 {
		t.Errorf("Check's error: %#v", err)
	}
}

func TestCheckJSON(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"question":"durable?","topics":["a","b"],"n":5}`: "",
		`not json`:                   "",
		`{"question":"bell \u0007"}`: "the input's question holds a control character (U+0007) at character 6",
		`{"question":"Q?","topics":["a","b\u2067c"]}`: "the input's topics[1] holds the invisible direction control U+2067 at character 2, " +
			"which makes text show in another order than it reads",
		`{"opts":{"e\u001bx":1}}`:                   "a field name of the input's opts holds a control character (U+001B) at character 2",
		"{\"note\":\"c1 \u0090 raw\"}":              "the input's note holds a control character (U+0090) at character 4",
		`{"deep":[{"x":"ok"},{"y":"a\nb\u000bc"}]}`: "the input's deep[1].y holds a control character (U+000B) at line 2, character 2",
	} {
		err := usertext.CheckJSON("the input", []byte(in))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != want {
			t.Errorf("CheckJSON(%s): %q, want %q", in, got, want)
		}
	}
}
