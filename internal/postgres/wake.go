package postgres

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/jackc/pgx/v5"
)

// JobsChannel is the NOTIFY channel a statement that makes a job queued signals (the
// jobs_count trigger, migrations/00003_jobs.sql): Enqueue, Rescue, Release, Requeue.
const JobsChannel = "weft_jobs"

// Listener turns NOTIFY weft_jobs into wake-ups for idle workers (runner.Config.Wake). It
// holds one dedicated connection (LISTEN needs a session, so not a pooled one) and
// reconnects with backoff when it drops. Wake-ups are coalesced: the channel holds at most
// one, and a burst of notifications while a worker is busy becomes a single wake-up. After
// every (re)connection it sends one, since notifications sent while it was away are lost.
type Listener struct {
	cfg        *pgx.ConnConfig
	log        *slog.Logger
	c          chan struct{}
	minBackoff time.Duration
	maxBackoff time.Duration
}

// NewListener returns a Listener on d's database; Run starts it.
func NewListener(d *DB) *Listener {
	return &Listener{cfg: d.pool.Config().ConnConfig.Copy(), log: d.log, c: make(chan struct{}, 1),
		minBackoff: 100 * time.Millisecond, maxBackoff: 10 * time.Second}
}

// C is the wake-up channel, for runner.Config.Wake.
func (l *Listener) C() <-chan struct{} { return l.c }

// Run listens until ctx ends, reconnecting after errors; it returns ctx's error.
func (l *Listener) Run(ctx context.Context) error {
	backoff := l.minBackoff
	for {
		start := time.Now()
		err := l.listen(ctx)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Since(start) > l.maxBackoff { // it was up for a while: start over
			backoff = l.minBackoff
		}
		wait := backoff/2 + rand.N(backoff/2+1) // jitter: [backoff/2, backoff]
		l.log.WarnContext(ctx, "job notifications lost; reconnecting", "err", err, "retry_in_ms", wait.Milliseconds())
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		backoff = min(2*backoff, l.maxBackoff)
	}
}

// listen holds one connection until it fails or ctx ends.
func (l *Listener) listen(ctx context.Context) error {
	conn, err := pgx.ConnectConfig(ctx, l.cfg)
	if err != nil {
		return err
	}
	defer func() {
		closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		_ = conn.Close(closeCtx)
	}()
	if _, err := conn.Exec(ctx, "LISTEN "+JobsChannel); err != nil {
		return err
	}
	l.wake()
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		l.wake()
	}
}

// wake sends a wake-up unless one is already waiting.
func (l *Listener) wake() {
	select {
	case l.c <- struct{}{}:
	default:
	}
}
