package postgres

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
	"go.opentelemetry.io/otel/trace"

	"weft/db"
	"weft/migrations"
)

// DB is a pool of connections to one migrated database. It is safe for concurrent use; the
// stores in this package (NewCheckpointer, …) share it.
type DB struct {
	pool *pgxpool.Pool
	q    *db.Queries
	log  *slog.Logger

	commitsOnce sync.Once
	commits     *groupCommitter // see committer
}

// committer returns the DB's group committer: every Checkpointer on d shares it, and the
// batch writers' statements ride in its transactions.
func (d *DB) committer() *groupCommitter {
	d.commitsOnce.Do(func() { d.commits = newGroupCommitter(d) })
	return d.commits
}

// rideOrRun runs the statement that call makes through the queries it is given: in the next
// checkpoint transaction when checkpoints are being committed (see groupCommitter.ride),
// else on its own; on its own always when ctx is marked alone. call must not use what the
// statement returns.
func (d *DB) rideOrRun(ctx context.Context, call func(*db.Queries) error) error {
	if ctx.Value(aloneKey{}) == nil {
		var r recorder
		_ = call(db.New(&r))
		switch committed, err := d.committer().ride(ctx, r.sql, r.args); {
		case err != nil:
			return err
		case committed:
			return nil
		}
	}
	return call(d.q)
}

type aloneKey struct{}

// alone marks ctx so that rideOrRun runs its statement on its own: a batch writer's retry,
// whose statement may be the one that fails, must not roll back checkpoint transactions.
func alone(ctx context.Context) context.Context { return context.WithValue(ctx, aloneKey{}, true) }

// Option configures Open.
type Option func(*options)

type options struct {
	log       *slog.Logger
	tracer    trace.TracerProvider
	maxConns  int32
	configure func(*pgxpool.Config) // tests: tracers
}

// WithLogger sets the logger (migrations applied at open are logged at info level).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithTracing makes a span of each statement run for a traced caller (its context holds a
// recording span: a run's node, an HTTP request), through otelpgx; statements outside a
// trace (claims, heartbeats) make none.
func WithTracing(tp trace.TracerProvider) Option { return func(o *options) { o.tracer = tp } }

// WithMaxConns sizes the pool when the url does not (pool_max_conns); pgx's own default is
// the larger of 4 and the CPU count, which a process running workers and serving pages at
// once outgrows: its requests then queue for a connection behind the workers' statements.
func WithMaxConns(n int) Option { return func(o *options) { o.maxConns = int32(n) } }

// Open connects to the database at url (a postgres:// URL or key=value DSN; pool settings
// such as pool_max_conns ride along as URL parameters), applies the pending migrations under
// goose's session advisory lock, so any number of processes may open the same database at
// once, and returns the pool.
func Open(ctx context.Context, url string, opts ...Option) (*DB, error) {
	o := options{}
	for _, opt := range opts {
		opt(&o)
	}
	if o.log == nil {
		o.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	if err := migrate(ctx, cfg.ConnConfig, o.log); err != nil {
		return nil, err
	}
	if o.maxConns > 0 && !strings.Contains(url, "pool_max_conns") {
		cfg.MaxConns = o.maxConns
	}
	// The server's warnings reach the log (after the migrations, whose notices are
	// routine); pgx drops them otherwise.
	log := o.log
	cfg.ConnConfig.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		if n.Severity == "WARNING" {
			log.Warn("database warning", "message", n.Message, "code", n.Code)
		}
	}
	if o.tracer != nil {
		cfg.ConnConfig.Tracer = otelpgx.NewTracer(otelpgx.WithTracerProvider(o.tracer), otelpgx.WithDisableConnectionDetailsInAttributes())
	}
	if o.configure != nil {
		o.configure(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open database: %w", err)
	}
	return &DB{pool: pool, q: db.New(pool), log: o.log}, nil
}

// Close closes every connection; it waits for the ones in use to be released.
func (d *DB) Close() { d.pool.Close() }

// Ping checks that the database answers.
func (d *DB) Ping(ctx context.Context) error {
	if err := d.pool.Ping(ctx); err != nil {
		return fmt.Errorf("ping database: %w", err)
	}
	return nil
}

// Migrate applies the pending migrations to the database at url and logs each one applied
// (log may be nil). It is what Open does first, for `weft migrate`.
func Migrate(ctx context.Context, url string, log *slog.Logger) error {
	cfg, err := connConfig(url)
	if err != nil {
		return fmt.Errorf("migrate database: %w", err)
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return migrate(ctx, cfg, log)
}

// SchemaVersion is the version of the newest migration applied to the database at url.
func SchemaVersion(ctx context.Context, url string) (int64, error) {
	cfg, err := connConfig(url)
	if err != nil {
		return 0, fmt.Errorf("read the schema version: %w", err)
	}
	sqlDB := stdlib.OpenDB(*cfg)
	provider, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations.FS, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		_ = sqlDB.Close()
		return 0, fmt.Errorf("read the schema version: %w", err)
	}
	defer provider.Close() // closes sqlDB
	v, err := provider.GetDBVersion(ctx)
	if err != nil {
		return 0, fmt.Errorf("read the schema version: %w", err)
	}
	return v, nil
}

// connConfig is the connection settings of url, which may also hold the pool's (pool_max_conns,
// …: Open takes them; a single connection ignores them rather than sending them to the server
// as parameters it does not know).
func connConfig(url string) (*pgx.ConnConfig, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	return cfg.ConnConfig, nil
}

// Migration lock: goose's default advisory lock id, retried every second for up to five
// minutes while another process migrates.
const (
	lockRetryPeriod = 1   // seconds
	lockRetries     = 300 // tries
)

// migrate runs goose's Provider over the embedded migrations on a connection of its own
// (closed afterwards, so the session lock can never outlive it in a pool).
func migrate(ctx context.Context, cfg *pgx.ConnConfig, log *slog.Logger) error {
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(lockRetryPeriod, lockRetries))
	if err != nil {
		return fmt.Errorf("migrate database: %w", err)
	}
	sqlDB := stdlib.OpenDB(*cfg)
	provider, err := goose.NewProvider(goose.DialectPostgres, sqlDB, migrations.FS,
		goose.WithSessionLocker(locker), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		_ = sqlDB.Close()
		return fmt.Errorf("migrate database: %w", err)
	}
	defer provider.Close() // closes sqlDB
	start := time.Now()
	results, err := provider.Up(ctx)
	for _, r := range results {
		if r.Error == nil {
			log.InfoContext(ctx, "migration applied", "version", r.Source.Version,
				"file", path.Base(r.Source.Path), "latency_ms", r.Duration.Milliseconds())
		}
	}
	if err != nil {
		return fmt.Errorf("migrate database: %w", err)
	}
	if len(results) > 0 {
		log.InfoContext(ctx, "database migrated", "applied", len(results), "latency_ms", time.Since(start).Milliseconds())
	}
	// A database migrated by a newer binary runs a schema this one does not know: say so (it
	// may work, as migrations add more than they change, but it is not what this build was
	// tested against).
	if v, err := provider.GetDBVersion(ctx); err == nil {
		var newest int64
		for _, src := range provider.ListSources() {
			newest = max(newest, src.Version)
		}
		if v > newest {
			log.WarnContext(ctx, "the database's schema is newer than this binary's migrations: run the newer weft, or expect errors",
				"database_version", v, "newest_known", newest)
		}
	}
	return nil
}

// Pool exposes the connection pool to the other package that may use pgx
// directly (internal/auth, for its session store). Nothing above those two
// packages sees it.
func (d *DB) Pool() *pgxpool.Pool { return d.pool }
