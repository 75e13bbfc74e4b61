package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"weft/internal/app"
	"weft/internal/auth"
	"weft/internal/postgres"
	"weft/internal/postgres/pgtest"
)

// TestTenantAndUserCommands: an organisation starts without the demo: a tenant, its admin
// with a one-time link, a PM with a password from standard input; each change audited as
// cli:<system user>; the last admin cannot be deactivated, another user can.
func TestTenantAndUserCommands(t *testing.T) {
	url := pgtest.URL(t)
	t.Setenv("DATABASE_URL", url)
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{DatabaseURL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	svc := auth.New(a.DB, auth.Options{})

	if out, err := weft(t, "tenant", "create", "--slug", "acme-corp", "--name", "Acme Corp"); err != nil || !strings.Contains(out, "created tenant acme-corp") {
		t.Fatalf("tenant create: %q %v", out, err)
	}
	if _, err := weft(t, "tenant", "create", "--slug", "acme-corp", "--name", "Again"); !errors.Is(err, auth.ErrTenantTaken) {
		t.Fatalf("a second tenant acme-corp: %v, want taken", err)
	}
	if _, err := weft(t, "tenant", "create", "--slug", "Bad Slug", "--name", "X"); err == nil || !strings.Contains(err.Error(), "lower-case") {
		t.Fatalf("a slug with spaces: %v, want refused", err)
	}
	out, err := weft(t, "user", "create", "--tenant", "acme-corp", "--email", "Ann@Acme.example", "--name", "Ann Lee", "--role", "admin",
		"--base-url", "https://weft.acme.example/")
	if err != nil || !strings.Contains(out, "https://weft.acme.example/password?token=wpl_") {
		t.Fatalf("user create with a link: %q %v", out, err)
	}
	secret := out[strings.Index(out, "token=")+len("token="):]
	secret = strings.TrimSpace(secret)
	if acc, err := svc.PasswordLink(ctx, secret); err != nil || acc.Email != "ann@acme.example" || acc.PasswordSet {
		t.Fatalf("the printed link: %+v %v, want Ann's, password not set yet", acc, err)
	}
	if _, err := svc.Authenticate(ctx, "ann@acme.example", ""); !errors.Is(err, auth.ErrInvalidLogin) {
		t.Fatalf("sign-in before the link is used: %v, want refused", err)
	}

	passwordIn = strings.NewReader("password123456\n")
	if _, err := weft(t, "user", "create", "--tenant", "acme-corp", "--email", "pete@acme.example", "--name", "Pete Ng", "--role", "pm", "--password-stdin"); !errors.Is(err, auth.ErrWeakPassword) {
		t.Fatalf("a leaked password from stdin: %v, want refused as weak", err)
	}
	passwordIn = strings.NewReader("velvet harbour trombone 1887\n")
	if out, err := weft(t, "user", "create", "--tenant", "acme-corp", "--email", "pete@acme.example", "--name", "Pete Ng", "--role", "pm", "--password-stdin"); err != nil || strings.Contains(out, "token=") {
		t.Fatalf("user create with a password: %q %v", out, err)
	}
	if u, err := svc.Authenticate(ctx, "pete@acme.example", "velvet harbour trombone 1887"); err != nil || u.Role != auth.PM || u.TenantID != "acme-corp" {
		t.Fatalf("Pete signs in: %+v %v", u, err)
	}
	if _, err := weft(t, "user", "create", "--tenant", "acme-corp", "--email", "pete@acme.example", "--name", "P", "--role", "pm"); !errors.Is(err, auth.ErrEmailTaken) {
		t.Fatalf("a second user with Pete's email: %v, want taken", err)
	}
	if _, err := weft(t, "user", "create", "--tenant", "nosuch", "--email", "x@y.example", "--name", "X", "--role", "pm"); !errors.Is(err, auth.ErrUnknownTenant) {
		t.Fatalf("a user of no tenant: %v, want no such tenant", err)
	}

	out, err = weft(t, "user", "list", "--tenant", "acme-corp")
	if err != nil || !strings.Contains(out, "ann@acme.example") || !strings.Contains(out, "invited (no password yet)") || !strings.Contains(out, "pete@acme.example") {
		t.Fatalf("user list: %q %v", out, err)
	}
	if _, err := weft(t, "user", "deactivate", "--email", "ann@acme.example"); !errors.Is(err, auth.ErrLastAdmin) {
		t.Fatalf("deactivating the last admin: %v, want refused", err)
	}
	if out, err := weft(t, "user", "deactivate", "--email", "pete@acme.example"); err != nil || !strings.Contains(out, "deactivated pete@acme.example") {
		t.Fatalf("deactivate Pete: %q %v", out, err)
	}
	if _, err := svc.Authenticate(ctx, "pete@acme.example", "velvet harbour trombone 1887"); !errors.Is(err, auth.ErrDeactivated) {
		t.Fatalf("Pete signs in after deactivation: %v, want deactivated", err)
	}
	if out, _ := weft(t, "user", "list"); !strings.Contains(out, "deactivated 20") {
		t.Fatalf("user list after deactivation: %q", out)
	}
	if _, err := weft(t, "user", "reactivate", "--email", "pete@acme.example"); err != nil {
		t.Fatal(err)
	}

	entries, _, err := a.Audit.List(ctx, postgres.AuditFilter{TenantID: "acme-corp"}, 0, 50)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Actor, "cli") {
			t.Errorf("%s recorded as done by %q, want cli:<system user>", e.Action, e.Actor)
		}
		got = append(got, e.Action)
	}
	want := []string{auth.ActionUserReactivate, auth.ActionUserDeactivate, auth.ActionUserCreate, auth.ActionPasswordLink, auth.ActionUserCreate, auth.ActionTenantCreate}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("audit rows: %q, want %q (newest first)", got, want)
	}
}
