package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
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
}

func parseServe(name string, args []string) (serveFlags, error) {
	var f serveFlags
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&f.addr, "addr", ":8080", "listen address")
	fs.IntVar(&f.workers, "workers", 4, "jobs run at once by this process")
	fs.BoolVar(&f.secure, "secure-cookies", false, "mark cookies Secure (serve behind HTTPS)")
	fs.BoolVar(&f.trustProxy, "trust-proxy", false, "take client addresses from X-Forwarded-For (behind a reverse proxy that sets it)")
	fs.DurationVar(&f.pruneEvery, "prune-every", time.Hour, "how often to prune finished threads (0: never)")
	fs.IntVar(&f.pruneKeep, "prune-keep", 50, "checkpoints kept per finished thread")
	fs.DurationVar(&f.eventsKeep, "events-keep", defaultEventsKeep, "how long stream events are kept (0: forever)")
	fs.BoolVar(&f.demoLogins, "demo-logins", name == "dev", "list the demo logins on the login page")
	return f, fs.Parse(args)
}

func serve(ctx context.Context, args []string, log *slog.Logger) error {
	f, err := parseServe("serve", args)
	if err != nil {
		return err
	}
	return serveOn(ctx, databaseURL(), f, log, nil)
}

// serveOn runs the console, the API and the workers on the database at url.
func serveOn(ctx context.Context, url string, f serveFlags, log *slog.Logger, ready func(a *app.App, authSvc *auth.Service) error) error {
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
	log.Info("serving", "addr", f.addr)
	err = srv.ListenAndServe(ctx, f.addr)
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
		} else if n > 0 {
			log.Info("pruned checkpoints of finished threads", "checkpoints", n)
		}
		if f.eventsKeep <= 0 {
			return
		}
		if n, err := a.PruneEvents(ctx, f.eventsKeep); err != nil {
			log.Warn("prune events", "err", err)
		} else if n > 0 {
			log.Info("pruned stream events", "events", n, "older_than", f.eventsKeep)
		}
	})
}

// defaultEventsKeep is how long stream events are kept: they serve live pages and their
// reconnects, not history.
const defaultEventsKeep = 7 * 24 * time.Hour

func worker(ctx context.Context, args []string, log *slog.Logger) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	n := fs.Int("workers", 4, "jobs run at once")
	if err := fs.Parse(args); err != nil {
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

func migrate(ctx context.Context, log *slog.Logger) error {
	return postgres.Migrate(ctx, databaseURL(), log)
}

func prune(ctx context.Context, args []string, out io.Writer, log *slog.Logger) error {
	fs := flag.NewFlagSet("prune", flag.ContinueOnError)
	keep := fs.Int("keep", 50, "checkpoints kept per finished thread")
	older := fs.Duration("older-than", 0, "also drop finished threads whose last checkpoint is older than this (e.g. 720h)")
	events := fs.Duration("events-older-than", defaultEventsKeep, "also delete stream events older than this (0: keep them)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	a, err := app.Open(ctx, app.Config{DatabaseURL: databaseURL(), Logger: log})
	if err != nil {
		return err
	}
	defer a.Close()
	n, err := a.Prune(ctx, *keep, *older)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "pruned %d checkpoints\n", n)
	if *events > 0 {
		if n, err = a.PruneEvents(ctx, *events); err != nil {
			return err
		}
		fmt.Fprintf(out, "pruned %d stream events older than %s\n", n, *events)
	}
	return nil
}

func demo(ctx context.Context, out io.Writer, log *slog.Logger) error {
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
		fmt.Fprintln(out, "demo loaded: three evaluations queued (a pass, a human review, a failed hard rule); run `weft serve` or `weft worker` to run them")
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
	url, stop, err := app.ResolveDatabase(ctx, log, ".data/pg")
	if err != nil {
		return err
	}
	defer stop()
	return serveOn(ctx, url, f, log, func(a *app.App, authSvc *auth.Service) error {
		loaded, err := a.SeedDemoAll(ctx, authSvc)
		if err != nil {
			return err
		}
		host := f.addr
		if len(host) > 0 && host[0] == ':' {
			host = "localhost" + host
		}
		fmt.Fprintf(out, "\nWeft is running at http://%s/\n", host)
		if loaded {
			fmt.Fprintln(out, "The demo is loaded and its three evaluations are running.")
		}
		printLogins(out)
		fmt.Fprintln(out)
		return nil
	})
}

const tokenUsage = "usage: weft token create --tenant T --role pm|reviewer|admin --name N | weft token list --tenant T | weft token revoke --tenant T --name N"

func token(ctx context.Context, args []string, out io.Writer, log *slog.Logger) error {
	if len(args) == 0 {
		return errors.New(tokenUsage)
	}
	sub := args[0]
	if sub != "create" && sub != "list" && sub != "revoke" {
		return errors.New(tokenUsage)
	}
	fs := flag.NewFlagSet("token "+sub, flag.ContinueOnError)
	tenant := fs.String("tenant", app.DemoTenant, "tenant the token acts in")
	role := fs.String("role", "pm", "role: pm, reviewer or admin (create)")
	name := fs.String("name", "", "a name to recognise the token by (create, revoke)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	switch {
	case sub != "list" && *name == "":
		return errors.New("--name is required: the name the token is recognised by")
	case sub == "create" && !auth.Role(*role).Valid():
		return fmt.Errorf("--role %q: it must be pm, reviewer or admin", *role)
	}
	a, err := app.Open(ctx, app.Config{DatabaseURL: databaseURL(), Logger: log})
	if err != nil {
		return err
	}
	defer a.Close()
	svc := auth.New(a.DB, auth.Options{})
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
		if err := svc.RevokeAPIToken(ctx, *tenant, *name); err != nil {
			return err
		}
		fmt.Fprintf(out, "revoked token %s of tenant %s: requests with it now get 401\n", *name, *tenant)
		return nil
	}
	secret, err := svc.IssueAPIToken(ctx, *tenant, *name, auth.Role(*role), "cli")
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s\n(shown once; send it as Authorization: Bearer <token>)\n", secret)
	return nil
}
