package server_test

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"weft/internal/app"
	"weft/internal/auth"
	"weft/internal/runner"
)

// TestControlCharactersRefused: every way text comes in (a document's title and file, a start
// input, a review's comment and resume value, in the console and through the API, a token's
// or a user's name) refuses C0 and C1 control characters other than tab and line breaks,
// naming the field and the character's place; nothing is stored or used up.
func TestControlCharactersRefused(t *testing.T) {
	t.Parallel()
	k, bid := reviewKit(t)
	pm := k.login("pm@demo.weft")
	reviewer := k.login("reviewer@demo.weft")
	pmAPI, reviewerAPI := k.api(app.DemoTenant, auth.PM), k.api(app.DemoTenant, auth.Reviewer)
	says := func(what string, code int, msg, want string) {
		t.Helper()
		if code != http.StatusBadRequest || !strings.Contains(msg, want) {
			t.Errorf("%s: %d %q, want a 400 saying %q", what, code, msg, want)
		}
	}

	// A bid document: its title and its text.
	pm.get("/projects/demo-dc-network-2026")
	const docs = "/projects/demo-dc-network-2026/documents"
	for _, c := range []struct{ title, body, want string }{
		{"SLA\av2", "text", "The title holds a control character (U+0007) at character 4. Type it again without it."},
		{"SLA\vv2", "text", "The title holds a control character (U+000B) at character 4."},
		{"Price", "# Price\n\x1b[31mTotal\x1b[0m", "The file holds a control character (U+001B) at line 2, character 1. Remove it and upload again."},
		{"Price", "Total \u0085 1200 CNY", "The file holds a control character (U+0085) at character 7."},
	} {
		res, body := pm.upload(docs, map[string]string{"evaluation_id": "ev_demo-bluewater", "title": c.title}, "p.md", c.body)
		says("upload "+c.title, res.StatusCode, text(body), c.want)
	}
	if _, page := pm.get("/projects/demo-dc-network-2026"); strings.Contains(page, "SLA") {
		t.Error("a refused document was stored")
	}

	// A run's input, in the console's start form and through the API, at any depth.
	res, body := pm.post("/workflows/tour/start", url.Values{"input": {`{"question": "bell \u0007?"}`}})
	says("a start input", res.StatusCode, html.UnescapeString(text(body)), "The input's question holds a control character (U+0007) at character 6")
	code, apiBody := pmAPI.call("POST", "/api/v1/runs", `{"workflow":"tour","input":{"question":"durable \u000b?"}}`)
	says("an API run input", code, errMessage(apiBody), "the input's question holds a control character (U+000B) at character 9")

	// A bid evaluation's review comment, in the form and through the API.
	token, _, _ := reviewForm(t, reviewer, bid.ID)
	res, body = reviewer.post("/reviews/"+bid.ID, url.Values{"resume_token": {token}, "decision": {"approve"}, "comment": {"fine\a"}})
	says("a review comment", res.StatusCode, text(body), "The comment holds a control character (U+0007) at character 5. Remove it and send again.")
	code, apiBody = reviewerAPI.call("POST", "/api/v1/threads/ev_demo-bluewater/resume",
		`{"resume_token":"`+token+`","decision":"approve","comment":"ok \u001b[2J","editor":{"reviewer_id":"u_reviewer"}}`)
	says("an API comment", code, errMessage(apiBody), "comment holds a control character (U+001B) at character 4")

	// Another workflow's resume value, in the form and through the API.
	res, _ = pm.post("/workflows/tour/start", url.Values{"input": {`{"question": "What makes durable workflows survive crashes?"}`}})
	loc, _ := url.Parse(res.Header.Get("Location"))
	tour := k.waitJobID(loc.Query().Get("started"), runner.WaitingReview)
	tourToken, _, _ := reviewForm(t, reviewer, tour.ID)
	res, body = reviewer.post("/reviews/"+tour.ID, url.Values{"resume_token": {tourToken}, "decision": {"approve"},
		"value": {`{"note": {"deep": "x\u001b"}}`}})
	says("a resume value", res.StatusCode, html.UnescapeString(text(body)), "The resume value's note.deep holds a control character (U+001B) at character 2.")
	code, apiBody = reviewerAPI.call("POST", "/api/v1/threads/"+url.PathEscape(tour.ThreadID)+"/resume",
		`{"resume_token":"`+tourToken+`","decision":"approve","value":{"list":["\u0085"]},"editor":{"reviewer_id":"u_reviewer"}}`)
	says("an API resume value", code, errMessage(apiBody), "value's list[0] holds a control character (U+0085) at character 1")

	// Nothing was used up: both pauses take a clean answer with the same tokens.
	if res, body := reviewer.post("/reviews/"+bid.ID, url.Values{"resume_token": {token}, "decision": {"approve"}, "comment": {"fine"}}); res.StatusCode != http.StatusSeeOther {
		t.Errorf("approve the evaluation after the refusals: %d %s", res.StatusCode, text(body))
	}
	if code, apiBody = reviewerAPI.call("POST", "/api/v1/threads/"+url.PathEscape(tour.ThreadID)+"/resume",
		`{"resume_token":"`+tourToken+`","decision":"approve","value":{"list":["ok\ttab"]},"editor":{"reviewer_id":"u_reviewer"}}`); code != http.StatusAccepted {
		t.Errorf("approve the tour after the refusals: %d %v", code, apiBody)
	}

	// Names: an API token's and a user's.
	ctx := context.Background()
	if _, err := k.Auth.IssueAPIToken(ctx, app.DemoTenant, "ci\abot", auth.PM, "test"); err == nil ||
		!strings.Contains(err.Error(), "the name holds a control character (U+0007) at character 3") {
		t.Errorf("a token name with BEL: %v", err)
	}
	if err := k.Auth.CreateUser(ctx, auth.User{ID: "u_eve", TenantID: app.DemoTenant, Email: "eve@demo.weft", Name: "Eve\x1b[2J", Role: auth.PM},
		"long enough"); err == nil || !strings.Contains(err.Error(), "the name holds a control character (U+001B) at character 4") {
		t.Errorf("a user name with ESC: %v", err)
	}
}
