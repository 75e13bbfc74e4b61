package dataagentpg

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"weft/internal/workflow/dataagent"
	"weft/internal/workflow/dataagent/nlsql"
)

// Executor runs analysis queries: parsed first (one read-only SELECT),
// then in a READ ONLY transaction as the schema's analyst role, under a
// statement timeout, through a cursor that fetches at most MaxRows rows
// (one more tells that the result was cut off). The transaction is always
// rolled back.
type Executor struct {
	pool    *pgxpool.Pool
	Timeout time.Duration // default 5s
	MaxRows int           // default 10,000
}

var _ dataagent.SQLExecutor = (*Executor)(nil)

// NewExecutor returns an executor with the default limits.
func NewExecutor(pool *pgxpool.Pool) *Executor {
	return &Executor{pool: pool, Timeout: 5 * time.Second, MaxRows: 10_000}
}

// Query implements dataagent.SQLExecutor. The query's own failures are
// *dataagent.QueryError: refused by the parser (Code "refused"), or the
// database's error with its SQLSTATE (a permission, the timeout, …).
func (e *Executor) Query(ctx context.Context, schema, sql string) (dataagent.ResultSet, error) {
	if err := dataagent.CheckSelect(sql); err != nil {
		return dataagent.ResultSet{}, &dataagent.QueryError{Code: "refused", Message: err.Error()}
	}
	return e.run(ctx, schema, sql)
}

// run executes sql as the analyst, without the parser's check.
func (e *Executor) run(ctx context.Context, schema, sql string) (dataagent.ResultSet, error) {
	var res dataagent.ResultSet
	err := asAnalyst(ctx, e.pool, schema, e.Timeout, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "DECLARE weft_analysis NO SCROLL CURSOR FOR "+sql, pgx.QueryExecModeExec); err != nil {
			return err
		}
		rr := tx.Conn().PgConn().ExecParams(ctx, fmt.Sprintf("FETCH FORWARD %d FROM weft_analysis", e.MaxRows+1), nil, nil, nil, nil)
		for _, fd := range rr.FieldDescriptions() {
			res.Columns = append(res.Columns, dataagent.ResultColumn{Name: fd.Name, Kind: kindOf(fd.DataTypeOID)})
		}
		for rr.NextRow() {
			vals := rr.Values()
			row := make([]string, len(vals))
			for i, v := range vals {
				row[i] = string(v)
			}
			res.Rows = append(res.Rows, row)
		}
		_, err := rr.Close()
		return err
	})
	if err != nil {
		return dataagent.ResultSet{}, e.classify(err)
	}
	res.Limit = e.MaxRows
	if len(res.Rows) > e.MaxRows {
		res.Rows, res.Truncated = res.Rows[:e.MaxRows], true
	}
	if res.Rows == nil {
		res.Rows = [][]string{}
	}
	return res, nil
}

// classify makes a database error of the query a *dataagent.QueryError
// with a plain message; other errors pass through.
func (e *Executor) classify(err error) error {
	var pe *pgconn.PgError
	var se *setupError
	if errors.As(err, &se) || !errors.As(err, &pe) {
		return err
	}
	msg := pe.Message
	switch pe.Code {
	case "57014":
		msg = fmt.Sprintf("the query ran longer than the %s limit and was cancelled", e.Timeout)
	case "42501":
		msg = "permission denied: " + pe.Message + " (analysis queries may read the analysis schema only)"
	case "25006":
		msg = "refused by the read-only transaction: " + pe.Message
	}
	if pe.Detail != "" {
		msg += " (" + pe.Detail + ")"
	}
	return &dataagent.QueryError{Code: pe.Code, Message: msg}
}

func kindOf(oid uint32) string {
	switch oid {
	case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID, pgtype.NumericOID, pgtype.Float4OID, pgtype.Float8OID:
		return nlsql.KindNumber
	case pgtype.TextOID, pgtype.VarcharOID, pgtype.BPCharOID, pgtype.NameOID:
		return nlsql.KindText
	case pgtype.DateOID, pgtype.TimestampOID, pgtype.TimestamptzOID:
		return nlsql.KindTime
	case pgtype.BoolOID:
		return nlsql.KindBool
	}
	return nlsql.KindOther
}
