package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

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

// Audit actions of API tokens (written by `weft token`).
const (
	ActionTokenCreate = "token.create"
	ActionTokenRevoke = "token.revoke"
)

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
	// ActorIn and SubjectIn, when set, replace Actor and Subject: an entry matches one of
	// them (a user known by several names; a thread and the jobs that ran it).
	ActorIn, SubjectIn []string
}

// ActorsOfKind are the actors recorded in a tenant's entries that are of kind (such as
// "system", recorded as "system:<what>", or "cli", recorded as "cli" or "cli:<user>"), up to
// limit of them, in order.
func (a *Audit) ActorsOfKind(ctx context.Context, tenantID, kind string, limit int) ([]string, error) {
	out, err := a.db.q.AuditLogActorsOfKind(ctx, db.AuditLogActorsOfKindParams{TenantID: tenantID, Kind: kind,
		MaxActors: int32(min(limit, math.MaxInt32))})
	if err != nil {
		return nil, fmt.Errorf("list audit actors of kind %s: %w", kind, translate(err))
	}
	return out, nil
}

// List returns a tenant's entries newest first by id, limit at a time (at most 500), with ids
// below before (0: from the newest). next is the cursor of the following page, 0 on the last.
func (a *Audit) List(ctx context.Context, f AuditFilter, before int64, limit int) (entries []Entry, next int64, err error) {
	entries, next, err = a.page(ctx, auditByID, f, before, false, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("list audit entries: %w", err)
	}
	return entries, next, nil
}

// auditOrder is how a listing of the log pages: List by id, Browse by time then id.
type auditOrder int

const (
	auditByID auditOrder = iota
	auditByTime
)

// page reads one page of the tenant's entries in order o, newest first: those older than the
// entry cursor (0: from the newest), or with newer those just newer than it. more is, for an
// older page, the id of its last entry when older ones follow, and for a newer page the id of
// its first entry when newer ones follow; 0 otherwise.
func (a *Audit) page(ctx context.Context, o auditOrder, f AuditFilter, cursor int64, newer bool, limit int) (entries []Entry, more int64, err error) {
	n := pageSize(limit)
	sql, args := auditSelect(o, f, cursor, newer, n+1)
	rows, err := a.db.pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, 0, translate(err)
	}
	found, err := pgx.CollectRows(rows, pgx.RowToStructByPos[db.AuditLog])
	if err != nil {
		return nil, 0, translate(err)
	}
	if len(found) > int(n) {
		found = found[:n]
		more = found[n-1].ID
	}
	if newer { // read oldest first, from the cursor up
		slices.Reverse(found)
	}
	entries = make([]Entry, 0, len(found))
	for _, r := range found {
		entries = append(entries, Entry{ID: r.ID, TenantID: r.TenantID, Actor: r.Actor, Action: r.Action,
			Subject: r.Subject, Workflow: r.Workflow, Payload: r.Payload, At: r.At})
	}
	return entries, more, nil
}

// auditSelect is the statement of a page of the log in order o (its columns those of
// db.AuditLog, in order) and its arguments. It holds the conditions of the filters f sets and
// nothing for the others: each filter shape is a statement of its own, prepared once per
// connection, whose plan (custom or generic) uses the index of its filter, with the time range
// and the cursor as ranges of that index (migrations/00004_audit.sql, 00008_audit_indexes.sql).
// One statement with an `(@x IS NULL OR col = @x)` per filter cannot: its generic plan reads
// the whole log and sorts it (measured at 1M rows: 100–470 ms a page, against 0.1–1 ms), and
// its custom plans are planned again at every execution. Only the argument placeholders and
// the limit, an integer, are written into the SQL: values travel as arguments. A before that
// is not one of the tenant's entries matches nothing.
func auditSelect(o auditOrder, f AuditFilter, cursor int64, newer bool, limit int32) (string, []any) {
	var b strings.Builder
	args := []any{f.TenantID}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	b.WriteString("SELECT id, tenant_id, actor, action, subject, workflow, payload, at FROM audit_log WHERE tenant_id = $1")
	for _, c := range []struct {
		col string
		v   string
		in  []string
	}{{"actor", f.Actor, f.ActorIn}, {"action", f.Action, nil}, {"subject", f.Subject, f.SubjectIn}, {"workflow", f.Workflow, nil}} {
		switch {
		case len(c.in) > 1:
			b.WriteString(" AND " + c.col + " = ANY(" + arg(c.in) + "::text[])")
		case len(c.in) == 1:
			b.WriteString(" AND " + c.col + " = " + arg(c.in[0]))
		case c.v != "":
			b.WriteString(" AND " + c.col + " = " + arg(c.v))
		}
	}
	if !f.From.IsZero() {
		b.WriteString(" AND at >= " + arg(f.From))
	}
	if !f.To.IsZero() {
		b.WriteString(" AND at < " + arg(f.To))
	}
	cmp, dir := "<", "DESC" // older than the cursor, newest first
	if newer {
		cmp, dir = ">", "ASC" // newer than the cursor, from it up (the index read backwards)
	}
	switch {
	case cursor > 0 && o == auditByTime:
		p := arg(cursor)
		b.WriteString(" AND (at, id) " + cmp + " ((SELECT c.at FROM audit_log c WHERE c.id = " + p + " AND c.tenant_id = $1), " + p + ")")
	case cursor > 0:
		b.WriteString(" AND id " + cmp + " " + arg(cursor))
	}
	if o == auditByTime {
		b.WriteString(" ORDER BY at " + dir + ", id " + dir)
	} else {
		b.WriteString(" ORDER BY id " + dir)
	}
	b.WriteString(" LIMIT " + strconv.Itoa(int(limit)))
	return b.String(), args
}
