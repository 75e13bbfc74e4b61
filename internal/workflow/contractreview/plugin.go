package contractreview

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"weft/internal/doctext"
	"weft/internal/workflow"
)

// Title is the workflow's title in the console.
const Title = "Contract review"

// The start form's fields (the API's input keys).
const (
	FieldContract   = "contract"
	FieldOurParty   = "our_party"
	FieldLanguage   = "language"
	FieldDomain     = "domain"
	FieldMaxRetries = "max_retries"
)

// Choices of the language and domain fields.
const (
	LanguageAuto     = "auto"
	DomainNone       = "none"
	DomainSilverBook = DomainFIDIC + "/" + SubtypeSilverBook
)

// MaxUpload bounds an uploaded contract (a Word or PDF file of a long contract is a few MB;
// the text read from it is bounded by doctext.MaxTextBytes).
const MaxUpload = 20 << 20

// Definition is the contract review as a plug-in of the platform: the seed's graph (New),
// a start form that reads the uploaded contract (internal/doctext), the review of a paused
// clause (its risks, each change as a redline to approve or reject), and its views.
func Definition(d Deps) (workflow.Definition, error) {
	g, err := New(d)
	if err != nil {
		return workflow.Definition{}, err
	}
	docs := d.Documents
	return workflow.Definition{
		Name: Name, Title: Title, Graph: g,
		Description: "Reviews a contract clause by clause for one party: risks cited in the clause's words, changes proposed as redlines " +
			"for a reviewer to approve or reject (rejected with feedback, a change is re-proposed), and the contract with the approved " +
			"changes as Word tracked changes.",
		Path: []string{NodeInit, NodeParseDocument, NodeClauseAnalyze, NodeGenerateDiffs, NodeClauseValidate, NodeHumanApproval,
			NodeSaveClause, NodeSummarize},
		Start: &workflow.StartForm{Fields: StartFields(), Start: func(ctx context.Context, _ workflow.StartRequest, v workflow.Values) (workflow.Start, error) {
			return startRun(ctx, docs, v)
		}},
		Review:       Reviewer{},
		Views:        workflow.Views{Panel: Panel, Report: Report},
		ReasonLabels: ReasonLabels,
		Describe:     describe,
	}, nil
}

// subjectSep joins a review's file and party in its subject ("contract.docx · for Contractor").
const subjectSep = " · for "

// describe names reviews in lists and on their thread's page by their subjects: the file,
// and whom the review is for.
func describe(_ context.Context, _ string, subjects []string) (map[string]workflow.Subject, error) {
	out := map[string]workflow.Subject{}
	for _, s := range subjects {
		if file, party, ok := strings.Cut(s, subjectSep); ok {
			out[s] = workflow.Subject{Title: file, Detail: "contract review for " + party}
		}
	}
	return out, nil
}

// StartFields are the start form's fields.
func StartFields() []workflow.Field {
	zero, most := 0.0, float64(MaxRetriesLimit)
	return []workflow.Field{
		{Name: FieldContract, Label: "Contract", Kind: workflow.Upload, Required: true, Accept: []string{".txt", ".md", ".docx", ".pdf"},
			MaxBytes: MaxUpload, Help: "A .txt, .md, .docx or .pdf file of at most 20 MB. A PDF needs a text layer: a scan cannot be read."},
		{Name: FieldOurParty, Label: "Our party", Kind: workflow.Text, Required: true, MaxLength: 200, Default: "Contractor",
			Placeholder: "Contractor", Help: "Whom the review is for: Contractor, Employer, 承包人, 发包人, or the party's name in the contract."},
		{Name: FieldLanguage, Label: "Language", Kind: workflow.Select, Default: LanguageAuto, Options: []workflow.Option{
			{Value: LanguageAuto, Label: "Detect from the text"}, {Value: "en", Label: "English"}, {Value: "zh", Label: "中文"}}},
		{Name: FieldDomain, Label: "Checklist", Kind: workflow.Select, Default: DomainNone, Options: []workflow.Option{
			{Value: DomainNone, Label: "None: every top-level clause of the contract"},
			{Value: DomainSilverBook, Label: "FIDIC Silver Book (EPC/Turnkey)"}},
			Help: "A form's checklist names the clauses to review and what each must hold."},
		{Name: FieldMaxRetries, Label: "Redrafts after a failed check", Kind: workflow.Number, Default: fmt.Sprint(DefaultMaxRetries),
			Min: &zero, Max: &most, Step: 1,
			Help: "How many times a clause's changes are redrafted when they fail validation, before the clause is kept with its risks and no changes."},
	}
}

// startRun reads the uploaded contract and checks the start: a file that cannot be read is
// refused on the contract field, saying why (and, when a tool is missing, which Debian
// package to install).
func startRun(ctx context.Context, docs doctext.Extractor, v workflow.Values) (workflow.Start, error) {
	f, ok := v.File(FieldContract)
	if !ok {
		return workflow.Start{}, workflow.FieldErrors{FieldContract: "is required"}
	}
	text, err := docs.Extract(ctx, f.Name, f.Data)
	if de := (*doctext.Error)(nil); errors.As(err, &de) {
		return workflow.Start{}, workflow.FieldErrors{FieldContract: de.Msg}
	}
	if err != nil {
		return workflow.Start{}, err
	}
	st := Start{TaskID: newTaskID(), OurParty: v.String(FieldOurParty), Language: v.String(FieldLanguage), MaxRetries: DefaultMaxRetries,
		Document: TaskDocument{DocumentID: RolePrimary, Filename: filepath.Base(f.Name), Role: RolePrimary, Text: text.Body}}
	if st.Language == LanguageAuto {
		st.Language = ""
	}
	if dom := v.String(FieldDomain); dom != "" && dom != DomainNone {
		st.DomainID, st.DomainSubtype, _ = strings.Cut(dom, "/")
	}
	if n, given := v.Number(FieldMaxRetries); given {
		st.MaxRetries = int(n)
		if st.MaxRetries == 0 {
			st.MaxRetries = NoRetries
		}
	}
	ws, err := st.Writes()
	if fe := (FieldErrors)(nil); errors.As(err, &fe) {
		out := workflow.FieldErrors{}
		for k, msg := range fe {
			out[startField(k)] = msg
		}
		return workflow.Start{}, out
	}
	if err != nil {
		return workflow.Start{}, err
	}
	in := map[string]any{}
	for _, w := range ws {
		in[w.Channel] = w.Value
	}
	b, err := json.Marshal(in)
	if err != nil {
		return workflow.Start{}, fmt.Errorf("encode the review's input: %w", err)
	}
	return workflow.Start{Input: b, Subject: st.Document.Filename + subjectSep + strings.TrimSpace(st.OurParty)}, nil
}

// startField is the start form's field of a state field that Start.Writes refused.
func startField(stateField string) string {
	switch stateField {
	case "documents":
		return FieldContract
	case "domain_id":
		return FieldDomain
	}
	return stateField
}

func newTaskID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "cr_" + hex.EncodeToString(b)
}
