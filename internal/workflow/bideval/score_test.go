package bideval_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"weft/internal/workflow/bideval"
)

func TestParseScore(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		text string
		want float64
		err  string
	}{
		{"7", 7, ""},
		{"7.0", 7, ""},
		{"7.", 7, ""},
		{"7.50", 7.5, ""},
		{"0.3", 0.3, ""},
		{".5", 0.5, ""},
		{"10", 10, ""},
		{"-0", 0, ""},
		{"0.30000000000000004", 0, "0.30000000000000004 has more than one decimal place: scores go in steps of 0.1, as the report shows them"},
		{"5.55", 0, "5.55 has more than one decimal place: scores go in steps of 0.1, as the report shows them"},
		{"10.1", 0, "10.1 is above the maximum score of 10"},
		{"1" + strings.Repeat("0", 400), 0, "is above the maximum score of 10"},
		{"-0.5", 0, "-0.5 is below 0"},
		{"1e400", 0, `"1e400" is not a decimal number such as 7 or 7.5`},
		{"3e-1", 0, `"3e-1" is not a decimal number such as 7 or 7.5`},
		{"0x1p1", 0, `"0x1p1" is not a decimal number such as 7 or 7.5`},
		{"Inf", 0, `"Inf" is not a decimal number such as 7 or 7.5`},
		{"1_0", 0, `"1_0" is not a decimal number such as 7 or 7.5`},
		{".", 0, `"." is not a decimal number such as 7 or 7.5`},
		{"", 0, `"" is not a decimal number such as 7 or 7.5`},
	} {
		v, err := bideval.ParseScore(tt.text, 10)
		switch {
		case tt.err == "" && (err != nil || v != tt.want):
			t.Errorf("ParseScore(%q) = %v, %v; want %v", tt.text, v, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ParseScore(%q): %v, want an error saying %q", tt.text, err, tt.err)
		case tt.err != "" && !errors.As(err, new(*bideval.ScoreError)):
			t.Errorf("ParseScore(%q): %T, want a *ScoreError", tt.text, err)
		}
	}
	// The decimal itself: what ParseScore reads is on the 0.1 step exactly, and a float a
	// program computed near it is not.
	tenth, fifth := 0.1, 0.2
	if v, _ := bideval.ParseScore("0.3", 10); !bideval.OnScoreStep(v) || bideval.OnScoreStep(tenth+fifth) {
		t.Errorf("OnScoreStep(0.3 read) = %v, OnScoreStep(0.1+0.2) = %v; want true, false", bideval.OnScoreStep(v), bideval.OnScoreStep(tenth+fifth))
	}
	for v := range 1001 { // every tenth from 0 to 100, as ParseScore reads it
		if f, err := bideval.ParseScore(fmt.Sprintf("%d.%d", v/10, v%10), 100); err != nil || !bideval.OnScoreStep(f) {
			t.Errorf("OnScoreStep(%v) = false (%v)", f, err)
		}
	}
	// ValidateDecision, which checks every decision again in the graph, holds to it too.
	criteria := []bideval.Criterion{{ID: "C1", Name: "Design", MaxScore: 10}}
	for v, ok := range map[float64]bool{0.3: true, 7: true, tenth + fifth: false} {
		err := bideval.ValidateDecision(bideval.Decision{Decision: bideval.DecisionEditScores, Scores: map[string]float64{"C1": v},
			Editor: bideval.Editor{ReviewerID: "u"}}, criteria)
		if (err == nil) != ok || !ok && !strings.Contains(err.Error(), "is not in steps of 0.1") {
			t.Errorf("ValidateDecision with score %v: %v, want ok=%v", v, err, ok)
		}
	}
}
