package server_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"weft/internal/app"
	"weft/internal/auth"
	"weft/internal/postgres"
	"weft/internal/runner"
)

// TestUpdateStateAPI: POST /api/v1/threads/{thread}/state is LangGraph's update_state: for
// reviewers and admins, refused while a run is on its way, checked against the workflow's
// channels, audited, and another tenant's thread is a 404.
func TestUpdateStateAPI(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	ctx := context.Background()
	j, err := k.App.StartRun(ctx, app.DemoTenant, "tour", []byte(`{"question": "Which durable workflows survive restarts?"}`), "u_pm")
	if err != nil {
		t.Fatal(err)
	}
	rev, pm, other := k.api(app.DemoTenant, auth.Reviewer), k.api(app.DemoTenant, auth.PM), k.api(app.OtherTenant, auth.Admin)
	path := "/api/v1/threads/" + j.ThreadID + "/state"
	// Queued: a run is on its way.
	if code, body := rev.call("POST", path, `{"values": {"draft": "x"}}`); code != http.StatusConflict || errCode(body) != postgres.CodeThreadBusy {
		t.Fatalf("update while queued: %d %v", code, body)
	}
	k.work()
	k.waitJobID(j.ID, runner.WaitingReview)
	if code, _ := pm.call("POST", path, `{"values": {"draft": "x"}}`); code != http.StatusForbidden {
		t.Fatalf("a pm's update: %d, want 403", code)
	}
	if code, _ := other.call("POST", path, `{"values": {"draft": "x"}}`); code != http.StatusNotFound {
		t.Fatalf("another tenant's update: %d, want 404", code)
	}
	for body, want := range map[string]string{
		`{"values": {"nope": 1}}`:          "not a channel",
		`{"values": {"draft": 7}}`:         "must be",
		`{}`:                               "values is required",
		`{"values": {"draft": "a\u0007"}}`: "control character",
	} {
		if code, res := rev.call("POST", path, body); code != http.StatusBadRequest || !strings.Contains(errMessage(res), want) {
			t.Fatalf("update %s: %d %v, want a 400 saying %q", body, code, res, want)
		}
	}
	code, res := rev.call("POST", path, `{"values": {"draft": "Edited by a reviewer"}, "as_node": "stamp"}`)
	if code != http.StatusOK {
		t.Fatalf("update: %d %v", code, res)
	}
	_, st := rev.call("GET", "/api/v1/threads/"+j.ThreadID+"/state", "")
	values := st["state"].(map[string]any)["values"].(map[string]any)
	if values["draft"] != "Edited by a reviewer" {
		t.Fatalf("the state after the update: %v", values["draft"])
	}
	entries, _, err := k.App.Audit.List(ctx, postgres.AuditFilter{TenantID: app.DemoTenant, Action: "thread.update_state"}, 0, 5)
	if err != nil || len(entries) != 1 || entries[0].Actor != "token:test-reviewer" || entries[0].Subject != j.ThreadID {
		t.Fatalf("audit of the update: %+v %v", entries, err)
	}
}

// TestStreamModes: an SSE client picks what it gets: values and updates are derived from the
// checkpoints (secrets hidden), custom from the nodes' progress; an unknown mode is a 400.
func TestStreamModes(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	k.work()
	j, err := k.App.StartRun(context.Background(), app.DemoTenant, "tour", []byte(`{"question": "How do retries and checkpoints work together?"}`), "u_pm")
	if err != nil {
		t.Fatal(err)
	}
	k.waitJobID(j.ID, runner.WaitingReview)
	pm := k.api(app.DemoTenant, auth.PM)
	if code, body := pm.call("GET", "/api/v1/threads/"+j.ThreadID+"/events?modes=values,bogus", ""); code != http.StatusBadRequest ||
		!strings.Contains(errMessage(body), "modes takes values, updates, custom and debug") {
		t.Fatalf("an unknown mode: %d %v", code, body)
	}
	seen := map[string]bool{}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", k.Srv.URL+"/api/v1/threads/"+j.ThreadID+"/events?modes=values,updates", nil)
	req.Header.Set("Authorization", "Bearer "+pm.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() && !(seen["values"] && seen["updates"]) {
		line := sc.Text()
		if name, ok := strings.CutPrefix(line, "event: "); ok {
			seen[name] = true
		}
		if strings.HasPrefix(line, "data: ") && strings.Contains(line, `"resume_token":"rt_`) {
			t.Fatalf("a resume token reached a pm's stream: %s", line)
		}
	}
	if !seen["values"] || !seen["updates"] || seen["custom"] {
		t.Fatalf("events with modes=values,updates: %v", seen)
	}
}
