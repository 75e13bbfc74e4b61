package postgres

import (
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"weft/internal/fault"
	"weft/internal/graph"
)

// SQLSTATE codes this package tells apart.
const (
	codeUniqueViolation  = "23505"
	codeNotNullViolation = "23502"
	// Text the server cannot store: a NUL byte or bytes that are not UTF-8
	// (character_not_in_repertoire), an escaped NUL in JSON for jsonb (untranslatable_character).
	codeBadCharacter   = "22021"
	codeUntranslatable = "22P05"
)

// translate turns a driver error into a domain one: no rows is graph.ErrNotFound, a unique
// violation graph.ErrConflict, text the server cannot store a validation fault. Any other server error becomes a plain error carrying its
// message and SQLSTATE (no pgx type escapes); connection and context errors are wrapped, so
// errors.Is(err, context.Canceled) still holds.
// UnstorableText is the message of the validation error for text PostgreSQL cannot store.
const UnstorableText = "The request holds a character that cannot be stored (a NUL byte or invalid UTF-8). Remove it and try again."

func translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return graph.ErrNotFound
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case codeUniqueViolation:
			return fmt.Errorf("%w: duplicate key (%s)", graph.ErrConflict, pgErr.ConstraintName)
		case codeBadCharacter, codeUntranslatable:
			return fault.New(fault.Validation, fault.CodeValidation, UnstorableText)
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
