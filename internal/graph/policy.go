package graph

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"
)

// Clock is the engine's source of time: retries sleep on it and caches
// expire by it. Tests inject a fake one (or run under testing/synctest).
type Clock interface {
	Now() time.Time
	// Sleep waits d or until ctx ends.
	Sleep(ctx context.Context, d time.Duration) error
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }
func (realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// RealClock is the wall clock.
var RealClock Clock = realClock{}

// RetryPolicy retries a failing node. The zero value of a field means
// LangGraph's default: InitialInterval 500ms, BackoffFactor 2, MaxInterval
// 128s, MaxAttempts 3. Jitter adds up to one second (uniform, from the
// graph's random source) to each interval, as LangGraph does. RetryOn nil
// means DefaultRetryOn.
type RetryPolicy struct {
	InitialInterval time.Duration
	BackoffFactor   float64
	MaxInterval     time.Duration
	MaxAttempts     int
	Jitter          bool
	RetryOn         func(error) bool
}

// DefaultRetryPolicy is LangGraph's default policy, jitter on.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{InitialInterval: 500 * time.Millisecond, BackoffFactor: 2, MaxInterval: 128 * time.Second, MaxAttempts: 3, Jitter: true}
}

func (p RetryPolicy) withDefaults() RetryPolicy {
	d := DefaultRetryPolicy()
	if p.InitialInterval <= 0 {
		p.InitialInterval = d.InitialInterval
	}
	if p.BackoffFactor <= 0 {
		p.BackoffFactor = d.BackoffFactor
	}
	if p.MaxInterval <= 0 {
		p.MaxInterval = d.MaxInterval
	}
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = d.MaxAttempts
	}
	if p.RetryOn == nil {
		p.RetryOn = DefaultRetryOn
	}
	return p
}

// Interval is the wait before attempt+1 (attempt counts from 1), before
// jitter: InitialInterval × BackoffFactor^(attempt-1), capped at MaxInterval.
func (p RetryPolicy) Interval(attempt int) time.Duration {
	p = p.withDefaults()
	d := float64(p.InitialInterval) * math.Pow(p.BackoffFactor, float64(attempt-1))
	if d > float64(p.MaxInterval) {
		return p.MaxInterval
	}
	return time.Duration(d)
}

// DefaultRetryOn retries every error except the ones retrying cannot fix:
// errors marked Permanent, panics, invalid updates, cancellation and
// interrupts. (LangGraph likewise refuses to retry programming errors.)
func DefaultRetryOn(err error) bool {
	var pe *PanicError
	var iu *InvalidUpdateError
	switch {
	case IsPermanent(err), errors.As(err, &pe), errors.As(err, &iu),
		errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded),
		isInterrupt(err):
		return false
	}
	return true
}

// CachePolicy caches a node's writes by a key derived from its input. Key nil
// hashes the input state's JSON. TTL 0 never expires.
type CachePolicy[S any] struct {
	Key func(S) string
	TTL time.Duration
}

// Cache stores cached node writes. The graph's in-memory one is NewMemoryCache.
type Cache interface {
	Get(ctx context.Context, node, key string) ([]byte, bool, error)
	Set(ctx context.Context, node, key string, value []byte, ttl time.Duration) error
}

// MemoryCache is an in-process Cache that expires entries by a Clock.
type MemoryCache struct {
	clock Clock
	mu    sync.Mutex
	items map[[2]string]cacheItem
}

type cacheItem struct {
	val     []byte
	expires time.Time
}

// NewMemoryCache returns an empty cache on clock (nil: the wall clock).
func NewMemoryCache(clock Clock) *MemoryCache {
	if clock == nil {
		clock = RealClock
	}
	return &MemoryCache{clock: clock, items: map[[2]string]cacheItem{}}
}

var _ Cache = (*MemoryCache)(nil)

// Get returns a live entry.
func (c *MemoryCache) Get(_ context.Context, node, key string) ([]byte, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	it, ok := c.items[[2]string{node, key}]
	if !ok {
		return nil, false, nil
	}
	if !it.expires.IsZero() && !c.clock.Now().Before(it.expires) {
		delete(c.items, [2]string{node, key})
		return nil, false, nil
	}
	return it.val, true, nil
}

// Set stores an entry for ttl (0: forever).
func (c *MemoryCache) Set(_ context.Context, node, key string, value []byte, ttl time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	it := cacheItem{val: value}
	if ttl > 0 {
		it.expires = c.clock.Now().Add(ttl)
	}
	c.items[[2]string{node, key}] = it
	return nil
}
