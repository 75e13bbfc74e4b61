package durable_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"sync"
	"testing"

	"weft/internal/app"
	"weft/internal/app/servertest"
	"weft/internal/auth"
	"weft/internal/fault"
	"weft/internal/runner"
	cr "weft/internal/workflow/contractreview"
)

// footprint counts what a start or a decision stores: jobs, audit rows, checkpoints and
// their writes, recorded decisions, used resume tokens and artifacts.
func (k *kit) footprint() string {
	k.t.Helper()
	var jobs, audit, cps, writes, decisions, used, arts int
	err := k.app.DB.Pool().QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM jobs), (SELECT count(*) FROM audit_log), (SELECT count(*) FROM checkpoints),
		(SELECT count(*) FROM checkpoint_writes), (SELECT count(*) FROM review_decisions),
		(SELECT count(*) FROM resume_tokens WHERE used_at IS NOT NULL), (SELECT count(*) FROM artifacts)`).
		Scan(&jobs, &audit, &cps, &writes, &decisions, &used, &arts)
	if err != nil {
		k.t.Fatal(err)
	}
	return fmt.Sprintf("jobs %d, audit rows %d, checkpoints %d, writes %d, decisions %d, used tokens %d, artifacts %d",
		jobs, audit, cps, writes, decisions, used, arts)
}

// blankPDF is a valid one-page PDF with nothing on its page: no text layer (as a scan has
// none).
func blankPDF() []byte {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 595 842] /Contents 4 0 R /Resources << >> >>",
		"<< /Length 0 >>\nstream\n\nendstream",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// console signs in to the console as a demo user.
func (k *kit) console(email string) *servertest.Client {
	k.t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &servertest.Client{T: k.t, Base: k.base, HTTP: &http.Client{Jar: jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	c.Get("/login")
	if res, body := c.Post("/login", url.Values{"email": {email}, "password": {auth.DemoPassword}}); res.StatusCode != http.StatusSeeOther {
		k.t.Fatalf("login as %s: %d %s", email, res.StatusCode, body)
	}
	return c
}

// uploadStart posts the start form with the contract as the console's form does.
func uploadStart(c *servertest.Client, name string, data []byte) (*http.Response, string) {
	c.T.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("_csrf", c.CSRF())
	_ = w.WriteField(cr.FieldOurParty, "Contractor")
	fw, _ := w.CreateFormFile(cr.FieldContract, name)
	_, _ = fw.Write(data)
	_ = w.Close()
	req, _ := http.NewRequest(http.MethodPost, c.Base+"/workflows/"+cr.Name+"/start", &buf)
	req.Header.Set("Content-Type", w.FormDataContentType())
	return c.Do(req)
}

// TestBadStartsAreRefused: a start the review cannot use is refused with a 4xx that says why,
// naming the field, and stores nothing: no job, no audit row, no checkpoint.
func TestBadStartsAreRefused(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	pm := k.client(app.DemoTenant, auth.PM)
	before := k.footprint()
	binary := make([]byte, 4096)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range binary {
		binary[i] = byte(rng.UintN(256))
	}
	huge := bytes.Repeat([]byte("The Contractor shall give notice of any claim within 14 days.\n"), 30<<20/62)
	cases := []struct {
		name   string
		file   string
		data   []byte
		fields map[string]any
		status int
		code   string
		field  string // the field named at fault, and what it says
		says   string
	}{
		{"an empty file", "contract.txt", nil, nil, 400, fault.CodeValidation, cr.FieldContract, "the file is empty"},
		{"a 30 MB file", "contract.txt", huge, nil, 413, "BODY_TOO_LARGE", "", "files may hold at most 20.0 MB"},
		{"a binary file renamed .txt", "contract.txt", binary, nil, 400, fault.CodeValidation, cr.FieldContract, "not UTF-8 text"},
		{"a PDF with no text", "scan.pdf", blankPDF(), nil, 400, fault.CodeValidation, cr.FieldContract, "no text layer"},
		{"an old Word file", "contract.doc", []byte("not really"), nil, 400, fault.CodeValidation, cr.FieldContract, `".doc" file is not accepted`},
		{"no party", "contract.txt", supplyContract(t), map[string]any{cr.FieldOurParty: ""}, 400, fault.CodeValidation, cr.FieldOurParty, "is required"},
		{"too many redrafts", "contract.txt", supplyContract(t), map[string]any{cr.FieldMaxRetries: 9}, 400, fault.CodeValidation, cr.FieldMaxRetries, "at most 5"},
		{"an unknown checklist", "contract.txt", supplyContract(t), map[string]any{cr.FieldDomain: "nec4"}, 400, fault.CodeValidation, cr.FieldDomain, "not one of the choices"},
	}
	for _, tc := range cases {
		fields := map[string]any{cr.FieldOurParty: "Contractor"}
		for k, v := range tc.fields {
			fields[k] = v
		}
		code, body, _ := pm.do(http.MethodPost, "/api/v1/runs", startBody(tc.file, tc.data, fields))
		ecode, msg, efields := errorOf(body)
		said := msg
		if tc.field != "" {
			said, _ = efields[tc.field].(string)
		}
		if code != tc.status || ecode != tc.code || !has(said, tc.says) {
			t.Errorf("%s: %d %s %q (fields %v); want %d %s with %q", tc.name, code, ecode, msg, efields, tc.status, tc.code, tc.says)
		}
		if after := k.footprint(); after != before {
			t.Errorf("%s stored something: %s, before %s", tc.name, after, before)
		}
	}

	// The console's form refuses the same way: the 30 MB file before its body is read, the
	// others beside the field.
	c := k.console("pm@demo.weft")
	res, page := uploadStart(c, "contract.txt", huge)
	if res.StatusCode != http.StatusRequestEntityTooLarge || !has(servertest.Text(page), "its files at most 20.0 MB") {
		t.Errorf("console, 30 MB: %d %s", res.StatusCode, servertest.Text(page))
	}
	res, page = uploadStart(c, "scan.pdf", blankPDF())
	if res.StatusCode != http.StatusBadRequest || !has(servertest.Text(page), "the PDF has no text layer") {
		t.Errorf("console, a PDF with no text: %d %s", res.StatusCode, servertest.Text(page))
	}
	if after := k.footprint(); after != before {
		t.Errorf("the console's refusals stored something: %s, before %s", after, before)
	}
	// And a good upload starts a review.
	res, _ = uploadStart(c, "supply_contract.txt", supplyContract(t))
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Header.Get("Location"), "/threads/") {
		t.Fatalf("console start: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
}

// TestBadDecisionsAreRefused: a decision that does not fit the paused clause is a 400 that
// says why, and stores nothing: the thread does not move, no decision is recorded, and the
// resume token is not used (the reviewer's right answer goes through with it).
func TestBadDecisionsAreRefused(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	pm, rev := k.client(app.DemoTenant, auth.PM), k.client(app.DemoTenant, auth.Reviewer)
	thread := pm.start("supply_contract.txt", supplyContract(t), map[string]any{cr.FieldOurParty: "Contractor"})
	k.waitThread(thread, runner.WaitingReview)
	snap := k.snapshot(thread)
	pay, claim := snap.Values.PendingDiffs[0].DiffID, snap.Values.PendingDiffs[1].DiffID
	code, body := rev.call(http.MethodPost, "/api/v1/threads/"+thread+"/resume-token", nil)
	if code != http.StatusCreated {
		t.Fatalf("resume token: %d %v", code, body)
	}
	token := body["resume_token"].(string)
	before := k.footprint()
	approve := map[string]string{"decision": "approve"}
	cases := []struct {
		name   string
		answer map[string]any
		code   string
		field  string
		says   string
	}{
		{"a diff id that does not exist", map[string]any{"items": map[string]any{pay: approve, claim: approve, "d000000000000": approve}},
			cr.CodeUnknownDiff, "items.d000000000000", "no pending change of clause 14.7"},
		{"a clause that is not paused", map[string]any{"clause_id": "17.6", "items": map[string]any{pay: approve, claim: approve}},
			cr.CodeNotPaused, "clause_id", "is not the paused clause"},
		{"a change left undecided", map[string]any{"items": map[string]any{pay: approve}},
			fault.CodeValidation, "items." + claim, "approve or reject this change"},
		{"a verdict that is not approve or reject", map[string]any{"items": map[string]any{pay: approve, claim: map[string]string{"decision": "maybe"}}},
			fault.CodeValidation, "items." + claim, "approve or reject this change"},
		{"a decision that is not a choice", map[string]any{"decision": "approve", "items": map[string]any{pay: approve, claim: approve}},
			fault.CodeValidation, "decision", "not a choice of this review"},
		{"a key the review does not take", map[string]any{"scores": map[string]any{"x": 1}},
			fault.CodeValidation, "scores", "not a field of this review"},
	}
	for _, tc := range cases {
		code, body := rev.resume(thread, token, reviewerID, tc.answer)
		ecode, msg, fields := errorOf(body)
		if said, _ := fields[tc.field].(string); code != http.StatusBadRequest || ecode != tc.code || !has(said, tc.says) {
			t.Errorf("%s: %d %s %q %v; want 400 %s with %s: %q", tc.name, code, ecode, msg, fields, tc.code, tc.field, tc.says)
		}
		if after := k.footprint(); after != before {
			t.Errorf("%s stored something: %s, before %s", tc.name, after, before)
		}
		if now := k.snapshot(thread); now.Checkpoint.ID != snap.Checkpoint.ID {
			t.Errorf("%s moved the thread", tc.name)
		}
	}
	// The token was not used: the right answer goes through with it, once.
	if code, body := rev.resume(thread, token, reviewerID, map[string]any{"decision": cr.DecisionApproveAll}); code != http.StatusAccepted {
		t.Fatalf("the right answer: %d %v", code, body)
	}
	if code, body := rev.resume(thread, token, reviewerID, map[string]any{"decision": cr.DecisionApproveAll}); code != http.StatusConflict {
		t.Errorf("the token used twice: %d %v, want 409", code, body)
	}
}

// TestTwoReviewersAtOnce: two reviewers answer the same pause at the same moment, each with
// a resume token of their own: one decision is recorded and acted on, the other gets a 409
// conflict, and the review goes on once.
func TestTwoReviewersAtOnce(t *testing.T) {
	t.Parallel()
	k := newKit(t)
	pm := k.client(app.DemoTenant, auth.PM)
	revs := []struct {
		api  api
		id   string
		name string
	}{{k.client(app.DemoTenant, auth.Reviewer), reviewerID, reviewerName}, {k.client(app.DemoTenant, auth.Reviewer), reviewer2ID, reviewer2Name}}
	const rounds = 3
	for round := range rounds {
		thread := pm.start("supply_contract.txt", supplyContract(t), map[string]any{cr.FieldOurParty: "Contractor"})
		j := k.waitThread(thread, runner.WaitingReview)
		pending := k.snapshot(thread).Values.PendingDiffs
		tokens := make([]string, len(revs))
		for i, r := range revs {
			code, body := r.api.call(http.MethodPost, "/api/v1/threads/"+thread+"/resume-token", nil)
			if code != http.StatusCreated {
				t.Fatalf("token: %d %v", code, body)
			}
			tokens[i] = body["resume_token"].(string)
		}
		// The first reviewer approves every change, the second rejects every one.
		verdicts := []string{"approve", "reject"}
		codes := make([]int, len(revs))
		bodies := make([]map[string]any, len(revs))
		var ready, wg sync.WaitGroup
		gate := make(chan struct{})
		for i, r := range revs {
			items := map[string]any{}
			for _, p := range pending {
				items[p.DiffID] = map[string]string{"decision": verdicts[i]}
			}
			ready.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				ready.Done()
				<-gate
				codes[i], bodies[i] = r.api.resume(thread, tokens[i], r.id, map[string]any{"items": items})
			}()
		}
		ready.Wait()
		close(gate)
		wg.Wait()
		won := -1
		for i, c := range codes {
			switch c {
			case http.StatusAccepted:
				if won >= 0 {
					t.Fatalf("round %d: both reviewers' decisions were accepted", round)
				}
				won = i
			case http.StatusConflict:
				if code, _, _ := errorOf(bodies[i]); code != fault.CodeInterruptResumeInvalid {
					t.Errorf("round %d: the loser's 409 has code %s", round, code)
				}
			default:
				t.Errorf("round %d: reviewer %d got %d %v", round, i, c, bodies[i])
			}
		}
		if won < 0 {
			t.Fatalf("round %d: no decision won: %v", round, codes)
		}
		k.waitLeft(thread, j.ID)
		k.waitRest(thread)
		ds, err := k.app.Jobs.ReviewDecisions(context.Background(), app.DemoTenant, j.ID)
		if err != nil || len(ds) != 1 || !strings.HasPrefix(ds[0].Actor, revs[won].id+" via ") {
			t.Fatalf("round %d: recorded decisions %+v (%v), want one by %s", round, ds, err, revs[won].id)
		}
		s := k.snapshot(thread).Values
		f := s.Findings["14.7"]
		wantApproved, wantRejected := len(pending), 0
		if verdicts[won] == "reject" {
			wantApproved, wantRejected = 0, len(pending)
		}
		if len(f.Diffs) != wantApproved || len(f.Rejected) != wantRejected || len(s.AllDiffs) != wantApproved {
			t.Errorf("round %d: 14.7 has %d approved and %d rejected (all_diffs %d), want the winner's %d and %d",
				round, len(f.Diffs), len(f.Rejected), len(s.AllDiffs), wantApproved, wantRejected)
		}
		for _, d := range append(f.Diffs, f.Rejected...) {
			if d.DecidedBy != revs[won].name {
				t.Errorf("round %d: diff %s decided by %q, want %s", round, d.DiffID, d.DecidedBy, revs[won].name)
			}
		}
		// The loser's token answers nothing now.
		lost := 1 - won
		if code, _ := revs[lost].api.resume(thread, tokens[lost], revs[lost].id, map[string]any{"decision": cr.DecisionApproveAll}); code != http.StatusConflict {
			t.Errorf("round %d: the loser's token later: %d, want 409", round, code)
		}
	}
}
