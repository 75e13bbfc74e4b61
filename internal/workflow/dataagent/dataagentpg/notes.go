package dataagentpg

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"weft/internal/postgres"
	"weft/internal/workflow/dataagent"
	"weft/internal/workflow/dataagent/nlsql"
)

// Notes stores the business notes of each analysis schema and finds them
// with PostgreSQL full-text search, as bid evaluation finds evidence: the
// text is indexed by postgres.SearchTokens (Latin words, CJK bigrams) in a
// 'simple' tsvector, and a query is an OR of its tokens ranked by ts_rank.
type Notes struct{ pool *pgxpool.Pool }

var _ dataagent.EvidenceSearch = (*Notes)(nil)

// NewNotes returns the notes store.
func NewNotes(pool *pgxpool.Pool) *Notes { return &Notes{pool: pool} }

// notesDDL creates the notes table, in a schema of its own that no analyst
// role can read.
const notesDDL = `
CREATE SCHEMA IF NOT EXISTS dataagent;
CREATE TABLE IF NOT EXISTS dataagent.notes (
    schema_name text NOT NULL,
    id          text NOT NULL,
    title       text NOT NULL DEFAULT '',
    body        text NOT NULL,
    search      text NOT NULL,
    tsv         tsvector GENERATED ALWAYS AS (to_tsvector('simple', search)) STORED,
    PRIMARY KEY (schema_name, id)
);
CREATE INDEX IF NOT EXISTS notes_tsv ON dataagent.notes USING gin (tsv);`

// Ensure creates the notes table if it is missing.
func (n *Notes) Ensure(ctx context.Context) error {
	err := retryConcurrent(ctx, func() error {
		_, err := n.pool.Exec(ctx, notesDDL, pgx.QueryExecModeSimpleProtocol)
		return err
	})
	if err != nil {
		return fmt.Errorf("create notes table: %w", err)
	}
	return nil
}

// Replace sets schema's notes to notes.
func (n *Notes) Replace(ctx context.Context, schema string, notes []nlsql.Note) error {
	return pgx.BeginFunc(ctx, n.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM dataagent.notes WHERE schema_name = $1`, schema); err != nil {
			return fmt.Errorf("replace notes: %w", err)
		}
		for _, note := range notes {
			if strings.TrimSpace(note.ID) == "" || strings.TrimSpace(note.Text) == "" {
				return fmt.Errorf("replace notes: a note needs an id and a text")
			}
			if _, err := tx.Exec(ctx, `INSERT INTO dataagent.notes (schema_name, id, title, body, search) VALUES ($1, $2, $3, $4, $5)`,
				schema, note.ID, note.Title, note.Text, strings.Join(postgres.SearchTokens(note.Title+" "+note.Text), " ")); err != nil {
				return fmt.Errorf("replace notes: %w", err)
			}
		}
		return nil
	})
}

// SearchNotes ranks schema's notes against query, best first.
func (n *Notes) SearchNotes(ctx context.Context, schema, query string, k int) ([]nlsql.Note, error) {
	tsq := searchQuery(query)
	if tsq == "" {
		return nil, nil
	}
	rows, err := n.pool.Query(ctx, `
SELECT id, title, body, ts_rank(tsv, to_tsquery('simple', $2), 32)::double precision AS score
FROM dataagent.notes
WHERE schema_name = $1 AND tsv @@ to_tsquery('simple', $2)
ORDER BY score DESC, id
LIMIT $3`, schema, tsq, k)
	if err != nil {
		return nil, fmt.Errorf("search notes: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (nlsql.Note, error) {
		var note nlsql.Note
		err := r.Scan(&note.ID, &note.Title, &note.Text, &note.Score)
		return note, err
	})
	if err != nil {
		return nil, fmt.Errorf("search notes: %w", err)
	}
	return out, nil
}

// searchQuery is an OR tsquery of text's distinct tokens, without the
// commonest English words. Tokens hold letters and digits only, so they
// need no quoting.
func searchQuery(text string) string {
	seen := map[string]bool{}
	var terms []string
	for _, t := range postgres.SearchTokens(text) {
		if !seen[t] && !noise[t] {
			seen[t] = true
			terms = append(terms, t)
		}
	}
	return strings.Join(terms, " | ")
}

var noise = map[string]bool{"the": true, "and": true, "of": true, "to": true, "in": true, "for": true, "is": true, "on": true,
	"with": true, "by": true, "or": true, "be": true, "are": true, "at": true, "as": true, "what": true, "was": true, "how": true,
	"were": true, "did": true, "do": true, "does": true, "many": true, "much": true, "which": true, "there": true}
