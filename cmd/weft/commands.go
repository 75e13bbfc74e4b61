package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/user"
	"sync"
	"text/tabwriter"
	"time"

	"weft/internal/app"
	"weft/internal/auth"
	"weft/internal/postgres"
	"weft/internal/runner"
	"weft/internal/server"
)

func databaseURL() string {
	if u := os.Getenv("DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/weft?sslmode=disable"
}

type serveFlags struct {
	addr       string
	workers    int
	secure     bool
	trustProxy bool
	pruneEvery time.Duration
	pruneKeep  int
	eventsKeep time.Duration
	demoLogins bool
	fresh      bool    // dev: drop the database and load the demo afresh
	yes        yesFlag // dev: --fresh's answer, without a terminal
}

// errHelp ends a command whose flags were asked for (-h): not a failure.
var errHelp = errors.New("help requested")

// parseFlags parses args into fs. Go's flag parsing stops at the first word that is not a
// flag and leaves the flags after it unread, so any word left over is an error: a typo never
// silently drops the flags that follow it. -h prints the flags and ends with errHelp.
// helpOut is where a command's flag list goes (tests read it).
var helpOut io.Writer = os.Stdout

func parseFlags(fs *flag.FlagSet, args []string) error {
	// A mistake is said once, in main's one line, not after the whole flag list; the flag
	// list (-h, weft help COMMAND) goes to standard output, as weft help's does.
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(helpOut)
		fmt.Fprintf(helpOut, "Usage: weft %s [flags]\n", fs.Name())
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n == 0 {
			fmt.Fprintln(helpOut, "  (no flags; weft help says what it does)")
		}
		fs.PrintDefaults()
		return errHelp
	case err != nil:
		return fmt.Errorf("%s: %w (weft help %s lists its flags)", fs.Name(), err, fs.Name())
	case fs.NArg() > 0:
		return fmt.Errorf("%s: unexpected argument %q (flags are written --name value; weft help lists them)", fs.Name(), fs.Arg(0))
	}
	return nil
}

// atLeast refuses a flag's value below min.
func atLeast[T int | time.Duration](name string, v, min T, why string) error {
	if v < min {
		return fmt.Errorf("--%s %v: %s", name, v, why)
	}
	return nil
}

// minPruneEvery is the shortest --prune-every: each prune walks every finished thread, and
// a shorter interval would keep a server busy pruning (1ns: a fifth of a core while idle).
const minPruneEvery = time.Minute

// pruneInterval checks --prune-every: 0 (never), or at least minPruneEvery.
func pruneInterval(d time.Duration) error {
	if d != 0 && d < minPruneEvery {
		return fmt.Errorf("--prune-every %v: give 0 (never) or at least %v", d, minPruneEvery)
	}
	return nil
}

func parseServe(name string, args []string) (serveFlags, error) {
	var f serveFlags
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	addr := ":8080"
	if name == "dev" {
		// The demo's passwords are in the README and on its login page: this machine only,
		// unless asked (as temporal server start-dev does).
		addr = "127.0.0.1:8080"
	}
	fs.StringVar(&f.addr, "addr", addr, "listen address")
	fs.IntVar(&f.workers, "workers", 4, "jobs run at once by this process")
	fs.BoolVar(&f.secure, "secure-cookies", false, "mark cookies Secure (serve behind HTTPS)")
	fs.BoolVar(&f.trustProxy, "trust-proxy", false, "take client addresses from X-Forwarded-For (behind a reverse proxy that sets it)")
	fs.DurationVar(&f.pruneEvery, "prune-every", time.Hour, "how often to prune finished threads (0: never; at least 1m)")
	fs.IntVar(&f.pruneKeep, "prune-keep", 50, "checkpoints kept per finished thread")
	fs.DurationVar(&f.eventsKeep, "events-keep", defaultEventsKeep, "how long stream events are kept (0: forever)")
	fs.BoolVar(&f.demoLogins, "demo-logins", name == "dev", "list the demo logins on the login page")
	if name == "dev" {
		fs.BoolVar(&f.fresh, "fresh", false, "drop the database and load the demo afresh (asks first)")
		fs.Var(&f.yes, "yes", "answer --fresh's question yes; --yes=NAME for a database given in DATABASE_URL")
	}
	if err := parseFlags(fs, args); err != nil {
		return f, err
	}
	if f.addr == "" {
		return f, errors.New(`--addr "": give the address to listen on, such as :8080 or 127.0.0.1:8080`)
	}
	if f.yes.set && !f.fresh {
		return f, errors.New("--yes answers the question of --fresh: give --fresh too")
	}
	return f, errors.Join(
		atLeast("workers", f.workers, 1, "a process runs at least one job at once"),
		pruneInterval(f.pruneEvery),
		atLeast("prune-keep", f.pruneKeep, 1, "a finished thread keeps at least its last checkpoint"),
		atLeast("events-keep", f.eventsKeep, 0, "it must be 0 (forever) or more"))
}

func serve(ctx context.Context, args []string, log *slog.Logger) error {
	f, err := parseServe("serve", args)
	if err != nil {
		return err
	}
	ln, err := listen(f.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	return serveOn(ctx, ln, databaseURL(), f, log, nil)
}

// listen takes the address first: a port in use fails before anything else is done (a
// database resolved or started, migrations) or says the console is up.
func listen(addr string) (net.Listener, error) {
	return net.Listen("tcp", addr)
}

// serveOn runs the console, the API and the workers on the database at url, serving on ln.
func serveOn(ctx context.Context, ln net.Listener, url string, f serveFlags, log *slog.Logger, ready func(a *app.App, authSvc *auth.Service) error) error {
	a, err := app.Open(ctx, app.Config{DatabaseURL: url, Logger: log, Runner: runner.Config{Concurrency: f.workers}})
	if err != nil {
		return err
	}
	defer a.Close()
	authSvc := auth.New(a.DB, auth.Options{Secure: f.secure})
	if ready != nil {
		if err := ready(a, authSvc); err != nil {
			return err
		}
	}
	sc := server.Config{App: a, Auth: authSvc, Log: log, SecureCookies: f.secure, TrustProxy: f.trustProxy,
		MetricsToken: os.Getenv("WEFT_METRICS_TOKEN")}
	if f.demoLogins {
		sc.DemoLogins = server.DemoLogins()
	}
	srv := server.New(sc)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		if err := a.RunWorkers(ctx); err != nil {
			log.Error("workers stopped", "err", err)
		}
	}()
	go func() { defer wg.Done(); pruneLoop(ctx, a, f, log) }()
	log.Info("serving", "addr", ln.Addr().String())
	err = srv.Serve(ctx, ln)
	cancel()
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

func pruneLoop(ctx context.Context, a *app.App, f serveFlags, log *slog.Logger) {
	if f.pruneEvery <= 0 {
		return
	}
	runner.Every(ctx, f.pruneEvery, func(ctx context.Context) {
		if n, err := a.Prune(ctx, f.pruneKeep, 0); err != nil {
			log.Warn("prune", "err", err)
		} else if n.Checkpoints > 0 {
			log.Info("pruned checkpoints of finished threads", "checkpoints", n.Checkpoints)
		}
		if f.eventsKeep <= 0 {
			return
		}
		if n, err := a.PruneEvents(ctx, f.eventsKeep); err != nil {
			log.Warn("prune events", "err", err)
		} else if n > 0 {
			log.Info("pruned stream events", "events", n, "older_than", f.eventsKeep)
		}
		if n, err := a.PruneTokens(ctx, f.eventsKeep); err != nil {
			log.Warn("prune resume tokens", "err", err)
		} else if n > 0 {
			log.Info("pruned expired resume tokens", "tokens", n, "expired_before", f.eventsKeep)
		}
	})
}

// defaultEventsKeep is how long stream events are kept: they serve live pages and their
// reconnects, not history.
const defaultEventsKeep = 7 * 24 * time.Hour

func worker(ctx context.Context, args []string, log *slog.Logger) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	n := fs.Int("workers", 4, "jobs run at once")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := atLeast("workers", *n, 1, "a worker runs at least one job at once"); err != nil {
		return err
	}
	a, err := app.Open(ctx, app.Config{DatabaseURL: databaseURL(), Logger: log, Runner: runner.Config{Concurrency: *n}})
	if err != nil {
		return err
	}
	defer a.Close()
	log.Info("worker running", "worker", a.Runner.WorkerID())
	return a.RunWorkers(ctx)
}

func migrate(ctx context.Context, args []string, out io.Writer, log *slog.Logger) error {
	if err := parseFlags(flag.NewFlagSet("migrate", flag.ContinueOnError), args); err != nil {
		return err
	}
	if err := postgres.Migrate(ctx, databaseURL(), log); err != nil {
		return err
	}
	v, err := postgres.SchemaVersion(ctx, databaseURL())
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "the database is at schema version %d (this binary's newest migration: %s)\n", v, newestMigration())
	return nil
}

func prune(ctx context.Context, args []string, out io.Writer, log *slog.Logger) error {
	fs := flag.NewFlagSet("prune", flag.ContinueOnError)
	keep := fs.Int("keep", 50, "checkpoints kept per finished thread")
	older := fs.Duration("older-than", 0, "also drop finished threads whose last checkpoint is older than this (e.g. 720h)")
	events := fs.Duration("events-older-than", defaultEventsKeep, "also delete stream events older than this, and resume tokens expired that long (0: keep them)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := errors.Join(atLeast("keep", *keep, 1, "a finished thread keeps at least its last checkpoint"),
		atLeast("older-than", *older, 0, "it must be 0 (drop no thread) or more"),
		atLeast("events-older-than", *events, 0, "it must be 0 (keep them) or more")); err != nil {
		return err
	}
	a, err := app.Open(ctx, app.Config{DatabaseURL: databaseURL(), Logger: log})
	if err != nil {
		return err
	}
	defer a.Close()
	pruned, err := a.Prune(ctx, *keep, *older)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "pruned %d checkpoints\n", pruned.Checkpoints)
	if *older > 0 {
		fmt.Fprintf(out, "dropped %d finished threads idle longer than %s whole (their checkpoints are counted above)\n", pruned.Threads, *older)
	}
	if *events > 0 {
		n, err := a.PruneEvents(ctx, *events)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "pruned %d stream events older than %s\n", n, *events)
		if n, err = a.PruneTokens(ctx, *events); err != nil {
			return err
		}
		fmt.Fprintf(out, "pruned %d resume tokens expired more than %s ago\n", n, *events)
	}
	return nil
}

func demo(ctx context.Context, args []string, out io.Writer, log *slog.Logger) error {
	if err := parseFlags(flag.NewFlagSet("demo", flag.ContinueOnError), args); err != nil {
		return err
	}
	a, err := app.Open(ctx, app.Config{DatabaseURL: databaseURL(), Logger: log})
	if err != nil {
		return err
	}
	defer a.Close()
	loaded, err := a.SeedDemoAll(ctx, auth.New(a.DB, auth.Options{}))
	if err != nil {
		return err
	}
	if loaded {
		fmt.Fprintln(out, "demo loaded: four evaluations queued (a pass, a human review, a disqualification, a dead letter for want of a bid); run `weft serve` or `weft worker` to run them")
	} else {
		fmt.Fprintln(out, "demo already loaded")
	}
	printLogins(out)
	return nil
}

func printLogins(out io.Writer) {
	fmt.Fprintln(out, "demo logins (password "+auth.DemoPassword+"):")
	for _, u := range auth.DemoUsers(app.DemoTenant, app.OtherTenant) {
		fmt.Fprintf(out, "  %-22s %-9s tenant %s\n", u.Email, u.Role, u.TenantID)
	}
}

// dev is `make run`: the console with the demo on whatever database can be
// had on this machine.
func dev(ctx context.Context, args []string, out io.Writer, log *slog.Logger) error {
	f, err := parseServe("dev", args)
	if err != nil {
		return err
	}
	ln, err := listen(f.addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	db, err := app.ResolveDatabase(ctx, log, ".data/pg")
	if err != nil {
		return err
	}
	defer db.Stop()
	if f.fresh {
		if err := confirmFresh(db, f.yes, stdin, isTerminal(stdin), out); err != nil {
			return err
		}
		name, err := postgres.RecreateDatabase(ctx, db.URL)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "Dropped database %s and created it anew: the demo loads into it.\n", name)
	}
	return serveOn(ctx, ln, db.URL, f, log, func(a *app.App, authSvc *auth.Service) error {
		loaded, err := a.SeedDemoAll(ctx, authSvc)
		if err != nil {
			return err
		}
		host := f.addr
		if len(host) > 0 && host[0] == ':' {
			host = "localhost" + host
		}
		if h, port, err := net.SplitHostPort(host); err == nil && port == "0" { // --addr :0: the port given
			_, given, _ := net.SplitHostPort(ln.Addr().String())
			host = net.JoinHostPort(h, given)
		}
		fmt.Fprintf(out, "\nWeft is running at http://%s/\n", host)
		if h, _, err := net.SplitHostPort(f.addr); err == nil && (net.ParseIP(h).IsLoopback() || h == "localhost") {
			fmt.Fprintln(out, "It answers this machine only; --addr :8080 (make run RUN_ARGS=\"dev --addr :8080\") opens it to others.")
		}
		if loaded {
			fmt.Fprintln(out, "The demo is loaded and its four evaluations are running.")
		}
		printLogins(out)
		fmt.Fprintln(out)
		return nil
	})
}

// cliActor is who the audit log records for a command run here: "cli:" and the system user.
func cliActor() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return "cli:" + u.Username
	}
	return "cli"
}

const tokenUsage = "usage: weft token create --tenant T --role pm|reviewer|admin --name N | weft token list --tenant T | weft token revoke --tenant T --name N"

func token(ctx context.Context, args []string, out io.Writer, log *slog.Logger) error {
	if len(args) == 0 {
		return errors.New(tokenUsage)
	}
	sub := args[0]
	if sub == "-h" || sub == "--help" || sub == "help" {
		fmt.Fprintln(out, tokenUsage)
		return errHelp
	}
	if sub != "create" && sub != "list" && sub != "revoke" {
		return errors.New(tokenUsage)
	}
	fs := flag.NewFlagSet("token "+sub, flag.ContinueOnError)
	tenant := fs.String("tenant", "", "tenant the token acts in (required)")
	role := fs.String("role", "pm", "role: pm, reviewer or admin (create)")
	name := fs.String("name", "", "a name to recognise the token by (create, revoke)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	roleSet := false
	fs.Visit(func(f *flag.Flag) { roleSet = roleSet || f.Name == "role" })
	switch {
	case roleSet && sub != "create":
		return fmt.Errorf("token %s: --role is for create (list shows every token's role)", sub)
	case *tenant == "":
		return fmt.Errorf("--tenant is required: the tenant whose tokens these are (the demo's is %s)", app.DemoTenant)
	case sub != "list" && *name == "":
		return errors.New("--name is required: the name the token is recognised by")
	case sub == "create" && auth.CheckTokenName(*name) != nil:
		return auth.CheckTokenName(*name)
	case sub == "create" && !auth.Role(*role).Valid():
		return fmt.Errorf("--role %q: it must be pm, reviewer or admin", *role)
	}
	a, err := app.Open(ctx, app.Config{DatabaseURL: databaseURL(), Logger: log})
	if err != nil {
		return err
	}
	defer a.Close()
	svc := auth.New(a.DB, auth.Options{})
	actor := cliActor()
	audit := func(action string, payload map[string]string) error {
		if payload == nil {
			payload = map[string]string{}
		}
		raw, err := json.Marshal(payload)
		if err != nil {
			return err
		}
		_, err = a.Audit.Append(ctx, postgres.Entry{TenantID: *tenant, Actor: actor, Action: action, Subject: "token:" + *name, Payload: raw})
		return err
	}
	switch sub {
	case "list":
		toks, err := svc.APITokens(ctx, *tenant)
		if err != nil {
			return err
		}
		if len(toks) == 0 {
			fmt.Fprintf(out, "tenant %s has no API tokens\n", *tenant)
			return nil
		}
		tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tROLE\tCREATED (UTC)\tBY\tLAST USED (UTC)\tSTATE")
		stamp := func(t *time.Time) string {
			if t == nil {
				return "never"
			}
			return t.UTC().Format("2006-01-02 15:04")
		}
		for _, t := range toks {
			state := "live"
			if t.RevokedAt != nil {
				state = "revoked " + stamp(t.RevokedAt)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.Name, t.Role, stamp(&t.CreatedAt), t.CreatedBy, stamp(t.LastUsedAt), state)
		}
		return tw.Flush()
	case "revoke":
		stored, err := svc.RevokeAPIToken(ctx, *tenant, *name)
		if err != nil {
			return err
		}
		*name = stored // the audit row names the token as it is known
		if err := audit(postgres.ActionTokenRevoke, nil); err != nil {
			return fmt.Errorf("the token is revoked, but its audit row could not be written: %w", err)
		}
		fmt.Fprintf(out, "revoked token %s of tenant %s: requests with it now get 401\n", *name, *tenant)
		return nil
	}
	secret, err := svc.IssueAPIToken(ctx, *tenant, *name, auth.Role(*role), actor)
	if err != nil {
		return err
	}
	if err := audit(postgres.ActionTokenCreate, map[string]string{"role": *role}); err != nil {
		// A credential nobody can trace is not handed out.
		if _, rerr := svc.RevokeAPIToken(ctx, *tenant, *name); rerr != nil {
			return fmt.Errorf("the token's audit row could not be written (%w), and revoking the token failed too: %w; revoke it with weft token revoke", err, rerr)
		}
		return fmt.Errorf("the token's audit row could not be written, so the token was revoked: %w", err)
	}
	fmt.Fprintf(out, "%s\n(shown once; send it as Authorization: Bearer <token>)\n", secret)
	return nil
}
