package server_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"weft/internal/app"
	"weft/internal/auth"
	"weft/internal/postgres"
	"weft/internal/runner"
	"weft/internal/server"
)

// rule says who may use a page route: the roles allowed (none listed: any
// signed-in user), or public.
type rule struct {
	roles  []auth.Role
	public bool
}

var (
	public    = rule{public: true}
	anyone    = rule{}
	pmAdmin   = rule{roles: []auth.Role{auth.PM, auth.Admin}}
	revAdmin  = rule{roles: []auth.Role{auth.Reviewer, auth.Admin}}
	adminOnly = rule{roles: []auth.Role{auth.Admin}}
)

// pageRules is every page route's access rule. A route missing here fails
// the test: a new route must say who may use it.
var pageRules = map[string]rule{
	"GET /healthz":                public,
	"GET /metrics":                public,
	"GET /static/*":               public,
	"GET /favicon.ico":            public,
	"GET /login":                  public,
	"POST /login":                 public,
	"POST /logout":                anyone,
	"GET /logout":                 anyone,
	"GET /session":                anyone,
	"GET /":                       anyone,
	"GET /dashboard":              pmAdmin,
	"GET /dashboard/events":       pmAdmin,
	"GET /runs":                   pmAdmin,
	"GET /workflows/:name/start":  pmAdmin,
	"POST /workflows/:name/start": pmAdmin,
	"GET /projects/:id":           pmAdmin,
	"POST /projects/:id/start":    pmAdmin,
	"POST /projects/:id/evaluations/:eid/start":  pmAdmin,
	"POST /projects/:id/documents":               pmAdmin,
	"GET /projects/:id/documents":                pmAdmin,
	"GET /projects/:id/documents/:did":           anyone, // reviewers: from a review's evidence
	"POST /projects/:id/documents/:did/withdraw": pmAdmin,
	"GET /projects/:id/documents/:did/withdraw":  pmAdmin,
	"POST /projects/:id/documents/:did/restore":  pmAdmin,
	"GET /projects/:id/documents/:did/restore":   pmAdmin,
	"GET /threads/:id":                           anyone,
	"GET /threads/:id/events":                    anyone,
	"POST /threads/:id/fork":                     adminOnly,
	"GET /threads/:id/fork":                      anyone,
	"POST /threads/:id/follow-up":                pmAdmin,
	"GET /threads/:id/follow-up":                 anyone,
	"GET /files/:thread/*":                       anyone,
	"GET /reviews":                               revAdmin,
	"GET /reviews/:job_id":                       revAdmin,
	"POST /reviews/:job_id":                      revAdmin,
	"GET /reviews/:job_id/status":                revAdmin,
	"GET /audit":                                 adminOnly,
	"GET /audit.csv":                             adminOnly,
	"GET /dlq":                                   adminOnly,
	"GET /dlq/:id/status":                        adminOnly,
	"POST /dlq/:id/retry":                        adminOnly,
	"POST /dlq/:id/discard":                      adminOnly,
	"POST /dlq/bulk":                             adminOnly,
	"GET /dlq/:id/retry":                         adminOnly,
	"GET /dlq/:id/discard":                       adminOnly,
	"GET /dlq/bulk":                              adminOnly,
	"GET /projects/:id/start":                    pmAdmin,
	"GET /projects/:id/evaluations/:eid/start":   pmAdmin,
	"GET /projects/new":                          pmAdmin,
	"GET /projects":                              pmAdmin,
	"POST /projects":                             pmAdmin,
	"GET /projects/:id/rule-pack":                pmAdmin,
	"POST /projects/:id/rule-pack":               pmAdmin,
	"GET /projects/:id/rule-pack/import":         pmAdmin,
	"POST /projects/:id/rule-pack/import":        pmAdmin,
	"GET /projects/:id/rule-pack.yaml":           pmAdmin,
	"GET /projects/:id/suppliers":                pmAdmin,
	"POST /projects/:id/suppliers":               pmAdmin,
	"GET /projects/:id/suppliers/:sid/rename":    pmAdmin,
	"POST /projects/:id/suppliers/:sid/rename":   pmAdmin,
	"GET /admin":                                 adminOnly,
	"GET /admin/users":                           adminOnly,
	"POST /admin/users":                          adminOnly,
	"POST /admin/users/:id/role":                 adminOnly,
	"GET /admin/users/:id/role":                  adminOnly,
	"POST /admin/users/:id/deactivate":           adminOnly,
	"GET /admin/users/:id/deactivate":            adminOnly,
	"POST /admin/users/:id/reactivate":           adminOnly,
	"GET /admin/users/:id/reactivate":            adminOnly,
	"POST /admin/users/:id/reset-link":           adminOnly,
	"GET /admin/users/:id/reset-link":            adminOnly,
	"GET /account":                               anyone,
	"GET /account/password":                      anyone,
	"POST /account/password":                     anyone,
	"GET /password":                              public, // whoever holds a one-time link
	"POST /password":                             public,
}

// TestAuthorizationMatrix checks every page route × every role × both
// tenants: anonymous users go to the login page; a signed-in user of a role
// the route does not admit gets 403; an admitted role gets neither 401, 403
// nor 5xx; another tenant's ids give 404.
func TestAuthorizationMatrix(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	k.work()
	k.waitJob("ev_demo-northwind", runner.Succeeded)
	waiting := k.waitJob("ev_demo-bluewater", runner.WaitingReview)
	k.waitJob("ev_demo-harbor", runner.Failed)
	ctx := context.Background()
	dlq, _, err := k.App.Jobs.ListDLQ(ctx, app.DemoTenant, "", postgres.Cursor{}, 1)
	if err != nil || len(dlq) == 0 {
		t.Fatalf("no DLQ entry to test with: %v", err)
	}
	// Path parameters, by the segment before them.
	ids := map[string]string{"projects": "demo-dc-network-2026", "evaluations": "ev_demo-harbor",
		"threads": "ev_demo-northwind", "reviews": waiting.ID, "dlq": dlq[0].ID, "workflows": "tour",
		"documents": "demo-crestline-tech", "files": "ev_demo-northwind", "users": matrixUser(t, k), "suppliers": "demo-bluewater"}
	// Workflows are registered for every tenant: their names are not another tenant's ids.
	tenantScoped := func(path string) bool { return strings.Contains(path, ":") && !strings.HasPrefix(path, "/workflows/") }
	fill := func(path string) string {
		parts := strings.Split(path, "/")
		for i, p := range parts {
			if strings.HasPrefix(p, ":") {
				parts[i] = ids[parts[i-1]]
			}
		}
		return strings.Join(parts, "/")
	}

	users := map[string]*client{"anonymous": k.anonymous()}
	roles := map[string]auth.Role{"pm@demo.weft": auth.PM, "reviewer@demo.weft": auth.Reviewer, "admin@demo.weft": auth.Admin, "admin@acme.weft": auth.Admin}
	for email := range roles {
		users[email] = k.login(email)
	}
	routes := server.New(server.Config{App: k.App, Auth: k.Auth}).Routes()
	sort.Slice(routes, func(i, j int) bool { return routes[i].Path+routes[i].Method < routes[j].Path+routes[j].Method })
	checked, listed := 0, map[string]bool{}
	for _, r := range routes {
		if strings.HasPrefix(r.Path, "/api/") || (r.Method != http.MethodGet && r.Method != http.MethodPost) || listed[r.Method+r.Path] {
			continue // the API has its own tests; route-not-found entries are not routes
		}
		listed[r.Method+r.Path] = true
		key := r.Method + " " + r.Path
		ru, ok := pageRules[key]
		if !ok {
			t.Errorf("route %s has no access rule in this matrix", key)
			continue
		}
		if ru.public || key == "POST /logout" || strings.HasSuffix(r.Path, "/events") {
			continue // public; logout ends the session; streams have their own tests
		}
		path := fill(r.Path)
		for who, c := range users {
			var res *http.Response
			if r.Method == http.MethodGet {
				res, _ = c.get(path)
			} else {
				res, _ = c.post(path, url.Values{"checkpoint_id": {"x"}, "decision": {"approve"}})
			}
			checked++
			code := res.StatusCode
			switch {
			case who == "anonymous":
				if code != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/login") {
					if !(r.Method == http.MethodPost && code == http.StatusForbidden) { // no CSRF cookie yet: refused first
						t.Errorf("%s %s as anonymous: %d → %q, want a redirect to /login", r.Method, path, code, res.Header.Get("Location"))
					}
				}
			case who == "admin@acme.weft" && tenantScoped(r.Path):
				if code != http.StatusNotFound {
					t.Errorf("%s %s as acme's admin: %d, want 404 (another tenant's id)", r.Method, path, code)
				}
			case admits(ru, roles[who]):
				if code == http.StatusUnauthorized || code == http.StatusForbidden || code >= 500 {
					t.Errorf("%s %s as %s: %d, want access", r.Method, path, who, code)
				}
			default:
				if code != http.StatusForbidden {
					t.Errorf("%s %s as %s: %d, want 403", r.Method, path, who, code)
				}
			}
		}
	}
	for key := range pageRules {
		m, p, _ := strings.Cut(key, " ")
		if !listed[m+p] {
			t.Errorf("the matrix lists %s, which is not a route", key)
		}
	}
	t.Logf("checked %d (route, user) pairs", checked)
}

// matrixUser is a user of the demo tenant for the matrix's user actions to act on (not one
// of the users it signs in as, whose sessions a deactivation would end).
func matrixUser(t *testing.T, k *kit) string {
	t.Helper()
	acc, _, err := k.Auth.CreateAccount(context.Background(), "test", auth.NewAccount{TenantID: app.DemoTenant,
		Email: "matrix@demo.example", Name: "Matrix User", Role: auth.Reviewer})
	if err != nil {
		t.Fatal(err)
	}
	return acc.ID
}

func admits(r rule, role auth.Role) bool {
	if len(r.roles) == 0 {
		return true
	}
	for _, x := range r.roles {
		if x == role {
			return true
		}
	}
	return false
}

// Signing in with a next page (a shared link) goes there when the user's role may open it,
// else to the role's home: never to a 403. Checked for every GET page of pageRules, so the
// login's idea of each section's roles cannot drift from the routes'.
func TestLoginNextFollowsRoles(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	users := map[auth.Role]string{auth.PM: "pm@demo.weft", auth.Reviewer: "reviewer@demo.weft", auth.Admin: "admin@demo.weft"}
	checked := 0
	for route, r := range pageRules {
		method, path, _ := strings.Cut(route, " ")
		if method != http.MethodGet || r.public || strings.Contains(path, "*") || strings.HasSuffix(path, "/events") {
			continue
		}
		path = strings.NewReplacer(":id", "x", ":job_id", "x").Replace(path)
		for role, email := range users {
			c := k.anonymous()
			c.get("/login")
			res, _ := c.post("/login", url.Values{"email": {email}, "password": {auth.DemoPassword}, "next": {path + "?a=1"}})
			want := path + "?a=1"
			if r.roles != nil && !slices.Contains(r.roles, role) {
				want = "/"
			}
			if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != want {
				t.Errorf("%s signing in with next=%s: %d → %q, want %q", role, path, res.StatusCode, res.Header.Get("Location"), want)
			}
			checked++
		}
	}
	t.Logf("checked %d (page, role) sign-ins", checked)
}

// A known address asked with a method it does not take is a 405 naming the ones it does (an
// Allow header, and the console's error page says so); an unknown address stays a 404, and
// a method the address takes is never called wrong.
func TestWrongMethod(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	admin := k.login("admin@demo.weft")
	for _, c := range []struct{ method, path, allow string }{
		{http.MethodPut, "/", "GET, HEAD"},
		{http.MethodDelete, "/threads/ev_demo-northwind/fork", "GET, HEAD, POST"},
		{http.MethodPost, "/healthz", "GET, HEAD"},
		{http.MethodDelete, "/login", "GET, HEAD, POST"},
	} {
		req, _ := http.NewRequest(c.method, admin.base+c.path, nil)
		res, body := admin.do(req)
		if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != c.allow ||
			!strings.Contains(text(body), "This address does not take "+c.method) {
			t.Errorf("%s %s: %d, Allow %q: %s", c.method, c.path, res.StatusCode, res.Header.Get("Allow"), text(body))
		}
	}
	req, _ := http.NewRequest(http.MethodDelete, admin.base+"/no-such-page", nil)
	if res, _ := admin.do(req); res.StatusCode != http.StatusNotFound {
		t.Errorf("DELETE of an unknown address: %d, want 404", res.StatusCode)
	}
	if res, body := admin.get("/threads/no-such-thread"); res.StatusCode != http.StatusNotFound || strings.Contains(text(body), "does not take") {
		t.Errorf("an unknown thread: %d %s, want a plain 404", res.StatusCode, text(body))
	}
}
