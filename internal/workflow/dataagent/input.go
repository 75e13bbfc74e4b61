package dataagent

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// ExampleInput is a run's input, for a start form: a question about the
// demo schema, without human review.
var ExampleInput = json.RawMessage(`{"input": "GMV by region last month", "schema": "analytics", "human_review_enabled": false}`)

// ErrSchemaName marks a schema name that is not a plain identifier.
var ErrSchemaName = errors.New("schema name must be a lower-case identifier of at most 40 characters")

var schemaName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,39}$`)

// CheckSchema refuses a schema name that is not a plain lower-case
// identifier, or one of PostgreSQL's own or the application's.
func CheckSchema(schema string) error {
	if !schemaName.MatchString(schema) || strings.HasPrefix(schema, "pg_") || schema == "information_schema" ||
		schema == "public" || schema == "dataagent" {
		return fmt.Errorf("%w: %q", ErrSchemaName, schema)
	}
	return nil
}

// CheckInput refuses a run's input before it is queued: it takes the
// message ("input"), the schema and human_review_enabled only; the message
// is 1 to MaxInputRunes characters; the schema a plain identifier.
func CheckInput(input json.RawMessage) error {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(input, &fields); err != nil {
		return fmt.Errorf(`a data agent run's input is a JSON object such as {"input": "GMV by region last month", "schema": "analytics"}: %w`, err)
	}
	for name := range fields {
		if name != "input" && name != "schema" && name != "human_review_enabled" {
			return fmt.Errorf("a data agent run takes input, schema and human_review_enabled; %q is worked out by the run", name)
		}
	}
	var in struct {
		Input  string `json:"input"`
		Schema string `json:"schema"`
		Review bool   `json:"human_review_enabled"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		return fmt.Errorf("a data agent run's input: %w", err)
	}
	switch n := utf8.RuneCountInString(strings.TrimSpace(in.Input)); {
	case n == 0:
		return errors.New(`a data agent run needs a question in "input", e.g. "GMV by region last month"`)
	case n > MaxInputRunes:
		return fmt.Errorf("the question is %d characters; the limit is %d", n, MaxInputRunes)
	}
	return CheckSchema(in.Schema)
}

// SubjectOf names a run by its question (at most 80 characters).
func SubjectOf(input json.RawMessage) string {
	var in struct {
		Input string `json:"input"`
	}
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	q := strings.Join(strings.Fields(in.Input), " ")
	if r := []rune(q); len(r) > 80 {
		q = string(r[:79]) + "…"
	}
	return q
}
