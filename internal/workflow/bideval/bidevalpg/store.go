// Package bidevalpg is bid evaluation's store adapter: tenders (projects), suppliers, their
// bid documents split into chunks, rule packs, evaluations and their reports, in PostgreSQL
// through the workflow's own sqlc package (db/bideval, from queries/bideval). It implements
// bideval.Data (what the nodes read, and persist_result) and bideval.Store (the start form's
// and the views' reads), and what the tender pages (bidevalhttp) read and change. It imports
// internal/postgres for the pool, its transactions, the audit log and side effects; only the
// wiring (internal/app/workflows.go) and bid evaluation's own packages import it.
package bidevalpg

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"
	"weft/internal/runner"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	bdb "weft/db/bideval"
	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/workflow/bideval"
)

// Store is bid evaluation's data on a database.
type Store struct {
	db      *postgres.DB
	audit   *postgres.Audit
	tenants *postgres.Tenants
}

// New returns the store on d.
func New(d *postgres.DB) *Store {
	return &Store{db: d, audit: postgres.NewAudit(d), tenants: postgres.NewTenants(d)}
}

var (
	_ bideval.Data  = (*Store)(nil)
	_ bideval.Store = (*Store)(nil)
)

// q is the queries on what ctx's statements run on: the transaction it carries (inTx,
// postgres.Effects.Once), else the pool.
func (e *Store) q(ctx context.Context) *bdb.Queries { return bdb.New(e.db.Conn(ctx)) }

// inTx runs fn in one transaction (a savepoint inside another); the audit rows it appends
// through ctx join it.
func (e *Store) inTx(ctx context.Context, fn func(ctx context.Context, q *bdb.Queries) error) error {
	return e.db.InTx(ctx, func(ctx context.Context) error { return fn(ctx, e.q(ctx)) })
}

func translate(err error) error { return postgres.Translate(err) }

// PersistResultKey is persist_result's idempotency key: evaluation_id + report_version.
func PersistResultKey(evaluationID, reportVersion string) string {
	return "persist_result:" + url.QueryEscape(evaluationID) + ":" + url.QueryEscape(reportVersion)
}

// LoadContext implements bideval.Data.
func (e *Store) LoadContext(ctx context.Context, tenantID, evaluationID string) (bideval.EvalContext, error) {
	q := e.q(ctx)
	ev, err := q.EvaluationGet(ctx, bdb.EvaluationGetParams{TenantID: tenantID, ID: evaluationID})
	if err != nil {
		return bideval.EvalContext{}, fmt.Errorf("load evaluation %s: %w", evaluationID, notFoundAsValidation(translate(err), "evaluation "+evaluationID))
	}
	p, err := q.ProjectGet(ctx, bdb.ProjectGetParams{TenantID: tenantID, ID: ev.ProjectID})
	if err != nil {
		return bideval.EvalContext{}, fmt.Errorf("load project %s: %w", ev.ProjectID, translate(err))
	}
	s, err := q.SupplierGet(ctx, bdb.SupplierGetParams{TenantID: tenantID, ID: ev.SupplierID})
	if err != nil {
		return bideval.EvalContext{}, fmt.Errorf("load supplier %s: %w", ev.SupplierID, translate(err))
	}
	rp, err := packRow(ctx, q, p) // the version the tender pins, else its newest
	if err != nil {
		return bideval.EvalContext{}, fmt.Errorf("load rule pack of %s: %w", ev.ProjectID, notFoundAsValidation(translate(err), "a rule pack for project "+ev.ProjectID))
	}
	var pack bideval.RulePack
	if err := json.Unmarshal(rp.Body, &pack); err != nil {
		return bideval.EvalContext{}, fault.Wrap(fault.Validation, bideval.CodeRulePackInvalid, fmt.Errorf("rule pack %s: %w", rp.Version, err))
	}
	pack.Version = rp.Version
	return bideval.EvalContext{
		ProjectID: p.ID, Project: bideval.Project{ID: p.ID, Name: p.Name, Budget: p.Budget, Currency: p.Currency},
		SupplierID: s.ID, Supplier: bideval.Supplier{ID: s.ID, Name: s.Name},
		RulePack: pack, ReportVersion: int(ev.ReportVersion),
	}, nil
}

// notFoundAsValidation: inside a run, missing data is bad input, not a
// transient fault worth retrying.
func notFoundAsValidation(err error, what string) error {
	if errors.Is(err, graph.ErrNotFound) {
		return fault.Wrap(fault.Validation, fault.CodeNotFound, fmt.Errorf("%s does not exist: %w", what, err))
	}
	return err
}

// Documents implements bideval.Data.
func (e *Store) Documents(ctx context.Context, tenantID, supplierID string) (int, error) {
	n, err := e.q(ctx).DocumentCountActive(ctx, bdb.DocumentCountActiveParams{TenantID: tenantID, SupplierID: supplierID})
	if err != nil {
		return 0, fmt.Errorf("count documents of %s: %w", supplierID, translate(err))
	}
	return int(n), nil
}

// Retrieve implements bideval.Data: full-text search over the supplier's
// chunks with search tokens (words and CJK bigrams), best first.
func (e *Store) Retrieve(ctx context.Context, tenantID, supplierID, query string, k int) ([]bideval.RetrievedChunk, error) {
	tsq := searchQuery(query)
	if tsq == "" {
		return nil, nil
	}
	rows, err := e.q(ctx).ChunkSearch(ctx, bdb.ChunkSearchParams{Query: tsq, TenantID: tenantID, SupplierID: supplierID, K: int32(k)})
	if err != nil {
		return nil, fmt.Errorf("search chunks: %w", translate(err))
	}
	out := make([]bideval.RetrievedChunk, len(rows))
	for i, r := range rows {
		out[i] = bideval.RetrievedChunk{ChunkID: r.ID, DocumentID: r.DocumentID, Document: r.Document, Text: r.Text, Score: round4(r.Score)}
	}
	return out, nil
}

func round4(v float64) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', 4, 64), 64)
	return f
}

// PeerTotals implements bideval.Data.
func (e *Store) PeerTotals(ctx context.Context, tenantID, projectID, evaluationID string) ([]bideval.PeerTotal, error) {
	rows, err := e.q(ctx).EvaluationPeerTotals(ctx, bdb.EvaluationPeerTotalsParams{TenantID: tenantID, ProjectID: projectID, ID: evaluationID})
	if err != nil {
		return nil, fmt.Errorf("peer totals: %w", translate(err))
	}
	out := make([]bideval.PeerTotal, len(rows))
	for i, r := range rows {
		out[i] = bideval.PeerTotal{EvaluationID: r.ID, Supplier: r.SupplierName, TotalScore: r.TotalScore}
	}
	return out, nil
}

// LatestReportVersion implements bideval.Data.
func (e *Store) LatestReportVersion(ctx context.Context, tenantID, evaluationID string) (int, error) {
	ev, err := e.Evaluation(ctx, tenantID, evaluationID)
	if err != nil {
		return 0, err
	}
	return ev.ReportVersion, nil
}

// LatestReport returns the evaluation's newest persisted report (ok false when it has none):
// what a thread whose checkpoints were pruned still has to show.
func (e *Store) LatestReport(ctx context.Context, tenantID, evaluationID string) (r bideval.Report, ok bool, err error) {
	row, err := e.q(ctx).EvaluationReportLatest(ctx, bdb.EvaluationReportLatestParams{TenantID: tenantID, EvaluationID: evaluationID})
	if errors.Is(err, pgx.ErrNoRows) {
		return bideval.Report{}, false, nil
	}
	if err != nil {
		return bideval.Report{}, false, fmt.Errorf("load the report of evaluation %s: %w", evaluationID, translate(err))
	}
	if err := json.Unmarshal(row.Payload, &r); err != nil {
		return bideval.Report{}, false, fmt.Errorf("decode the report of evaluation %s: %w", evaluationID, err)
	}
	return r, true, nil
}

// PersistResult implements bideval.Data: the report row, the evaluation's
// result and an audit row, once per evaluation id + report version.
func (e *Store) PersistResult(ctx context.Context, tenantID string, r bideval.Report) (bideval.Persisted, error) {
	key := PersistResultKey(r.EvaluationID, strconv.Itoa(r.ReportVersion))
	payload, err := json.Marshal(r)
	if err != nil {
		return bideval.Persisted{}, fmt.Errorf("encode report: %w", err)
	}
	_, replayed, err := postgres.NewEffects(e.db, tenantID).Once(ctx, key, func(ctx context.Context) (json.RawMessage, error) {
		q := e.q(ctx)
		if _, err := q.EvaluationReportInsert(ctx, bdb.EvaluationReportInsertParams{EvaluationID: r.EvaluationID,
			ReportVersion: int32(r.ReportVersion), TenantID: tenantID, Payload: payload}); err != nil {
			return nil, fmt.Errorf("insert report: %w", translate(err))
		}
		if err := q.EvaluationSetResult(ctx, bdb.EvaluationSetResultParams{TenantID: tenantID, ID: r.EvaluationID, Outcome: r.Outcome,
			TotalScore: &r.TotalScore, ReportVersion: int32(r.ReportVersion)}); err != nil {
			return nil, fmt.Errorf("update evaluation: %w", translate(err))
		}
		audit, _ := json.Marshal(map[string]any{"report_version": r.ReportVersion, "outcome": r.Outcome, "total_score": r.TotalScore,
			"rank": r.Rank, "rule_pack_version": r.RulePackVersion, "decision": r.Decision, "reviewer_id": r.ReviewerID})
		if _, err := e.audit.Append(ctx, postgres.Entry{TenantID: tenantID, Actor: "system:persist_result", Action: bideval.ActionEvaluationReport,
			Subject: r.EvaluationID, Workflow: bideval.Name, Payload: audit}); err != nil {
			return nil, err
		}
		return json.Marshal(bideval.Persisted{ReportVersion: r.ReportVersion})
	})
	if err != nil {
		return bideval.Persisted{}, err
	}
	if replayed {
		// This run wrote nothing new (a crash replay, or a fork from a checkpoint that had
		// the report already): the evaluation's result is still the latest persisted one,
		// so a status a new job set (queued) goes back to completed.
		if err := e.q(ctx).EvaluationRestoreCompleted(ctx, bdb.EvaluationRestoreCompletedParams{TenantID: tenantID, ID: r.EvaluationID}); err != nil {
			return bideval.Persisted{}, fmt.Errorf("update evaluation: %w", translate(err))
		}
	}
	return bideval.Persisted{ReportVersion: r.ReportVersion, Replayed: replayed}, nil
}

// NewProject is a tender with its first rule pack.
type NewProject struct {
	ID, Name, Description, Currency string
	Budget                          float64
	RulePack                        bideval.RulePack
}

// CreateProject creates a tender and its rule pack.
func (e *Store) CreateProject(ctx context.Context, tenantID string, p NewProject) error {
	body, err := json.Marshal(p.RulePack)
	if err != nil {
		return err
	}
	return e.inTx(ctx, func(ctx context.Context, q *bdb.Queries) error {
		if err := q.ProjectInsert(ctx, bdb.ProjectInsertParams{ID: p.ID, TenantID: tenantID, Name: p.Name, Description: p.Description,
			Budget: p.Budget, Currency: p.Currency}); err != nil {
			return fmt.Errorf("create project: %w", translate(err))
		}
		if err := q.RulePackInsert(ctx, bdb.RulePackInsertParams{ID: p.ID + "@" + p.RulePack.Version, TenantID: tenantID,
			ProjectID: p.ID, Version: p.RulePack.Version, Body: body}); err != nil {
			return fmt.Errorf("create rule pack: %w", translate(err))
		}
		return nil
	})
}

// AddSupplier adds a supplier to a project and creates its evaluation
// (bound to a thread of the same id).
func (e *Store) AddSupplier(ctx context.Context, tenantID, projectID, supplierID, name string) (evaluationID string, err error) {
	evaluationID = "ev_" + supplierID
	err = e.inTx(ctx, func(ctx context.Context, q *bdb.Queries) error {
		if err := q.SupplierInsert(ctx, bdb.SupplierInsertParams{ID: supplierID, TenantID: tenantID, ProjectID: projectID, Name: name}); err != nil {
			return fmt.Errorf("add supplier: %w", translate(err))
		}
		if err := q.EvaluationInsert(ctx, bdb.EvaluationInsertParams{ID: evaluationID, TenantID: tenantID, ProjectID: projectID,
			SupplierID: supplierID, ThreadID: evaluationID}); err != nil {
			return fmt.Errorf("create evaluation: %w", translate(err))
		}
		return nil
	})
	return evaluationID, err
}

// DuplicateDocument is AddDocument's error for a text the supplier's bid has already, as the
// document Title added at Added: its chunks would only take evidence slots twice.
type DuplicateDocument struct {
	Title string
	Added time.Time
}

func (d *DuplicateDocument) Error() string {
	return fmt.Sprintf("This bid already has this document, as “%s” (added %s); nothing was added", d.Title,
		d.Added.UTC().Format("2006-01-02 15:04 UTC"))
}

// AddDocument stores a bid document and its chunks (ids "<document>#<n>"); a text the
// supplier's bid has already is refused (*DuplicateDocument).
func (e *Store) AddDocument(ctx context.Context, tenantID, supplierID, documentID, title, mediaType, body string) (int, error) {
	chunks := bideval.SplitChunks(body)
	if len(chunks) == 0 {
		return 0, fault.New(fault.Validation, fault.CodeValidation, "the document has no text")
	}
	err := e.inTx(ctx, func(ctx context.Context, q *bdb.Queries) error {
		if err := q.SupplierLock(ctx, bdb.SupplierLockParams{TenantID: tenantID, ID: supplierID}); err != nil {
			return fmt.Errorf("add document: %w", translate(err))
		}
		same, err := q.DocumentSameBody(ctx, bdb.DocumentSameBodyParams{TenantID: tenantID, SupplierID: supplierID, Body: body})
		switch {
		case err == nil:
			return &DuplicateDocument{Title: same.Title, Added: same.CreatedAt}
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("add document: %w", translate(err))
		}
		if err := q.DocumentInsert(ctx, bdb.DocumentInsertParams{ID: documentID, TenantID: tenantID, SupplierID: supplierID,
			Title: title, MediaType: mediaType, Body: body}); err != nil {
			return fmt.Errorf("add document: %w", translate(err))
		}
		for i, c := range chunks {
			if err := q.ChunkInsert(ctx, bdb.ChunkInsertParams{ID: fmt.Sprintf("%s#%d", documentID, i+1), TenantID: tenantID,
				SupplierID: supplierID, DocumentID: documentID, Seq: int32(i + 1), Text: c, Search: searchDocument(c)}); err != nil {
				return fmt.Errorf("add chunk: %w", translate(err))
			}
		}
		return nil
	})
	return len(chunks), err
}

// Evaluation is an evaluation row as the console shows it.
type Evaluation struct {
	ID, TenantID, ProjectID, SupplierID, Supplier, ThreadID, JobID, Status, Outcome string
	TotalScore                                                                      *float64
	ReportVersion                                                                   int
}

// Evaluation loads one evaluation of a tenant (graph.ErrNotFound otherwise).
func (e *Store) Evaluation(ctx context.Context, tenantID, id string) (Evaluation, error) {
	r, err := e.q(ctx).EvaluationGet(ctx, bdb.EvaluationGetParams{TenantID: tenantID, ID: id})
	if err != nil {
		return Evaluation{}, fmt.Errorf("evaluation %s: %w", id, translate(err))
	}
	ev := Evaluation{ID: r.ID, TenantID: r.TenantID, ProjectID: r.ProjectID, SupplierID: r.SupplierID, ThreadID: r.ThreadID,
		Status: r.Status, Outcome: r.Outcome, TotalScore: r.TotalScore, ReportVersion: int(r.ReportVersion)}
	if r.JobID != nil {
		ev.JobID = r.JobID.String()
	}
	return ev, nil
}

// SetJob records the job that runs an evaluation.
func (e *Store) SetJob(ctx context.Context, tenantID, evaluationID, jobID string) error {
	id, err := uuid.Parse(jobID)
	if err != nil {
		return fault.Wrap(fault.Validation, fault.CodeValidation, fmt.Errorf("job id %q: %w", jobID, err))
	}
	if err := e.q(ctx).EvaluationSetJob(ctx, bdb.EvaluationSetJobParams{TenantID: tenantID, ID: evaluationID, JobID: &id}); err != nil {
		return fmt.Errorf("set evaluation job: %w", translate(err))
	}
	return nil
}

// SeedDemo loads a demo tenant's tender, its suppliers and their bids, unless the tenant has
// that tender already; the tenant is created when it does not exist. It reports whether it
// loaded anything.
func (e *Store) SeedDemo(ctx context.Context, d bideval.DemoTenant) (bool, error) {
	if exists, err := e.tenants.Exists(ctx, d.TenantID); err != nil {
		return false, err
	} else if !exists {
		if err := e.tenants.Create(ctx, d.TenantID, d.TenantName); err != nil {
			return false, err
		}
	} else if _, err := e.Project(ctx, d.TenantID, d.Project.ID); !errors.Is(err, graph.ErrNotFound) {
		return false, err // loaded already (nil), or it cannot be told
	}
	if err := e.CreateProject(ctx, d.TenantID, NewProject{ID: d.Project.ID, Name: d.Project.Name, Description: d.Desc,
		Currency: d.Project.Currency, Budget: d.Project.Budget, RulePack: d.RulePack}); err != nil {
		return false, err
	}
	for _, s := range d.Suppliers {
		if _, err := e.AddSupplier(ctx, d.TenantID, d.Project.ID, s.ID, s.Name); err != nil {
			return false, err
		}
		for _, doc := range s.Documents {
			if _, err := e.AddDocument(ctx, d.TenantID, s.ID, doc.ID, doc.Title, "text/markdown", doc.Body); err != nil {
				return false, err
			}
		}
	}
	return true, nil
}

// RunInProgress implements bideval.Store: where the evaluation's last run is, in words,
// while it has not finished ("" otherwise).
func (e *Store) RunInProgress(ctx context.Context, tenantID, evaluationID string) (string, error) {
	st, err := e.q(ctx).EvaluationRunStatus(ctx, bdb.EvaluationRunStatusParams{TenantID: tenantID, ID: evaluationID})
	if err != nil {
		return "", fmt.Errorf("evaluation %s: %w", evaluationID, translate(err))
	}
	if st == "" || runner.Status(st).Terminal() {
		return "", nil
	}
	return runner.Status(st).Words(), nil
}

// EvaluationThread implements bideval.Store.
func (e *Store) EvaluationThread(ctx context.Context, tenantID, evaluationID string) (string, error) {
	ev, err := e.Evaluation(ctx, tenantID, evaluationID)
	return ev.ThreadID, err
}

// ChunkWithdrawals implements bideval.Chunks.
func (e *Store) ChunkWithdrawals(ctx context.Context, tenantID string, ids []string) (map[string]bideval.Withdrawal, error) {
	found, err := e.WithdrawnChunks(ctx, tenantID, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bideval.Withdrawal, len(found))
	for id, d := range found {
		if d.WithdrawnAt != nil {
			out[id] = bideval.Withdrawal{At: *d.WithdrawnAt, By: d.WithdrawnBy}
		}
	}
	return out, nil
}

// ReportByThread implements bideval.Reports: the newest persisted report of the evaluation
// whose thread this is.
func (e *Store) ReportByThread(ctx context.Context, tenantID, threadID string) (bideval.Report, bool, error) {
	ev, err := e.EvaluationOfThread(ctx, tenantID, threadID)
	if errors.Is(err, graph.ErrNotFound) {
		return bideval.Report{}, false, nil
	}
	if err != nil {
		return bideval.Report{}, false, err
	}
	return e.LatestReport(ctx, tenantID, ev.ID)
}
