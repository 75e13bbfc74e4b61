package dataagentpg

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"weft/internal/workflow/dataagent"
	"weft/internal/workflow/dataagent/nlsql"
)

// Catalog reads a schema's catalog as its analyst role sees it: the tables
// and columns it may read (information_schema), their comments and keys
// (pg_catalog), and the values of small text columns.
type Catalog struct {
	pool *pgxpool.Pool
	// MaxValues is the most distinct values a text column may have for them
	// to be listed (default 50).
	MaxValues int
	// ScanRows is the largest table (by the planner's estimate) whose text
	// columns are read with SELECT DISTINCT; bigger ones use pg_stats
	// (default 200,000).
	ScanRows int64
}

var _ dataagent.CatalogReader = (*Catalog)(nil)

// NewCatalog returns the catalog reader.
func NewCatalog(pool *pgxpool.Pool) *Catalog {
	return &Catalog{pool: pool, MaxValues: 50, ScanRows: 200_000}
}

// ReadCatalog implements dataagent.CatalogReader.
func (c *Catalog) ReadCatalog(ctx context.Context, schema string) (nlsql.Catalog, error) {
	cat := nlsql.Catalog{Schema: schema}
	err := asAnalyst(ctx, c.pool, schema, 10*time.Second, func(tx pgx.Tx) error {
		if err := c.tables(ctx, tx, &cat); err != nil {
			return err
		}
		if err := c.columns(ctx, tx, &cat); err != nil {
			return err
		}
		if err := c.keys(ctx, tx, &cat); err != nil {
			return err
		}
		return c.values(ctx, tx, &cat)
	})
	if err != nil {
		return nlsql.Catalog{}, fmt.Errorf("read catalog of %s: %w", schema, err)
	}
	return cat, nil
}

func (c *Catalog) tables(ctx context.Context, tx pgx.Tx, cat *nlsql.Catalog) error {
	rows, err := tx.Query(ctx, `
SELECT t.table_name::text, coalesce(obj_description(format('%I.%I', t.table_schema, t.table_name)::regclass, 'pg_class'), ''),
       greatest(cl.reltuples, 0)::bigint
FROM information_schema.tables AS t
JOIN pg_class AS cl ON cl.oid = format('%I.%I', t.table_schema, t.table_name)::regclass
WHERE t.table_schema = $1 AND t.table_type IN ('BASE TABLE', 'VIEW')
ORDER BY t.table_name`, cat.Schema)
	if err != nil {
		return err
	}
	cat.Tables, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (nlsql.Table, error) {
		var t nlsql.Table
		err := r.Scan(&t.Name, &t.Comment, &t.Rows)
		return t, err
	})
	return err
}

func (c *Catalog) columns(ctx context.Context, tx pgx.Tx, cat *nlsql.Catalog) error {
	rows, err := tx.Query(ctx, `
SELECT c.table_name::text, c.column_name::text, c.data_type::text,
       coalesce(col_description(format('%I.%I', c.table_schema, c.table_name)::regclass, c.ordinal_position::int), '')
FROM information_schema.columns AS c
WHERE c.table_schema = $1
ORDER BY c.table_name, c.ordinal_position`, cat.Schema)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var table string
		var col nlsql.Column
		if err := rows.Scan(&table, &col.Name, &col.Type, &col.Comment); err != nil {
			return err
		}
		if t := tableIndex(cat, table); t >= 0 {
			cat.Tables[t].Columns = append(cat.Tables[t].Columns, col)
		}
	}
	return rows.Err()
}

func tableIndex(cat *nlsql.Catalog, name string) int {
	for i, t := range cat.Tables {
		if t.Name == name {
			return i
		}
	}
	return -1
}

// keys reads primary keys and the foreign keys between the schema's tables.
func (c *Catalog) keys(ctx context.Context, tx pgx.Tx, cat *nlsql.Catalog) error {
	rows, err := tx.Query(ctx, `
SELECT con.contype::text, cl.relname::text, array_agg(a.attname::text ORDER BY k.ord),
       coalesce(rcl.relname::text, ''), array_remove(array_agg(ra.attname::text ORDER BY k.ord), NULL)
FROM pg_constraint AS con
JOIN pg_class AS cl ON cl.oid = con.conrelid
JOIN pg_namespace AS n ON n.oid = cl.relnamespace
LEFT JOIN pg_class AS rcl ON rcl.oid = con.confrelid
LEFT JOIN pg_namespace AS rn ON rn.oid = rcl.relnamespace
CROSS JOIN LATERAL unnest(con.conkey, coalesce(con.confkey, con.conkey)) WITH ORDINALITY AS k(att, ratt, ord)
JOIN pg_attribute AS a ON a.attrelid = con.conrelid AND a.attnum = k.att
LEFT JOIN pg_attribute AS ra ON ra.attrelid = con.confrelid AND ra.attnum = k.ratt
WHERE n.nspname = $1 AND (con.contype = 'p' OR (con.contype = 'f' AND rn.nspname = $1))
GROUP BY con.contype, cl.relname, con.conname, rcl.relname
ORDER BY cl.relname, con.conname`, cat.Schema)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var kind, table, ref string
		var cols, refCols []string
		if err := rows.Scan(&kind, &table, &cols, &ref, &refCols); err != nil {
			return err
		}
		t := tableIndex(cat, table)
		switch {
		case t < 0:
		case kind == "p":
			cat.Tables[t].PrimaryKey = cols
		case tableIndex(cat, ref) >= 0:
			cat.Tables[t].ForeignKeys = append(cat.Tables[t].ForeignKeys, nlsql.ForeignKey{Columns: cols, RefTable: ref, RefColumns: refCols})
		}
	}
	return rows.Err()
}

// values lists the distinct values of text columns that have few.
func (c *Catalog) values(ctx context.Context, tx pgx.Tx, cat *nlsql.Catalog) error {
	for ti, t := range cat.Tables {
		for ci, col := range t.Columns {
			if nlsql.Kind(col.Type) != nlsql.KindText || isKey(t, col.Name) {
				continue
			}
			var vals []string
			var err error
			if t.Rows <= c.ScanRows {
				vals, err = c.distinct(ctx, tx, cat.Schema, t.Name, col.Name)
			} else {
				vals, err = c.common(ctx, tx, cat.Schema, t.Name, col.Name)
			}
			if err != nil {
				return fmt.Errorf("values of %s.%s: %w", t.Name, col.Name, err)
			}
			cat.Tables[ti].Columns[ci].Values = vals
		}
	}
	return nil
}

func isKey(t nlsql.Table, col string) bool {
	for _, k := range t.PrimaryKey {
		if k == col {
			return true
		}
	}
	return false
}

func (c *Catalog) distinct(ctx context.Context, tx pgx.Tx, schema, table, col string) ([]string, error) {
	q := fmt.Sprintf("SELECT DISTINCT %s::text FROM %s WHERE %s IS NOT NULL ORDER BY 1 LIMIT %d",
		pgx.Identifier{col}.Sanitize(), pgx.Identifier{schema, table}.Sanitize(), pgx.Identifier{col}.Sanitize(), c.MaxValues+1)
	rows, err := tx.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	vals, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(vals) > c.MaxValues {
		return nil, err
	}
	return vals, nil
}

// common reads the most common values the planner's statistics hold, for a
// column whose distinct count is small.
func (c *Catalog) common(ctx context.Context, tx pgx.Tx, schema, table, col string) ([]string, error) {
	var vals []string
	err := tx.QueryRow(ctx, `
SELECT coalesce(most_common_vals::text::text[], '{}') FROM pg_stats
WHERE schemaname = $1 AND tablename = $2 AND attname = $3 AND n_distinct > 0 AND n_distinct <= $4`,
		schema, table, col, c.MaxValues).Scan(&vals)
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	return vals, err
}
