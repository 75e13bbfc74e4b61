package bideval

import (
	"strconv"
	"strings"

	bid "weft/internal/workflow/bideval"
)

// The tender setup pages (setup.templ): a new tender's form, a tender's rule pack (its form,
// YAML import and export, its versions) and its suppliers' card on the tender's page.

// NewTenderVM is the new tender form, as last sent.
type NewTenderVM struct {
	Name, Reference, Description, Budget, Currency, Deadline string
	Error                                                    string
}

// RulePackVM is a tender's rule pack page.
type RulePackVM struct {
	ProjectID, Project string
	Current            string // the version the tender uses ("" none yet)
	Versions           []RulePackVersionVM
	Form               RulePackFormVM
	YAML               string // the import box, as last sent
	Error              string // why the last save or import was refused
	Problems           []string
	Notice             string
}

// RulePackVersionVM is one version in the list.
type RulePackVersionVM struct {
	Version, By, At string
	Pinned          bool
	Rules, Criteria int
}

// RulePackFormVM is the rule pack form's values (as text, so a refused form comes back as typed).
type RulePackFormVM struct {
	Rules      []RuleRowVM
	Criteria   []CriterionRowVM
	Thresholds [5]string // min_confidence, min_citation_coverage, high_score, outlier_delta, min_peers
}

// RuleRowVM is one hard rule row.
type RuleRowVM struct {
	ID, Name, Kind, Severity, Query, Keywords, Pattern, Min, Max string
}

// CriterionRowVM is one criterion row; Numbers holds one number rule a line: label | pattern | min | max.
type CriterionRowVM struct {
	ID, Name, Weight, MaxScore, TopK, Query, Keywords, Numbers string
}

// WeightSum is the criteria rows' weights added up, as the form shows it.
func (f RulePackFormVM) WeightSum() string {
	var sum float64
	for _, c := range f.Criteria {
		if v, err := strconv.ParseFloat(strings.TrimSpace(c.Weight), 64); err == nil {
			sum += v
		}
	}
	return strconv.FormatFloat(sum, 'f', -1, 64)
}

// WeightsOK reports whether the weights add up to 100.
func (f RulePackFormVM) WeightsOK() bool { return f.WeightSum() == "100" }

// ThresholdLabels name the thresholds' inputs.
var ThresholdLabels = [5][2]string{{"min_confidence", "Min confidence (0–1)"}, {"min_citation_coverage", "Min citation coverage (0–1)"},
	{"high_score", "High score (0–100)"}, {"outlier_delta", "Outlier delta (0–100)"}, {"min_peers", "Min peers"}}

// RuleKinds and Severities are the select boxes' choices.
var (
	RuleKinds  = bid.RuleKinds
	Severities = bid.Severities
)

// SupplierVM is one supplier of the suppliers card.
type SupplierVM struct {
	ID, Name string
}

// SuppliersVM is the suppliers card of a tender's page.
type SuppliersVM struct {
	ProjectID, CSRF string
	Suppliers       []SupplierVM
	Error, Notice   string
}

func rulePackPath(projectID string) string { return projectPath(projectID) + "/rule-pack" }
