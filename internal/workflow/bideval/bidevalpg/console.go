package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"weft/db"
	"weft/internal/graph"
	"weft/internal/runner"
	"weft/internal/workflow/bideval"
)

// What the console's dashboard and project pages read (internal/server). Every read is scoped
// to a tenant.

// Project is a tender as the console shows it, with its latest rule pack.
type Project struct {
	ID, TenantID, Name, Description, Currency string
	Budget                                    float64
	CreatedAt                                 time.Time
	RulePackVersion                           string // "" when the project has no rule pack
	HardRules, Criteria                       int
	// Evaluations and Completed count the project's evaluations (Projects only); Rejected
	// those completed whose review rejected them, Disqualified those completed that a hard
	// rule disqualified; Failed those of the rest whose run was dead-lettered.
	Evaluations, Completed, Rejected, Failed, Disqualified int
}

// Projects lists a tenant's tenders newest first, with how many of their evaluations
// completed.
func (e *Evaluations) Projects(ctx context.Context, tenantID string) ([]Project, error) {
	var out []Project
	r := e.db.Reads()
	e.QueueProjects(r, tenantID, &out)
	return out, r.Run(ctx)
}

// QueueProjects adds Projects to r (two statements), written to *out.
func (e *Evaluations) QueueProjects(r *Reads, tenantID string, out *[]Project) {
	var rows []db.Project
	r.add(func(ctx context.Context, q *db.Queries) (err error) {
		if rows, err = q.ProjectList(ctx, tenantID); err != nil {
			return fmt.Errorf("list projects: %w", translate(err))
		}
		return nil
	})
	r.add(func(ctx context.Context, q *db.Queries) error {
		sums, err := q.EvaluationSummaryByProject(ctx, tenantID)
		if err != nil {
			return fmt.Errorf("summarise evaluations: %w", translate(err))
		}
		byProject := make(map[string]db.EvaluationSummaryByProjectRow, len(sums))
		for _, s := range sums {
			byProject[s.ProjectID] = s
		}
		projects := make([]Project, len(rows))
		for i, r := range rows {
			s := byProject[r.ID]
			projects[i] = Project{ID: r.ID, TenantID: r.TenantID, Name: r.Name, Description: r.Description, Currency: r.Currency,
				Budget: r.Budget, CreatedAt: r.CreatedAt, Evaluations: int(s.Total), Completed: int(s.Completed),
				Rejected: int(s.Rejected), Failed: int(s.Failed), Disqualified: int(s.Disqualified)}
		}
		*out = projects
		return nil
	})
}

// Project loads one tender of a tenant with its latest rule pack (graph.ErrNotFound for
// another tenant's id).
func (e *Evaluations) Project(ctx context.Context, tenantID, id string) (Project, error) {
	r, err := e.db.q.ProjectGet(ctx, db.ProjectGetParams{TenantID: tenantID, ID: id})
	if err != nil {
		return Project{}, fmt.Errorf("project %s: %w", id, translate(err))
	}
	p := Project{ID: r.ID, TenantID: r.TenantID, Name: r.Name, Description: r.Description, Currency: r.Currency,
		Budget: r.Budget, CreatedAt: r.CreatedAt}
	rp, err := e.db.q.RulePackLatest(ctx, db.RulePackLatestParams{TenantID: tenantID, ProjectID: id})
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
func (e *Evaluations) ProjectEvaluations(ctx context.Context, tenantID, projectID string) ([]Evaluation, error) {
	rows, err := e.db.q.EvaluationListByProject(ctx, db.EvaluationListByProjectParams{TenantID: tenantID, ProjectID: projectID})
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
func (e *Evaluations) ProjectDocuments(ctx context.Context, tenantID, projectID string) ([]Document, error) {
	rows, err := e.db.q.DocumentListByProject(ctx, db.DocumentListByProjectParams{TenantID: tenantID, ProjectID: projectID})
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
func (e *Evaluations) ProjectDocument(ctx context.Context, tenantID, projectID, documentID string) (Document, []DocumentChunk, error) {
	r, err := e.db.q.DocumentInProject(ctx, db.DocumentInProjectParams{TenantID: tenantID, ProjectID: projectID, ID: documentID})
	if err != nil {
		return Document{}, nil, fmt.Errorf("document %s: %w", documentID, translate(err))
	}
	rows, err := e.db.q.ChunkListByDocument(ctx, db.ChunkListByDocumentParams{TenantID: tenantID, DocumentID: documentID})
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

// Audit actions of WithdrawDocument and RestoreDocument.
const (
	ActionDocumentWithdraw = "document.withdraw"
	ActionDocumentRestore  = "document.restore"
)

// ErrWithdrawn is returned by WithdrawDocument for a document withdrawn already.
var ErrWithdrawn = errors.New("the document was withdrawn already")

// ErrNotWithdrawn is returned by RestoreDocument for a document that is not withdrawn.
var ErrNotWithdrawn = errors.New("the document is not withdrawn")

// WithdrawDocument withdraws one of a tender's bid documents: retrieval leaves it out from
// then on, while the evidence that cites it keeps its links. It writes the audit row
// (document.withdraw, on the evaluation of the supplier's bid) in the same transaction.
// A document of another tender or tenant is graph.ErrNotFound; one withdrawn already is
// ErrWithdrawn. actorID is kept as who withdrew it (WithdrawnBy) and named by the audit row.
func (e *Evaluations) WithdrawDocument(ctx context.Context, tenantID, projectID, documentID, actorID string) error {
	return e.changeWithdrawal(ctx, tenantID, projectID, documentID, actorID, ActionDocumentWithdraw,
		func(q *db.Queries, _ db.DocumentInProjectRow) (string, error) {
			evaluationID, err := q.DocumentSetWithdrawn(ctx, db.DocumentSetWithdrawnParams{TenantID: tenantID, ProjectID: projectID, ID: documentID,
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
func (e *Evaluations) RestoreDocument(ctx context.Context, tenantID, projectID, documentID, actorID string) error {
	return e.changeWithdrawal(ctx, tenantID, projectID, documentID, actorID, ActionDocumentRestore,
		func(q *db.Queries, doc db.DocumentInProjectRow) (string, error) {
			if doc.WithdrawnAt == nil {
				return "", ErrNotWithdrawn
			}
			body, err := q.DocumentBody(ctx, db.DocumentBodyParams{TenantID: tenantID, ID: documentID})
			if err != nil {
				return "", translate(err)
			}
			same, err := q.DocumentSameBody(ctx, db.DocumentSameBodyParams{TenantID: tenantID, SupplierID: doc.SupplierID, Body: body})
			switch {
			case err == nil:
				return "", &DuplicateDocument{Title: same.Title, Added: same.CreatedAt}
			case !errors.Is(err, pgx.ErrNoRows):
				return "", translate(err)
			}
			evaluationID, err := q.DocumentSetWithdrawn(ctx, db.DocumentSetWithdrawnParams{TenantID: tenantID, ProjectID: projectID, ID: documentID})
			if errors.Is(err, pgx.ErrNoRows) {
				return "", ErrNotWithdrawn
			}
			return evaluationID, translate(err)
		})
}

// changeWithdrawal runs a withdrawal or a restore (change) of one of a tender's bid documents
// under its supplier's lock (which uploads take too), and audits it as action on the
// evaluation of the supplier's bid, in one transaction.
func (e *Evaluations) changeWithdrawal(ctx context.Context, tenantID, projectID, documentID, actorID, action string,
	change func(*db.Queries, db.DocumentInProjectRow) (evaluationID string, err error)) error {
	err := e.db.inTx(ctx, func(q *db.Queries) error {
		doc, err := q.DocumentInProject(ctx, db.DocumentInProjectParams{TenantID: tenantID, ProjectID: projectID, ID: documentID})
		if err != nil {
			return translate(err)
		}
		if err := q.SupplierLock(ctx, db.SupplierLockParams{TenantID: tenantID, ID: doc.SupplierID}); err != nil {
			return translate(err)
		}
		evaluationID, err := change(q, doc)
		if err != nil {
			return err
		}
		payload, _ := json.Marshal(map[string]string{"document_id": documentID, "title": doc.Title, "supplier": doc.SupplierName})
		subject := cmp.Or(evaluationID, documentID)
		_, err = appendEntry(ctx, q, Entry{TenantID: tenantID, Actor: actorID, Action: action, Subject: subject,
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
func (e *Evaluations) WithdrawnChunks(ctx context.Context, tenantID string, ids []string) (map[string]Document, error) {
	out := map[string]Document{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := e.db.q.ChunksWithdrawn(ctx, db.ChunksWithdrawnParams{TenantID: tenantID, Ids: ids})
	if err != nil {
		return nil, fmt.Errorf("withdrawn chunks: %w", translate(err))
	}
	for _, r := range rows {
		at := r.WithdrawnAt
		out[r.ID] = Document{WithdrawnAt: &at, WithdrawnBy: r.WithdrawnBy}
	}
	return out, nil
}
