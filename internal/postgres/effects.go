package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strconv"

	"github.com/jackc/pgx/v5"

	"weft/db"
	"weft/internal/fault"
)

// Effects runs a tenant's side effects at most once per idempotency key (seed 000 §8;
// migrations/00004_audit.sql, table side_effects). A completed effect is never repeated: a
// replay returns the result recorded the first time.
type Effects struct {
	db     *DB
	tenant string
}

// NewEffects returns the side effects of one tenant on d (keys are per tenant).
func NewEffects(d *DB, tenantID string) *Effects { return &Effects{db: d, tenant: tenantID} }

// Once runs fn unless key has already been done, in one transaction: the key is taken
// (INSERT … ON CONFLICT DO NOTHING), fn runs with a ctx that carries the transaction — so the
// database effects it makes through this package (Audit.Append, a nested Once, …) commit or
// roll back with the key — and its result is stored before the commit. A crash or an error
// before the commit leaves nothing behind, and the next call runs fn again; once committed,
// every later call returns the stored result with replayed true and does not call fn.
// Concurrent callers of one key wait for the first one's transaction, then replay its
// result (or, if it failed, one of them runs fn).
//
// The result comes back as stored (jsonb: normalised whitespace and key order), the same on
// the first call and on replays. fn returning nil stores JSON null. Called inside another
// Once, the key is taken in a savepoint of the outer transaction.
func (s *Effects) Once(ctx context.Context, key string, fn func(ctx context.Context) (json.RawMessage, error)) (result json.RawMessage, replayed bool, err error) {
	if s.tenant == "" || key == "" {
		return nil, false, fault.New(fault.Validation, fault.CodeValidation, "a side effect needs a tenant and an idempotency key")
	}
	err = s.db.InTx(ctx, func(ctx context.Context) error {
		q := s.db.querier(ctx)
		n, err := q.SideEffectClaim(ctx, db.SideEffectClaimParams{TenantID: s.tenant, Key: key})
		if err != nil {
			return translate(err)
		}
		if n == 0 {
			stored, err := q.SideEffectGet(ctx, db.SideEffectGetParams{TenantID: s.tenant, Key: key})
			if err != nil {
				return translate(err)
			}
			if stored == nil {
				return errors.New("the effect is still running in this transaction (a nested Once with its own key)")
			}
			result, replayed = stored, true
			return nil
		}
		out, err := fn(ctx)
		if err != nil {
			return err
		}
		if out == nil {
			out = json.RawMessage("null")
		}
		if !json.Valid(out) {
			return fault.New(fault.Permanent, fault.CodeValidation, "a side effect's result must be JSON")
		}
		result, err = q.SideEffectSave(ctx, db.SideEffectSaveParams{Result: out, TenantID: s.tenant, Key: key})
		return translate(err)
	})
	if err != nil {
		return nil, false, fmt.Errorf("side effect %s: %w", key, err)
	}
	return result, replayed, nil
}

// RetryOrDLQKey is retry_or_dlq's idempotency key: job_id + retry_count.
func RetryOrDLQKey(jobID string, retryCount int) string {
	return "retry_or_dlq:" + url.QueryEscape(jobID) + ":" + strconv.Itoa(retryCount)
}

// txKey marks a context that carries a transaction of this package (Effects.Once).
type txKey struct{}

type txValue struct {
	db *DB
	tx pgx.Tx
}

// querier returns queries bound to the transaction ctx carries when it is one of d's (inside
// Effects.Once), else d's pool queries. Stores call it so that what they write inside a side
// effect commits or rolls back with it.
func (d *DB) querier(ctx context.Context) *db.Queries {
	if v, ok := ctx.Value(txKey{}).(txValue); ok && v.db == d {
		return d.q.WithTx(v.tx)
	}
	return d.q
}
