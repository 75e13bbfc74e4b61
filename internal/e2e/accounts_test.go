package e2e_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"golang.org/x/crypto/bcrypt"

	"weft/internal/app"
	"weft/internal/auth"
	"weft/internal/llm"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
	"weft/internal/server"
)

// newOrg is a console with no demo at all: a tenant and its first admin made the way
// `weft tenant create` and `weft user create --password-stdin` make them (the same calls,
// audited as cli:…), and the workers running.
func newOrg(t *testing.T) (*app.App, *auth.Service, string) {
	t.Helper()
	ctx := context.Background()
	a, err := app.Open(ctx, app.Config{DatabaseURL: pgtest.URL(t), LLM: llm.NewOffline(), Runner: runner.Config{
		Lease: 5 * time.Second, PollInterval: 50 * time.Millisecond, Backoff: func(int) time.Duration { return 0 }}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	authSvc := auth.New(a.DB, auth.Options{HashCost: bcrypt.MinCost})
	if _, err := authSvc.CreateTenant(ctx, "cli:test", "harbour-works", "Harbour Works Ltd"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := authSvc.CreateAccount(ctx, "cli:test", auth.NewAccount{TenantID: "harbour-works", Email: "ines@harbour.example",
		Name: "Ines Admin", Role: auth.Admin, Password: orgAdminPW}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.New(server.Config{App: a, Auth: authSvc}).Handler())
	t.Cleanup(srv.Close)
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = a.RunWorkers(wctx) }()
	t.Cleanup(func() { stop(); <-done })
	return a, authSvc, srv.URL
}

const orgAdminPW = "copper lighthouse 2291 meadow"

// signIn signs in with a password.
func signIn(base, email, pw string) step {
	return chromedp.Steps(
		chromedp.Navigate(base+"/login"),
		chromedp.WaitVisible(css(`input[name=email]`)),
		chromedp.SendKeys(css(`input[name=email]`), email),
		chromedp.SendKeys(css(`input[name=password]`), pw),
		chromedp.Click(css(`form[action="/login"] button[type=submit]`)),
		chromedp.WaitVisible(css(`header .who`)),
	)
}

// invite adds a user on the users page and returns the one-time link it shows.
func invite(t *testing.T, ctx context.Context, base, name, email, role string) string {
	t.Helper()
	run(t, ctx, "invite "+email,
		chromedp.Navigate(base+"/admin/users"),
		chromedp.WaitVisible(css(`#add-user`)),
		chromedp.SendKeys(css(`#add-user input[name=name]`), name),
		chromedp.SendKeys(css(`#add-user input[name=email]`), email),
		chromedp.SetValue(css(`#add-user select[name=role]`), role),
		chromedp.Click(css(`#add-user button[type=submit]`)),
		chromedp.WaitVisible(css(`#password-link-url`)),
		contains(`#users-notice`, "Added "+name),
	)
	return read(t, ctx, "read the link", chromedp.Evaluate[string](`document.querySelector('#password-link-url').textContent`))
}

// acceptInvite opens a one-time link in its own browser, sets the password and signs in.
func acceptInvite(t *testing.T, ctx context.Context, base, link, email, pw string) {
	t.Helper()
	run(t, ctx, "accept the invitation of "+email,
		chromedp.Navigate(link),
		chromedp.WaitVisible(css(`form[action="/password"] input[name=password]`)),
		chromedp.SendKeys(css(`form[action="/password"] input[name=password]`), pw),
		chromedp.Click(css(`form[action="/password"] button[type=submit]`)),
		chromedp.WaitVisible(css(`form[action="/login"]`)),
		contains(`.alert`, "Your password is set"),
		signIn(base, email, pw),
	)
}

// TestAdminInvitesAndDeactivates: a new organisation's admin (made by the CLI's calls) signs
// in, invites a reviewer, who sets a password by the link and signs in; the admin sees the
// last-admin refusal on their own row, then deactivates the reviewer, who is signed out at
// the next request.
func TestAdminInvitesAndDeactivates(t *testing.T) {
	path := chromium(t)
	_, _, base := newOrg(t)
	admin := browser(t, path)
	run(t, admin, "the admin signs in", signIn(base, "ines@harbour.example", orgAdminPW),
		chromedp.Navigate(base+"/admin/users"), chromedp.WaitVisible(css(`#users`)), shot(t, "accounts-1-admin-users"))
	link := invite(t, admin, base, "Rhea Reviewer", "rhea@harbour.example", "reviewer")
	if !strings.HasPrefix(link, base+"/password?token=wpl_") {
		t.Fatalf("the link shown: %q", link)
	}
	run(t, admin, "the link is shown once", shot(t, "accounts-2-invite-link"))

	rhea := browser(t, path)
	acceptInvite(t, rhea, base, link, "rhea@harbour.example", "saffron tugboat 4410 quarry")
	run(t, rhea, "the reviewer lands on the inbox", holds(`location.pathname === "/reviews"`), shot(t, "accounts-3-reviewer-signed-in"))

	run(t, admin, "the last admin cannot step down",
		chromedp.Navigate(base+"/admin/users"),
		chromedp.WaitVisible(css(`tr[data-email="ines@harbour.example"] .role-form`)),
		chromedp.SetValue(css(`tr[data-email="ines@harbour.example"] select[name=role]`), "pm"),
		chromedp.Click(css(`tr[data-email="ines@harbour.example"] .role-form button`)),
		chromedp.WaitVisible(css(`#users-error`)),
		contains(`#users-error`, "last active admin"),
		shot(t, "accounts-4-last-admin"),
	)
	run(t, admin, "the admin deactivates the reviewer",
		chromedp.Click(css(`tr[data-email="rhea@harbour.example"] form[action$="/deactivate"] button`)),
		chromedp.WaitVisible(css(`#users-notice`)),
		contains(`#users-notice`, "Rhea Reviewer is deactivated"),
		contains(`tr[data-email="rhea@harbour.example"]`, "deactivated"),
		shot(t, "accounts-5-deactivated"),
	)
	run(t, rhea, "the reviewer's next request signs her out",
		chromedp.Reload(),
		chromedp.WaitVisible(css(`input[name=email]`)),
		holds(`location.pathname === "/login"`),
		shot(t, "accounts-6-reviewer-signed-out"),
	)
}
