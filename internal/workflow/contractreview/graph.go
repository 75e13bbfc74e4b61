package contractreview

import (
	"context"
	"errors"
	"fmt"
	"time"

	"weft/internal/doctext"
	"weft/internal/graph"
	"weft/internal/llm"
	"weft/internal/workflow"
)

// Name is the workflow's name.
const Name = "contract_review"

// The seed's node names.
const (
	NodeInit           = "init"
	NodeParseDocument  = "parse_document"
	NodeClauseAnalyze  = "clause_analyze"
	NodeGenerateDiffs  = "clause_generate_diffs"
	NodeClauseValidate = "clause_validate"
	NodeHumanApproval  = "human_approval"
	NodeSaveClause     = "save_clause"
	NodeSummarize      = "summarize"
)

// Limits.
const (
	// DefaultMaxRetries is the seed's max_retries.
	DefaultMaxRetries = 2
	// MaxRetriesLimit bounds max_retries.
	MaxRetriesLimit = 5
	// NoRetries, as max_retries in a start, asks for no regeneration after a failed
	// validation (0 there means DefaultMaxRetries, as a state without the field has it);
	// init turns it into 0.
	NoRetries = -1
	// MaxChecklist bounds the clauses of one review.
	MaxChecklist = 400
)

// recursionLimit bounds the supersteps of one run: init, parse_document and
// summarize, and per clause at most clause_analyze, two rounds (the first
// proposal and one re-proposal) of 1 + MaxRetriesLimit generate/validate
// pairs and an approval each, and save_clause.
const recursionLimit = 3 + MaxChecklist*(2+2*(2*(1+MaxRetriesLimit)+1))

// Deps are the collaborators of the workflow.
type Deps struct {
	// Provider answers the model calls (llm.NewOffline() offline). Required.
	Provider llm.Provider
	// Artifacts stores the DOCX and HTML that summarize writes; nil writes none.
	Artifacts workflow.ArtifactStore
	// Checkpointer keeps the threads. Required: the review pauses for people.
	Checkpointer graph.Checkpointer
	// Now is the clock (decisions injected without a time get Now); nil is time.Now.
	Now func() time.Time
	// Documents reads uploaded contracts for the start form (the zero value: the default
	// limits, and pandoc and pdftotext from PATH).
	Documents doctext.Extractor
	// AutoApprove compiles without the pause before human_approval (the
	// seed's interrupt_before=[]): diffs with no decision are approved, as
	// in the seed's save_clause.
	AutoApprove bool
}

// reviewer holds the dependencies the nodes use.
type reviewer struct {
	provider  llm.Provider
	artifacts workflow.ArtifactStore
	now       func() time.Time
}

// New builds the contract-review graph: the seed's nodes and routes.
//
//	init → parse_document → route_next_clause_or_end
//	  → clause_analyze → clause_generate_diffs → clause_validate → route_validation
//	      pass, with diffs → human_approval [interrupt_before] → route_after_approval
//	          → save_clause, or → clause_generate_diffs once to re-propose a diff rejected with feedback
//	      pass, no diffs → save_clause (nothing to approve: no pause)
//	      fail, retries left → clause_generate_diffs
//	      fail, no retries left → save_clause (risks kept, no diffs)
//	  save_clause → route_next_clause_or_end (the loop) → summarize → END
func New(d Deps) (*graph.Graph[ReviewGraphState], error) {
	if d.Provider == nil {
		return nil, errors.New("contractreview: a provider is required")
	}
	if d.Checkpointer == nil {
		return nil, errors.New("contractreview: a checkpointer is required")
	}
	r := &reviewer{provider: d.Provider, artifacts: d.Artifacts, now: d.Now}
	if r.now == nil {
		r.now = time.Now
	}
	next := map[string]string{NodeClauseAnalyze: NodeClauseAnalyze, NodeSummarize: NodeSummarize}
	b := graph.New[ReviewGraphState]().
		AddNode(NodeInit, r.init).
		AddNode(NodeParseDocument, r.parseDocument).
		AddNode(NodeClauseAnalyze, r.clauseAnalyze).
		AddNode(NodeGenerateDiffs, r.generateDiffs).
		AddNode(NodeClauseValidate, r.validate).
		AddNode(NodeHumanApproval, r.humanApproval).
		AddNode(NodeSaveClause, r.saveClause).
		AddNode(NodeSummarize, r.summarize).
		AddEdge(graph.START, NodeInit).
		AddEdge(NodeInit, NodeParseDocument).
		AddConditionalEdges(NodeParseDocument, graph.Pick(RouteNextClauseOrEnd), next).
		AddEdge(NodeClauseAnalyze, NodeGenerateDiffs).
		AddEdge(NodeGenerateDiffs, NodeClauseValidate).
		AddConditionalEdges(NodeClauseValidate, graph.Pick(RouteValidation), map[string]string{
			NodeHumanApproval: NodeHumanApproval, NodeGenerateDiffs: NodeGenerateDiffs, NodeSaveClause: NodeSaveClause}).
		AddConditionalEdges(NodeHumanApproval, graph.Pick(RouteAfterApproval), map[string]string{
			NodeSaveClause: NodeSaveClause, NodeGenerateDiffs: NodeGenerateDiffs}).
		AddConditionalEdges(NodeSaveClause, graph.Pick(RouteNextClauseOrEnd), next).
		AddEdge(NodeSummarize, graph.END)
	opts := []graph.CompileOption{graph.WithCheckpointer(d.Checkpointer), graph.WithName(Name), graph.WithRecursionLimit(recursionLimit)}
	if !d.AutoApprove {
		opts = append(opts, graph.WithInterruptBefore(NodeHumanApproval))
	}
	g, err := b.Compile(opts...)
	if err != nil {
		return nil, fmt.Errorf("contractreview: %w", err)
	}
	return g, nil
}

// RouteNextClauseOrEnd is the seed's route_next_clause_or_end.
func RouteNextClauseOrEnd(s ReviewGraphState) string {
	if s.Error != "" || s.CurrentClauseIndex >= len(s.ReviewChecklist) {
		return NodeSummarize
	}
	return NodeClauseAnalyze
}

// RouteValidation is the seed's route_validation. A clause that passes with
// nothing to decide goes straight to save_clause, so it does not pause.
func RouteValidation(s ReviewGraphState) string {
	switch {
	case s.ValidationResult == "pass" && len(s.PendingDiffs) > 0:
		return NodeHumanApproval
	case s.ValidationResult == "pass":
		return NodeSaveClause
	case s.ClauseRetryCount < s.MaxRetries:
		return NodeGenerateDiffs
	}
	return NodeSaveClause
}

// RouteAfterApproval is the seed's route_after_approval with its planned
// extension: a diff rejected with feedback goes back once to
// clause_generate_diffs for a re-proposal.
func RouteAfterApproval(s ReviewGraphState) string {
	if len(revisable(s.CurrentDiffs)) > 0 {
		return NodeGenerateDiffs
	}
	return NodeSaveClause
}

// revisable lists the diffs rejected with feedback that were not yet re-proposed.
func revisable(diffs []DocumentDiff) []DocumentDiff {
	var out []DocumentDiff
	for _, d := range diffs {
		if d.Status == StatusRejected && d.Feedback != "" && d.Round == 0 && d.RevisedBy == "" {
			out = append(out, d)
		}
	}
	return out
}

// init is the seed's node_init: defaults, and the accumulators emptied.
func (r *reviewer) init(_ context.Context, s ReviewGraphState) (graph.Command, error) {
	maxRetries := s.MaxRetries
	switch {
	case maxRetries == 0:
		maxRetries = DefaultMaxRetries
	case maxRetries == NoRetries:
		maxRetries = 0
	case maxRetries < 0 || maxRetries > MaxRetriesLimit:
		return graph.Command{}, graph.Permanent(fmt.Errorf("max_retries %d is outside 0..%d", maxRetries, MaxRetriesLimit))
	}
	material := s.MaterialType
	if material == "" {
		material = "contract"
	}
	lang := s.Language
	if lang == "" {
		lang = "en"
		if doc, ok := primary(s); ok && isChinese("", doc.Text) {
			lang = "zh"
		}
	}
	return graph.Update(
		keyCurrentClauseIndex.Set(0),
		keyFindings.Overwrite(map[string]ClauseFindings{}),
		keyGlobalIssues.Overwrite([]string{}),
		keyAllRisks.Overwrite([]RiskPoint{}),
		keyAllDiffs.Overwrite([]DocumentDiff{}),
		keyAllActions.Overwrite([]ActionRecommendation{}),
		keyClauseRetryCount.Set(0),
		keyMaxRetries.Set(maxRetries),
		keyMaterialType.Set(material),
		keyLanguage.Set(lang),
		keyProvider.Set(r.provider.Name()),
		keyOffline.Set(r.provider.Offline()),
		keyIsComplete.Set(false),
		keyError.Set(""),
	), nil
}

// primary is the contract under review.
func primary(s ReviewGraphState) (TaskDocument, bool) {
	for _, d := range s.Documents {
		if d.Role == RolePrimary {
			return d, true
		}
	}
	return TaskDocument{}, false
}

// parseDocument is the seed's node_parse_document: the contract's
// structure, and the checklist (given, the domain's, or generated).
func (r *reviewer) parseDocument(_ context.Context, s ReviewGraphState) (graph.Command, error) {
	zh := isChinese(s.Language, "")
	doc, ok := primary(s)
	if !ok {
		msg := "no primary document to review"
		if zh {
			msg = "未找到主文档"
		}
		return graph.Update(keyError.Set(msg)), nil
	}
	ds := ParseStructure(doc.DocumentID, doc.Text)
	checklist := s.ReviewChecklist
	if len(checklist) == 0 {
		var err error
		if checklist, err = DomainChecklist(s.DomainID, s.DomainSubtype); err != nil {
			return graph.Update(keyError.Set(err.Error()), keyPrimaryStructure.Set(&ds)), nil
		}
	}
	if len(checklist) == 0 {
		checklist = GenericChecklist(&ds)
	}
	if len(checklist) > MaxChecklist {
		return graph.Update(keyError.Set(fmt.Sprintf("the checklist has %d clauses, over the limit of %d", len(checklist), MaxChecklist))), nil
	}
	ws := []graph.Write{keyPrimaryStructure.Set(&ds), keyReviewChecklist.Set(checklist)}
	if len(ds.Clauses) == 0 {
		ws = append(ws, keyGlobalIssues.Set([]string{say(zh, "No numbered clauses were found in the contract.", "合同中未识别出编号条款。")}))
	}
	if roleOf(s.OurParty, extractFacts("", doc.Text)) == "" {
		ws = append(ws, keyGlobalIssues.Set([]string{say(zh,
			fmt.Sprintf("Our party %q is neither the Contractor nor the Employer by name: every one-sided term is reported.", s.OurParty),
			fmt.Sprintf("无法确定我方 %q 是发包人还是承包人：所有单方面条款均按对我方不利报告。", s.OurParty))}))
	}
	return graph.Update(ws...), nil
}

func say(zh bool, en, cn string) string {
	if zh {
		return cn
	}
	return en
}
