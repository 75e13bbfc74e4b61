package pgtest

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/peterldowns/pgtestdb"
)

// AppRole is the application role the migrations grant privileges to
// (migrations/00004_audit.sql). Roles belong to the server, not to a database, and the test
// role that migrates may not create roles, so the harness creates it once, as the admin.
const AppRole = "weft_app"

// ensureAppRole creates AppRole on the server unless it exists (concurrent test binaries may
// race to create it: the loser's duplicate is ignored).
func ensureAppRole(conf pgtestdb.Config) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := sql.Open(conf.DriverName, conf.URL())
	if err != nil {
		return fmt.Errorf("create role %s: %w", AppRole, err)
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, `DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '`+AppRole+`') THEN
        CREATE ROLE `+AppRole+` NOLOGIN;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END $$`)
	if err != nil {
		return fmt.Errorf("create role %s: %w", AppRole, err)
	}
	return nil
}

// AdminURL is dbURL (a test database's URL from URL) connected as the server's admin user
// instead of the unprivileged test role: for tests of privileges and of what even a
// superuser cannot do.
func AdminURL(t testing.TB, dbURL string) string {
	t.Helper()
	conf := server(t)
	pc, err := pgconn.ParseConfig(dbURL)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	conf.Database = pc.Database
	return conf.URL()
}
