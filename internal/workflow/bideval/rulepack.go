package bideval

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/parser"

	"weft/internal/llm"
)

// A rule pack as people write it: in the tender's form, or as YAML (imported and exported).
// The YAML schema (RulePackYAMLExample shows every field):
//
//	hard_rules:            pass/fail rules, each:
//	  - id: R1             unique in the pack
//	    name: ISO 9001 certificate
//	    kind: required_document | max_price | max_delivery_days | min_number | max_number
//	    severity: disqualify | flag
//	    query: words to search the bid for (optional: the name and keywords)
//	    keywords: [..]     required_document: one of them must appear
//	    pattern: regexp    min_number, max_number: its first group captures the number
//	    min: 24            min_number
//	    max: 90            max_delivery_days, max_number; max_price (0 or absent: the tender's budget)
//	criteria:              weighted scoring criteria, each:
//	  - id: C1
//	    name: Technical solution
//	    weight: 40         percent: the weights sum to 100
//	    max_score: 10      (default 10)
//	    top_k: 4           evidence chunks retrieved for it (1..20, default 4)
//	    query: ...
//	    rubric:
//	      keywords: [..]   phrases that earn credit
//	      numbers:         figures the bid must state within bounds
//	        - {label: uptime, pattern: '(\d+(?:\.\d+)?)\s*%', min: 99.9}
//	thresholds:            the quality gate
//	  min_confidence: 0.55          0..1
//	  min_citation_coverage: 0.8    0..1
//	  high_score: 80                0..100
//	  outlier_delta: 35             0..100
//	  min_peers: 2
//
// Inside a RulePack a criterion's weight is a fraction (0.4); people write percents (40).

// RulePackYAMLExample is a complete rule pack in the YAML schema.
const RulePackYAMLExample = `hard_rules:
  - id: R1
    name: ISO 9001 certificate
    kind: required_document
    severity: flag
    keywords: [ISO 9001, ISO9001]
  - id: R2
    name: Bid price within budget
    kind: max_price
    severity: disqualify
  - id: R3
    name: Delivery within 90 days
    kind: max_delivery_days
    severity: flag
    max: 90
criteria:
  - id: C1
    name: Technical solution
    weight: 60
    max_score: 10
    top_k: 4
    query: architecture redundancy high availability
    rubric:
      keywords: [high availability, redundant, disaster recovery]
      numbers:
        - {label: uptime, pattern: '(\d+(?:\.\d+)?)\s*%\s*(?:uptime|availability)', min: 99.9}
  - id: C2
    name: Service and warranty
    weight: 40
    max_score: 10
    rubric:
      keywords: [24/7, spare parts, on-site support]
thresholds:
  min_confidence: 0.55
  min_citation_coverage: 0.8
  high_score: 80
  outlier_delta: 35
  min_peers: 2
`

// RuleKinds are the hard rules' kinds; Severities their severities.
var (
	RuleKinds  = []string{RuleRequiredDocument, RuleMaxPrice, RuleMaxDeliveryDays, RuleMinNumber, RuleMaxNumber}
	Severities = []string{SeverityDisqualify, SeverityFlag}
)

// Problem is one thing wrong with a rule pack: the field (a path such as criteria[2].weight),
// the YAML line it is on (0 when not from YAML) and what is wrong.
type Problem struct {
	Line  int    `json:"line,omitempty"`
	Field string `json:"field"`
	Msg   string `json:"message"`
}

func (p Problem) String() string {
	where := p.Field
	if p.Line > 0 {
		where = fmt.Sprintf("line %d, %s", p.Line, p.Field)
	}
	if where == "" {
		return p.Msg
	}
	return where + ": " + p.Msg
}

// RulePackError is a refused rule pack and every problem found.
type RulePackError struct{ Problems []Problem }

func (e *RulePackError) Error() string {
	s := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		s[i] = p.String()
	}
	return "the rule pack is not valid: " + strings.Join(s, "; ")
}

// ErrRulePackInvalid matches every *RulePackError.
var ErrRulePackInvalid = errors.New("rule pack not valid")

// Is makes errors.Is(err, ErrRulePackInvalid) true.
func (e *RulePackError) Is(target error) bool { return target == ErrRulePackInvalid }

// The YAML schema's types (yaml tags name the keys).
type (
	packYAML struct {
		HardRules  []ruleYAML     `yaml:"hard_rules"`
		Criteria   []criterionYML `yaml:"criteria"`
		Thresholds thresholdsYAML `yaml:"thresholds"`
	}
	ruleYAML struct {
		ID       string   `yaml:"id"`
		Name     string   `yaml:"name"`
		Kind     string   `yaml:"kind"`
		Severity string   `yaml:"severity"`
		Query    string   `yaml:"query,omitempty"`
		Keywords []string `yaml:"keywords,omitempty"`
		Pattern  string   `yaml:"pattern,omitempty"`
		Min      float64  `yaml:"min,omitempty"`
		Max      float64  `yaml:"max,omitempty"`
	}
	criterionYML struct {
		ID       string     `yaml:"id"`
		Name     string     `yaml:"name"`
		Weight   float64    `yaml:"weight"`
		MaxScore float64    `yaml:"max_score,omitempty"`
		TopK     int        `yaml:"top_k,omitempty"`
		Query    string     `yaml:"query,omitempty"`
		Rubric   rubricYAML `yaml:"rubric,omitempty"`
	}
	rubricYAML struct {
		Keywords []string     `yaml:"keywords,omitempty"`
		Numbers  []numberYAML `yaml:"numbers,omitempty"`
	}
	numberYAML struct {
		Label   string   `yaml:"label"`
		Pattern string   `yaml:"pattern"`
		Min     *float64 `yaml:"min,omitempty"`
		Max     *float64 `yaml:"max,omitempty"`
	}
	thresholdsYAML struct {
		MinConfidence       float64 `yaml:"min_confidence"`
		MinCitationCoverage float64 `yaml:"min_citation_coverage"`
		HighScore           float64 `yaml:"high_score"`
		OutlierDelta        float64 `yaml:"outlier_delta"`
		MinPeers            int     `yaml:"min_peers"`
	}
)

// maxRulePackYAML bounds an imported rule pack.
const maxRulePackYAML = 256 << 10

// ParseRulePackYAML reads and validates a rule pack written in the YAML schema. A refusal
// is a *RulePackError whose problems name the line and the field.
func ParseRulePackYAML(b []byte) (RulePack, error) {
	if len(b) > maxRulePackYAML {
		return RulePack{}, &RulePackError{[]Problem{{Msg: fmt.Sprintf("the YAML is larger than %d KB", maxRulePackYAML>>10)}}}
	}
	if strings.TrimSpace(string(b)) == "" {
		return RulePack{}, &RulePackError{[]Problem{{Msg: "the YAML is empty"}}}
	}
	var py packYAML
	if err := yaml.UnmarshalWithOptions(b, &py, yaml.DisallowUnknownField(), yaml.Strict()); err != nil {
		return RulePack{}, &RulePackError{[]Problem{yamlProblem(err, b)}}
	}
	rp := py.pack()
	if err := ValidateRulePack(rp); err != nil {
		var re *RulePackError
		if errors.As(err, &re) {
			lines := yamlLines(b)
			for i := range re.Problems {
				re.Problems[i].Line = lines(re.Problems[i].Field)
			}
		}
		return RulePack{}, err
	}
	return rp, nil
}

var (
	structField = regexp.MustCompile(`Go struct field \w+\.(\S+) of type (\S+)`)
	yamlTypes   = map[string]string{"float64": "a number", "int": "a whole number", "string": "text", "[]string": "a list of text"}
)

// yamlProblem words a decoding error: its line, and the field when the library names it.
func yamlProblem(err error, src []byte) Problem {
	var ye yaml.Error
	if !errors.As(err, &ye) {
		return Problem{Msg: err.Error()}
	}
	p := Problem{Msg: ye.GetMessage()}
	if tk := ye.GetToken(); tk != nil && tk.Position != nil {
		p.Line = tk.Position.Line
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		if m := structField.FindStringSubmatch(te.GetMessage()); m != nil {
			want := yamlTypes[m[2]]
			if want == "" {
				want = m[2]
			}
			p.Field = keyOnLine(src, p.Line)
			if p.Field == "" {
				p.Field = m[1]
			}
			p.Msg = fmt.Sprintf("must be %s, not %q", want, tokenValue(te))
		}
	}
	var ue *yaml.UnknownFieldError
	if errors.As(err, &ue) {
		p.Field = keyOnLine(src, p.Line)
		p.Msg = ue.GetMessage() + " (see the rule pack schema in the README)"
	}
	return p
}

// keyOnLine is the mapping key written on a line of the YAML ("weight" of "    weight: x").
func keyOnLine(src []byte, line int) string {
	lines := strings.Split(string(src), "\n")
	if line < 1 || line > len(lines) {
		return ""
	}
	l := strings.TrimLeft(strings.TrimSpace(lines[line-1]), "- ")
	k, _, ok := strings.Cut(l, ":")
	if !ok || strings.ContainsAny(k, " {[") {
		return ""
	}
	return k
}

func tokenValue(te *yaml.TypeError) string {
	if te.Token == nil {
		return ""
	}
	return te.Token.Value
}

// yamlLines finds the line of a field path (criteria[1].weight) in the YAML, or 0.
func yamlLines(b []byte) func(field string) int {
	f, err := parser.ParseBytes(b, 0)
	return func(field string) int {
		if err != nil || field == "" {
			return 0
		}
		for p := field; p != ""; {
			path, perr := yaml.PathString("$." + p)
			if perr == nil {
				if n, ferr := path.FilterFile(f); ferr == nil && n != nil && n.GetToken() != nil && n.GetToken().Position != nil {
					return n.GetToken().Position.Line
				}
			}
			i := strings.LastIndexAny(p, ".[")
			if i <= 0 {
				break
			}
			p = p[:i]
		}
		return 0
	}
}

func (py packYAML) pack() RulePack {
	var rp RulePack
	for _, r := range py.HardRules {
		rp.HardRules = append(rp.HardRules, HardRule{ID: strings.TrimSpace(r.ID), Name: strings.TrimSpace(r.Name), Kind: r.Kind, Severity: r.Severity,
			Query: r.Query, Keywords: r.Keywords, Pattern: r.Pattern, Min: r.Min, Max: r.Max})
	}
	for _, c := range py.Criteria {
		var nums []llm.NumberRule
		for _, n := range c.Rubric.Numbers {
			nums = append(nums, llm.NumberRule{Label: n.Label, Pattern: n.Pattern, Min: n.Min, Max: n.Max})
		}
		ms := c.MaxScore
		if ms == 0 {
			ms = 10
		}
		rp.Criteria = append(rp.Criteria, Criterion{ID: strings.TrimSpace(c.ID), Name: strings.TrimSpace(c.Name), Weight: c.Weight / 100, MaxScore: ms,
			TopK: c.TopK, Query: c.Query, Rubric: llm.Rubric{Keywords: c.Rubric.Keywords, Numbers: nums}})
	}
	rp.Thresholds = Thresholds(py.Thresholds)
	return rp
}

// RulePackYAML writes a rule pack in the YAML schema (weights in percent).
func RulePackYAML(rp RulePack) ([]byte, error) {
	var py packYAML
	for _, r := range rp.HardRules {
		py.HardRules = append(py.HardRules, ruleYAML{ID: r.ID, Name: r.Name, Kind: r.Kind, Severity: r.Severity, Query: r.Query,
			Keywords: r.Keywords, Pattern: r.Pattern, Min: r.Min, Max: r.Max})
	}
	for _, c := range rp.Criteria {
		var nums []numberYAML
		for _, n := range c.Rubric.Numbers {
			nums = append(nums, numberYAML{Label: n.Label, Pattern: n.Pattern, Min: n.Min, Max: n.Max})
		}
		py.Criteria = append(py.Criteria, criterionYML{ID: c.ID, Name: c.Name, Weight: WeightPercent(c.Weight), MaxScore: c.MaxScore, TopK: c.TopK,
			Query: c.Query, Rubric: rubricYAML{Keywords: c.Rubric.Keywords, Numbers: nums}})
	}
	py.Thresholds = thresholdsYAML(rp.Thresholds)
	return yaml.Marshal(py)
}

// WeightPercent is a weight fraction in percent, rounded to 2 places.
func WeightPercent(w float64) float64 { return math.Round(w*10000) / 100 }

// WeightSum is the criteria's weights in percent.
func WeightSum(rp RulePack) float64 {
	var sum float64
	for _, c := range rp.Criteria {
		sum += WeightPercent(c.Weight)
	}
	return math.Round(sum*100) / 100
}

// ValidateRulePack checks a rule pack written by people: known kinds and severities with
// their parameters, unique ids, criteria whose weights sum to 100 percent, bounded top_k and
// thresholds. Every problem is listed (*RulePackError).
func ValidateRulePack(rp RulePack) error {
	var ps []Problem
	add := func(field, format string, args ...any) {
		ps = append(ps, Problem{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	ids := map[string]string{}
	id := func(field, v string) {
		switch {
		case v == "":
			add(field, "an id is required")
		case ids[v] != "":
			add(field, "the id %q is used already by %s", v, ids[v])
		default:
			ids[v] = field
		}
	}
	for i, r := range rp.HardRules {
		f := fmt.Sprintf("hard_rules[%d]", i)
		id(f+".id", r.ID)
		if r.Name == "" {
			add(f+".name", "a name is required")
		}
		switch r.Kind {
		case RuleRequiredDocument:
			if len(nonEmpty(r.Keywords)) == 0 {
				add(f+".keywords", "a required_document rule needs at least one keyword")
			}
		case RuleMaxPrice:
			if r.Max < 0 {
				add(f+".max", "must not be negative (0: the tender's budget)")
			}
		case RuleMaxDeliveryDays:
			if r.Max <= 0 {
				add(f+".max", "a max_delivery_days rule needs max, the most days allowed")
			}
		case RuleMinNumber, RuleMaxNumber:
			checkPattern(add, f+".pattern", r.Pattern)
		default:
			add(f+".kind", "unknown rule kind %q: use one of %s", r.Kind, strings.Join(RuleKinds, ", "))
		}
		if r.Severity != SeverityDisqualify && r.Severity != SeverityFlag {
			add(f+".severity", "unknown severity %q: use disqualify or flag", r.Severity)
		}
	}
	if len(rp.Criteria) == 0 {
		add("criteria", "at least one criterion is required")
	}
	for i, c := range rp.Criteria {
		f := fmt.Sprintf("criteria[%d]", i)
		id(f+".id", c.ID)
		if c.Name == "" {
			add(f+".name", "a name is required")
		}
		if c.Weight <= 0 || c.Weight > 1 {
			add(f+".weight", "must be more than 0 and at most 100 (percent)")
		}
		if c.MaxScore <= 0 || c.MaxScore > 100 {
			add(f+".max_score", "must be more than 0 and at most 100")
		}
		if c.TopK < 0 || c.TopK > 20 {
			add(f+".top_k", "must be 1 to 20 (0: the default, 4)")
		}
		for j, n := range c.Rubric.Numbers {
			nf := fmt.Sprintf("%s.rubric.numbers[%d]", f, j)
			checkPattern(add, nf+".pattern", n.Pattern)
			if n.Min == nil && n.Max == nil {
				add(nf, "a number rule needs min, max or both")
			}
		}
	}
	if sum := WeightSum(rp); len(rp.Criteria) > 0 && math.Abs(sum-100) > 0.01 {
		add("criteria", "the weights sum to %s, not 100", strconv.FormatFloat(sum, 'f', -1, 64))
	}
	t := rp.Thresholds
	for _, b := range []struct {
		field    string
		v, limit float64
	}{{"thresholds.min_confidence", t.MinConfidence, 1}, {"thresholds.min_citation_coverage", t.MinCitationCoverage, 1},
		{"thresholds.high_score", t.HighScore, 100}, {"thresholds.outlier_delta", t.OutlierDelta, 100}} {
		if b.v < 0 || b.v > b.limit {
			add(b.field, "must be between 0 and %g", b.limit)
		}
	}
	if t.MinPeers < 0 {
		add("thresholds.min_peers", "must not be negative")
	}
	if len(ps) > 0 {
		return &RulePackError{Problems: ps}
	}
	return nil
}

func checkPattern(add func(string, string, ...any), field, pattern string) {
	if pattern == "" {
		add(field, "a pattern is required: a regular expression whose first group captures the number")
		return
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		add(field, "not a valid regular expression: %v", err)
		return
	}
	if re.NumSubexp() < 1 {
		add(field, "needs a group in parentheses that captures the number")
	}
}

func nonEmpty(s []string) []string {
	var out []string
	for _, v := range s {
		if strings.TrimSpace(v) != "" {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return out
}
