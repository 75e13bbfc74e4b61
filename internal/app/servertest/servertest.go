// Package servertest runs a real Weft console for tests: an App on a fresh database with the
// demo loaded (its data, its users, its runs queued), served over HTTP by internal/server
// with every workflow's own pages mounted, and browser-like clients signed in as the demo
// users. The server's tests and those of a workflow's own handler package use it.
// Packages using it call pgtest.Main from their TestMain.
package servertest

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"weft/internal/app"
	"weft/internal/auth"
	"weft/internal/llm"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
	"weft/internal/server"
)

// Kit is a real server on a fresh database with the demo loaded.
type Kit struct {
	T    *testing.T
	App  *app.App
	Auth *auth.Service
	Srv  *httptest.Server
}

// New opens an App on a fresh database, loads the demo (data, users, and its runs queued)
// and serves the console on a real HTTP server. Workers do not run unless the test calls
// Work.
func New(t *testing.T) *Kit {
	t.Helper()
	return NewWith(t, auth.Options{})
}

// NewWith is New with the given session options (HashCost is set here).
func NewWith(t *testing.T, o auth.Options) *Kit {
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
	return &Kit{T: t, App: a, Auth: authSvc, Srv: srv}
}

// Work runs the job workers until the test ends (or stop is called).
func (k *Kit) Work() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = k.App.RunWorkers(ctx) }()
	stop = sync.OnceFunc(func() { cancel(); <-done })
	k.T.Cleanup(stop)
	return stop
}

// RunEnded reports whether j's run has ended: a failed job's too. The graph's error route
// fails the job from inside the run, whose last checkpoint lands a few milliseconds later; a
// test that starts the thread again (or retries it) at once would race that checkpoint.
func (k *Kit) RunEnded(j runner.Job) bool {
	if j.Status != runner.Failed {
		return true
	}
	ended, err := k.App.Events.RunEnded(context.Background(), j)
	return err == nil && ended
}

// WaitJobID polls until the demo tenant's job id reaches want, and its run has ended (runs
// are asynchronous; the deadline only guards against a hang).
func (k *Kit) WaitJobID(id string, want runner.Status) runner.Job {
	k.T.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		j, err := k.App.Jobs.Job(context.Background(), app.DemoTenant, id)
		if err == nil && j.Status == want && k.RunEnded(j) {
			return j
		}
		if time.Now().After(deadline) {
			k.T.Fatalf("job %s is %q (%v), want %q", id, j.Status, err, want)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// WaitThread polls until the newest job of the demo tenant's thread reaches want, and its
// run has ended (a bid evaluation's thread has the evaluation's id).
func (k *Kit) WaitThread(threadID string, want runner.Status) runner.Job {
	k.T.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last runner.Job
	for time.Now().Before(deadline) {
		if jobs, err := k.App.Jobs.ThreadJobs(context.Background(), app.DemoTenant, threadID, 1); err == nil && len(jobs) > 0 {
			if last = jobs[0]; last.Status == want && k.RunEnded(last) {
				return last
			}
		}
		time.Sleep(25 * time.Millisecond)
	}
	k.T.Fatalf("thread %s never reached %s: its job %s is %s (retries %d, errors %+v, lease until %v)", threadID, want,
		last.ID, last.Status, last.RetryCount, last.Errors, last.LeaseUntil)
	return runner.Job{}
}

// Client is a browser-like client: a cookie jar, no automatic redirects.
type Client struct {
	T    *testing.T
	Base string // the server's URL
	HTTP *http.Client
}

// Anonymous is a client that has not signed in.
func (k *Kit) Anonymous() *Client {
	jar, _ := cookiejar.New(nil)
	return &Client{T: k.T, Base: k.Srv.URL, HTTP: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// Login signs in as a demo user by email (e.g. "pm@demo.weft").
func (k *Kit) Login(email string) *Client {
	k.T.Helper()
	c := k.Anonymous()
	c.Get("/login")
	res, body := c.Post("/login", url.Values{"email": {email}, "password": {auth.DemoPassword}})
	if res.StatusCode != http.StatusSeeOther {
		k.T.Fatalf("login as %s: %d %s", email, res.StatusCode, body)
	}
	return c
}

// Do sends req and reads the whole answer.
func (c *Client) Do(req *http.Request) (*http.Response, string) {
	c.T.Helper()
	res, err := c.HTTP.Do(req)
	if err != nil {
		c.T.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// Get GETs a path of the server.
func (c *Client) Get(path string) (*http.Response, string) {
	c.T.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.Base+path, nil)
	return c.Do(req)
}

// HTMX GETs like htmx does (a partial).
func (c *Client) HTMX(path string) (*http.Response, string) {
	c.T.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.Base+path, nil)
	req.Header.Set("HX-Request", "true")
	return c.Do(req)
}

// CSRF is the token the server set in its cookie (forms echo it).
func (c *Client) CSRF() string {
	u, _ := url.Parse(c.Base)
	for _, ck := range c.HTTP.Jar.Cookies(u) {
		if ck.Name == "weft_csrf" {
			return ck.Value
		}
	}
	return ""
}

// Post submits a form with the CSRF token, as the page's form would.
func (c *Client) Post(path string, form url.Values) (*http.Response, string) {
	c.T.Helper()
	if form == nil {
		form = url.Values{}
	}
	if form.Get("_csrf") == "" {
		form.Set("_csrf", c.CSRF())
	}
	return c.PostRaw(path, form)
}

// PostRaw submits a form as given (no CSRF token added).
func (c *Client) PostRaw(path string, form url.Values) (*http.Response, string) {
	c.T.Helper()
	return c.Do(FormRequest(c.Base+path, form))
}

// PostHTMX submits a form with the CSRF token as htmx does (hx-post: the answer is a partial).
func (c *Client) PostHTMX(path string, form url.Values) (*http.Response, string) {
	c.T.Helper()
	form.Set("_csrf", c.CSRF())
	req := FormRequest(c.Base+path, form)
	req.Header.Set("HX-Request", "true")
	return c.Do(req)
}

// Upload posts a multipart form with the CSRF token, as a form with a file input does: the
// fields, and the file (named filename, holding content) as the field "file" unless filename
// is "".
func (c *Client) Upload(path string, fields map[string]string, filename, content string) (*http.Response, string) {
	c.T.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("_csrf", c.CSRF())
	for k, v := range fields {
		_ = w.WriteField(k, v)
	}
	if filename != "" {
		fw, _ := w.CreateFormFile("file", filename)
		_, _ = fw.Write([]byte(content))
	}
	_ = w.Close()
	req, _ := http.NewRequest(http.MethodPost, c.Base+path, &buf)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return c.Do(req)
}

// FormRequest is a POST of form to u, url-encoded.
func FormRequest(u string, form url.Values) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

var tagRe = regexp.MustCompile(`<[^>]+>`)

// Text strips tags, for asserting what a user reads.
func Text(html string) string {
	return strings.Join(strings.Fields(tagRe.ReplaceAllString(html, " ")), " ")
}

// Between is the part of s from the first from to the to after it ("" without from).
func Between(s, from, to string) string {
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
