// Package pgtest gives each test a fresh PostgreSQL database, migrated with the embedded
// migrations: every package whose tests need a database uses it.
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		t.Parallel()
//		d := pgtest.DB(t) // *postgres.DB on a database of its own, dropped at cleanup
//		…
//	}
//
// The server: WEFT_TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres. When
// the default answers nothing at all, a private server is started from the PostgreSQL
// binaries on the machine (pgcluster) and stopped by Main when the tests finish;
// WEFT_PG_FORCE_PRIVATE=1 starts one regardless. An explicit WEFT_TEST_DATABASE_URL that does
// not answer, or a server that answers with an error, fails the test with the reason.
//
// Databases come from github.com/peterldowns/pgtestdb: a template database per migration set
// (named by a hash of the migration files, created and migrated once, under an advisory lock,
// by whichever test binary needs it first, and reused across runs), cloned for each test and
// dropped when the test passes (a failed test's database stays, for inspection; its URL is in
// the test log). Tests connect as the role weft_test, which owns its database and may create
// roles but is no superuser, like the role that migrates the product's database.
//
// It imports internal/postgres, pgcluster, pgtestdb, pgx and the standard library, and is
// imported by tests only.
package pgtest

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx", used by pgtestdb
	"github.com/peterldowns/pgtestdb"

	"weft/internal/postgres"
	"weft/internal/postgres/pgcluster"
	"weft/migrations"
)

// Environment knobs.
const (
	// EnvURL names the server (any database on it; the superuser or a role that may create
	// databases and roles).
	EnvURL = "WEFT_TEST_DATABASE_URL"
	// EnvForcePrivate, set to 1, starts a private server even when one answers.
	EnvForcePrivate = "WEFT_PG_FORCE_PRIVATE"
	// DefaultURL is the server tried when EnvURL is unset.
	DefaultURL = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
)

var (
	once    sync.Once
	base    pgtestdb.Config // the server, connected as its admin user
	baseURL string          // the same, as a URL, password redacted
	baseErr error

	mu      sync.Mutex
	private *pgcluster.Cluster // started by this process, stopped by Main
)

// Main runs the tests, stops the private server if one was started, and exits. Call it from
// TestMain.
func Main(m *testing.M) {
	code := m.Run()
	mu.Lock()
	c := private
	mu.Unlock()
	if c != nil {
		if err := c.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}
	os.Exit(code)
}

// URL creates a fresh migrated database for the test and returns its connection URL. The
// database is dropped at cleanup, after cleanups registered later (close your pools there).
func URL(t testing.TB) string {
	t.Helper()
	conf := server(t)
	inst := pgtestdb.Custom(t, conf, migrator{})
	return inst.URL()
}

// EmptyURL creates a fresh database with no migrations applied (for tests of migrating) and
// returns its connection URL; it is dropped at cleanup like URL's.
func EmptyURL(t testing.TB) string {
	t.Helper()
	conf := server(t)
	inst := pgtestdb.Custom(t, conf, pgtestdb.NoopMigrator{})
	return inst.URL()
}

// DB opens a *postgres.DB on a fresh migrated database; it is closed and the database dropped
// at cleanup.
func DB(t testing.TB) *postgres.DB {
	t.Helper()
	u := URL(t)
	d, err := postgres.Open(context.Background(), u)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(d.Close)
	return d
}

// ServerURL is the URL of the server the tests use (password redacted), for messages.
func ServerURL(t testing.TB) string {
	t.Helper()
	server(t)
	return baseURL
}

// Private reports whether the tests run on a private server this process started.
func Private(t testing.TB) bool {
	t.Helper()
	server(t)
	mu.Lock()
	defer mu.Unlock()
	return private != nil
}

// server resolves the server once per test binary.
func server(t testing.TB) pgtestdb.Config {
	t.Helper()
	once.Do(func() {
		u, explicit := os.Getenv(EnvURL), true
		if u == "" {
			u, explicit = DefaultURL, false
		}
		force := os.Getenv(EnvForcePrivate)
		var c *pgcluster.Cluster
		base, baseURL, c, baseErr = resolve(u, explicit, force != "" && force != "0")
		if baseErr == nil {
			baseErr = ensureAppRole(base)
		}
		if c != nil {
			mu.Lock()
			private = c
			mu.Unlock()
		}
	})
	if baseErr != nil {
		t.Fatalf("pgtest: %v", baseErr)
	}
	return base
}

// resolve picks the server: u when it answers; a private cluster when u is not explicit and
// nothing answers there at all, or when forced. It returns the cluster it started, if any.
func resolve(u string, explicit, force bool) (pgtestdb.Config, string, *pgcluster.Cluster, error) {
	if !force {
		err := ping(u)
		if err == nil {
			conf, err := config(u)
			return conf, redact(u), nil, err
		}
		var pgErr *pgconn.PgError
		switch {
		case errors.As(err, &pgErr):
			return pgtestdb.Config{}, "", nil, fmt.Errorf("PostgreSQL at %s refused the connection: %w", redact(u), err)
		case explicit:
			return pgtestdb.Config{}, "", nil, fmt.Errorf("PostgreSQL at %s (%s) does not answer: %w", redact(u), EnvURL, err)
		}
		// Nothing listens at the default address: run a server of our own.
		c, startErr := pgcluster.Start(context.Background(), pgcluster.Options{})
		if startErr != nil {
			return pgtestdb.Config{}, "", nil, fmt.Errorf("no PostgreSQL answers at %s (%v), and a private server could not be started: %w; "+
				"start PostgreSQL there, or set %s, or install the PostgreSQL server binaries", redact(u), err, startErr, EnvURL)
		}
		conf, err := config(c.URL())
		return conf, c.URL(), c, err
	}
	c, err := pgcluster.Start(context.Background(), pgcluster.Options{})
	if err != nil {
		return pgtestdb.Config{}, "", nil, fmt.Errorf("%s is set, and a private server could not be started: %w", EnvForcePrivate, err)
	}
	conf, err := config(c.URL())
	return conf, c.URL(), c, err
}

func ping(u string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := pgconn.Connect(ctx, u)
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}

// config splits a server URL into pgtestdb's fields. Connection parameters other than host,
// port, user, password and database (sslmode, …) are kept for the test databases.
func config(u string) (pgtestdb.Config, error) {
	pc, err := pgconn.ParseConfig(u)
	if err != nil {
		return pgtestdb.Config{}, fmt.Errorf("parse %s: %w", redact(u), err)
	}
	if len(pc.Host) > 0 && pc.Host[0] == '/' {
		return pgtestdb.Config{}, fmt.Errorf("%s: connect over TCP (a unix socket host is not supported)", redact(u))
	}
	opts := url.Values{}
	if parsed, err := url.Parse(u); err == nil && (parsed.Scheme == "postgres" || parsed.Scheme == "postgresql") {
		for k, v := range parsed.Query() {
			switch k {
			case "host", "port", "user", "password", "dbname", "database":
			default:
				opts[k] = v
			}
		}
	} else if pc.TLSConfig == nil {
		opts.Set("sslmode", "disable")
	}
	return pgtestdb.Config{
		TestRole:   &role,
		DriverName: "pgx",
		Host:       pc.Host,
		Port:       strconv.Itoa(int(pc.Port)),
		User:       pc.User,
		Password:   pc.Password,
		Database:   pc.Database,
		Options:    opts.Encode(),
	}, nil
}

// role owns the template and test databases and runs the migrations. Like the role that
// migrates the product's database, it may create roles (migrations create the application
// role weft_app) but is no superuser and creates no databases.
var role = pgtestdb.Role{Username: "weft_test", Password: "weft_test", Capabilities: "NOSUPERUSER NOCREATEDB CREATEROLE"}

// redact hides a URL's password.
func redact(u string) string {
	if parsed, err := url.Parse(u); err == nil && parsed.Scheme != "" {
		return parsed.Redacted()
	}
	return "the configured server"
}

// migrator builds pgtestdb's template with the product's own migration path
// (postgres.Migrate: goose's Provider under its advisory lock).
type migrator struct{}

// Hash identifies the migration set: a template is made once per distinct set of files.
func (migrator) Hash() (string, error) {
	names, err := fs.Glob(migrations.FS, "*.sql")
	if err != nil {
		return "", err
	}
	sort.Strings(names)
	h := sha256.New()
	for _, n := range names {
		b, err := fs.ReadFile(migrations.FS, n)
		if err != nil {
			return "", err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", n, len(b))
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))[:32], nil
}

// Migrate applies the migrations to the (new, empty) template database.
func (migrator) Migrate(ctx context.Context, _ *sql.DB, conf pgtestdb.Config) error {
	return postgres.Migrate(ctx, conf.URL(), nil)
}
