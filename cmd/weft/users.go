package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"

	"weft/internal/app"
	"weft/internal/auth"
)

// weft tenant and weft user: an organisation's own tenant and users, without the demo. Each
// change is audited in its tenant as cli:<system user>.

const tenantUsage = `usage: weft tenant create --slug S --name N | weft tenant list`

const userUsage = `usage:
  weft user create --tenant T --email E --name N --role pm|reviewer|admin [--password-stdin] [--base-url URL]
        without --password-stdin, prints a one-time link to set the password (valid 24 hours)
  weft user list [--tenant T]
  weft user deactivate --email E      its sessions and API tokens stop working at once
  weft user reactivate --email E
  weft user reset-password --email E [--base-url URL]
        prints a one-time link to reset the password (valid 24 hours)`

// passwordIn is what --password-stdin reads (tests replace it).
var passwordIn io.Reader = os.Stdin

// baseURL is the console's address in printed links: --base-url, else WEFT_BASE_URL, else
// the local address weft serve and weft dev listen on.
func baseURL(flagged string) string {
	for _, u := range []string{flagged, os.Getenv("WEFT_BASE_URL")} {
		if u != "" {
			return strings.TrimRight(u, "/")
		}
	}
	return "http://127.0.0.1:8080"
}

// withAuth opens the App and the auth service for a command.
func withAuth(ctx context.Context, log *slog.Logger, fn func(svc *auth.Service) error) error {
	a, err := app.Open(ctx, app.Config{DatabaseURL: databaseURL(), Logger: log})
	if err != nil {
		return err
	}
	defer a.Close()
	return fn(auth.New(a.DB, auth.Options{}))
}

func tenantCmd(ctx context.Context, args []string, out io.Writer, log *slog.Logger) error {
	if len(args) == 0 {
		return errors.New(tenantUsage)
	}
	sub := args[0]
	switch sub {
	case "-h", "--help", "help":
		fmt.Fprintln(out, tenantUsage)
		return errHelp
	case "create", "list":
	default:
		return errors.New(tenantUsage)
	}
	fs := flag.NewFlagSet("tenant "+sub, flag.ContinueOnError)
	slug := fs.String("slug", "", "the tenant's id: lower-case letters, digits and hyphens (create)")
	name := fs.String("name", "", "the organisation's name (create)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if sub == "create" {
		if *slug == "" || *name == "" {
			return errors.New("--slug and --name are required: weft tenant create --slug acme --name \"Acme Corp\"")
		}
		if err := auth.CheckSlug(*slug); err != nil {
			return err
		}
	}
	return withAuth(ctx, log, func(svc *auth.Service) error {
		if sub == "list" {
			ts, err := svc.Tenants(ctx)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SLUG\tNAME\tCREATED (UTC)")
			for _, t := range ts {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", t.ID, t.Name, t.CreatedAt.UTC().Format("2006-01-02 15:04"))
			}
			return tw.Flush()
		}
		t, err := svc.CreateTenant(ctx, cliActor(), *slug, *name)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "created tenant %s (%s); add its first admin with:\n  weft user create --tenant %s --email … --name … --role admin\n", t.ID, t.Name, t.ID)
		return nil
	})
}

func userCmd(ctx context.Context, args []string, out io.Writer, log *slog.Logger) error {
	if len(args) == 0 {
		return errors.New(userUsage)
	}
	sub := args[0]
	switch sub {
	case "-h", "--help", "help":
		fmt.Fprintln(out, userUsage)
		return errHelp
	case "create", "list", "deactivate", "reactivate", "reset-password":
	default:
		return errors.New(userUsage)
	}
	fs := flag.NewFlagSet("user "+sub, flag.ContinueOnError)
	tenant := fs.String("tenant", "", "the tenant's slug (create; list: only this tenant)")
	email := fs.String("email", "", "the user's email")
	name := fs.String("name", "", "the user's name (create)")
	role := fs.String("role", "", "pm, reviewer or admin (create)")
	pwStdin := fs.Bool("password-stdin", false, "read the password from the first line of standard input instead of printing a link (create)")
	base := fs.String("base-url", "", "the console's address in printed links (default $WEFT_BASE_URL, else http://127.0.0.1:8080)")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	switch {
	case sub == "create" && (*tenant == "" || *email == "" || *name == "" || *role == ""):
		return errors.New("--tenant, --email, --name and --role are required: weft user create --tenant acme --email ann@acme.example --name \"Ann Lee\" --role admin")
	case sub == "create" && !auth.Role(*role).Valid():
		return fmt.Errorf("--role %q: it must be pm, reviewer or admin", *role)
	case sub != "create" && sub != "list" && *email == "":
		return fmt.Errorf("--email is required: the user to %s", sub)
	}
	password := ""
	if *pwStdin {
		line, err := bufio.NewReader(passwordIn).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read the password from standard input: %w", err)
		}
		password = strings.TrimRight(line, "\r\n")
		if password == "" {
			return errors.New("--password-stdin: standard input held no password")
		}
	}
	actor := cliActor()
	return withAuth(ctx, log, func(svc *auth.Service) error {
		switch sub {
		case "list":
			return listUsers(ctx, svc, *tenant, out)
		case "create":
			acc, secret, err := svc.CreateAccount(ctx, actor, auth.NewAccount{TenantID: *tenant, Email: *email, Name: *name,
				Role: auth.Role(*role), Password: password})
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "created %s %s <%s> in tenant %s (id %s)\n", acc.Role, acc.Name, acc.Email, acc.TenantID, acc.ID)
			if secret != "" {
				fmt.Fprintf(out, "one-time link to set the password (valid %s, shown once):\n%s%s\n", auth.DefaultLinkTTL, baseURL(*base), auth.SetPasswordPath(secret))
			}
			return nil
		}
		acc, err := svc.AccountByEmail(ctx, *email)
		if err != nil {
			return err
		}
		switch sub {
		case "reset-password":
			secret, err := svc.IssueResetLink(ctx, actor, acc.TenantID, acc.ID)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "one-time link to reset the password of %s (valid %s, shown once):\n%s%s\n", acc.Email, auth.DefaultLinkTTL, baseURL(*base), auth.SetPasswordPath(secret))
			return nil
		case "deactivate", "reactivate":
			if _, err := svc.SetActive(ctx, actor, acc.TenantID, acc.ID, sub == "reactivate"); err != nil {
				return err
			}
			if sub == "deactivate" {
				fmt.Fprintf(out, "deactivated %s: their sessions and API tokens stop working at once\n", acc.Email)
			} else {
				fmt.Fprintf(out, "reactivated %s\n", acc.Email)
			}
		}
		return nil
	})
}

func listUsers(ctx context.Context, svc *auth.Service, tenant string, out io.Writer) error {
	var (
		accs []auth.Account
		err  error
	)
	if tenant == "" {
		accs, err = svc.AllAccounts(ctx)
	} else {
		accs, err = svc.Accounts(ctx, tenant)
	}
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TENANT\tEMAIL\tNAME\tROLE\tSTATE\tID")
	for _, a := range accs {
		state := "active"
		switch {
		case !a.Active():
			state = "deactivated " + a.DeactivatedAt.UTC().Format("2006-01-02 15:04")
		case !a.PasswordSet:
			state = "invited (no password yet)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", a.TenantID, a.Email, a.Name, a.Role, state, a.ID)
	}
	return tw.Flush()
}
