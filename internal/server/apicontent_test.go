package server_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"weft/internal/app"
	"weft/internal/auth"
)

// TestAPIContentType: a body the API reads must be sent as application/json (a charset may
// follow); one with no Content-Type is a 415 like one of another type, and nothing is done.
// A POST without a body (…/resume-token) needs no type.
func TestAPIContentType(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	pm, reviewer := k.api(app.DemoTenant, auth.PM), k.api(app.DemoTenant, auth.Reviewer)
	send := func(token, path, contentType, body string) (int, map[string]any) {
		t.Helper()
		var r io.Reader
		if body != "" {
			r = strings.NewReader(body)
		}
		req, _ := http.NewRequest(http.MethodPost, k.Srv.URL+path, r)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		_ = json.NewDecoder(res.Body).Decode(&out)
		return res.StatusCode, out
	}
	runs := func() (n int) {
		if err := k.App.DB.Pool().QueryRow(context.Background(), `SELECT count(*) FROM jobs WHERE workflow = 'tour'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const run = `{"workflow":"tour","input":{"question":"Which durable workflows?"}}`
	before := runs()
	for ct, want := range map[string]string{
		"":                                  "send the body as application/json: the request has no Content-Type",
		"text/plain":                        `send the body as application/json, not "text/plain"`,
		"application/x-www-form-urlencoded": `send the body as application/json, not "application/x-www-form-urlencoded"`,
		"application/jsonp":                 `send the body as application/json, not "application/jsonp"`,
	} {
		if code, body := send(pm.token, "/api/v1/runs", ct, run); code != http.StatusUnsupportedMediaType ||
			errCode(body) != "UNSUPPORTED_MEDIA_TYPE" || errMessage(body) != want {
			t.Errorf("a run sent as %q: %d %v, want a 415 saying %q", ct, code, body, want)
		}
	}
	if n := runs(); n != before {
		t.Fatalf("bodies of another type started %d runs", n-before)
	}
	if code, body := send(reviewer.token, "/api/v1/threads/ev_demo-bluewater/resume", "", `{"resume_token":"x","decision":"approve","editor":{"reviewer_id":"u_reviewer"}}`); code != http.StatusUnsupportedMediaType {
		t.Errorf("a resume without a Content-Type: %d %v, want 415", code, body)
	}
	// A body a call does not read is refused alike; no body needs no type.
	if code, body := send(reviewer.token, "/api/v1/threads/ev_demo-bluewater/resume-token", "text/plain", "please"); code != http.StatusUnsupportedMediaType {
		t.Errorf("a resume-token request with a text body: %d %v, want 415", code, body)
	}
	if code, body := send(reviewer.token, "/api/v1/threads/ev_demo-bluewater/resume-token", "", ""); code != http.StatusConflict {
		t.Errorf("a resume-token request without a body (the thread does not wait): %d %v, want 409", code, body)
	}
	// A caller without a token learns nothing else first.
	if code, _ := send("", "/api/v1/runs", "", run); code != http.StatusUnauthorized {
		t.Errorf("no token, no Content-Type: %d, want 401", code)
	}
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "Application/JSON"} {
		if code, body := send(pm.token, "/api/v1/runs", ct, run); code != http.StatusAccepted {
			t.Errorf("a run sent as %q: %d %v, want 202", ct, code, body)
		}
	}
}
