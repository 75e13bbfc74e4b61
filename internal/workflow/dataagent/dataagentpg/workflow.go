package dataagentpg

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"weft/internal/sandbox"
	"weft/internal/workflow"
	"weft/internal/workflow/dataagent"
)

// Definition is the data agent on pool: its catalog reader, notes and
// read-only executor from this package, Python in the bubblewrap sandbox
// (internal/sandbox; without bwrap, prlimit or python3 its steps take the
// degraded path, naming the Debian package), and d's model, artifacts and
// checkpointer. Collaborators d already has are kept (tests wrap them).
func Definition(pool *pgxpool.Pool, d dataagent.Deps) (workflow.Definition, error) {
	if d.Catalog == nil {
		d.Catalog = NewCatalog(pool)
	}
	if d.Evidence == nil {
		d.Evidence = NewNotes(pool)
	}
	if d.SQL == nil {
		d.SQL = NewExecutor(pool)
	}
	if d.Python == nil {
		d.Python = sandbox.New(sandbox.Config{})
	}
	return dataagent.Definition(d)
}
