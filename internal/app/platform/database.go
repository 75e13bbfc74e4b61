package platform

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"weft/internal/postgres"
	"weft/internal/postgres/pgcluster"
)

// LocalServer is the PostgreSQL server tried when DATABASE_URL is unset.
const LocalServer = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"

// Database is the database ResolveDatabase found.
type Database struct {
	URL string
	// Given: DATABASE_URL named it. Otherwise ResolveDatabase found or created database weft
	// itself, on the local server or in a private cluster.
	Given bool
	// Stop shuts a private cluster down; it is a no-op otherwise.
	Stop func()
}

// ResolveDatabase finds the database to use: DATABASE_URL when set; else
// database "weft" on the local server when one answers; else a private
// cluster started from the PostgreSQL binaries on PATH, kept in dataDir
// (run as a non-root user when this process is root).
func ResolveDatabase(ctx context.Context, log *slog.Logger, dataDir string) (Database, error) {
	noop := func() {}
	if u := os.Getenv("DATABASE_URL"); u != "" {
		return Database{URL: u, Given: true, Stop: noop}, nil
	}
	if postgres.Reachable(ctx, LocalServer, 3*time.Second) {
		u, err := postgres.EnsureDatabase(ctx, LocalServer, "weft")
		if err != nil {
			return Database{}, err
		}
		log.Info("using the local PostgreSQL server", "database", "weft")
		return Database{URL: u, Stop: noop}, nil
	}
	log.Info("no PostgreSQL server answers at 127.0.0.1:5432; starting a private one", "dir", dataDir)
	c, err := pgcluster.Start(ctx, pgcluster.Options{Dir: dataDir})
	if err != nil {
		return Database{}, fmt.Errorf("no PostgreSQL server answers at 127.0.0.1:5432 and a private one could not be started "+
			"(install PostgreSQL so that initdb and postgres are on PATH, or set DATABASE_URL): %w", err)
	}
	u, err := postgres.EnsureDatabase(ctx, c.URL(), "weft")
	if err != nil {
		_ = c.Stop()
		return Database{}, err
	}
	return Database{URL: u, Stop: func() { _ = c.Stop() }}, nil
}
