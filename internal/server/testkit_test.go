package server_test

import (
	"net/http"
	"net/url"
	"testing"

	"weft/internal/app/servertest"
	"weft/internal/auth"
	"weft/internal/postgres/pgtest"
	"weft/internal/runner"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// kit is a real server on a fresh database with the demo loaded (servertest.Kit).
type kit struct {
	*servertest.Kit
	t *testing.T
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
	return &kit{Kit: servertest.NewWith(t, o), t: t}
}

// work runs the job workers until the test ends.
func (k *kit) work() (stop func()) { return k.Work() }

// waitJob polls until the evaluation's job has the status (runs are asynchronous; the
// deadline only guards against a hang): its thread's newest job, as an evaluation's thread
// has its id.
func (k *kit) waitJob(evaluationID string, want runner.Status) runner.Job {
	k.t.Helper()
	return k.WaitThread(evaluationID, want)
}

// runEnded: a failed job's run has also ended (servertest.Kit.RunEnded).
func (k *kit) runEnded(j runner.Job) bool { return k.RunEnded(j) }

// waitJobID polls until the demo tenant's job id reaches want.
func (k *kit) waitJobID(id string, want runner.Status) runner.Job {
	k.t.Helper()
	return k.WaitJobID(id, want)
}

// client is a browser-like client: a cookie jar, no automatic redirects (servertest.Client).
type client struct {
	*servertest.Client
	t    *testing.T
	base string
	http *http.Client
}

func wrap(c *servertest.Client) *client {
	return &client{Client: c, t: c.T, base: c.Base, http: c.HTTP}
}

// to is the servertest client, sent where c is: a test may point c at another server (base).
func (c *client) to() *servertest.Client {
	return &servertest.Client{T: c.t, Base: c.base, HTTP: c.http}
}

func (k *kit) anonymous() *client { return wrap(k.Anonymous()) }

// login signs in as a demo user by email (e.g. "pm@demo.weft").
func (k *kit) login(email string) *client {
	k.t.Helper()
	return wrap(k.Login(email))
}

func (c *client) do(req *http.Request) (*http.Response, string) {
	c.t.Helper()
	return c.to().Do(req)
}

func (c *client) get(path string) (*http.Response, string) {
	c.t.Helper()
	return c.to().Get(path)
}

// htmx GETs like htmx does (a partial).
func (c *client) htmx(path string) (*http.Response, string) {
	c.t.Helper()
	return c.to().HTMX(path)
}

// csrf is the token the server set in its cookie (forms echo it).
func (c *client) csrf() string { return c.to().CSRF() }

// post submits a form with the CSRF token, as the page's form would.
func (c *client) post(path string, form url.Values) (*http.Response, string) {
	c.t.Helper()
	return c.to().Post(path, form)
}

// postRaw submits a form as given (no CSRF token added).
func (c *client) postRaw(path string, form url.Values) (*http.Response, string) {
	c.t.Helper()
	return c.to().PostRaw(path, form)
}

// postHTMX submits a form with the CSRF token as htmx does (hx-post: the answer is a partial).
func (c *client) postHTMX(path string, form url.Values) (*http.Response, string) {
	c.t.Helper()
	return c.to().PostHTMX(path, form)
}

// upload posts a multipart form with a file, as a form with a file input does.
func (c *client) upload(path string, fields map[string]string, filename, content string) (*http.Response, string) {
	c.t.Helper()
	return c.to().Upload(path, fields, filename, content)
}

func formRequest(u string, form url.Values) *http.Request { return servertest.FormRequest(u, form) }

// text strips tags, for asserting what a user reads.
func text(html string) string { return servertest.Text(html) }

// between is the part of s from the first from to the to after it ("" without from).
func between(s, from, to string) string { return servertest.Between(s, from, to) }
