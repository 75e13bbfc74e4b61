package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"runtime"
	"slices"
	"strings"
	"testing"

	"weft/internal/app"
	"weft/internal/auth"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// weft runs the command line with args, as main does, and returns what it printed.
func weft(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), args, &out, slog.New(slog.DiscardHandler))
	return out.String(), err
}

// TestFlagMistakesAreRefused: a word among the flags, an unknown flag or a value out of range
// stops the command before it touches anything (Go's flag parsing stops at the first word,
// and the flags after it were silently dropped: `weft serve extra --addr 127.0.0.1:8098`
// listened on :8080). No database is needed to refuse them.
func TestFlagMistakesAreRefused(t *testing.T) {
	t.Setenv("DATABASE_URL", "postgres://nobody@127.0.0.1:1/none?sslmode=disable&connect_timeout=1")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "extra", "--addr", "127.0.0.1:8098"}, `serve: unexpected argument "extra"`},
		{[]string{"dev", "--addr", "127.0.0.1:8098", "x"}, `dev: unexpected argument "x"`},
		{[]string{"migrate", "extra"}, `migrate: unexpected argument "extra"`},
		{[]string{"migrate", "--bogus"}, "flag provided but not defined: -bogus"},
		{[]string{"demo", "extra"}, `demo: unexpected argument "extra"`},
		{[]string{"demo-terminal", "x"}, `demo-terminal: unexpected argument "x"`},
		{[]string{"prune", "10"}, `prune: unexpected argument "10"`},
		{[]string{"prune", "--keep", "0"}, "--keep 0: a finished thread keeps at least its last checkpoint"},
		{[]string{"prune", "--older-than", "-1h"}, "--older-than -1h0m0s: it must be 0"},
		{[]string{"serve", "--workers", "0"}, "--workers 0: a process runs at least one job at once"},
		{[]string{"serve", "--prune-keep", "-5"}, "--prune-keep -5"},
		{[]string{"serve", "--prune-every", "1ns"}, "--prune-every 1ns: give 0 (never) or at least 1m0s"},
		{[]string{"serve", "--prune-every", "-1h"}, "--prune-every -1h0m0s: give 0 (never) or at least 1m0s"},
		{[]string{"worker", "--workers", "-1"}, "--workers -1"},
		{[]string{"token", "create", "--tenant", "demo", "--name", "a", "b", "c"}, `token create: unexpected argument "b"`},
		{[]string{"token", "create", "--name", "ci"}, "--tenant is required"},
		{[]string{"token", "create", "--tenant", "demo", "--name", " ci"}, "must not be empty or start or end with a space"},
		{[]string{"token", "create", "--tenant", "demo", "--name", "a\nb"}, "without line breaks or tabs"},
		{[]string{"token", "create", "--tenant", "demo", "--name", "x via token:y"}, `must not contain " via "`},
		{[]string{"token", "create", "--tenant", "demo", "--name", "a\u200bb"}, "the invisible character U+200B"},
		{[]string{"token", "create", "--tenant", "demo", "--name", "ci\u202eyeknom"}, "the invisible character U+202E"},
		{[]string{"token", "list", "--tenant", "demo", "--role", "pm"}, "--role is for create"},
		{[]string{"serve", "--addr", ""}, `--addr "": give the address`},
		{[]string{"dev", "--yes"}, "--yes answers the question of --fresh: give --fresh too"},
		{[]string{"serve", "--fresh"}, "flag provided but not defined: -fresh"},
		{[]string{"help", "bogus"}, `unknown command "bogus"`},
	} {
		_, err := weft(t, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("weft %q: %v, want an error saying %q", c.args, err, c.want)
		}
	}
	// A port in use is the error, before the database is even tried (it said "serving" and,
	// for dev, "Weft is running at", then failed).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, cmd := range []string{"serve", "dev"} {
		if _, err := weft(t, cmd, "--addr", ln.Addr().String()); err == nil || !strings.Contains(err.Error(), "address already in use") {
			t.Errorf("weft %s on a port in use: %v", cmd, err)
		}
	}
	// -h lists a command's flags and is not a failure (main exits 0 on errHelp), on standard
	// output as weft help's text (it went to standard error: `weft help serve | grep addr`
	// found nothing).
	var help bytes.Buffer
	helpOut = &help
	t.Cleanup(func() { helpOut = os.Stdout })
	for _, args := range [][]string{{"serve", "-h"}, {"token", "-h"}, {"token", "create", "-h"}, {"help", "prune"}, {"help", "token"}, {"help", "migrate"}} {
		help.Reset()
		out, err := weft(t, args...)
		if !errors.Is(err, errHelp) {
			t.Errorf("weft %q: %v", args, err)
		}
		if !strings.HasPrefix(strings.ToLower(out+help.String()), "usage: weft ") {
			t.Errorf("weft %q lists no usage on standard output: %q", args, out+help.String())
		}
	}
	if help.Reset(); !errors.Is(func() error { _, err := weft(t, "help", "serve"); return err }(), errHelp) || !strings.Contains(help.String(), "-addr") {
		t.Errorf("weft help serve does not list --addr: %q", help.String())
	}
	if out, err := weft(t, "help", "help"); err != nil || !strings.Contains(out, "Usage:") {
		t.Errorf("weft help help: %v %q", err, out)
	}
}

// TestTokenCommands: issuing and revoking a token leave audit rows naming who ran the
// command; an unknown tenant is an error in every subcommand.
func TestTokenCommands(t *testing.T) {
	url := pgtest.URL(t)
	t.Setenv("DATABASE_URL", url)
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{DatabaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := a.SeedDemoAll(ctx, auth.New(a.DB, auth.Options{})); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"token", "list", "--tenant", "nosuch"},
		{"token", "revoke", "--tenant", "nosuch", "--name", "ci"},
		{"token", "create", "--tenant", "nosuch", "--name", "ci"},
	} {
		if _, err := weft(t, args...); !errors.Is(err, auth.ErrUnknownTenant) {
			t.Errorf("weft %q: %v, want no such tenant", args, err)
		}
	}
	out, err := weft(t, "token", "create", "--tenant", app.DemoTenant, "--role", "admin", "--name", "ci")
	if err != nil || !strings.HasPrefix(out, "wft_") {
		t.Fatalf("token create: %q %v", out, err)
	}
	// A name is taken in any case, and a token is revoked by its name in any case (the audit
	// log's actor filter finds a token's actions by its name whatever the case).
	if _, err := weft(t, "token", "create", "--tenant", app.DemoTenant, "--role", "pm", "--name", "CI"); !errors.Is(err, auth.ErrTokenNameTaken) ||
		!strings.Contains(err.Error(), `already has a live token named "ci"`) {
		t.Fatalf("a second live token named CI beside ci: %v, want the name taken by ci", err)
	}
	if out, err := weft(t, "token", "revoke", "--tenant", app.DemoTenant, "--name", "Ci"); err != nil || !strings.Contains(out, "revoked token ci of tenant demo") {
		t.Fatalf("revoke by the name in another case: %q %v", out, err)
	}
	entries, _, err := a.Audit.List(ctx, postgres.AuditFilter{TenantID: app.DemoTenant, Subject: "token:ci"}, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Actor, "cli") {
			t.Errorf("%s recorded as done by %q, want the command line's user", e.Action, e.Actor)
		}
		got = append(got, e.Action+" "+string(e.Payload))
	}
	want := []string{postgres.ActionTokenRevoke + " {}", postgres.ActionTokenCreate + ` {"role": "admin"}`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("audit rows of the token: %q, want %q", got, want)
	}
}

// TestVersion: `weft version` (or --version) names the build and the newest migration it
// carries, the schema a database it migrates ends at; it needs no database.
func TestVersion(t *testing.T) {
	entries, err := os.ReadDir("../../migrations")
	if err != nil {
		t.Fatal(err)
	}
	newest := ""
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".sql"); ok && name > newest {
			newest = name
		}
	}
	for _, arg := range []string{"version", "--version"} {
		out, err := weft(t, arg)
		if err != nil || !strings.HasPrefix(out, "weft ") || !strings.Contains(out, runtime.Version()) || !strings.HasSuffix(out, " schema "+newest+"\n") {
			t.Errorf("weft %s: %q %v, want the build and schema %s", arg, out, err, newest)
		}
	}
	if _, err := weft(t, "version", "x"); err == nil {
		t.Error("weft version x: no error")
	}
}

// TestMigrateSaysWhere: `weft migrate` says the schema the database is at, run once or again
// (it printed nothing at all).
func TestMigrateSaysWhere(t *testing.T) {
	t.Setenv("DATABASE_URL", pgtest.URL(t))
	newest := newestMigration()
	version := strings.TrimLeft(newest[:strings.IndexByte(newest, '_')], "0") // 00022_x → 22
	for range 2 {
		out, err := weft(t, "migrate")
		if err != nil || out != "the database is at schema version "+version+" (this binary's newest migration: "+newest+")\n" {
			t.Fatalf("weft migrate: %q %v", out, err)
		}
	}
}

// TestPruneSaysWhatWent: `weft prune` says how many checkpoints went and, with --older-than,
// how many whole threads.
func TestPruneSaysWhatWent(t *testing.T) {
	t.Setenv("DATABASE_URL", pgtest.URL(t))
	out, err := weft(t, "prune", "--older-than", "720h", "--events-older-than", "0")
	if err != nil || out != "pruned 0 checkpoints\ndropped 0 finished threads idle longer than 720h0m0s whole (their checkpoints are counted above)\n" {
		t.Fatalf("weft prune: %q %v", out, err)
	}
	if out, err = weft(t, "prune", "--events-older-than", "0"); err != nil || out != "pruned 0 checkpoints\n" {
		t.Fatalf("weft prune without --older-than: %q %v", out, err)
	}
}

// TestConfirmFresh: --fresh drops the database only when its question, naming it, is answered
// yes at a terminal, or --yes answers it; a database DATABASE_URL gave only when --yes names it.
func TestConfirmFresh(t *testing.T) {
	t.Parallel()
	own := app.Database{URL: "postgres://postgres@127.0.0.1:5432/weft?sslmode=disable"}
	given := app.Database{URL: "postgres://me:secret@db.example:5433/shop?sslmode=disable", Given: true}
	for _, c := range []struct {
		name     string
		db       app.Database
		yes      string // the --yes flag's value: "" none, "true" bare
		terminal bool
		answer   string
		asked    string // the question printed, "" for none
		refused  string // "" when the database is to be dropped, else part of the error
	}{
		{"y at a terminal", own, "", true, "y\n", "Drop database weft and reload the demo? [y/N] ", ""},
		{"yes at a terminal", own, "", true, " YES \n", "Drop database weft and reload the demo? [y/N] ", ""},
		{"n at a terminal", own, "", true, "n\n", "Drop database weft and reload the demo? [y/N] ", "database weft kept"},
		{"just Enter", own, "", true, "\n", "Drop database weft and reload the demo? [y/N] ", "database weft kept"},
		{"end of input", own, "", true, "", "Drop database weft and reload the demo? [y/N] \n", "database weft kept"},
		{"no terminal", own, "", false, "y\n", "", "answer its question at a terminal, or add --yes"},
		{"--yes", own, "true", false, "", "", ""},
		{"--yes naming it", own, "weft", false, "", "", ""},
		{"--yes naming another", own, "weft2", false, "", "", "--yes=weft2 names another database"},
		{"DATABASE_URL's, at a terminal", given, "", true, "y\n",
			"Drop database shop (DATABASE_URL: me@db.example:5433/shop) and reload the demo? [y/N] ", ""},
		{"DATABASE_URL's, no terminal", given, "", false, "y\n", "", "or add --yes=shop"},
		{"DATABASE_URL's, --yes", given, "true", true, "y\n", "", "comes from DATABASE_URL, not from weft dev: name it to drop it, --yes=shop"},
		{"DATABASE_URL's, --yes naming it", given, "shop", false, "", "", ""},
	} {
		var y yesFlag
		if c.yes != "" {
			_ = y.Set(c.yes)
		}
		var out bytes.Buffer
		err := confirmFresh(c.db, y, strings.NewReader(c.answer), c.terminal, &out)
		if out.String() != c.asked {
			t.Errorf("%s: asked %q, want %q", c.name, out.String(), c.asked)
		}
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("%s: %v, want the database dropped", c.name, err)
		case c.refused != "" && (!errors.Is(err, errFreshRefused) || !strings.Contains(err.Error(), c.refused)):
			t.Errorf("%s: %v, want a refusal saying %q", c.name, err, c.refused)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: the refusal shows the password: %v", c.name, err)
		}
	}
}

// TestDevFresh: weft dev --fresh without a terminal and without --yes naming the database of
// DATABASE_URL drops nothing; with --yes=NAME it drops the database, creates it anew and loads
// the demo into it (what was added to it since is gone), then serves it.
func TestDevFresh(t *testing.T) {
	url := pgtest.AdminURL(t, pgtest.URL(t)) // an admin may create the database again
	t.Setenv("DATABASE_URL", url)
	name, _, err := postgres.DatabaseOf(url)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{DatabaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.SeedDemoAll(ctx, auth.New(a.DB, auth.Options{})); err != nil {
		t.Fatal(err)
	}
	if _, err := a.DB.Pool().Exec(ctx, `CREATE TABLE since_the_demo (x int); UPDATE users SET name = 'Renamed' WHERE email = 'pm@demo.weft'`); err != nil {
		t.Fatal(err)
	}
	a.Close()
	kept := func() bool {
		t.Helper()
		a, err := app.Open(ctx, app.Config{DatabaseURL: url})
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		var table, renamed bool
		if err := a.DB.Pool().QueryRow(ctx, `SELECT to_regclass('since_the_demo') IS NOT NULL,
			EXISTS (SELECT 1 FROM users WHERE email = 'pm@demo.weft' AND name = 'Renamed')`).Scan(&table, &renamed); err != nil {
			t.Fatal(err)
		}
		return table && renamed
	}

	// Standard input is no terminal: nothing is asked, and --yes must name DATABASE_URL's.
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	stdin = r
	t.Cleanup(func() { stdin = os.Stdin; r.Close() })
	for _, args := range [][]string{{"--fresh"}, {"--fresh", "--yes"}, {"--fresh", "--yes=" + name + "x"}} {
		if _, err := weft(t, append([]string{"dev", "--addr", "127.0.0.1:0"}, args...)...); !errors.Is(err, errFreshRefused) {
			t.Fatalf("weft dev %q: %v, want a refusal", args, err)
		}
	}
	if !kept() {
		t.Fatal("a refused --fresh changed the database")
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"dev", "--addr", "127.0.0.1:0", "--fresh", "--yes=" + name}, pw, slog.New(slog.DiscardHandler))
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	var said []string
	for lines.Scan() {
		if said = append(said, lines.Text()); strings.HasPrefix(lines.Text(), "demo logins") { // the last of what it says
			break
		}
	}
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if len(said) == 0 || said[0] != "Dropped database "+name+" and created it anew: the demo loads into it." ||
		!slices.ContainsFunc(said, func(s string) bool { return strings.HasPrefix(s, "The demo is loaded") }) {
		t.Fatalf("weft dev --fresh said:\n%s\n(%v)", strings.Join(said, "\n"), lines.Err())
	}
	if kept() {
		t.Fatal("after --fresh the database still holds what was added to it")
	}
	b, err := app.Open(ctx, app.Config{DatabaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	var users, evaluations int
	if err := b.DB.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM users WHERE email = 'pm@demo.weft' AND name <> 'Renamed'),
		(SELECT count(*) FROM jobs WHERE thread_id LIKE 'ev_demo-%')`).Scan(&users, &evaluations); err != nil || users != 1 || evaluations == 0 {
		t.Fatalf("the reloaded demo: pm user %d, evaluation jobs %d (%v)", users, evaluations, err)
	}
	b.Close()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("weft dev stopped with %v", err)
	}
}
