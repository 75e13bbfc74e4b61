package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"

	"weft/internal/app"
	"weft/internal/postgres"
)

// weft dev --fresh: drop the database weft dev runs on and load the demo into it afresh, once
// the question naming the database is answered yes.

// yesFlag is dev's --yes, answering --fresh's question without a terminal. A bare --yes
// answers it for the database weft dev found or created itself; a database given in
// DATABASE_URL is dropped only when named: --yes=NAME.
type yesFlag struct {
	set  bool
	name string // "" for a bare --yes
}

func (y *yesFlag) String() string {
	if y == nil || !y.set {
		return "false"
	}
	if y.name == "" {
		return "true"
	}
	return y.name
}

func (y *yesFlag) Set(v string) error {
	switch v {
	case "true":
		*y = yesFlag{set: true}
	case "false", "":
		*y = yesFlag{}
	default:
		*y = yesFlag{set: true, name: v}
	}
	return nil
}

// IsBoolFlag lets --yes stand alone (the flag package then sets it to "true").
func (y *yesFlag) IsBoolFlag() bool { return true }

// stdin is where --fresh reads its answer (tests replace it).
var stdin = os.Stdin

// isTerminal reports whether f is a terminal, where a person can answer a question.
func isTerminal(f *os.File) bool {
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

// errFreshRefused: --fresh dropped nothing, as its question was not answered yes.
var errFreshRefused = errors.New("nothing was dropped")

// confirmFresh asks whether to drop db and reload the demo: on a terminal (in, terminal) the
// question goes to out and only y or yes drops it; elsewhere --yes answers (yes), naming the
// database when DATABASE_URL gave it. Any other way, it refuses with errFreshRefused.
func confirmFresh(db app.Database, yes yesFlag, in io.Reader, terminal bool, out io.Writer) error {
	name, where, err := postgres.DatabaseOf(db.URL)
	if err != nil {
		return err
	}
	question := fmt.Sprintf("Drop database %s and reload the demo? [y/N] ", name)
	if db.Given {
		question = fmt.Sprintf("Drop database %s (DATABASE_URL: %s) and reload the demo? [y/N] ", name, where)
	}
	switch {
	case yes.set && yes.name != "" && yes.name != name:
		return fmt.Errorf("--yes=%s names another database than the one weft dev runs on (%s): %w", yes.name, where, errFreshRefused)
	case yes.set && yes.name == "" && db.Given:
		return fmt.Errorf("database %s comes from DATABASE_URL, not from weft dev: name it to drop it, --yes=%s: %w", where, name, errFreshRefused)
	case yes.set:
		return nil
	case !terminal:
		how := "--yes"
		if db.Given {
			how = "--yes=" + name
		}
		return fmt.Errorf("weft dev --fresh drops database %s: answer its question at a terminal, or add %s: %w", where, how, errFreshRefused)
	}
	fmt.Fprint(out, question)
	answer, err := bufio.NewReader(in).ReadString('\n')
	if err != nil && answer == "" {
		fmt.Fprintln(out)
	}
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return nil
	}
	return fmt.Errorf("database %s kept: %w", name, errFreshRefused)
}
