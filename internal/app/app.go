// Package app assembles a Weft process: the platform (internal/app/platform: the database,
// the stores, the registry, the runner and the event bus) with its workflows. cmd/weft and
// the end-to-end tests build the same App. One file, workflows.go, names the workflows: it
// registers each (one Definition each), with its store adapter and its own pages (Mounts),
// and loads each one's demo data. The server takes the platform's App, so it depends on no
// workflow; this package imports the server's mount surface, never the server.
package app

import (
	"context"
	"log/slog"

	"weft/internal/app/platform"
)

// App is a running Weft process's parts (platform.App), its workflows registered.
type App = platform.App

// Config configures an App.
type Config = platform.Config

// The demo's tenants: the one with the running demo, and a second one so that tenant
// isolation can be seen.
const (
	DemoTenant  = platform.DemoTenant
	OtherTenant = platform.OtherTenant
)

// Codes and the audit action of a fork (platform.App.Fork).
const (
	CodeThreadBusy   = platform.CodeThreadBusy
	CodeForkInvalid  = platform.CodeForkInvalid
	ActionThreadFork = platform.ActionThreadFork
)

// LocalServer is the PostgreSQL server tried when DATABASE_URL is unset.
const LocalServer = platform.LocalServer

// Database is the database ResolveDatabase found (platform.Database).
type Database = platform.Database

// ResolveDatabase finds the database to use: DATABASE_URL, else the local server's "weft",
// else a private cluster kept in dataDir (platform.ResolveDatabase).
func ResolveDatabase(ctx context.Context, log *slog.Logger, dataDir string) (Database, error) {
	return platform.ResolveDatabase(ctx, log, dataDir)
}

// Open connects (applying migrations), assembles the platform and registers the workflows.
func Open(ctx context.Context, cfg Config) (*App, error) {
	a, err := platform.Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := registerWorkflows(a); err != nil {
		a.Close()
		return nil, err
	}
	return a, nil
}
