package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"weft/internal/app"
	"weft/internal/auth"
	"weft/internal/llm"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
	"weft/internal/server"

	"golang.org/x/crypto/bcrypt"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// kit is a real server on a fresh database with the demo loaded.
type kit struct {
	t    *testing.T
	App  *app.App
	Auth *auth.Service
	Srv  *httptest.Server
}

// newKit opens an App on a fresh database, loads the demo (data, users, and
// its three evaluations queued) and serves the console on a real HTTP
// server. Workers do not run unless the test calls k.work().
func newKit(t *testing.T) *kit {
	t.Helper()
	return newKitWith(t, auth.Options{})
}

// newKitWith is newKit with the given session options (HashCost is set here).
func newKitWith(t *testing.T, o auth.Options) *kit {
	t.Helper()
	a, err := app.Open(context.Background(), app.Config{DatabaseURL: pgtest.URL(t), LLM: llm.NewOffline(), Runner: runner.Config{
		Lease: 3 * time.Second, PollInterval: 50 * time.Millisecond, Backoff: func(int) time.Duration { return 0 }}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	o.HashCost = bcrypt.MinCost
	authSvc := auth.New(a.DB, o)
	if _, err := a.SeedDemoAll(context.Background(), authSvc); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(server.New(server.Config{App: a, Auth: authSvc, LoginRate: 10000, DemoLogins: server.DemoLogins()}).Handler())
	t.Cleanup(srv.Close)
	return &kit{t: t, App: a, Auth: authSvc, Srv: srv}
}

// work runs the job workers until the test ends.
func (k *kit) work() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = k.App.RunWorkers(ctx) }()
	stop = sync.OnceFunc(func() { cancel(); <-done })
	k.t.Cleanup(stop)
	return stop
}

// waitJob polls until the evaluation's job has the status (runs are
// asynchronous; the deadline only guards against a hang).
func (k *kit) waitJob(evaluationID string, want runner.Status) runner.Job {
	k.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last runner.Job
	for time.Now().Before(deadline) {
		ev, err := k.App.Evaluations.Evaluation(context.Background(), app.DemoTenant, evaluationID)
		if err == nil && ev.JobID != "" {
			if j, err := k.App.Jobs.Job(context.Background(), app.DemoTenant, ev.JobID); err == nil {
				if last = j; j.Status == want && k.runEnded(j) {
					return j
				}
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	k.t.Fatalf("evaluation %s never reached %s: its job %s is %s (retries %d, errors %+v, lease until %v)", evaluationID, want,
		last.ID, last.Status, last.RetryCount, last.Errors, last.LeaseUntil)
	return runner.Job{}
}

// runEnded: a failed job's run has also ended. The graph's error route fails the job from
// inside the run, whose last checkpoint lands a few milliseconds later; a test that starts
// the thread again (or retries it) at once would race that checkpoint.
func (k *kit) runEnded(j runner.Job) bool {
	if j.Status != runner.Failed {
		return true
	}
	ended, err := k.App.Events.RunEnded(context.Background(), j)
	return err == nil && ended
}

// waitJobID polls until the demo tenant's job id reaches want.
func (k *kit) waitJobID(id string, want runner.Status) runner.Job {
	k.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		j, err := k.App.Jobs.Job(context.Background(), app.DemoTenant, id)
		if err == nil && j.Status == want && k.runEnded(j) {
			return j
		}
		if time.Now().After(deadline) {
			k.t.Fatalf("job %s is %q (%v), want %q", id, j.Status, err, want)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// client is a browser-like client: a cookie jar, no automatic redirects.
type client struct {
	t    *testing.T
	base string
	http *http.Client
}

func (k *kit) anonymous() *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: k.t, base: k.Srv.URL, http: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// login signs in as a demo user by email (e.g. "pm@demo.weft").
func (k *kit) login(email string) *client {
	k.t.Helper()
	c := k.anonymous()
	c.get("/login")
	res, body := c.post("/login", url.Values{"email": {email}, "password": {auth.DemoPassword}})
	if res.StatusCode != http.StatusSeeOther {
		k.t.Fatalf("login as %s: %d %s", email, res.StatusCode, body)
	}
	return c
}

func (c *client) do(req *http.Request) (*http.Response, string) {
	c.t.Helper()
	res, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

func (c *client) get(path string) (*http.Response, string) {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.base+path, nil)
	return c.do(req)
}

// htmx GETs like htmx does (a partial).
func (c *client) htmx(path string) (*http.Response, string) {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.base+path, nil)
	req.Header.Set("HX-Request", "true")
	return c.do(req)
}

// csrf is the token the server set in its cookie (forms echo it).
func (c *client) csrf() string {
	u, _ := url.Parse(c.base)
	for _, ck := range c.http.Jar.Cookies(u) {
		if ck.Name == "weft_csrf" {
			return ck.Value
		}
	}
	return ""
}

// post submits a form with the CSRF token, as the page's form would.
func (c *client) post(path string, form url.Values) (*http.Response, string) {
	c.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if form.Get("_csrf") == "" {
		form.Set("_csrf", c.csrf())
	}
	return c.postRaw(path, form)
}

// postRaw submits a form as given (no CSRF token added).
func (c *client) postRaw(path string, form url.Values) (*http.Response, string) {
	c.t.Helper()
	return c.do(formRequest(c.base+path, form))
}

// postHTMX submits a form with the CSRF token as htmx does (hx-post: the answer is a partial).
func (c *client) postHTMX(path string, form url.Values) (*http.Response, string) {
	c.t.Helper()
	form.Set("_csrf", c.csrf())
	req := formRequest(c.base+path, form)
	req.Header.Set("HX-Request", "true")
	return c.do(req)
}

func formRequest(u string, form url.Values) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

var tagRe = regexp.MustCompile(`<[^>]+>`)

// text strips tags, for asserting what a user reads.
func text(html string) string {
	return strings.Join(strings.Fields(tagRe.ReplaceAllString(html, " ")), " ")
}

// between is the part of s from the first from to the to after it ("" without from).
func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i:]
	if j := strings.Index(s, to); j >= 0 {
		s = s[:j]
	}
	return s
}
