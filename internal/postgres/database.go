package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Reachable reports whether a server answers at url within timeout.
func Reachable(ctx context.Context, url string, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return false
	}
	_ = conn.Close(ctx)
	return true
}

// EnsureDatabase creates database name on the server at serverURL unless it
// exists, and returns its URL.
func EnsureDatabase(ctx context.Context, serverURL, name string) (string, error) {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", redact(serverURL), err)
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists); err != nil {
		return "", fmt.Errorf("look up database %s: %w", name, err)
	}
	if !exists {
		if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			return "", fmt.Errorf("create database %s: %w", name, err)
		}
	}
	cfg, err := pgconn.ParseConfig(serverURL)
	if err != nil {
		return "", err
	}
	user := cfg.User
	if cfg.Password != "" {
		user += ":" + cfg.Password
	}
	return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", user, cfg.Host, cfg.Port, name), nil
}

// RecreateDatabase drops the database dbURL names and creates it again, empty, connected to
// the same server's maintenance database (postgres) as the same user. Sessions still
// connected to it are ended (DROP DATABASE … WITH (FORCE)). It returns the database's name.
func RecreateDatabase(ctx context.Context, dbURL string) (string, error) {
	cfg, err := pgx.ParseConfig(dbURL)
	if err != nil {
		return "", fmt.Errorf("parse the database URL: %w", err)
	}
	name := cfg.Database
	if name == "" || name == "postgres" {
		return "", fmt.Errorf("recreate database %q: name a database of its own, not the server's maintenance database", name)
	}
	cfg.Database = "postgres"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return "", fmt.Errorf("connect to %s: %w", redact(dbURL), err)
	}
	defer conn.Close(ctx)
	ident := pgx.Identifier{name}.Sanitize()
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+ident+" WITH (FORCE)"); err != nil {
		return "", fmt.Errorf("drop database %s: %w", name, err)
	}
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+ident); err != nil {
		return "", fmt.Errorf("create database %s again: %w", name, err)
	}
	return name, nil
}

// DatabaseOf names the database dbURL points at, and says where it is as people read it
// (user@host:port/name, without the password).
func DatabaseOf(dbURL string) (name, where string, err error) {
	cfg, err := pgconn.ParseConfig(dbURL)
	if err != nil {
		return "", "", fmt.Errorf("parse the database URL: %w", err)
	}
	return cfg.Database, redact(dbURL), nil
}

func redact(url string) string {
	cfg, err := pgconn.ParseConfig(url)
	if err != nil {
		return "the database"
	}
	return fmt.Sprintf("%s@%s:%d/%s", cfg.User, cfg.Host, cfg.Port, cfg.Database)
}
