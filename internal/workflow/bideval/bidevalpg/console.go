package bidevalpg

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	bdb "weft/db/bideval"
	"weft/internal/graph"
	"weft/internal/postgres"
	"weft/internal/workflow"
	"weft/internal/workflow/bideval"
)

// What the tender pages (bidevalhttp), the dashboard's tenders and the console's lists read.
// Every read is scoped to a tenant.

// Project is a tender as its page shows it, with its latest rule pack (its evaluations'
// counts are Tenders' only).
type Project struct {
	bideval.Tender
	TenantID            string
	RulePackVersion     string // "" when the project has no rule pack
	HardRules, Criteria int
}

// Tenders lists a tenant's tenders newest first, with how their evaluations stand
// (bideval.Store).
func (e *Store) Tenders(ctx context.Context, tenantID string) ([]bideval.Tender, error) {
	q := e.q(ctx)
	rows, err := q.ProjectList(ctx, tenantID)
	if err != nil {
		return nil, fmt.Errorf("list projects: %w", translate(err))
	}
	sums, err := q.EvaluationSummaryByProject(ctx, tenantID)
	if err != nil {
		return nil, fmt.Errorf("summarise evaluations: %w", translate(err))
	}
	byProject := make(map[string]bdb.EvaluationSummaryByProjectRow, len(sums))
	for _, s := range sums {
		byProject[s.ProjectID] = s
	}
	tenders := make([]bideval.Tender, len(rows))
	for i, r := range rows {
		s := byProject[r.ID]
		tenders[i] = bideval.Tender{ID: r.ID, Name: r.Name, Description: r.Description, Currency: r.Currency,
			Budget: r.Budget, CreatedAt: r.CreatedAt, Reference: r.Reference, Deadline: r.Deadline, Evaluations: int(s.Total), Completed: int(s.Completed),
			Rejected: int(s.Rejected), Failed: int(s.Failed), Disqualified: int(s.Disqualified)}
	}
	return tenders, nil
}

// Project loads one tender of a tenant with the rule pack it uses (the version it pins, else its newest) (graph.ErrNotFound for
// another tenant's id).
func (e *Store) Project(ctx context.Context, tenantID, id string) (Project, error) {
	r, err := e.q(ctx).ProjectGet(ctx, bdb.ProjectGetParams{TenantID: tenantID, ID: id})
	if err != nil {
		return Project{}, fmt.Errorf("project %s: %w", id, translate(err))
	}
	p := Project{TenantID: r.TenantID, Tender: bideval.Tender{ID: r.ID, Name: r.Name, Description: r.Description,
		Currency: r.Currency, Budget: r.Budget, CreatedAt: r.CreatedAt, Reference: r.Reference, Deadline: r.Deadline}}
	rp, err := packRow(ctx, e.q(ctx), r)
	switch err := translate(err); {
	case err == nil:
		var body struct {
			HardRules []json.RawMessage `json:"hard_rules"`
			Criteria  []json.RawMessage `json:"criteria"`
		}
		_ = json.Unmarshal(rp.Body, &body) // counts are informative; the workflow validates the pack
		p.RulePackVersion, p.HardRules, p.Criteria = rp.Version, len(body.HardRules), len(body.Criteria)
	case !errors.Is(err, graph.ErrNotFound):
		return Project{}, fmt.Errorf("rule pack of project %s: %w", id, err)
	}
	return p, nil
}

// ProjectEvaluations lists a tender's evaluations (one per supplier), best total first.
func (e *Store) ProjectEvaluations(ctx context.Context, tenantID, projectID string) ([]Evaluation, error) {
	rows, err := e.q(ctx).EvaluationListByProject(ctx, bdb.EvaluationListByProjectParams{TenantID: tenantID, ProjectID: projectID})
	if err != nil {
		return nil, fmt.Errorf("list evaluations of %s: %w", projectID, translate(err))
	}
	out := make([]Evaluation, len(rows))
	for i, r := range rows {
		out[i] = Evaluation{ID: r.ID, TenantID: r.TenantID, ProjectID: r.ProjectID, SupplierID: r.SupplierID, Supplier: r.SupplierName,
			ThreadID: r.ThreadID, Status: r.Status, Outcome: r.Outcome, TotalScore: r.TotalScore, ReportVersion: int(r.ReportVersion)}
		if r.JobID != nil {
			out[i].JobID = r.JobID.String()
		}
	}
	return out, nil
}

// Document is a bid document as a tender's page lists it (without its text).
type Document struct {
	ID, SupplierID, Supplier, Title string
	Size, Chunks                    int // bytes of text; chunks it was split into
	CreatedAt                       time.Time
	// WithdrawnAt is set once the document was withdrawn (by WithdrawnBy, the actor: a user's
	// id, or the user's email for withdrawals recorded before ids were kept): retrieval no longer
	// searches it.
	WithdrawnAt *time.Time
	WithdrawnBy string
}

// ProjectDocuments lists a tender's bid documents by supplier, then upload time. Another
// tenant's tender has none.
func (e *Store) ProjectDocuments(ctx context.Context, tenantID, projectID string) ([]Document, error) {
	rows, err := e.q(ctx).DocumentListByProject(ctx, bdb.DocumentListByProjectParams{TenantID: tenantID, ProjectID: projectID})
	if err != nil {
		return nil, fmt.Errorf("documents of project %s: %w", projectID, translate(err))
	}
	out := make([]Document, len(rows))
	for i, r := range rows {
		out[i] = Document{ID: r.ID, SupplierID: r.SupplierID, Supplier: r.SupplierName, Title: r.Title,
			Size: int(r.Size), Chunks: int(r.Chunks), CreatedAt: r.CreatedAt, WithdrawnAt: r.WithdrawnAt, WithdrawnBy: r.WithdrawnBy}
	}
	return out, nil
}

// DocumentChunk is one chunk of a bid document: what retrieval searches and evidence cites.
type DocumentChunk struct {
	ID   string
	Seq  int
	Text string
}

// ProjectDocument is one of a tender's bid documents with its chunks in order. A document of
// another tender, or another tenant's, is ErrNotFound.
func (e *Store) ProjectDocument(ctx context.Context, tenantID, projectID, documentID string) (Document, []DocumentChunk, error) {
	r, err := e.q(ctx).DocumentInProject(ctx, bdb.DocumentInProjectParams{TenantID: tenantID, ProjectID: projectID, ID: documentID})
	if err != nil {
		return Document{}, nil, fmt.Errorf("document %s: %w", documentID, translate(err))
	}
	rows, err := e.q(ctx).ChunkListByDocument(ctx, bdb.ChunkListByDocumentParams{TenantID: tenantID, DocumentID: documentID})
	if err != nil {
		return Document{}, nil, fmt.Errorf("chunks of document %s: %w", documentID, translate(err))
	}
	chunks := make([]DocumentChunk, len(rows))
	for i, c := range rows {
		chunks[i] = DocumentChunk{ID: c.ID, Seq: int(c.Seq), Text: c.Text}
	}
	d := Document{ID: r.ID, SupplierID: r.SupplierID, Supplier: r.SupplierName, Title: r.Title, Size: int(r.Size),
		Chunks: len(chunks), CreatedAt: r.CreatedAt, WithdrawnAt: r.WithdrawnAt, WithdrawnBy: r.WithdrawnBy}
	return d, chunks, nil
}

// ErrWithdrawn is returned by WithdrawDocument for a document withdrawn already.
var ErrWithdrawn = errors.New("the document was withdrawn already")

// ErrNotWithdrawn is returned by RestoreDocument for a document that is not withdrawn.
var ErrNotWithdrawn = errors.New("the document is not withdrawn")

// WithdrawDocument withdraws one of a tender's bid documents: retrieval leaves it out from
// then on, while the evidence that cites it keeps its links. It writes the audit row
// (document.withdraw, on the evaluation of the supplier's bid) in the same transaction.
// A document of another tender or tenant is graph.ErrNotFound; one withdrawn already is
// ErrWithdrawn. actorID is kept as who withdrew it (WithdrawnBy) and named by the audit row.
func (e *Store) WithdrawDocument(ctx context.Context, tenantID, projectID, documentID, actorID string) error {
	return e.changeWithdrawal(ctx, tenantID, projectID, documentID, actorID, bideval.ActionDocumentWithdraw,
		func(q *bdb.Queries, _ bdb.DocumentInProjectRow) (string, error) {
			evaluationID, err := q.DocumentSetWithdrawn(ctx, bdb.DocumentSetWithdrawnParams{TenantID: tenantID, ProjectID: projectID, ID: documentID,
				Withdraw: true, Actor: actorID})
			if errors.Is(err, pgx.ErrNoRows) {
				return "", ErrWithdrawn
			}
			return evaluationID, translate(err)
		})
}

// RestoreDocument undoes WithdrawDocument: retrieval searches the document again. It is
// audited (document.restore) in the same transaction. A document of another tender or tenant
// is graph.ErrNotFound; one that is not withdrawn is ErrNotWithdrawn; one whose text the bid
// has again (added after the withdrawal) is *DuplicateDocument, naming that one.
func (e *Store) RestoreDocument(ctx context.Context, tenantID, projectID, documentID, actorID string) error {
	return e.changeWithdrawal(ctx, tenantID, projectID, documentID, actorID, bideval.ActionDocumentRestore,
		func(q *bdb.Queries, doc bdb.DocumentInProjectRow) (string, error) {
			if doc.WithdrawnAt == nil {
				return "", ErrNotWithdrawn
			}
			body, err := q.DocumentBody(ctx, bdb.DocumentBodyParams{TenantID: tenantID, ID: documentID})
			if err != nil {
				return "", translate(err)
			}
			same, err := q.DocumentSameBody(ctx, bdb.DocumentSameBodyParams{TenantID: tenantID, SupplierID: doc.SupplierID, Body: body})
			switch {
			case err == nil:
				return "", &DuplicateDocument{Title: same.Title, Added: same.CreatedAt}
			case !errors.Is(err, pgx.ErrNoRows):
				return "", translate(err)
			}
			evaluationID, err := q.DocumentSetWithdrawn(ctx, bdb.DocumentSetWithdrawnParams{TenantID: tenantID, ProjectID: projectID, ID: documentID})
			if errors.Is(err, pgx.ErrNoRows) {
				return "", ErrNotWithdrawn
			}
			return evaluationID, translate(err)
		})
}

// changeWithdrawal runs a withdrawal or a restore (change) of one of a tender's bid documents
// under its supplier's lock (which uploads take too), and audits it as action on the
// evaluation of the supplier's bid, in one transaction.
func (e *Store) changeWithdrawal(ctx context.Context, tenantID, projectID, documentID, actorID, action string,
	change func(*bdb.Queries, bdb.DocumentInProjectRow) (evaluationID string, err error)) error {
	err := e.inTx(ctx, func(ctx context.Context, q *bdb.Queries) error {
		doc, err := q.DocumentInProject(ctx, bdb.DocumentInProjectParams{TenantID: tenantID, ProjectID: projectID, ID: documentID})
		if err != nil {
			return translate(err)
		}
		if err := q.SupplierLock(ctx, bdb.SupplierLockParams{TenantID: tenantID, ID: doc.SupplierID}); err != nil {
			return translate(err)
		}
		evaluationID, err := change(q, doc)
		if err != nil {
			return err
		}
		payload, _ := json.Marshal(map[string]string{"document_id": documentID, "title": doc.Title, "supplier": doc.SupplierName})
		subject := cmp.Or(evaluationID, documentID)
		_, err = e.audit.Append(ctx, postgres.Entry{TenantID: tenantID, Actor: actorID, Action: action, Subject: subject,
			Workflow: bideval.Name, Payload: payload})
		return err
	})
	if err != nil {
		return fmt.Errorf("%s %s: %w", action, documentID, err)
	}
	return nil
}

// WithdrawnChunks says which of the tenant's chunks ids names belong to a withdrawn bid
// document, by chunk id, with the document's withdrawal (WithdrawnAt, WithdrawnBy): the review
// form and the report mark the evidence they cite.
func (e *Store) WithdrawnChunks(ctx context.Context, tenantID string, ids []string) (map[string]Document, error) {
	out := map[string]Document{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := e.q(ctx).ChunksWithdrawn(ctx, bdb.ChunksWithdrawnParams{TenantID: tenantID, Ids: ids})
	if err != nil {
		return nil, fmt.Errorf("withdrawn chunks: %w", translate(err))
	}
	for _, r := range rows {
		at := r.WithdrawnAt
		out[r.ID] = Document{WithdrawnAt: &at, WithdrawnBy: r.WithdrawnBy}
	}
	return out, nil
}

// EvaluationOfThread loads the evaluation a tenant's thread runs (graph.ErrNotFound when
// none does).
func (e *Store) EvaluationOfThread(ctx context.Context, tenantID, threadID string) (Evaluation, error) {
	r, err := e.q(ctx).EvaluationByThread(ctx, bdb.EvaluationByThreadParams{TenantID: tenantID, ThreadID: threadID})
	if err != nil {
		return Evaluation{}, fmt.Errorf("evaluation of thread %s: %w", threadID, translate(err))
	}
	return e.Evaluation(ctx, tenantID, r.ID)
}

// Describe names runs of bid evaluation by their subjects (workflow.Definition.Describe): an
// evaluation's supplier (Title) and tender (Detail), linked to the tender's page. Subjects
// that are no evaluation of the tenant are left out.
func (e *Store) Describe(ctx context.Context, tenantID string, subjects []string) (map[string]workflow.Subject, error) {
	out := map[string]workflow.Subject{}
	if len(subjects) == 0 {
		return out, nil
	}
	rows, err := e.q(ctx).EvaluationDescribe(ctx, bdb.EvaluationDescribeParams{TenantID: tenantID, Ids: subjects})
	if err != nil {
		return nil, fmt.Errorf("name evaluations: %w", translate(err))
	}
	for _, r := range rows {
		out[r.ID] = workflow.Subject{Title: r.SupplierName, Detail: r.ProjectName, Href: bideval.ProjectPath(r.ProjectID)}
	}
	return out, nil
}
