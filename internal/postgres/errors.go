package postgres

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"weft/internal/graph"
)

// SQLSTATE codes this package tells apart.
const (
	codeUniqueViolation  = "23505"
	codeNotNullViolation = "23502"
)

// translate turns a driver error into a domain one: no rows is graph.ErrNotFound, a unique
// violation graph.ErrConflict. Any other server error becomes a plain error carrying its
// message and SQLSTATE (no pgx type escapes); connection and context errors are wrapped, so
// errors.Is(err, context.Canceled) still holds.
func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return graph.ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		if pgErr.Code == codeUniqueViolation {
			return fmt.Errorf("%w: duplicate key (%s)", graph.ErrConflict, pgErr.ConstraintName)
		}
		return fmt.Errorf("postgres: %s (SQLSTATE %s)", pgErr.Message, pgErr.Code)
	}
	return err
}

// violates reports whether err is the server's SQLSTATE code on the given column.
func violates(err error, code, column string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code && pgErr.ColumnName == column
}
