package server_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"weft/internal/app"
	"weft/internal/auth"
	"weft/internal/postgres"
)

var linkRE = regexp.MustCompile(`/password\?token=(wpl_[A-Za-z0-9_-]+)`)

// linkIn is the one-time link's token the page shows.
func linkIn(t *testing.T, body string) string {
	t.Helper()
	m := linkRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no password link on the page: %s", text(body))
	}
	return m[1]
}

// rowOf is the users table's row of email.
func rowOf(body, email string) string {
	return between(body, `data-email="`+email+`"`, "</tr>")
}

// userID is the id in a row's form actions.
func userID(t *testing.T, body, email string) string {
	t.Helper()
	m := regexp.MustCompile(`/admin/users/(u_[a-z0-9_]+)/role`).FindStringSubmatch(rowOf(body, email))
	if m == nil {
		t.Fatalf("no row for %s: %s", email, text(body))
	}
	return m[1]
}

// TestAdminManagesUsers: through the console, an admin adds a user (who sets a password by
// the one-time link, which works once), changes a role, issues a reset link, deactivates
// (the user's open session and their API token stop at the next request) and reactivates;
// each change is audited as the admin. The last admin cannot be demoted or deactivated.
func TestAdminManagesUsers(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	ctx := context.Background()
	admin := k.login("admin@demo.weft")

	res, body := admin.get("/admin/users")
	if res.StatusCode != 200 || !strings.Contains(text(body), "Paula Meyer") || strings.Contains(body, "admin@acme.weft") {
		t.Fatalf("users page: %d %s", res.StatusCode, text(body))
	}
	// Refusals keep the form and say why.
	for _, c := range []struct{ name, email, role, want string }{
		{"Nora", "not-an-email", "pm", "is not an email address"},
		{"Nora", "pm@demo.weft", "pm", "exists already"},
		{"Nora", "nora@demo.example", "owner", "is not pm, reviewer or admin"},
		{"", "nora@demo.example", "pm", "the name is required"},
	} {
		res, body := admin.post("/admin/users", url.Values{"name": {c.name}, "email": {c.email}, "role": {c.role}})
		if res.StatusCode < 400 || res.StatusCode >= 500 || !strings.Contains(strings.ToLower(text(between(body, `id="users-error"`, "</div>"))), strings.ToLower(c.want)) {
			t.Errorf("add %q %q %q: %d %q, want a refusal saying %q", c.name, c.email, c.role, res.StatusCode, text(between(body, `id="users-error"`, "</div>")), c.want)
		}
	}
	res, body = admin.post("/admin/users", url.Values{"name": {"Nora North"}, "email": {"nora@demo.example"}, "role": {"reviewer"}})
	if res.StatusCode != 200 || !strings.Contains(text(body), "Added Nora North as reviewer") {
		t.Fatalf("add Nora: %d %s", res.StatusCode, text(body))
	}
	token := linkIn(t, body)
	nora := userID(t, body, "nora@demo.example")
	if !strings.Contains(rowOf(body, "nora@demo.example"), "invited") {
		t.Fatalf("Nora's row before she sets a password: %s", text(rowOf(body, "nora@demo.example")))
	}

	// The link: a weak password is refused (the form stays), a good one is set, a second use is refused.
	anon := k.anonymous()
	res, body = anon.get("/password?token=" + token)
	if res.StatusCode != 200 || !strings.Contains(text(body), "Choose your password") || !strings.Contains(body, "nora@demo.example") {
		t.Fatalf("link page: %d %s", res.StatusCode, text(body))
	}
	if res.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("the link page's Cache-Control %q, want no-store", res.Header.Get("Cache-Control"))
	}
	res, body = anon.post("/password", url.Values{"token": {token}, "password": {"qwertyuiop123"}})
	if res.StatusCode != 400 || !strings.Contains(text(body), "leaked") && !strings.Contains(text(body), "too easy") {
		t.Fatalf("weak password by link: %d %s", res.StatusCode, text(body))
	}
	res, body = anon.post("/password", url.Values{"token": {token}, "password": {"nora.north"}})
	if res.StatusCode != 400 || !strings.Contains(text(body), "too easy to guess") {
		t.Fatalf("a password made of the user's name: %d %s", res.StatusCode, text(body))
	}
	const noraPW = "lantern orbit cactus 7741"
	res, body = anon.post("/password", url.Values{"token": {token}, "password": {noraPW}})
	if res.StatusCode != 200 || !strings.Contains(text(body), "Your password is set") {
		t.Fatalf("set password by link: %d %s", res.StatusCode, text(body))
	}
	res, body = anon.post("/password", url.Values{"token": {token}, "password": {"another strong phrase 99"}})
	if res.StatusCode != http.StatusGone || !strings.Contains(text(body), "was used already") {
		t.Fatalf("the link used twice: %d %s", res.StatusCode, text(body))
	}
	res, body = anon.get("/password?token=" + token)
	if res.StatusCode != http.StatusGone || !strings.Contains(text(body), "was used already") || strings.Contains(body, `name="password"`) {
		t.Fatalf("the used link opened again: %d %s", res.StatusCode, text(body))
	}
	if res, body = anon.get("/password?token=wpl_nonsense"); res.StatusCode != http.StatusGone || !strings.Contains(text(body), "not valid") {
		t.Fatalf("an unknown link: %d %s", res.StatusCode, text(body))
	}

	// Nora signs in with it, opens the reviewer's inbox, and holds an API token she issued.
	noraC := k.anonymous()
	noraC.get("/login")
	if res, body := noraC.post("/login", url.Values{"email": {"nora@demo.example"}, "password": {noraPW}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("Nora signs in: %d %s", res.StatusCode, text(body))
	}
	if res, _ := noraC.get("/reviews"); res.StatusCode != 200 {
		t.Fatalf("Nora's inbox: %d", res.StatusCode)
	}
	tok, err := k.Auth.IssueAPIToken(ctx, app.DemoTenant, "nora-ci", auth.Reviewer, nora)
	if err != nil {
		t.Fatal(err)
	}
	noraAPI := &apiClient{t: t, base: k.Srv.URL, token: tok}
	if st, _ := noraAPI.call("GET", "/api/v1/workflows", ""); st != 200 {
		t.Fatalf("Nora's token: %d", st)
	}

	// Role change; then deactivation ends her session and her token at the next request.
	res, body = admin.post("/admin/users/"+nora+"/role", url.Values{"role": {"pm"}})
	if res.StatusCode != 200 || !strings.Contains(text(body), "Nora North is now pm") {
		t.Fatalf("role change: %d %s", res.StatusCode, text(body))
	}
	if res, _ := noraC.get("/dashboard"); res.StatusCode != 200 {
		t.Fatalf("Nora as pm opens the dashboard: %d", res.StatusCode)
	}
	res, body = admin.post("/admin/users/"+nora+"/deactivate", nil)
	if res.StatusCode != 200 || !strings.Contains(text(body), "deactivated") || !strings.Contains(rowOf(body, "nora@demo.example"), "Reactivate") {
		t.Fatalf("deactivate: %d %s", res.StatusCode, text(body))
	}
	if res, _ := noraC.get("/dashboard"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/login") {
		t.Fatalf("Nora's session after deactivation: %d %s, want sent to sign in", res.StatusCode, res.Header.Get("Location"))
	}
	if st, _ := noraAPI.call("GET", "/api/v1/workflows", ""); st != http.StatusUnauthorized {
		t.Fatalf("Nora's token after deactivation: %d, want 401", st)
	}
	noraC.get("/login")
	if res, body := noraC.post("/login", url.Values{"email": {"nora@demo.example"}, "password": {noraPW}}); res.StatusCode != http.StatusForbidden || !strings.Contains(text(body), "deactivated") {
		t.Fatalf("Nora signs in deactivated: %d %s", res.StatusCode, text(body))
	}
	if res, body := admin.post("/admin/users/"+nora+"/reactivate", nil); res.StatusCode != 200 || !strings.Contains(text(body), "active again") {
		t.Fatalf("reactivate: %d %s", res.StatusCode, text(body))
	}
	// Reactivation brings back neither the session nor the token the deactivation ended.
	if st, _ := noraAPI.call("GET", "/api/v1/workflows", ""); st != http.StatusUnauthorized {
		t.Fatalf("Nora's token after reactivation: %d, want 401 still", st)
	}
	if res, _ := noraC.get("/dashboard"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("Nora's old session after reactivation: %d, want sent to sign in", res.StatusCode)
	}
	noraC.get("/login")
	if res, body := noraC.post("/login", url.Values{"email": {"nora@demo.example"}, "password": {noraPW}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("Nora signs in again after reactivation: %d %s", res.StatusCode, text(body))
	}
	tok2, err := k.Auth.IssueAPIToken(ctx, app.DemoTenant, "nora-ci-2", auth.Reviewer, nora)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := (&apiClient{t: t, base: k.Srv.URL, token: tok2}).call("GET", "/api/v1/workflows", ""); st != 200 {
		t.Fatalf("a token Nora issues after reactivation: %d", st)
	}

	// A reset link replaces the earlier one; a link past its time is refused.
	_, body = admin.post("/admin/users/"+nora+"/reset-link", nil)
	first := linkIn(t, body)
	_, body = admin.post("/admin/users/"+nora+"/reset-link", nil)
	second := linkIn(t, body)
	if res, body := anon.get("/password?token=" + first); res.StatusCode != http.StatusGone || !strings.Contains(text(body), "newer link replaced") {
		t.Fatalf("a replaced link: %d %s", res.StatusCode, text(body))
	}
	if _, err := k.App.DB.Pool().Exec(ctx, `UPDATE password_links SET expires_at = now() - interval '1 minute' WHERE used_at IS NULL AND revoked_at IS NULL`); err != nil {
		t.Fatal(err)
	}
	if res, body := anon.post("/password", url.Values{"token": {second}, "password": {"fresh meadow puzzle 5512"}}); res.StatusCode != http.StatusGone || !strings.Contains(text(body), "expired") {
		t.Fatalf("an expired link: %d %s", res.StatusCode, text(body))
	}

	// The last admin: the demo tenant has one (Ada); neither demoting nor deactivating her works.
	_, body = admin.get("/admin/users")
	ada := userID(t, body, "admin@demo.weft")
	for _, act := range []struct {
		path string
		form url.Values
	}{{"/admin/users/" + ada + "/role", url.Values{"role": {"pm"}}}, {"/admin/users/" + ada + "/deactivate", nil}} {
		res, body := admin.post(act.path, act.form)
		if res.StatusCode != http.StatusConflict || !strings.Contains(text(body), "last active admin") {
			t.Fatalf("%s on the last admin: %d %s", act.path, res.StatusCode, text(body))
		}
	}
	// With Nora made admin, Ada may step down.
	admin.post("/admin/users/"+nora+"/role", url.Values{"role": {"admin"}})
	if res, body := admin.post("/admin/users/"+ada+"/role", url.Values{"role": {"pm"}}); res.StatusCode != http.StatusForbidden {
		// Ada is pm now: the users page is no longer hers, the answer renders after the change.
		if res.StatusCode != 200 {
			t.Fatalf("Ada steps down beside another admin: %d %s", res.StatusCode, text(body))
		}
	}
	if res, _ := admin.get("/admin/users"); res.StatusCode != http.StatusForbidden {
		t.Fatalf("Ada, now pm, opens the users page: %d, want 403", res.StatusCode)
	}

	entries, _, err := k.App.Audit.List(ctx, postgres.AuditFilter{TenantID: app.DemoTenant, Subject: "user:" + nora}, 0, 50)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Actor+" "+e.Action)
	}
	want := []string{"u_admin user.role", "u_admin user.password_link", "u_admin user.password_link", "u_admin user.reactivate",
		"u_admin user.deactivate", "u_admin user.role", nora + " user.password_set", "u_admin user.password_link", "u_admin user.create"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("Nora's audit rows (newest first):\n got %q\nwant %q", got, want)
	}
}

// TestUsersIsolationAndRoles: another tenant's user id is 404 on every action (page and
// API); the pages and API are the admin's; forms need CSRF.
func TestUsersIsolationAndRoles(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	ctx := context.Background()
	other, err := k.Auth.AccountByEmail(ctx, "admin@acme.weft")
	if err != nil {
		t.Fatal(err)
	}
	admin := k.login("admin@demo.weft")
	for _, p := range []string{"role", "deactivate", "reactivate", "reset-link"} {
		res, _ := admin.post("/admin/users/"+other.ID+"/"+p, url.Values{"role": {"pm"}})
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("POST %s on another tenant's user: %d, want 404", p, res.StatusCode)
		}
		if res, _ := admin.get("/admin/users/" + other.ID + "/" + p); res.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s on another tenant's user: %d, want 404", p, res.StatusCode)
		}
	}
	if acc, _ := k.Auth.AccountByEmail(ctx, "admin@acme.weft"); !acc.Active() || acc.Role != auth.Admin {
		t.Fatalf("the other tenant's admin changed: %+v", acc)
	}
	for _, email := range []string{"pm@demo.weft", "reviewer@demo.weft"} {
		c := k.login(email)
		if res, _ := c.get("/admin/users"); res.StatusCode != http.StatusForbidden {
			t.Errorf("%s opens /admin/users: %d, want 403", email, res.StatusCode)
		}
		if res, _ := c.post("/admin/users", url.Values{"name": {"X"}, "email": {"x@demo.example"}, "role": {"admin"}}); res.StatusCode != http.StatusForbidden {
			t.Errorf("%s adds a user: %d, want 403", email, res.StatusCode)
		}
	}
	if res, _ := admin.postRaw("/admin/users", url.Values{"name": {"X"}, "email": {"x@demo.example"}, "role": {"admin"}}); res.StatusCode != http.StatusForbidden {
		t.Errorf("add a user without the CSRF token: %d, want 403", res.StatusCode)
	}
	if _, err := k.Auth.AccountByEmail(ctx, "x@demo.example"); err == nil {
		t.Fatal("a refused add stored the user")
	}

	// The API: an admin token manages its tenant's users; others get 403; another tenant's id 404.
	api := k.api(app.DemoTenant, auth.Admin)
	st, out := api.call("POST", "/api/v1/users", `{"email":"olga@demo.example","name":"Olga Ortiz","role":"pm"}`)
	if st != http.StatusCreated || !strings.Contains(out["password_link"].(string), "/password?token=wpl_") {
		t.Fatalf("API create: %d %v", st, out)
	}
	id := out["user"].(map[string]any)["id"].(string)
	if st, out := api.call("POST", "/api/v1/users/"+id+"/role", `{"role":"reviewer"}`); st != 200 || out["role"] != "reviewer" {
		t.Fatalf("API role: %d %v", st, out)
	}
	if st, out := api.call("POST", "/api/v1/users/"+id+"/deactivate", ``); st != 200 || out["active"] != false {
		t.Fatalf("API deactivate: %d %v", st, out)
	}
	if st, out := api.call("POST", "/api/v1/users", `{"email":"olga@demo.example","name":"Olga","role":"pm"}`); st != http.StatusConflict || errCode(out) != "EMAIL_TAKEN" {
		t.Fatalf("API create with a taken email: %d %v", st, out)
	}
	for _, p := range []string{"", "/deactivate", "/reset-link"} {
		method := "POST"
		if p == "" {
			method = "GET"
		}
		if st, out := api.call(method, "/api/v1/users/"+other.ID+p, ``); st != http.StatusNotFound {
			t.Errorf("API %s %s on another tenant's user: %d %v, want 404", method, p, st, out)
		}
	}
	if st, out := api.call("GET", "/api/v1/users", ""); st != 200 || strings.Contains(strings.Join(emails(out), " "), "acme") {
		t.Fatalf("API list: %d %v", st, out)
	}
	pm := k.api(app.DemoTenant, auth.PM)
	if st, _ := pm.call("GET", "/api/v1/users", ""); st != http.StatusForbidden {
		t.Fatalf("a PM token lists users: %d, want 403", st)
	}
	adaID := ""
	_, out = api.call("GET", "/api/v1/users", "")
	for _, u := range out["users"].([]any) {
		if m := u.(map[string]any); m["email"] == "admin@demo.weft" {
			adaID = m["id"].(string)
		}
	}
	if st, out := api.call("POST", "/api/v1/users/"+adaID+"/role", `{"role":"pm"}`); st != http.StatusConflict || errCode(out) != "LAST_ADMIN" {
		t.Fatalf("API demotes the last admin: %d %v", st, out)
	}
}

func emails(out map[string]any) []string {
	var s []string
	for _, u := range out["users"].([]any) {
		s = append(s, u.(map[string]any)["email"].(string))
	}
	return s
}

// TestOwnPassword: each user changes their own password: the current one is asked, weak and
// leaked ones are refused, and the new one signs in.
func TestOwnPassword(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	c := k.login("reviewer@demo.weft")
	if res, body := c.get("/account"); res.StatusCode != 200 || !strings.Contains(text(body), "Change your password") {
		t.Fatalf("account page: %d %s", res.StatusCode, text(body))
	}
	for _, bad := range []struct{ current, pw, want string }{
		{"wrong", "granite falcon umbrella 42", "current password is not right"},
		{auth.DemoPassword, "short", "at least 10 characters"},
		{auth.DemoPassword, "iloveyou12", "leaked"},
		{auth.DemoPassword, "aaaaaaaaaaaa", "too easy to guess"},
		{auth.DemoPassword, "reviewer@demo", "too easy to guess"},
	} {
		res, body := c.post("/account/password", url.Values{"current": {bad.current}, "password": {bad.pw}})
		if res.StatusCode != 400 || !strings.Contains(text(body), bad.want) {
			t.Errorf("change to %q: %d %q, want %q", bad.pw, res.StatusCode, text(between(body, "alert error", "</div>")), bad.want)
		}
	}
	other := k.login("reviewer@demo.weft") // the same user in another browser
	res, body := c.post("/account/password", url.Values{"current": {auth.DemoPassword}, "password": {"granite falcon umbrella 42"}})
	if res.StatusCode != 200 || !strings.Contains(text(body), "Your password is changed") {
		t.Fatalf("change: %d %s", res.StatusCode, text(body))
	}
	// The session that changed it goes on; the other, signed in with the old password, ends.
	if res, _ := c.get("/reviews"); res.StatusCode != 200 {
		t.Fatalf("the changing session after the change: %d", res.StatusCode)
	}
	if res, _ := other.get("/reviews"); res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/login") {
		t.Fatalf("another session after the change: %d %s, want sent to sign in", res.StatusCode, res.Header.Get("Location"))
	}
	if _, err := k.Auth.Authenticate(context.Background(), "reviewer@demo.weft", "granite falcon umbrella 42"); err != nil {
		t.Fatal(err)
	}
}
