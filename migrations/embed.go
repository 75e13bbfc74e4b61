// Package migrations holds the goose SQL migrations (00001_*.sql …), embedded so the binary can
// migrate at boot. Migrations are immutable once landed; add a new file instead. It imports only
// the standard library.
package migrations

import "embed"

// FS holds every migration file.
//
//go:embed *.sql
var FS embed.FS
