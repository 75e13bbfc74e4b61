package server_test

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"weft/internal/auth"
	"weft/internal/server"
)

// TestCSRFChecksOrigin: a form post must come from this site by its headers (when it says
// where it comes from) and carry the token, each whatever the other says. A browser that
// sends no Sec-Fetch-Site (older ones, or a proxy that drops it) is judged by its Origin, or
// its Referer when it has no Origin; a program that sends neither passes on its token.
func TestCSRFChecksOrigin(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	srv := httptest.NewServer(server.New(server.Config{App: k.App, Auth: k.Auth, LoginRate: 10000, TrustProxy: true}).Handler())
	t.Cleanup(srv.Close)
	u := mustURL(k.Srv.URL)
	port, _ := strconv.Atoi(u.Port())
	sibling := "http://" + u.Hostname() + ":" + strconv.Itoa(port+1)

	// A sign-in with a wrong password: 401 once both checks pass, 403 when either refuses.
	type attempt struct {
		name    string
		token   bool
		headers map[string]string
		host    string // the Host sent, when not the server's own
		proxied bool   // sent to the server started with --trust-proxy
		want    int
	}
	for _, tt := range []attempt{
		{name: "from another site by its Origin", token: true, headers: map[string]string{"Origin": "http://evil.example"}, want: 403},
		{name: "with Origin null (a sandboxed frame, a data: page)", token: true, headers: map[string]string{"Origin": "null"}, want: 403},
		{name: "from another site by its Referer", token: true, headers: map[string]string{"Referer": "http://evil.example/form.html"}, want: 403},
		{name: "from a sibling port by its Origin", token: true, headers: map[string]string{"Origin": sibling}, want: 403},
		{name: "from a sibling port by its Referer", token: true, headers: map[string]string{"Referer": sibling + "/login"}, want: 403},
		{name: "marked same-site by the browser", token: true, headers: map[string]string{"Sec-Fetch-Site": "same-site", "Origin": sibling}, want: 403},
		{name: "marked cross-site by the browser", token: true, headers: map[string]string{"Sec-Fetch-Site": "cross-site"}, want: 403},
		{name: "without a token, marked same-origin", headers: map[string]string{"Sec-Fetch-Site": "same-origin"}, want: 403},
		{name: "without a token, from this origin by every header", headers: map[string]string{"Sec-Fetch-Site": "same-origin",
			"Origin": k.Srv.URL, "Referer": k.Srv.URL + "/login"}, want: 403},
		{name: "without a token, from a program", want: 403},

		{name: "from this origin by its Origin", token: true, headers: map[string]string{"Origin": k.Srv.URL}, want: 401},
		{name: "from this origin by its Referer", token: true, headers: map[string]string{"Referer": k.Srv.URL + "/login"}, want: 401},
		{name: "marked same-origin by the browser", token: true, headers: map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": k.Srv.URL}, want: 401},
		{name: "from a program that says nothing of where", token: true, want: 401},
		{name: "on another host name", token: true, host: "weft.internal:8080",
			headers: map[string]string{"Origin": "http://weft.internal:8080", "Referer": "http://weft.internal:8080/login"}, want: 401},
		// Behind a reverse proxy that passes its own address as the Host: the host the browser
		// asked for is in X-Forwarded-Host, believed with --trust-proxy only.
		{name: "through a trusted proxy", token: true, proxied: true,
			headers: map[string]string{"Origin": "https://weft.example.com", "X-Forwarded-Host": "weft.example.com"}, want: 401},
		{name: "through a proxy not trusted", token: true,
			headers: map[string]string{"Origin": "https://weft.example.com", "X-Forwarded-Host": "weft.example.com"}, want: 403},
		{name: "through a trusted proxy, from another site", token: true, proxied: true,
			headers: map[string]string{"Origin": "http://evil.example", "X-Forwarded-Host": "weft.example.com"}, want: 403},
	} {
		c := k.anonymous()
		if tt.proxied {
			c.base = srv.URL
		}
		c.get("/login") // the token's cookie
		form := url.Values{"email": {"pm@demo.weft"}, "password": {"wrong"}}
		if tt.token {
			form.Set("_csrf", c.csrf())
		}
		req := formRequest(c.base+"/login", form)
		for h, v := range tt.headers {
			req.Header.Set(h, v)
		}
		if tt.host != "" {
			req.Host = tt.host // the client's jar then keeps the cookie to itself
			req.AddCookie(&http.Cookie{Name: "weft_csrf", Value: c.csrf()})
		}
		res, body := c.do(req)
		if res.StatusCode != tt.want {
			t.Errorf("a post %s: %d, want %d", tt.name, res.StatusCode, tt.want)
		}
		if tt.want == http.StatusForbidden && !strings.Contains(text(body), "did not come from this site") {
			t.Errorf("a post %s is refused without saying why: %s", tt.name, text(body))
		}
	}
}

// TestCSRFTokenForBrowsers: a page a browser opens (Sec-Fetch-Site sent) gets a real token in
// its forms and the cookie it is checked against, so its posts pass the token check too.
func TestCSRFTokenForBrowsers(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	c := k.anonymous()
	req, _ := http.NewRequest(http.MethodGet, c.base+"/login", nil)
	req.Header.Set("Sec-Fetch-Site", "none")
	_, page := c.do(req)
	m := regexp.MustCompile(`name="_csrf" value="([^"]*)"`).FindStringSubmatch(page)
	if m == nil || m[1] == "" || m[1] != c.csrf() {
		t.Fatalf("the sign-in form's token %q, the cookie's %q: want the same, not empty", m, c.csrf())
	}
	form := url.Values{"email": {"pm@demo.weft"}, "password": {auth.DemoPassword}, "_csrf": {m[1]}}
	req = formRequest(c.base+"/login", form)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	req.Header.Set("Origin", c.base)
	if res, body := c.do(req); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("a browser's sign-in with the form's token: %d %s", res.StatusCode, text(body))
	}
}
