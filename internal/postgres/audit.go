package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"weft/db"
	"weft/internal/fault"
)

// Audit is the append-only audit log (migrations/00004_audit.sql): who did what to which
// subject of which tenant, and when. Rows are never changed: a trigger refuses UPDATE,
// DELETE and TRUNCATE for everyone, and the application role weft_app has no such
// privilege on the table.
type Audit struct {
	db *DB
}

// NewAudit returns the audit log on d.
func NewAudit(d *DB) *Audit { return &Audit{db: d} }

// Entry is one audit row.
type Entry struct {
	ID       int64 // set by Append
	TenantID string
	Actor    string // who: a user id, or "system:<worker>"
	Action   string // what, e.g. "thread.resume", "job.retry", "dlq.discard"
	Subject  string // what it was done to, e.g. a job id
	Workflow string
	Payload  json.RawMessage // details; empty is {}
	At       time.Time       // zero: the transaction's time
}

// Append writes e and returns it with its id and time. Inside Effects.Once it joins the
// effect's transaction.
func (a *Audit) Append(ctx context.Context, e Entry) (Entry, error) {
	return appendEntry(ctx, a.db.querier(ctx), e)
}

// appendEntry writes e with q (so callers in a transaction audit in it).
func appendEntry(ctx context.Context, q *db.Queries, e Entry) (Entry, error) {
	if e.TenantID == "" || e.Actor == "" || e.Action == "" {
		return Entry{}, fault.New(fault.Validation, fault.CodeValidation, "an audit entry needs a tenant, an actor and an action")
	}
	if len(e.Payload) == 0 {
		e.Payload = json.RawMessage(`{}`)
	} else if !json.Valid(e.Payload) {
		return Entry{}, fault.New(fault.Validation, fault.CodeValidation, "an audit entry's payload must be JSON")
	}
	var at *time.Time
	if !e.At.IsZero() {
		at = &e.At
	}
	row, err := q.AuditLogInsert(ctx, db.AuditLogInsertParams{TenantID: e.TenantID, Actor: e.Actor, Action: e.Action,
		Subject: e.Subject, Workflow: e.Workflow, Payload: e.Payload, At: at})
	if err != nil {
		return Entry{}, fmt.Errorf("append audit entry %s: %w", e.Action, translate(err))
	}
	e.ID, e.At = row.ID, row.At
	return e, nil
}

// AuditFilter narrows List; empty fields match everything. From is inclusive, To exclusive.
type AuditFilter struct {
	TenantID string // required
	Actor    string
	Action   string
	Subject  string
	Workflow string
	From, To time.Time
}

// List returns a tenant's entries newest first, limit at a time (at most 500), with ids
// below before (0: from the newest). next is the cursor of the following page, 0 on the last.
func (a *Audit) List(ctx context.Context, f AuditFilter, before int64, limit int) (entries []Entry, next int64, err error) {
	n := pageSize(limit)
	p := db.AuditLogListParams{TenantID: f.TenantID, Actor: optional(f.Actor), Action: optional(f.Action),
		Subject: optional(f.Subject), Workflow: optional(f.Workflow), MaxRows: n + 1}
	if !f.From.IsZero() {
		p.FromAt = &f.From
	}
	if !f.To.IsZero() {
		p.ToAt = &f.To
	}
	if before > 0 {
		p.BeforeID = &before
	}
	rows, err := a.db.q.AuditLogList(ctx, p)
	if err != nil {
		return nil, 0, fmt.Errorf("list audit entries: %w", translate(err))
	}
	if len(rows) > int(n) {
		rows = rows[:n]
		next = rows[n-1].ID
	}
	entries = make([]Entry, 0, len(rows))
	for _, r := range rows {
		entries = append(entries, Entry{ID: r.ID, TenantID: r.TenantID, Actor: r.Actor, Action: r.Action,
			Subject: r.Subject, Workflow: r.Workflow, Payload: r.Payload, At: r.At})
	}
	return entries, next, nil
}
