package workflow_test

import (
	"strings"
	"testing"

	"weft/internal/workflow"
)

// TestQuoteRuns: a quote's marks split its text into runs that put together give the text;
// marks that do not fit the text are left out, overlapping ones trimmed.
func TestQuoteRuns(t *testing.T) {
	t.Parallel()
	text := "Liability shall not exceed 10% of the Contract Price. 承包人应在14天内通知。"
	cap10 := strings.Index(text, "10% of the Contract Price")
	zh := strings.Index(text, "14天")
	cases := []struct {
		name  string
		marks []workflow.Mark
		want  []string // runs: "text" plain, "[text|class]" marked
	}{
		{"no marks", nil, []string{text}},
		{"one mark", []workflow.Mark{{Start: cap10, End: cap10 + len("10% of the Contract Price"), Class: "critical"}},
			[]string{"Liability shall not exceed ", "[10% of the Contract Price|critical]", ". 承包人应在14天内通知。"}},
		{"marks out of order, one at the end of a Chinese text", []workflow.Mark{
			{Start: zh, End: zh + len("14天"), Class: "high"}, {Start: 0, End: len("Liability"), Class: "low"}},
			[]string{"[Liability|low]", text[len("Liability"):zh], "[14天|high]", text[zh+len("14天"):]}},
		{"overlapping marks: the later keeps its part after the earlier", []workflow.Mark{
			{Start: 0, End: 20, Class: "high"}, {Start: 10, End: 26, Class: "low"}, {Start: 12, End: 18, Class: "medium"}},
			[]string{"[" + text[:20] + "|high]", "[" + text[20:26] + "|low]", text[26:]}},
		{"marks that do not fit are left out", []workflow.Mark{
			{Start: -1, End: 4}, {Start: 4, End: 4}, {Start: 5, End: len(text) + 1}, {Start: zh + 2, End: zh + 4}, {Start: 9, End: 3}},
			[]string{text}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q := workflow.Quote{Text: text, Marks: tc.marks}
			var got []string
			var whole strings.Builder
			for _, r := range q.Runs() {
				whole.WriteString(r.Text)
				if r.Mark != nil {
					got = append(got, "["+r.Text+"|"+r.Mark.Class+"]")
				} else {
					got = append(got, r.Text)
				}
			}
			if whole.String() != text {
				t.Errorf("runs put together = %q, want the text", whole.String())
			}
			if strings.Join(got, "¦") != strings.Join(tc.want, "¦") {
				t.Errorf("runs = %q\nwant   %q", got, tc.want)
			}
		})
	}
}
