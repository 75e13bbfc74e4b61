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
// checkpointer.
func Definition(pool *pgxpool.Pool, d dataagent.Deps) (workflow.Definition, error) {
	d.Catalog, d.Evidence, d.SQL = NewCatalog(pool), NewNotes(pool), NewExecutor(pool)
	if d.Python == nil {
		d.Python = sandbox.New(sandbox.Config{})
	}
	return dataagent.Definition(d)
}
