package contractreview

import (
	"fmt"
	"sort"
)

// Domain checklists: for a contract on a known form, the clauses to review
// and the checks each needs (domain_id, domain_subtype).
const (
	DomainFIDIC       = "fidic"
	SubtypeSilverBook = "silver_book"
)

// silverBook is the FIDIC Silver Book (EPC/Turnkey, 1999 numbering)
// checklist. The Chinese names are the seed's (一般义务, 预付款, 责任限制, 索赔).
var silverBook = []ChecklistItem{
	{ClauseID: "1.1", ClauseName: "定义", ClauseNameEn: "Definitions", Priority: SeverityMedium,
		Description: "Record the Contract Price, the parties and the defined terms that later clauses rely on."},
	{ClauseID: "4.1", ClauseName: "一般义务", ClauseNameEn: "Contractor's General Obligations", Priority: SeverityCritical,
		Description: "Fitness for purpose, design responsibility and indemnities in the Contractor's general obligations."},
	{ClauseID: "4.2", ClauseName: "履约担保", ClauseNameEn: "Performance Security", Priority: SeverityHigh,
		Description: "Amount, form and release of the performance security."},
	{ClauseID: "8.7", ClauseName: "误期损害赔偿费", ClauseNameEn: "Delay Damages", Priority: SeverityHigh,
		Description: "Rate and cap of delay damages."},
	{ClauseID: "14.2", ClauseName: "预付款", ClauseNameEn: "Advance Payment", Priority: SeverityHigh,
		Checks: []string{RuleAdvanceGuarantee}, Description: "An advance payment must be secured by an advance payment guarantee."},
	{ClauseID: "14.7", ClauseName: "付款", ClauseNameEn: "Payment", Priority: SeverityHigh,
		Checks: []string{RulePaymentTerms}, Description: "Interim payments due within 56 days of the statement."},
	{ClauseID: "15.5", ClauseName: "雇主终止的权利", ClauseNameEn: "Employer's Entitlement to Termination", Priority: SeverityHigh,
		Checks: []string{RuleTermination}, Description: "Termination for convenience must compensate the Contractor."},
	{ClauseID: "17.1", ClauseName: "保障", ClauseNameEn: "Indemnities", Priority: SeverityHigh,
		Checks: []string{RuleUnlimitedIndemnity}, Description: "Indemnities limited to the indemnifying party's fault and to the cap."},
	{ClauseID: "17.6", ClauseName: "责任限制", ClauseNameEn: "Limitation of Liability", Priority: SeverityCritical,
		Checks: []string{RuleLiabilityCap}, Description: "Total liability capped, and not below the Contract Price."},
	{ClauseID: "20.1", ClauseName: "索赔", ClauseNameEn: "Contractor's Claims", Priority: SeverityCritical,
		Checks: []string{RuleClaimNotice}, Description: "Claim notice within 28 days of awareness; time bar."},
}

// domains maps "domain/subtype" to its checklist.
var domains = map[string][]ChecklistItem{
	DomainFIDIC + "/" + SubtypeSilverBook: silverBook,
}

// UnknownDomainError is returned for a domain_id/domain_subtype with no checklist.
type UnknownDomainError struct{ Domain, Subtype string }

func (e *UnknownDomainError) Error() string {
	return fmt.Sprintf("no checklist for domain %q subtype %q (known: %v)", e.Domain, e.Subtype, KnownDomains())
}

// KnownDomains lists the "domain/subtype" pairs with a checklist.
func KnownDomains() []string {
	out := make([]string, 0, len(domains))
	for k := range domains {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// DomainChecklist returns a copy of the checklist of a domain (nil, nil when
// domain is empty: the checklist is then generated from the contract).
func DomainChecklist(domain, subtype string) ([]ChecklistItem, error) {
	if domain == "" {
		return nil, nil
	}
	items, ok := domains[domain+"/"+subtype]
	if !ok {
		return nil, &UnknownDomainError{Domain: domain, Subtype: subtype}
	}
	out := make([]ChecklistItem, len(items))
	for i, it := range items {
		it.Checks = append([]string(nil), it.Checks...)
		it.RequiredSkills = []string{"get_clause_context"}
		out[i] = it
	}
	return out, nil
}

// GenericChecklist is the seed's _generate_generic_checklist: one item per
// top-level clause of the contract (a clause with no parent).
func GenericChecklist(ds *DocumentStructure) []ChecklistItem {
	out := []ChecklistItem{}
	if ds == nil {
		return out
	}
	for _, c := range ds.Clauses {
		if c.Parent != "" {
			continue
		}
		name := c.Title
		if name == "" {
			name = c.Label
		}
		out = append(out, ChecklistItem{ClauseID: c.ID, ClauseName: name, Priority: SeverityMedium,
			RequiredSkills: []string{"get_clause_context"}, Description: "审查条款 " + c.ID})
	}
	return out
}
