package bideval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/llm"
)

// Node names, exactly seed 000 §3.
const (
	NodeLoadContext      = "load_context"
	NodeRetrieveEvidence = "retrieve_evidence"
	NodeEvaluateRules    = "evaluate_rules"
	NodeScoreWithLLM     = "score_with_llm"
	NodeQualityGate      = "quality_gate"
	NodeHumanReview      = "human_review_interrupt"
	NodeFinalizeReport   = "finalize_report"
	NodePersistResult    = "persist_result"
	NodeClassifyError    = "classify_error"
	NodeRetryOrDLQ       = "retry_or_dlq"
)

// Codes of this workflow's business and validation errors.
const (
	CodeBidDisqualified = "BID_DISQUALIFIED"
	CodeBidNoDocuments  = "BID_NO_DOCUMENTS"
	CodeRulePackInvalid = "RULE_PACK_INVALID"
	// CodeReferenceTaken: a tender reference the tenant uses already.
	CodeReferenceTaken = "TENDER_REFERENCE_TAKEN"
	// CodeSupplierTaken: a supplier name the tender has already.
	CodeSupplierTaken = "SUPPLIER_NAME_TAKEN"
	// CodeDocumentDuplicate: a bid document the supplier's bid has already.
	CodeDocumentDuplicate = "DOCUMENT_DUPLICATE"
	CodeDecisionInvalid   = "REVIEW_DECISION_INVALID"
	// CodeEvaluationRunning refuses to start an evaluation whose run is in progress.
	CodeEvaluationRunning = "EVALUATION_RUNNING"
)

// EvalContext is what load_context reads.
type EvalContext struct {
	ProjectID     string
	Project       Project
	SupplierID    string
	Supplier      Supplier
	RulePack      RulePack
	ReportVersion int // the latest persisted report version (0: none)
}

// Persisted is what persist_result reports back.
type Persisted struct {
	ReportVersion int  `json:"report_version"`
	Replayed      bool `json:"replayed"` // the key was already done: nothing was written again
}

// PeerTotal is another evaluation's total in the same project.
type PeerTotal struct {
	EvaluationID string
	Supplier     string
	TotalScore   float64
}

// Data is the database as the workflow sees it.
type Data interface {
	LoadContext(ctx context.Context, tenantID, evaluationID string) (EvalContext, error)
	// Documents counts the supplier's bid documents, withdrawn ones aside.
	Documents(ctx context.Context, tenantID, supplierID string) (int, error)
	// Retrieve ranks the supplier's chunks for a query (full-text search,
	// with trigram similarity for CJK), best first.
	Retrieve(ctx context.Context, tenantID, supplierID, query string, k int) ([]RetrievedChunk, error)
	// PeerTotals lists the other completed evaluations of the project.
	PeerTotals(ctx context.Context, tenantID, projectID, evaluationID string) ([]PeerTotal, error)
	// LatestReportVersion is the evaluation's latest persisted report version (0: none).
	LatestReportVersion(ctx context.Context, tenantID, evaluationID string) (int, error)
	// PersistResult saves the report and its audit row once per
	// evaluation id + report version.
	PersistResult(ctx context.Context, tenantID string, r Report) (Persisted, error)
}

// Deps are the workflow's collaborators.
type Deps struct {
	Data         Data
	LLM          llm.Provider
	Checkpointer graph.Checkpointer
	// IssueToken issues a resume token bound to the running job's thread and
	// the interrupt about to happen (seed 000 §7.1's resume_token).
	IssueToken func(ctx context.Context, interruptID string) (string, error)
	// RecordFailure is retry_or_dlq's side effect: a retry, or the DLQ
	// (idempotent on job id + retry count). It returns "retry" or "dlq".
	RecordFailure func(ctx context.Context, f Failure) (string, error)
	Now           func() time.Time
	// ScoreRetry is score_with_llm's node retry policy (default: 3 attempts
	// from 500ms, retrying transient provider errors only).
	ScoreRetry *graph.RetryPolicy
}

// Failure is what retry_or_dlq hands to RecordFailure.
type Failure struct {
	Class        fault.Class
	Code         string
	Message      string
	Node         string
	CheckpointID string
}

// New compiles the bid-evaluation graph.
func New(d Deps) (*graph.Graph[State], error) {
	if d.Data == nil || d.LLM == nil {
		return nil, errors.New("bideval: Data and LLM are required")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	w := &wf{d: d}
	retry := graph.RetryPolicy{InitialInterval: 500 * time.Millisecond, MaxAttempts: 3, Jitter: true,
		RetryOn: func(err error) bool { c, _ := fault.Classify(err); return c == fault.Transient }}
	if d.ScoreRetry != nil {
		retry = *d.ScoreRetry
	}
	b := graph.New[State]()
	b.AddNode(NodeLoadContext, w.loadContext)
	b.AddNode(NodeRetrieveEvidence, w.retrieveEvidence)
	b.AddNode(NodeEvaluateRules, w.evaluateRules)
	b.AddNode(NodeScoreWithLLM, w.scoreWithLLM, graph.WithRetry[State](retry))
	b.AddNode(NodeQualityGate, w.qualityGate)
	b.AddNode(NodeHumanReview, w.humanReview)
	b.AddNode(NodeFinalizeReport, w.finalizeReport)
	b.AddNode(NodePersistResult, w.persistResult)
	b.AddNode(NodeClassifyError, w.classifyError)
	b.AddNode(NodeRetryOrDLQ, w.retryOrDLQ)
	b.AddEdge(graph.START, NodeLoadContext)
	b.AddEdge(NodeLoadContext, NodeRetrieveEvidence)
	b.AddEdge(NodeRetrieveEvidence, NodeEvaluateRules)
	// A bid that fails a disqualifying hard rule is not scored: its report says why.
	b.AddConditionalEdges(NodeEvaluateRules, graph.Pick(func(s State) string {
		if len(Disqualifying(s.RuleResults)) > 0 {
			return "disqualified"
		}
		return "score"
	}), map[string]string{"score": NodeScoreWithLLM, "disqualified": NodeFinalizeReport})
	b.AddEdge(NodeScoreWithLLM, NodeQualityGate)
	b.AddConditionalEdges(NodeQualityGate, graph.Pick(func(s State) string {
		if s.RequiresHumanReview {
			return "hitl"
		}
		return "pass"
	}), map[string]string{"pass": NodeFinalizeReport, "hitl": NodeHumanReview})
	b.AddEdge(NodeHumanReview, NodeFinalizeReport)
	b.AddEdge(NodeFinalizeReport, NodePersistResult)
	b.AddEdge(NodePersistResult, graph.END)
	b.AddEdge(NodeClassifyError, NodeRetryOrDLQ)
	b.AddEdge(NodeRetryOrDLQ, graph.END)
	opts := []graph.CompileOption{
		graph.WithName(Name),
		graph.WithErrorHandler(NodeClassifyError, w.recordError),
		graph.WithGuard(immutable),
		graph.WithRecursionLimit(40),
	}
	if d.Checkpointer != nil {
		opts = append(opts, graph.WithCheckpointer(d.Checkpointer))
	}
	return b.Compile(opts...)
}

type wf struct{ d Deps }

// ImmutableError rejects a change of tenant_id, evaluation_id or thread_id.
type ImmutableError struct {
	Field    string
	Old, New string
}

func (e *ImmutableError) Error() string {
	return fmt.Sprintf("%s: %s is immutable (was %q, update wants %q)", fault.CodeImmutableField, e.Field, e.Old, e.New)
}

// Unwrap classifies the error as validation.
func (e *ImmutableError) Unwrap() error {
	return fault.New(fault.Validation, fault.CodeImmutableField, e.Field+" is immutable")
}

func immutable(before, after any) error {
	b, a := before.(State), after.(State)
	for _, f := range []struct{ name, old, new string }{
		{"tenant_id", b.TenantID, a.TenantID},
		{"evaluation_id", b.EvaluationID, a.EvaluationID},
		{"thread_id", b.ThreadID, a.ThreadID},
	} {
		if f.old != "" && f.old != f.new {
			return &ImmutableError{Field: f.name, Old: f.old, New: f.new}
		}
	}
	return nil
}

// recordError turns any node failure into an errors[] entry (classified
// with the original error) for classify_error.
func (w *wf) recordError(f graph.NodeFailure, err error) []graph.Write {
	class, code := fault.Classify(err)
	return []graph.Write{keyErrors.Append(ErrorEntry{At: w.d.Now().UTC(), Node: f.Node, Class: string(class), Code: code,
		Message: err.Error(), Attempts: f.Attempts, CheckpointID: f.CheckpointID})}
}

func (w *wf) loadContext(ctx context.Context, s State) (graph.Command, error) {
	if s.TenantID == "" || s.EvaluationID == "" {
		return graph.Command{}, fault.New(fault.Validation, fault.CodeValidation, "tenant_id and evaluation_id are required")
	}
	ec, err := w.d.Data.LoadContext(ctx, s.TenantID, s.EvaluationID)
	if err != nil {
		return graph.Command{}, err
	}
	rp := ec.RulePack
	if len(rp.Criteria) == 0 {
		return graph.Command{}, fault.New(fault.Validation, CodeRulePackInvalid, "the rule pack has no scoring criteria")
	}
	var weights float64
	for _, c := range rp.Criteria {
		if c.Weight < 0 || c.MaxScore <= 0 {
			return graph.Command{}, fault.New(fault.Validation, CodeRulePackInvalid, fmt.Sprintf("criterion %s needs a weight ≥ 0 and a max score > 0", c.ID))
		}
		weights += c.Weight
	}
	if weights <= 0 {
		return graph.Command{}, fault.New(fault.Validation, CodeRulePackInvalid, "the criteria weights add up to 0")
	}
	qb := Queries(rp)
	return graph.Update(
		keyProjectID.Set(ec.ProjectID), keySupplierID.Set(ec.SupplierID),
		keyProject.Set(ec.Project), keySupplier.Set(ec.Supplier),
		keyRulePack.Set(rp), keyRulePackVersion.Set(rp.Version),
		keyQueryBundle.Set(qb), keyReportVersion.Set(ec.ReportVersion+1),
		keyStatus.Set(StatusRunning),
	), nil
}

// Queries is the retrieval query bundle of a rule pack: one query per criterion and per
// hard rule (its own query, else its name and keywords).
func Queries(rp RulePack) QueryBundle {
	var qb QueryBundle
	for _, c := range rp.Criteria {
		q := c.Query
		if q == "" {
			q = c.Name + " " + strings.Join(c.Rubric.Keywords, " ")
		}
		k := c.TopK
		if k <= 0 {
			k = 4
		}
		qb.Criteria = append(qb.Criteria, Query{ID: c.ID, Text: q, TopK: k, Label: c.Name})
	}
	for _, r := range rp.HardRules {
		q := r.Query
		if q == "" {
			q = r.Name + " " + strings.Join(r.Keywords, " ")
		}
		qb.Rules = append(qb.Rules, Query{ID: r.ID, Text: q, TopK: 3, Label: r.Name})
	}
	return qb
}

func (w *wf) retrieveEvidence(ctx context.Context, s State) (graph.Command, error) {
	n, err := w.d.Data.Documents(ctx, s.TenantID, s.SupplierID)
	if err != nil {
		return graph.Command{}, fmt.Errorf("count bid documents: %w", err)
	}
	if n == 0 {
		// Nothing to evaluate: an operator's matter (upload the bid, then retry), not a score of 0.
		return graph.Command{}, fault.New(fault.Validation, CodeBidNoDocuments,
			fmt.Sprintf("%s has no bid documents: upload the bid on the tender page, then retry the evaluation", s.Supplier.Name))
	}
	bundle := map[string]Evidence{}
	var chunks []RetrievedChunk
	index := map[string]int{}
	all := append(append([]Query{}, s.QueryBundle.Criteria...), s.QueryBundle.Rules...)
	for _, q := range all {
		found, err := w.d.Data.Retrieve(ctx, s.TenantID, s.SupplierID, q.Text, q.TopK)
		if err != nil {
			return graph.Command{}, fmt.Errorf("retrieve evidence for %s: %w", q.ID, err)
		}
		ev := Evidence{ID: q.ID, Label: q.Label, Query: q.Text, ChunkIDs: []string{}, Scores: []float64{}}
		for _, c := range found {
			ev.ChunkIDs = append(ev.ChunkIDs, c.ChunkID)
			ev.Scores = append(ev.Scores, c.Score)
			if i, ok := index[c.ChunkID]; ok {
				chunks[i].For = append(chunks[i].For, q.ID)
				chunks[i].Score = math.Max(chunks[i].Score, c.Score)
				continue
			}
			c.For = []string{q.ID}
			index[c.ChunkID] = len(chunks)
			chunks = append(chunks, c)
		}
		bundle[q.ID] = ev
	}
	return graph.Update(keyRetrievedChunks.Set(chunks), keyEvidenceBundle.Set(bundle)), nil
}

func chunkByID(s State) map[string]RetrievedChunk {
	m := make(map[string]RetrievedChunk, len(s.RetrievedChunks))
	for _, c := range s.RetrievedChunks {
		m[c.ChunkID] = c
	}
	return m
}

func (w *wf) evaluateRules(_ context.Context, s State) (graph.Command, error) {
	chunks := chunkByID(s)
	results := make([]RuleResult, 0, len(s.RulePack.HardRules))
	for _, r := range s.RulePack.HardRules {
		var ev []RetrievedChunk
		for _, id := range s.EvidenceBundle[r.ID].ChunkIDs {
			ev = append(ev, chunks[id])
		}
		results = append(results, evaluateRule(r, ev, s.Project))
	}
	return graph.Update(keyRuleResults.Set(results)), nil
}

// Disqualifying lists the failed hard rules of severity disqualify: a bid with any is
// disqualified, an outcome of the evaluation (completed, not ranked), not a failure.
func Disqualifying(results []RuleResult) []RuleResult {
	var out []RuleResult
	for _, r := range results {
		if !r.Passed && r.Severity == SeverityDisqualify {
			out = append(out, r)
		}
	}
	return out
}

func (w *wf) scoreWithLLM(ctx context.Context, s State) (graph.Command, error) {
	chunks := chunkByID(s)
	req := llm.ScoreRequest{Evidence: map[string][]llm.Chunk{}, Language: language(s)}
	for _, c := range s.RulePack.Criteria {
		req.Criteria = append(req.Criteria, llm.Criterion{ID: c.ID, Name: c.Name, Weight: c.Weight, MaxScore: c.MaxScore, Rubric: c.Rubric})
		for _, id := range s.EvidenceBundle[c.ID].ChunkIDs {
			ch := chunks[id]
			req.Evidence[c.ID] = append(req.Evidence[c.ID], llm.Chunk{ID: ch.ChunkID, Text: ch.Text, Score: ch.Score})
		}
	}
	res, err := w.d.LLM.ScoreCriteria(ctx, req)
	if err != nil {
		return graph.Command{}, err
	}
	byID := map[string]llm.CriterionScore{}
	for _, sc := range res.Scores {
		byID[sc.CriterionID] = sc
	}
	scores := make([]CriterionScore, 0, len(s.RulePack.Criteria))
	for _, c := range s.RulePack.Criteria {
		sc, ok := byID[c.ID]
		if !ok {
			return graph.Command{}, fault.New(fault.Permanent, fault.CodeLLMPermanent, "the provider returned no score for criterion "+c.ID)
		}
		scores = append(scores, CriterionScore{CriterionID: c.ID, Name: c.Name, Weight: c.Weight, Score: sc.Score, MaxScore: c.MaxScore,
			Confidence: sc.Confidence, Explanation: sc.Explanation, Citations: nonNil(sc.Citations), Claims: sc.Claims, CitedClaims: sc.CitedClaims})
	}
	total, conf, cov := aggregate(scores)
	return graph.Update(keyCriteriaScores.Set(scores), keyTotalScore.Set(total), keyConfidence.Set(conf),
		keyCitationCoverage.Set(cov), keyScoredBy.Set(res.Provider), keyScoredOffline.Set(res.Offline)), nil
}

// aggregate computes the weighted total (0–100), the weight-averaged
// confidence and the citation coverage (cited claims ÷ claims).
func aggregate(scores []CriterionScore) (total, confidence, coverage float64) {
	var weights float64
	claims, cited := 0, 0
	for _, c := range scores {
		weights += c.Weight
		total += c.Weight * c.Score / c.MaxScore * 100
		confidence += c.Weight * c.Confidence
		claims += c.Claims
		cited += c.CitedClaims
	}
	if weights > 0 {
		total, confidence = total/weights, confidence/weights
	}
	if claims > 0 {
		coverage = float64(cited) / float64(claims)
	}
	return round(total, 2), round(confidence, 3), round(coverage, 3)
}

func (w *wf) qualityGate(ctx context.Context, s State) (graph.Command, error) {
	th := s.RulePack.Thresholds
	var reasons []string
	if s.Confidence < th.MinConfidence {
		reasons = append(reasons, "low_confidence")
	}
	if s.CitationCoverage < th.MinCitationCoverage {
		reasons = append(reasons, "citation_coverage_low")
	}
	for _, r := range s.RuleResults {
		if !r.Passed && th.HighScore > 0 && s.TotalScore >= th.HighScore {
			reasons = append(reasons, "hard_rule_failed_high_score")
			break
		}
	}
	if th.OutlierDelta > 0 {
		peers, err := w.d.Data.PeerTotals(ctx, s.TenantID, s.ProjectID, s.EvaluationID)
		if err != nil {
			return graph.Command{}, err
		}
		min := th.MinPeers
		if min <= 0 {
			min = 2
		}
		if len(peers) >= min {
			var sum float64
			for _, p := range peers {
				sum += p.TotalScore
			}
			if math.Abs(s.TotalScore-sum/float64(len(peers))) > th.OutlierDelta {
				reasons = append(reasons, "score_outlier")
			}
		}
	}
	return graph.Update(keyRequiresHumanReview.Set(len(reasons) > 0), keyReviewReasons.Set(nonNil(reasons))), nil
}

func (w *wf) humanReview(ctx context.Context, s State) (graph.Command, error) {
	payload := ReviewPayload{Type: "human_review", EvaluationID: s.EvaluationID, Reasons: s.ReviewReasons,
		SuggestedActions: []string{DecisionApprove, DecisionReject, DecisionEditScores}}
	if !graph.HasResume(ctx) && w.d.IssueToken != nil {
		tok, err := w.d.IssueToken(ctx, graph.NextInterruptID(ctx))
		if err != nil {
			return graph.Command{}, fmt.Errorf("issue resume token: %w", err)
		}
		payload.ResumeToken = tok
	}
	d, err := graph.Interrupt[Decision](ctx, payload)
	if err != nil {
		return graph.Command{}, err
	}
	if d.Decision == DecisionApprove || d.Decision == DecisionReject {
		// Scores never counted with these; the API accepted them before ValidateDecision
		// refused them, and a resume recorded then may still reach this node (a retry).
		d.Scores = nil
	}
	if err := ValidateDecision(d, s.RulePack.Criteria); err != nil {
		return graph.Command{}, err
	}
	return graph.Update(keyHumanDecision.Set(&d), keyHumanReviewPayload.Set(&payload),
		keyResumeToken.Set(payload.ResumeToken)), nil
}

// ValidateDecision checks a §7.2 decision: its kind, the reviewer's
// identity, a comment for reject (the reason the report and audit keep),
// and for edit_scores, known criteria and scores in range, in steps of 0.1.
// Scores come with edit_scores only: approve keeps the model's scores and
// reject ends the evaluation, so scores sent with either would be kept in
// the decision (its state, its audit row) without counting anywhere.
func ValidateDecision(d Decision, criteria []Criterion) error {
	bad := func(msg string) error { return fault.New(fault.Validation, CodeDecisionInvalid, msg) }
	switch d.Decision {
	case DecisionApprove:
		if len(d.Scores) > 0 {
			return bad("approve keeps the model's scores: send scores with edit_scores only")
		}
	case DecisionReject:
		if strings.TrimSpace(d.Comment) == "" {
			return bad("reject needs a comment saying why")
		}
		if len(d.Scores) > 0 {
			return bad("reject records no scores: send scores with edit_scores only")
		}
	case DecisionEditScores:
		if len(d.Scores) == 0 {
			return bad("edit_scores needs the edited scores")
		}
		for id, v := range d.Scores {
			var c *Criterion
			for i := range criteria {
				if criteria[i].ID == id {
					c = &criteria[i]
				}
			}
			if c == nil {
				return bad(fmt.Sprintf("edit_scores names unknown criterion %q", id))
			}
			if v < 0 || v > c.MaxScore || math.IsNaN(v) {
				return bad(fmt.Sprintf("score %v for %s is outside 0–%v", v, id, c.MaxScore))
			}
			if !OnScoreStep(v) {
				return bad(fmt.Sprintf("score %v for %s is not in steps of 0.1", v, id))
			}
		}
	default:
		return bad(fmt.Sprintf("decision must be approve, reject or edit_scores, got %q", d.Decision))
	}
	if strings.TrimSpace(d.Editor.ReviewerID) == "" {
		return fault.New(fault.Security, fault.CodeInterruptResumeInvalid, "the resume must carry editor.reviewer_id")
	}
	return nil
}

// OnScoreStep reports whether a reviewer's score is a whole number of tenths, the precision
// the review form offers and the report shows (so a total never counts digits no one sees):
// exactly the number a decimal with one decimal place reads as (ParseScore), so
// 0.30000000000000004 is not one.
func OnScoreStep(v float64) bool { return v == math.Round(v*10)/10 }

func (w *wf) finalizeReport(ctx context.Context, s State) (graph.Command, error) {
	scores := append([]CriterionScore(nil), s.CriteriaScores...)
	outcome := OutcomePassed
	r := Report{}
	if dq := Disqualifying(s.RuleResults); len(dq) > 0 {
		outcome, scores = OutcomeDisqualified, nil
		for _, rr := range dq {
			r.DisqualifiedBy = append(r.DisqualifiedBy, rr.RuleID)
		}
	} else if d := s.HumanDecision; d != nil {
		outcome = map[string]string{DecisionApprove: OutcomeApproved, DecisionReject: OutcomeRejected, DecisionEditScores: OutcomeScoresEdited}[d.Decision]
		r.Decision, r.Comment, r.ReviewerID = d.Decision, d.Comment, d.Editor.ReviewerID
		for i := range scores {
			if v, ok := d.Scores[scores[i].CriterionID]; ok && d.Decision == DecisionEditScores {
				model := scores[i].Score
				scores[i].Score, scores[i].Edited, scores[i].ModelScore = v, true, &model
			}
		}
	}
	total, conf, cov := aggregate(scores)
	peers, err := w.d.Data.PeerTotals(ctx, s.TenantID, s.ProjectID, s.EvaluationID)
	if err != nil {
		return graph.Command{}, err
	}
	// A rejected or disqualified bid is not ranked (as on the tender page); its report lists
	// the others.
	var ranking []RankEntry
	if Ranked(outcome) {
		ranking = append(ranking, RankEntry{EvaluationID: s.EvaluationID, Supplier: s.Supplier.Name, TotalScore: total})
	}
	for _, p := range peers {
		ranking = append(ranking, RankEntry{EvaluationID: p.EvaluationID, Supplier: p.Supplier, TotalScore: p.TotalScore})
	}
	sort.SliceStable(ranking, func(i, j int) bool {
		if ranking[i].TotalScore != ranking[j].TotalScore {
			return ranking[i].TotalScore > ranking[j].TotalScore
		}
		return ranking[i].EvaluationID < ranking[j].EvaluationID
	})
	totals := make([]float64, len(ranking))
	for i, e := range ranking {
		totals[i] = e.TotalScore
	}
	for i, rank := range SharedRanks(totals) {
		ranking[i].Rank = rank
		if ranking[i].EvaluationID == s.EvaluationID {
			r.Rank = rank
		}
	}
	chunks := chunkByID(s)
	seen := map[string]bool{}
	var cites []Citation
	for _, c := range scores {
		for _, id := range c.Citations {
			if !seen[id] {
				seen[id] = true
				cites = append(cites, Citation{ChunkID: id, Document: chunks[id].Document, Text: chunks[id].Text})
			}
		}
	}
	for _, rr := range s.RuleResults {
		for _, id := range rr.ChunkIDs {
			if !seen[id] {
				seen[id] = true
				cites = append(cites, Citation{ChunkID: id, Document: chunks[id].Document, Text: chunks[id].Text})
			}
		}
	}
	r.EvaluationID, r.ProjectID, r.Project = s.EvaluationID, s.ProjectID, s.Project.Name
	r.SupplierID, r.Supplier = s.SupplierID, s.Supplier.Name
	// The version is fixed here, in a checkpoint before persist_result, so a replay of
	// persist_result keeps its idempotency key. A run forked from a checkpoint after
	// load_context carries the version its first run already persisted: it gets the next one.
	version := s.ReportVersion
	latest, err := w.d.Data.LatestReportVersion(ctx, s.TenantID, s.EvaluationID)
	if err != nil {
		return graph.Command{}, err
	}
	if latest >= version {
		version = latest + 1
	}
	r.RulePackVersion, r.ReportVersion, r.Outcome = s.RulePackVersion, version, outcome
	r.TotalScore, r.RankOf, r.Ranking = total, len(ranking), nonNil(ranking)
	r.Criteria, r.RuleResults, r.Citations = scores, nonNil(s.RuleResults), cites
	r.Confidence, r.Coverage = conf, cov
	r.ReviewRequired, r.ReviewReasons = s.RequiresHumanReview, nonNil(s.ReviewReasons)
	r.ScoredBy, r.ScoredOffline = s.ScoredBy, s.ScoredOffline
	return graph.Update(keyReportPayload.Set(&r), keyTotalScore.Set(total), keyReportVersion.Set(version)), nil
}

func (w *wf) persistResult(ctx context.Context, s State) (graph.Command, error) {
	if s.ReportPayload == nil {
		return graph.Command{}, fault.New(fault.Permanent, fault.CodeUnknown, "no report to persist")
	}
	if _, err := w.d.Data.PersistResult(ctx, s.TenantID, *s.ReportPayload); err != nil {
		return graph.Command{}, err
	}
	if s.ReportPayload.Outcome == OutcomeDisqualified {
		return graph.Update(keyStatus.Set(StatusDisqualified)), nil
	}
	return graph.Update(keyStatus.Set(StatusCompleted)), nil
}

func (w *wf) classifyError(_ context.Context, s State) (graph.Command, error) {
	if len(s.Errors) == 0 {
		return graph.Command{}, fault.New(fault.Permanent, fault.CodeUnknown, "classify_error reached without an error")
	}
	last := s.Errors[len(s.Errors)-1]
	return graph.Update(keyErrorClass.Set(last.Class), keyRetryable.Set(fault.Class(last.Class).Retryable())), nil
}

func (w *wf) retryOrDLQ(ctx context.Context, s State) (graph.Command, error) {
	last := s.Errors[len(s.Errors)-1]
	status := StatusFailed
	if w.d.RecordFailure != nil {
		decision, err := w.d.RecordFailure(ctx, Failure{Class: fault.Class(last.Class), Code: last.Code, Message: last.Message,
			Node: last.Node, CheckpointID: last.CheckpointID})
		if err != nil {
			return graph.Command{}, err
		}
		if decision == "retry" {
			status = StatusRetryScheduled
		}
	}
	retries := s.RetryCount
	if status == StatusRetryScheduled {
		retries++
	}
	return graph.Update(keyStatus.Set(status), keyRetryCount.Set(retries)), nil
}

func language(s State) string {
	for _, c := range s.RetrievedChunks {
		for _, r := range c.Text {
			if r >= 0x4e00 && r <= 0x9fff {
				return "zh"
			}
		}
	}
	return "en"
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func round(v float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(v*p) / p
}

// SharedRanks ranks totals sorted best first, equal totals sharing a rank (1, 2, 2, 4): the
// one rule of the reports and the tender page.
func SharedRanks(sorted []float64) []int {
	ranks := make([]int, len(sorted))
	for i, t := range sorted {
		ranks[i] = i + 1
		if i > 0 && t == sorted[i-1] {
			ranks[i] = ranks[i-1]
		}
	}
	return ranks
}
