// Command weft is Weft's one binary. Subcommands wire the packages together;
// the logic lives in internal/.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"weft/internal/telemetry"
)

const usage = `weft: durable graph workflows

Usage:
  weft dev [serve's flags] [--fresh [--yes]]
                                 the console with the demo, for a fresh machine (make run):
                                 DATABASE_URL, else the local PostgreSQL, else a private cluster in .data/pg;
                                 it listens on 127.0.0.1:8080 unless --addr says otherwise. It reuses
                                 the database (a second run shows the first's data); --fresh drops it
                                 and loads the demo afresh, once asked at a terminal or given --yes
                                 (--yes=NAME for a database given in DATABASE_URL)
  weft serve [--addr :8080] [--workers 4] [--secure-cookies] [--trust-proxy] [--demo-logins]
             [--prune-every 1h] [--prune-keep 50] [--events-keep 168h]
                                 the web console, the JSON API and the workers (DATABASE_URL);
                                 --demo-logins lists the demo logins on the login page (dev does)
  weft worker [--workers 4]      workers only
  weft migrate                   apply the database migrations
  weft prune [--keep 50] [--older-than D] [--events-older-than 168h]
                                 keep the newest checkpoints of finished threads; with --older-than,
                                 also drop finished threads idle that long (default 0: none)
  weft token create --tenant T --role R --name N
                                 issue an API token for /api/v1 (printed once)
  weft token list --tenant T     a tenant's API tokens: role, creator, last use, revoked or live
  weft token revoke --tenant T --name N
                                 end a live token (its requests get 401 from then on)
  weft tenant create --slug S --name N
                                 a tenant of your own organisation (audited as cli:<system user>)
  weft tenant list               every tenant
  weft user create --tenant T --email E --name N --role R [--password-stdin]
                                 a user; prints a one-time link to set the password unless
                                 --password-stdin gives it
  weft user list [--tenant T]    users, their roles and whether they are active
  weft user deactivate|reactivate|reset-password --email E
                                 end a user's access at once, restore it, or print a reset link
  weft demo                      load the demo tenants and users and start the demo evaluations
  weft demo-terminal             run the tour graph in this terminal, streaming its events
  weft run WORKFLOW [--store sqlite:PATH|memory|postgres://…] [--thread ID] [--out DIR] [--input JSON]
                                 run a workflow in this terminal: its start form and reviews asked at
                                 the prompt, progress as text, files in --out; Ctrl-C, then --thread ID
                                 resumes (sqlite:weft-run.db by default; memory keeps nothing)
  weft version                   the build: version, commit, Go, and the schema it migrates to
  weft help [COMMAND]            show this help, or a command's flags (as weft COMMAND -h)

Environment: DATABASE_URL (default: database weft on 127.0.0.1:5432), WEFT_LLM_PROVIDER
(offline | openai), WEFT_LLM_BASE_URL, WEFT_LLM_MODEL, WEFT_LLM_API_KEY, WEFT_METRICS_TOKEN
(when set, /metrics answers only Authorization: Bearer <it>), and OpenTelemetry's own OTEL_*
(OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_SERVICE_NAME, OTEL_TRACES_SAMPLER, …: traces of requests,
runs, nodes, LLM calls and SQL; no endpoint, no traces).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(telemetry.LogHandler(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})))
	// Traces go where the OTEL_* environment says (OTEL_EXPORTER_OTLP_ENDPOINT, …); with no
	// endpoint, nowhere, at next to no cost.
	tracing, err := telemetry.FromEnv(ctx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "weft:", err)
		os.Exit(1)
	}
	if tracing.Enabled {
		log.Info("exporting traces as the OTEL_* environment says")
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := tracing.Shutdown(sctx); err != nil {
			log.Warn("flush traces", "err", err)
		}
	}()
	go func() {
		<-ctx.Done()
		// The first signal asks for a graceful stop; from here a second one ends the process
		// at once (the default), as an operator whose stop hangs on the database expects.
		stop()
		if cause := context.Cause(ctx); cause != context.Canceled { // a signal, not main returning
			log.Info("shutting down: finishing requests and releasing jobs; a second signal stops at once", "why", cause.Error())
		}
	}()
	if err := run(ctx, os.Args[1:], os.Stdout, log); err != nil && !errors.Is(err, errHelp) {
		fmt.Fprintln(os.Stderr, "weft:", err)
		stop()
		_ = tracing.Shutdown(context.Background())
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer, log *slog.Logger) error {
	if len(args) == 0 {
		fmt.Fprint(out, usage)
		return nil
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "dev":
		return dev(ctx, rest, out, log)
	case "serve":
		return serve(ctx, rest, log)
	case "worker":
		return worker(ctx, rest, log)
	case "migrate":
		return migrate(ctx, rest, out, log)
	case "prune":
		return prune(ctx, rest, out, log)
	case "demo":
		return demo(ctx, rest, out, log)
	case "token":
		return token(ctx, rest, out, log)
	case "tenant":
		return tenantCmd(ctx, rest, out, log)
	case "user":
		return userCmd(ctx, rest, out, log)
	case "demo-terminal":
		return demoTerminal(ctx, rest, out)
	case "run":
		return runWorkflow(ctx, rest, os.Stdin, out)
	case "version", "--version":
		if err := parseFlags(flag.NewFlagSet("version", flag.ContinueOnError), rest); err != nil {
			return err
		}
		fmt.Fprintln(out, versionLine())
		return nil
	case "help", "-h", "--help":
		if cmd == "help" && len(rest) > 0 && rest[0] != "help" { // weft help COMMAND: that command's flags
			if !slices.Contains(commands, rest[0]) {
				return fmt.Errorf("unknown command %q (try weft help)", rest[0])
			}
			return run(ctx, []string{rest[0], "-h"}, out, log)
		}
		fmt.Fprint(out, usage)
		return nil
	}
	return fmt.Errorf("unknown command %q (try weft help)", cmd)
}

// commands are the commands run knows, for weft help COMMAND.
var commands = []string{"dev", "serve", "worker", "migrate", "prune", "demo", "token", "tenant", "user", "demo-terminal", "run", "version"}
