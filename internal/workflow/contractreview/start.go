package contractreview

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"weft/internal/fault"
	"weft/internal/graph"
)

// Start is what a review starts from: the contract (already turned into
// text, see internal/doctext), our party and the options of the start form.
type Start struct {
	TaskID        string
	OurParty      string
	Language      string // "en", "zh", or "" to detect from the text
	DomainID      string // "" for a checklist generated from the contract
	DomainSubtype string
	MaxRetries    int // 0 means DefaultMaxRetries; NoRetries, none
	Document      TaskDocument
	// Checklist, when set, replaces the domain's or the generated one.
	Checklist []ChecklistItem
}

// FieldErrors are a start's problems, keyed by field name (the JSON names of
// the state: our_party, language, domain_id, max_retries, documents).
type FieldErrors map[string]string

func (e FieldErrors) Error() string {
	parts := make([]string, 0, len(e))
	for _, k := range slices.Sorted(maps.Keys(e)) {
		parts = append(parts, k+": "+e[k])
	}
	return "invalid review start: " + strings.Join(parts, "; ")
}

// Writes checks the start and returns the writes of a new run (the input of
// g.Invoke as graph.Update(writes...)). Problems come back as FieldErrors
// wrapped in a fault.Validation error.
func (st Start) Writes() ([]graph.Write, error) {
	bad := FieldErrors{}
	party := strings.TrimSpace(st.OurParty)
	if party == "" || utf8.RuneCountInString(party) > 200 {
		bad["our_party"] = "name our party (Contractor, Employer, 承包人, 发包人 or the name the contract gives it), in at most 200 characters"
	}
	switch st.Language {
	case "", "en", "zh":
	default:
		bad["language"] = fmt.Sprintf("%q is not en or zh", st.Language)
	}
	if _, err := DomainChecklist(st.DomainID, st.DomainSubtype); err != nil {
		bad["domain_id"] = err.Error()
	}
	if st.MaxRetries < NoRetries || st.MaxRetries > MaxRetriesLimit {
		bad["max_retries"] = fmt.Sprintf("must be between 0 and %d", MaxRetriesLimit)
	}
	doc := st.Document
	if doc.Role == "" {
		doc.Role = RolePrimary
	}
	if strings.TrimSpace(doc.Text) == "" {
		bad["documents"] = "the contract has no text"
	}
	if len(st.Checklist) > MaxChecklist {
		bad["review_checklist"] = fmt.Sprintf("at most %d clauses", MaxChecklist)
	}
	if len(bad) > 0 {
		return nil, fault.Wrap(fault.Validation, fault.CodeValidation, bad)
	}
	checklist := st.Checklist
	if checklist == nil {
		checklist = []ChecklistItem{}
	}
	return []graph.Write{
		keyTaskID.Set(st.TaskID), keyOurParty.Set(party), keyMaterialType.Set("contract"), keyLanguage.Set(st.Language),
		keyDomainID.Set(st.DomainID), keyDomainSubtype.Set(st.DomainSubtype), keyMaxRetries.Set(st.MaxRetries),
		keyDocuments.Set([]TaskDocument{doc}), keyReviewChecklist.Set(checklist),
	}, nil
}
