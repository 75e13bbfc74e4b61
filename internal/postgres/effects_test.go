package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"weft/internal/postgres"
)

func TestEffectsOnce(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	fx := postgres.NewEffects(b.db, tenantA)
	key := postgres.RetryOrDLQKey("job-9", 3)
	var calls int
	fn := func(context.Context) (json.RawMessage, error) {
		calls++
		return json.RawMessage(`{"report_id":  "r1", "version":3}`), nil
	}
	res, replayed, err := fx.Once(b.ctx, key, fn)
	if err != nil || replayed || calls != 1 {
		t.Fatalf("first: %s %v %v (calls %d)", res, replayed, err, calls)
	}
	again, replayed, err := fx.Once(b.ctx, key, fn)
	if err != nil || !replayed || calls != 1 || string(again) != string(res) || string(res) != `{"version": 3, "report_id": "r1"}` {
		t.Fatalf("replay: %s (first %s) %v %v (calls %d)", again, res, replayed, err, calls)
	}
	// Keys are per tenant.
	if _, replayed, err := postgres.NewEffects(b.db, tenantB).Once(b.ctx, key, fn); err != nil || replayed || calls != 2 {
		t.Fatalf("other tenant: %v %v (calls %d)", replayed, err, calls)
	}
	// nil stores null.
	res, _, err = fx.Once(b.ctx, "k-nil", func(context.Context) (json.RawMessage, error) { return nil, nil })
	if err != nil || string(res) != "null" {
		t.Fatalf("nil result: %s, %v", res, err)
	}
	if got, want := postgres.RetryOrDLQKey("job-1", 2), "retry_or_dlq:job-1:2"; got != want {
		t.Errorf("RetryOrDLQKey = %q, want %q", got, want)
	}
}

// TestEffectsConcurrent: 20 callers of one key at once; fn runs once, all get its result.
func TestEffectsConcurrent(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	fx := postgres.NewEffects(b.db, tenantA)
	var calls, replays atomic.Int64
	var wg sync.WaitGroup
	results := make([]string, 20)
	for i := range results {
		wg.Go(func() {
			res, replayed, err := fx.Once(b.ctx, postgres.RetryOrDLQKey("job-1", 0), func(context.Context) (json.RawMessage, error) {
				calls.Add(1)
				time.Sleep(50 * time.Millisecond) // the others pile up on the key
				return json.RawMessage(`{"dlq_id":"d1"}`), nil
			})
			if err != nil {
				t.Error(err)
			}
			if replayed {
				replays.Add(1)
			}
			results[i] = string(res)
		})
	}
	wg.Wait()
	if calls.Load() != 1 || replays.Load() != 19 {
		t.Fatalf("fn called %d times, %d replays", calls.Load(), replays.Load())
	}
	for _, r := range results {
		if r != `{"dlq_id": "d1"}` {
			t.Fatalf("results %q", results)
		}
	}
}

// TestEffectsTransaction: what fn writes through the package joins the effect's
// transaction: an error leaves neither the key nor the writes, and the next call runs again.
func TestEffectsTransaction(t *testing.T) {
	t.Parallel()
	b := setupJobs(t)
	fx := postgres.NewEffects(b.db, tenantA)
	audit := postgres.NewAudit(b.db)
	boom := errors.New("object store down")
	var calls int
	fn := func(ctx context.Context) (json.RawMessage, error) {
		calls++
		if _, err := audit.Append(ctx, postgres.Entry{TenantID: tenantA, Actor: "system", Action: "report.persist", Subject: "ev_1"}); err != nil {
			return nil, err
		}
		// A nested effect joins too (a savepoint of the same transaction).
		if _, _, err := fx.Once(ctx, "nested", func(context.Context) (json.RawMessage, error) { return json.RawMessage(`1`), nil }); err != nil {
			return nil, err
		}
		if calls == 1 {
			return nil, boom
		}
		return json.RawMessage(`"ok"`), nil
	}
	if _, _, err := fx.Once(b.ctx, "persist", fn); !errors.Is(err, boom) {
		t.Fatalf("first: %v", err)
	}
	if n := b.count(t, `SELECT (SELECT count(*) FROM audit_log) + (SELECT count(*) FROM side_effects)`); n != 0 {
		t.Fatalf("a failed effect left %d rows", n)
	}
	if res, replayed, err := fx.Once(b.ctx, "persist", fn); err != nil || replayed || string(res) != `"ok"` || calls != 2 {
		t.Fatalf("second: %s %v %v (calls %d)", res, replayed, err, calls)
	}
	if n := b.count(t, `SELECT (SELECT count(*) FROM audit_log) * 10 + (SELECT count(*) FROM side_effects)`); n != 12 {
		t.Fatalf("audit*10 + effects = %d, want 12", n)
	}
	// The same key inside its own effect is an error, not a deadlock.
	_, _, err := fx.Once(b.ctx, "self", func(ctx context.Context) (json.RawMessage, error) {
		_, _, err := fx.Once(ctx, "self", func(context.Context) (json.RawMessage, error) { return nil, nil })
		return nil, err
	})
	if err == nil {
		t.Fatal("a nested Once of its own key succeeded")
	}
}
