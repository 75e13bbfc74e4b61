package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"weft/internal/auth"
	"weft/internal/server"
)

func TestLoginLogoutAndCSRF(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	anon := k.anonymous()
	res, _ := anon.get("/")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/login") {
		t.Fatalf("anonymous home: %d → %s", res.StatusCode, res.Header.Get("Location"))
	}
	_, page := anon.get("/login")
	if !strings.Contains(text(page), "pm@demo.weft") {
		t.Fatal("the login page does not list the demo logins")
	}
	res, body := anon.post("/login", url.Values{"email": {"pm@demo.weft"}, "password": {"wrong password"}})
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(text(body), "The email or password is not right") {
		t.Fatalf("wrong password: %d", res.StatusCode)
	}
	res, _ = anon.postRaw("/login", url.Values{"email": {"pm@demo.weft"}, "password": {"weft-demo-2026"}})
	if res.StatusCode != http.StatusForbidden {
		t.Fatalf("login without the CSRF token: %d, want 403", res.StatusCode)
	}
	pm := k.login("pm@demo.weft")
	res, _ = pm.get("/")
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard" {
		t.Fatalf("pm's home: %d → %s", res.StatusCode, res.Header.Get("Location"))
	}
	// Signed in already (in another tab), a "sign in again" link goes on to its page.
	for next, want := range map[string]string{"/runs?status=failed": "/runs?status=failed", "//evil.example": "/", "": "/"} {
		if res, _ = pm.get("/login?next=" + url.QueryEscape(next)); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
			t.Errorf("/login?next=%s signed in: %d → %s, want %s", next, res.StatusCode, res.Header.Get("Location"), want)
		}
	}
	// … unless the role may not open it: a reviewer goes home, not to a 403.
	if res, _ = k.login("reviewer@demo.weft").get("/login?next=/runs"); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/" {
		t.Errorf("/login?next=/runs signed in as a reviewer: %d → %s, want /", res.StatusCode, res.Header.Get("Location"))
	}
	// A post a browser marks as coming from another site, or from a sibling of this one
	// (which could have set the token's cookie), is refused even with a matching token; one
	// from this origin passes.
	for site, want := range map[string]int{"cross-site": http.StatusForbidden, "same-site": http.StatusForbidden, "same-origin": http.StatusSeeOther} {
		form := url.Values{"_csrf": {pm.csrf()}}
		req := formRequest(pm.base+"/logout", form)
		req.Header.Set("Sec-Fetch-Site", site)
		res, body := pm.do(req)
		if res.StatusCode != want || want == http.StatusForbidden && !strings.Contains(text(body), "did not come from this site") {
			t.Fatalf("a post marked %s: %d, want %d", site, res.StatusCode, want)
		}
		if want == http.StatusSeeOther {
			pm = k.login("pm@demo.weft")
		}
	}
	// Signed-in pages are kept by no cache.
	if res, _ := pm.get("/dashboard"); res.Header.Get("Cache-Control") != "no-store" {
		t.Fatalf("the dashboard's Cache-Control: %q, want no-store", res.Header.Get("Cache-Control"))
	}
	for _, ck := range pm.http.Jar.Cookies(mustURL(k.Srv.URL)) {
		if ck.Name == "weft_session" && ck.Value == "" {
			t.Fatal("empty session cookie")
		}
	}
	// An unknown URL is a 404 that keeps the signed-in user's navigation.
	res, body = pm.get("/no/such/page")
	if res.StatusCode != http.StatusNotFound || !strings.Contains(body, "Not Found") || !strings.Contains(body, `href="/dashboard"`) ||
		!strings.Contains(text(body), "Log out") {
		t.Fatalf("unknown page, signed in: %d %s", res.StatusCode, text(body))
	}
	// The logout address typed in the address bar asks first (signing out is a form post).
	res, body = pm.get("/logout")
	if res.StatusCode != http.StatusOK || !strings.Contains(text(body), "Log out of Weft? You are signed in as Paula Meyer") ||
		strings.Count(body, `action="/logout"`) != 2 {
		t.Fatalf("GET /logout: %d %s", res.StatusCode, text(body))
	}
	if _, still := pm.get("/dashboard"); !strings.Contains(still, "Paula Meyer") {
		t.Fatal("opening /logout signed the user out")
	}
	res, _ = pm.post("/logout", nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("logout: %d", res.StatusCode)
	}
	res, _ = pm.get("/")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/login") {
		t.Fatalf("after logout: %d → %s", res.StatusCode, res.Header.Get("Location"))
	}
	// Signed out, the logout address is the sign-in page (not one that returns to logging out).
	if res, _ = pm.get("/logout"); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login" {
		t.Fatalf("GET /logout signed out: %d → %s", res.StatusCode, res.Header.Get("Location"))
	}
	res, body = pm.get("/no/such/page")
	if res.StatusCode != http.StatusNotFound || !strings.Contains(body, "Not Found") || strings.Contains(text(body), "Log out") {
		t.Fatalf("unknown page, signed out: %d", res.StatusCode)
	}
}

func mustURL(s string) *url.URL {
	u, _ := url.Parse(s)
	return u
}

// TestSessionIdleTimeout: a session unused for longer than the idle timeout
// ends (the next page asks to sign in again), and pages viewed within it do
// not write the session back each time (the row stays as the login left it).
func TestSessionIdleTimeout(t *testing.T) {
	t.Parallel()
	// The session keeps its last use to the second, so the idle time it sees is up to a
	// second longer than the real one: 2 s leaves room for the page views below.
	k := newKitWith(t, auth.Options{IdleTimeout: 2 * time.Second})
	pm := k.login("pm@demo.weft")
	row := func() (data []byte, expiry time.Time) {
		t.Helper()
		if err := k.App.DB.Pool().QueryRow(context.Background(), `SELECT data, expiry FROM sessions`).Scan(&data, &expiry); err != nil {
			t.Fatal(err)
		}
		return data, expiry
	}
	data0, exp0 := row()
	for range 3 {
		if res, _ := pm.get("/dashboard"); res.StatusCode != http.StatusOK {
			t.Fatalf("dashboard within the idle timeout: %d", res.StatusCode)
		}
	}
	if data1, exp1 := row(); !bytes.Equal(data0, data1) || !exp0.Equal(exp1) {
		t.Fatal("viewing pages wrote the session back")
	}
	time.Sleep(2500 * time.Millisecond)
	res, _ := pm.get("/dashboard")
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/login") {
		t.Fatalf("dashboard after the idle timeout: %d → %s, want the login page", res.StatusCode, res.Header.Get("Location"))
	}
	var n int
	if err := k.App.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM sessions`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("sessions left after the idle timeout: %d (%v)", n, err)
	}
	// An htmx request (a form sent from a page) is sent to sign in and back to that page.
	req, _ := http.NewRequest(http.MethodGet, pm.base+"/dashboard", nil)
	req.Header.Set("HX-Request", "true")
	req.Header.Set("HX-Current-URL", pm.base+"/projects/demo-dc-network-2026?started=2")
	res, body := pm.do(req)
	if want := "/login?ended=1&next=" + url.QueryEscape("/projects/demo-dc-network-2026?started=2"); res.StatusCode != http.StatusUnauthorized ||
		res.Header.Get("HX-Redirect") != want || !strings.Contains(body, "Your session ended") {
		t.Fatalf("htmx request after the idle timeout: %d HX-Redirect %q (want %q) %s", res.StatusCode, res.Header.Get("HX-Redirect"), want, text(body))
	}
	// Where it leads says why, and signing in goes back.
	if res, body := pm.get(res.Header.Get("HX-Redirect")); res.StatusCode != http.StatusOK || !strings.Contains(text(body), "Your session ended. Sign in again to carry on") ||
		!strings.Contains(body, `name="next" value="/projects/demo-dc-network-2026?started=2"`) {
		t.Fatalf("the sign-in page after the session ended: %d %s", res.StatusCode, text(body))
	}
}

// Sign-in attempts are rate limited per address; the refused attempt gets the form again,
// with the message and the email kept, not an error page.
func TestLoginRateLimit(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	srv := httptest.NewServer(server.New(server.Config{App: k.App, Auth: k.Auth, LoginRate: 3, DemoLogins: server.DemoLogins()}).Handler())
	t.Cleanup(srv.Close)
	c := k.anonymous()
	c.base = srv.URL
	c.get("/login") // the CSRF cookie
	// Correct sign-ins are not counted: an office behind one address signs in all morning.
	good := url.Values{"email": {"pm@demo.weft"}, "password": {auth.DemoPassword}}
	for i := range 6 {
		if res, _ := c.post("/login", good); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("correct sign-in %d: %d, want 303", i+1, res.StatusCode)
		}
		c.post("/logout", nil)
		c.get("/login")
	}
	bad := url.Values{"email": {"pm@demo.weft"}, "password": {"wrong"}}
	for i := range 3 {
		if res, _ := c.post("/login", bad); res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("bad attempt %d: %d, want 401", i+1, res.StatusCode)
		}
	}
	res, body := c.post("/login", url.Values{"email": {"pm@demo.weft"}, "password": {auth.DemoPassword}})
	if res.StatusCode != http.StatusTooManyRequests || !strings.Contains(text(body), "Too many failed sign-ins") ||
		!strings.Contains(body, `name="password"`) || !strings.Contains(body, `value="pm@demo.weft"`) {
		t.Fatalf("attempt over the limit: %d %s", res.StatusCode, text(body))
	}
	// It says when to try again: in Retry-After, and on the page in words. At 3 a minute, the
	// address has its next attempt within 20 seconds.
	wait := retryAfter(t, res, text(body), "Too many failed sign-ins from your address. Try again in %d seconds.")
	if wait < 1 || wait > 20 {
		t.Fatalf("Retry-After %d s, want 1 to 20 (one attempt back at 3 a minute)", wait)
	}
	// Another address claimed in X-Forwarded-For is not believed without --trust-proxy.
	spoof := url.Values{"email": {"pm@demo.weft"}, "password": {"wrong"}, "_csrf": {c.csrf()}}
	req, _ := http.NewRequest(http.MethodPost, c.base+"/login", strings.NewReader(spoof.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Forwarded-For", "203.0.113.7")
	req.Header.Set("X-Real-IP", "203.0.113.8")
	if res, _ := c.do(req); res.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("an attempt claiming another address: %d, want 429", res.StatusCode)
	}
	// Looking at the form is not an attempt.
	if res, _ := c.get("/login"); res.StatusCode != http.StatusOK {
		t.Fatalf("GET /login while limited: %d", res.StatusCode)
	}
}

// Guesses at one account spread over many addresses run out too (the account's own budget,
// twice an address's), while other accounts sign in as usual.
func TestLoginRateLimitPerAccount(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	srv := httptest.NewServer(server.New(server.Config{App: k.App, Auth: k.Auth, LoginRate: 3, TrustProxy: true}).Handler())
	t.Cleanup(srv.Close)
	c := k.anonymous()
	c.base = srv.URL
	c.get("/login")
	var last *http.Response
	attempt := func(from, email, password string) (int, string) {
		form := url.Values{"email": {email}, "password": {password}, "_csrf": {c.csrf()}}
		req, _ := http.NewRequest(http.MethodPost, c.base+"/login", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Forwarded-For", from)
		res, body := c.do(req)
		last = res
		return res.StatusCode, text(body)
	}
	if code, _ := attempt("192.0.2.50", "pm@demo.weft", auth.DemoPassword); code != http.StatusSeeOther { // the owner's usual address
		t.Fatalf("the owner's sign-in: %d", code)
	}
	c.post("/logout", nil)
	c.get("/login")
	for i := range 6 { // a new address each time: no address runs out
		if code, _ := attempt(fmt.Sprintf("203.0.113.%d", i+1), "PM@demo.weft", "wrong"); code != http.StatusUnauthorized {
			t.Fatalf("guess %d: %d, want 401", i+1, code)
		}
	}
	code, body := attempt("198.51.100.1", "pm@demo.weft", "wrong")
	if code != http.StatusTooManyRequests || !strings.Contains(body, "Too many failed sign-ins for this account from new addresses") {
		t.Fatalf("the account's 7th guess, from a new address: %d %s", code, body)
	}
	if wait := retryAfter(t, last, body,
		"Too many failed sign-ins for this account from new addresses. Try again in %d seconds, or sign in from an address you used before."); wait < 1 || wait > 20 {
		t.Fatalf("the account's Retry-After %d s, want 1 to 20", wait)
	}
	if code, _ := attempt("198.51.100.3", "pm@demo.weft", auth.DemoPassword); code != http.StatusTooManyRequests {
		t.Fatalf("the right password from another new address while guesses go on: %d, want 429", code)
	}
	// The guesses cannot lock the owner out: their usual address still signs in.
	if code, _ := attempt("192.0.2.50", "pm@demo.weft", auth.DemoPassword); code != http.StatusSeeOther {
		t.Fatalf("the owner's sign-in from their usual address while the account is limited: %d, want 303", code)
	}
	c.post("/logout", nil)
	c.get("/login")
	if code, _ := attempt("198.51.100.2", "reviewer@demo.weft", auth.DemoPassword); code != http.StatusSeeOther {
		t.Fatalf("another account's sign-in: %d, want 303", code)
	}
}

// retryAfter is a 429's Retry-After in seconds, checked to be what its page says in words
// (format with a %d for the seconds).
func retryAfter(t *testing.T, res *http.Response, page, format string) int {
	t.Helper()
	n, err := strconv.Atoi(res.Header.Get("Retry-After"))
	if err != nil {
		t.Fatalf("a %d without a Retry-After in seconds: %q", res.StatusCode, res.Header.Get("Retry-After"))
	}
	if want := strings.Replace(fmt.Sprintf(format, n), " 1 seconds", " 1 second", 1); !strings.Contains(page, want) {
		t.Fatalf("Retry-After %d, while the page does not say %q: %s", n, want, page)
	}
	return n
}

// Uptime checks send HEAD: /healthz and the sign-in page answer it as their GET does, with
// no body. A missing static file is the console's 404 page, and the folder is no listing.
func TestHeadAndStaticRequests(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	for _, path := range []string{"/healthz", "/login"} {
		req, _ := http.NewRequest(http.MethodHead, k.Srv.URL+path, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || len(b) != 0 || res.Header.Get("Content-Type") == "" {
			t.Errorf("HEAD %s: %d, %d body bytes, type %q; want 200, no body", path, res.StatusCode, len(b), res.Header.Get("Content-Type"))
		}
	}
	// A stream's HEAD is refused with what it takes (it said 404, while a POST's 405 offered HEAD).
	pm := k.login("pm@demo.weft")
	for _, path := range []string{"/dashboard/events", "/threads/ev_demo-northwind/events"} {
		req, _ := http.NewRequest(http.MethodHead, k.Srv.URL+path, nil)
		res, _ := pm.do(req)
		if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET" {
			t.Errorf("HEAD %s: %d, Allow %q; want 405, Allow GET", path, res.StatusCode, res.Header.Get("Allow"))
		}
		if res, _ := pm.post(path, nil); res.Header.Get("Allow") != "GET" {
			t.Errorf("POST %s: Allow %q, want GET", path, res.Header.Get("Allow"))
		}
	}
	c := k.anonymous()
	if res, body := c.get("/static/css/app.css"); res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") == "" || !strings.Contains(body, "{") {
		t.Errorf("a static file: %d", res.StatusCode)
	}
	for _, path := range []string{"/static/js/nope.js", "/static/", "/static/js/", "/static/../go.mod"} {
		if res, body := c.get(path); res.StatusCode != http.StatusNotFound || !strings.Contains(body, "<html") || strings.Contains(body, "drafts.js</a>") {
			t.Errorf("GET %s: %d %.80q, want the 404 page", path, res.StatusCode, body)
		}
	}
}

// Wrong passwords sent all at once get no more tries than sent one by one: attempts in
// flight count against the address.
func TestLoginRateLimitConcurrent(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	srv := httptest.NewServer(server.New(server.Config{App: k.App, Auth: k.Auth, LoginRate: 3}).Handler())
	t.Cleanup(srv.Close)
	c := k.anonymous()
	c.base = srv.URL
	c.get("/login")
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for range 12 {
		wg.Go(func() {
			res, _ := c.post("/login", url.Values{"email": {"pm@demo.weft"}, "password": {"guess"}})
			mu.Lock()
			codes[res.StatusCode]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if codes[http.StatusUnauthorized] != 3 || codes[http.StatusTooManyRequests] != 9 {
		t.Fatalf("12 guesses at once with 3 allowed: %v, want 3 checked (401) and 9 refused (429)", codes)
	}
}

// TestSecurityHeaders: every answer carries the CSP and its neighbours; a server told it is
// behind HTTPS (--secure-cookies) also asks browsers to keep to HTTPS (HSTS) and marks its
// cookies Secure, and one that is not does neither (HSTS over plain HTTP would lock a
// browser out of it).
func TestSecurityHeaders(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	https := httptest.NewServer(server.New(server.Config{App: k.App, Auth: k.Auth, SecureCookies: true}).Handler())
	t.Cleanup(https.Close)
	for _, srv := range []*httptest.Server{k.Srv, https} {
		secure := srv == https
		res, err := http.Get(srv.URL + "/login")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		h := res.Header
		if !strings.Contains(h.Get("Content-Security-Policy"), "script-src 'self'") || h.Get("X-Content-Type-Options") != "nosniff" ||
			h.Get("X-Frame-Options") != "DENY" || h.Get("Referrer-Policy") != "same-origin" {
			t.Errorf("secure %v: the login page's headers %v", secure, h)
		}
		if hsts := h.Get("Strict-Transport-Security"); (hsts != "") != secure {
			t.Errorf("secure %v: Strict-Transport-Security %q", secure, hsts)
		}
		cookies := res.Cookies()
		if len(cookies) == 0 {
			t.Fatalf("secure %v: the login page sets no cookie (its CSRF token's)", secure)
		}
		for _, ck := range cookies {
			if ck.Secure != secure || !ck.HttpOnly {
				t.Errorf("secure %v: cookie %s Secure %v HttpOnly %v", secure, ck.Name, ck.Secure, ck.HttpOnly)
			}
		}
	}
}
