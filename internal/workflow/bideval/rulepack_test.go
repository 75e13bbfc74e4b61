package bideval_test

import (
	"errors"
	"strings"
	"testing"

	"weft/internal/workflow/bideval"
)

// TestRulePackYAML: the example parses and validates; export and import give the same pack;
// the demo's pack passes too.
func TestRulePackYAML(t *testing.T) {
	t.Parallel()
	rp, err := bideval.ParseRulePackYAML([]byte(bideval.RulePackYAMLExample))
	if err != nil {
		t.Fatal(err)
	}
	if len(rp.HardRules) != 3 || len(rp.Criteria) != 2 || rp.Criteria[0].Weight != 0.6 || rp.Criteria[0].TopK != 4 || bideval.WeightSum(rp) != 100 {
		t.Fatalf("parsed: %+v", rp)
	}
	out, err := bideval.RulePackYAML(rp)
	if err != nil {
		t.Fatal(err)
	}
	again, err := bideval.ParseRulePackYAML(out)
	if err != nil {
		t.Fatalf("the export does not import: %v\n%s", err, out)
	}
	if again.Criteria[1].Name != "Service and warranty" || again.Criteria[0].Rubric.Numbers[0].Pattern != rp.Criteria[0].Rubric.Numbers[0].Pattern {
		t.Fatalf("round trip: %+v", again)
	}
	if err := bideval.ValidateRulePack(bideval.DemoRulePack()); err != nil {
		t.Fatalf("the demo's pack: %v", err)
	}
}

// TestRulePackRefusals: each refusal names the field, and from YAML its line.
func TestRulePackRefusals(t *testing.T) {
	t.Parallel()
	ex := bideval.RulePackYAMLExample
	for _, c := range []struct {
		name, yaml string
		want       []string
	}{
		{"weights not summing to 100", strings.Replace(ex, "weight: 40", "weight: 35", 1), []string{"criteria: the weights sum to 95, not 100"}},
		{"an unknown rule kind", strings.Replace(ex, "kind: max_price", "kind: min_price", 1),
			[]string{"line 9, hard_rules[1].kind: unknown rule kind \"min_price\""}},
		{"a type error", strings.Replace(ex, "weight: 60", "weight: sixty", 1), []string{`line 19, weight: must be a number, not "sixty"`}},
		{"an unknown field", strings.Replace(ex, "top_k: 4", "topk: 4", 1), []string{`line 21, topk: unknown field "topk"`}},
		{"an unknown severity", strings.Replace(ex, "severity: flag", "severity: warn", 1), []string{"line 5, hard_rules[0].severity: unknown severity \"warn\""}},
		{"a pattern without a group", strings.Replace(ex, `'(\d+(?:\.\d+)?)\s*%\s*(?:uptime|availability)'`, `'\d+'`, 1), []string{"criteria[0].rubric.numbers[0].pattern: needs a group"}},
		{"a duplicate id", strings.Replace(ex, "id: C2", "id: C1", 1), []string{"criteria[1].id: the id \"C1\" is used already"}},
		{"a threshold out of range", strings.Replace(ex, "min_confidence: 0.55", "min_confidence: 55", 1), []string{"thresholds.min_confidence: must be between 0 and 1"}},
		{"not YAML", "hard_rules: [\n", []string{"line"}},
		{"empty", "  \n", []string{"the YAML is empty"}},
	} {
		_, err := bideval.ParseRulePackYAML([]byte(c.yaml))
		if !errors.Is(err, bideval.ErrRulePackInvalid) {
			t.Errorf("%s: %v, want a refusal", c.name, err)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %q, want it to say %q", c.name, err, w)
			}
		}
	}
}
