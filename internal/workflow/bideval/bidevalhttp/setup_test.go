package bidevalhttp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"weft/internal/app"
	"weft/internal/app/servertest"
	"weft/internal/auth"
	"weft/internal/workflow/bideval"
)

func fixture(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func needTools(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"pdftotext", "pandoc"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (Debian packages poppler-utils and pandoc)", tool)
		}
	}
}

var projectIDRE = regexp.MustCompile(`/projects/([a-z0-9-]+)/rule-pack\?created=1`)

// TestTenderSetupConsole: a PM creates a tender (a duplicate reference refused), imports a
// rule pack from YAML (a type error refused naming its line), edits a weight in the form (the
// sum check refuses 95, then 100 saves v2), adds and renames suppliers, uploads a PDF and a
// DOCX bid (a scan, an encrypted PDF, a fake DOCX and a 30 MB body refused); a reviewer may
// not set up; another tenant's admin gets 404s.
func TestTenderSetupConsole(t *testing.T) {
	t.Parallel()
	needTools(t)
	k := servertest.New(t)
	pm := k.Login("pm@demo.weft")
	pm.Get("/projects/new")
	res, body := pm.Post("/projects", url.Values{"name": {"Harbour cranes"}, "reference": {"HW-2027-01"}, "budget": {"2500000"},
		"currency": {"EUR"}, "deadline": {"2027-03-01T12:00"}, "description": {"Two ship-to-shore cranes"}})
	m := projectIDRE.FindStringSubmatch(res.Header.Get("Location"))
	if res.StatusCode != http.StatusSeeOther || m == nil {
		t.Fatalf("create tender: %d %q %s", res.StatusCode, res.Header.Get("Location"), text(body))
	}
	id := m[1]
	res, body = pm.Post("/projects", url.Values{"name": {"Again"}, "reference": {"hw-2027-01"}, "budget": {"1"}, "currency": {"EUR"}})
	if res.StatusCode != http.StatusConflict || !strings.Contains(text(body), "is used by tender "+id) || !strings.Contains(body, `value="Again"`) {
		t.Fatalf("a duplicate reference: %d %s", res.StatusCode, text(body))
	}
	if res, body := pm.Post("/projects", url.Values{"name": {"X"}, "reference": {"X-1"}, "budget": {"lots"}, "currency": {"EUR"}}); res.StatusCode != 400 || !strings.Contains(text(body), "is not a number") {
		t.Fatalf("a budget in words: %d %s", res.StatusCode, text(body))
	}
	_, body = pm.Get("/projects/" + id + "/rule-pack?created=1")
	if !strings.Contains(text(body), "no rule pack yet") {
		t.Fatalf("rule pack page of a new tender: %s", text(body))
	}

	// YAML: a type error names its line and field; nothing is stored.
	bad := strings.Replace(bideval.RulePackYAMLExample, "weight: 60", "weight: sixty", 1)
	res, body = pm.Upload("/projects/"+id+"/rule-pack/import", map[string]string{"yaml": bad}, "", "")
	if res.StatusCode != 400 || !strings.Contains(htmlUnescape(text(body)), `Line 19, weight: must be a number, not "sixty"`) {
		t.Fatalf("YAML with a type error: %d %s", res.StatusCode, text(between(body, "rule-pack-error", "</div>")))
	}
	yml := strings.Replace(bideval.RulePackYAMLExample, "max_score: 10\n    top_k: 4", "max_score: 10\n    top_k: 5", 1)
	res, _ = pm.Upload("/projects/"+id+"/rule-pack/import", nil, "pack.yaml", yml)
	if res.StatusCode != http.StatusSeeOther || !strings.HasSuffix(res.Header.Get("Location"), "saved=v1") {
		t.Fatalf("YAML import: %d %s", res.StatusCode, res.Header.Get("Location"))
	}
	_, body = pm.Get(res.Header.Get("Location"))
	if !strings.Contains(text(body), "Saved as version v1") || !strings.Contains(body, `name="cr_top_k" value="5"`) || !strings.Contains(text(body), "they sum to 100") {
		t.Fatalf("the rule pack page after the import: %s", text(body))
	}
	// The form: the weights as the page shows them, one changed.
	form := formOf(t, body)
	form["cr_weight"][0] = "55"
	res, body = pm.Post("/projects/"+id+"/rule-pack", form)
	if res.StatusCode != 400 || !strings.Contains(text(body), "Criteria: the weights sum to 95, not 100") || !strings.Contains(body, `name="cr_weight" value="55"`) ||
		!strings.Contains(text(body), "they sum to 95") {
		t.Fatalf("weights summing to 95: %d %s", res.StatusCode, text(body))
	}
	form["cr_weight"][1] = "45"
	form["hr_kind"][0] = "min_price"
	if res, body := pm.Post("/projects/"+id+"/rule-pack", form); res.StatusCode != 400 || !strings.Contains(htmlUnescape(text(body)), `unknown rule kind "min_price"`) {
		t.Fatalf("an unknown rule kind: %d %s", res.StatusCode, text(body))
	}
	form["hr_kind"][0] = "required_document"
	if res, body := pm.Post("/projects/"+id+"/rule-pack", form); res.StatusCode != http.StatusSeeOther || !strings.HasSuffix(res.Header.Get("Location"), "saved=v2") {
		t.Fatalf("the edited form: %d %s %s", res.StatusCode, res.Header.Get("Location"), text(between(body, "rule-pack-error", "</div>")))
	}
	res, body = pm.Get("/projects/" + id + "/rule-pack.yaml")
	if res.StatusCode != 200 || !strings.Contains(body, "weight: 55") || !strings.Contains(body, "top_k: 5") {
		t.Fatalf("export: %d %s", res.StatusCode, body)
	}
	if _, err := bideval.ParseRulePackYAML([]byte(body)); err != nil {
		t.Fatalf("the export does not import: %v", err)
	}

	// Suppliers.
	for _, n := range []string{"Kranbau GmbH", "Lift & Co"} {
		if res, body := pm.Post("/projects/"+id+"/suppliers", url.Values{"name": {n}}); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("add %s: %d %s", n, res.StatusCode, text(body))
		}
	}
	if res, body := pm.Post("/projects/"+id+"/suppliers", url.Values{"name": {"lift & co"}}); res.StatusCode != http.StatusConflict || !strings.Contains(htmlUnescape(text(body)), `has a supplier named "lift & co" already`) {
		t.Fatalf("a second Lift & Co: %d %s", res.StatusCode, text(body))
	}
	sups, err := app.Bid(k.App).Store.Suppliers(context.Background(), app.DemoTenant, id)
	if err != nil || len(sups) != 2 {
		t.Fatalf("suppliers: %+v %v", sups, err)
	}
	kranbau, lift := sups[0], sups[1]
	if res, _ := pm.Post("/projects/"+id+"/suppliers/"+kranbau.ID+"/rename", url.Values{"name": {"Kranbau Nord GmbH"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("rename: %d", res.StatusCode)
	}
	_, body = pm.Get("/projects/" + id)
	for _, want := range []string{"HW-2027-01", "EUR 2,500,000", "Kranbau Nord GmbH", "v2"} {
		if !strings.Contains(text(body), want) {
			t.Errorf("the tender page does not show %q: %s", want, text(body))
		}
	}

	// Bid documents: a PDF and a DOCX are read; the refusals say why.
	up := func(ev, title, file string) (*http.Response, string) {
		return pm.Upload("/projects/"+id+"/documents", map[string]string{"evaluation_id": ev, "title": title}, file, fixture(t, file))
	}
	if res, body := up(kranbau.EvaluationID, "Bid (PDF)", "kranbau-bid.pdf"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("PDF upload: %d %s", res.StatusCode, text(between(body, "Add a bid document", "PDF (")))
	}
	if res, body := up(lift.EvaluationID, "Bid (Word)", "lift-bid.docx"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("DOCX upload: %d %s", res.StatusCode, text(between(body, "Add a bid document", "PDF (")))
	}
	for _, c := range []struct{ file, want string }{
		{"scan.pdf", "no text layer"},
		{"locked.pdf", "password"},
		{"not-really.docx", "not a Word (.docx) document"},
	} {
		res, body := up(kranbau.EvaluationID, "Refused", c.file)
		if res.StatusCode != 400 || !strings.Contains(strings.ToLower(text(between(body, "Add a bid document", "PDF ("))), strings.ToLower(c.want)) {
			t.Errorf("%s: %d %q, want it refused saying %q", c.file, res.StatusCode, text(between(body, "Add a bid document", "PDF (")), c.want)
		}
	}
	if res, _ := pm.Upload("/projects/"+id+"/documents", map[string]string{"evaluation_id": kranbau.EvaluationID, "title": "Huge"}, "huge.pdf",
		strings.Repeat("x", 30<<20)); res.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("a 30 MB upload: %d, want 413", res.StatusCode)
	}
	found, err := app.Bid(k.App).Store.Retrieve(context.Background(), app.DemoTenant, kranbau.ID, "availability", 3)
	if err != nil || len(found) == 0 || !strings.Contains(found[0].Text, "99.99% availability") || !strings.HasPrefix(found[0].ChunkID, kranbau.ID+"-doc-") {
		t.Fatalf("the PDF's text is not retrievable: %+v %v", found, err)
	}
	docs, _ := app.Bid(k.App).Store.ProjectDocuments(context.Background(), app.DemoTenant, id)
	if len(docs) != 2 {
		t.Fatalf("documents stored: %d, want the PDF and the DOCX only", len(docs))
	}

	// Roles and tenants.
	rev := k.Login("reviewer@demo.weft")
	for _, p := range []string{"/projects/new", "/projects/" + id + "/rule-pack"} {
		if res, _ := rev.Get(p); res.StatusCode != http.StatusForbidden {
			t.Errorf("reviewer GET %s: %d, want 403", p, res.StatusCode)
		}
	}
	acme := k.Login("admin@acme.weft")
	for _, p := range []string{"/projects/" + id, "/projects/" + id + "/rule-pack", "/projects/" + id + "/rule-pack.yaml"} {
		if res, _ := acme.Get(p); res.StatusCode != http.StatusNotFound {
			t.Errorf("another tenant GET %s: %d, want 404", p, res.StatusCode)
		}
	}
	acme.Get("/dashboard")
	form.Del("_csrf") // pm's, set by pm's posts
	for p, f := range map[string]url.Values{"/projects/" + id + "/suppliers": {"name": {"X"}}, "/projects/" + id + "/suppliers/" + kranbau.ID + "/rename": {"name": {"X"}},
		"/projects/" + id + "/rule-pack": form} {
		if res, _ := acme.Post(p, f); res.StatusCode != http.StatusNotFound {
			t.Errorf("another tenant POST %s: %d, want 404", p, res.StatusCode)
		}
	}
	if res, _ := acme.Upload("/projects/"+id+"/rule-pack/import", map[string]string{"yaml": yml}, "", ""); res.StatusCode != http.StatusNotFound {
		t.Errorf("another tenant imports a rule pack: %d, want 404", res.StatusCode)
	}
}

// formOf reads the rule pack form's fields as the page filled them in (selects by their
// selected option, textareas by their text).
func formOf(t *testing.T, body string) url.Values {
	t.Helper()
	f := between(body, `id="rule-pack-form"`, "</form>")
	v := url.Values{}
	tagRE := regexp.MustCompile(`<(input|textarea|select)([^>]*)>`)
	for _, ix := range tagRE.FindAllStringSubmatchIndex(f, -1) {
		kind, attrs, rest := f[ix[2]:ix[3]], f[ix[4]:ix[5]], f[ix[1]:]
		name := regexp.MustCompile(`name="([^"]+)"`).FindStringSubmatch(attrs)
		if name == nil || name[1] == "_csrf" {
			continue
		}
		val := ""
		switch kind {
		case "input":
			if m := regexp.MustCompile(`value="([^"]*)"`).FindStringSubmatch(attrs); m != nil {
				val = m[1]
			}
		case "textarea":
			val = rest[:strings.Index(rest, "</textarea>")]
		case "select":
			sel := rest[:strings.Index(rest, "</select>")]
			if m := regexp.MustCompile(`<option value="([^"]*)" selected`).FindStringSubmatch(sel); m != nil {
				val = m[1]
			}
		}
		v.Add(name[1], htmlUnescape(val))
	}
	if len(v["cr_weight"]) < 2 {
		t.Fatalf("no criteria in the form: %v", v)
	}
	return v
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&amp;", "&", "&lt;", "<", "&gt;", ">", "&#34;", `"`, "&#39;", "'", "&quot;", `"`).Replace(s)
}

// apiCall sends a request with a token and reads the JSON answer.
func apiCall(t *testing.T, k *servertest.Kit, token, method, path, contentType string, body io.Reader) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, k.Srv.URL+path, body)
	req.Header.Set("Authorization", "Bearer "+token)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s %s: not JSON (%d): %s", method, path, res.StatusCode, b)
	}
	return res.StatusCode, out
}

func multipartBody(t *testing.T, title, filename, content string) (string, io.Reader) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	_ = w.WriteField("title", title)
	fw, _ := w.CreateFormFile("file", filename)
	_, _ = fw.Write([]byte(content))
	_ = w.Close()
	return w.FormDataContentType(), &buf
}

// TestTenderSetupAPI: the same actions through /api/v1/tenders, with the role rules (pm and
// admin write, reviewer reads) and tenant isolation.
func TestTenderSetupAPI(t *testing.T) {
	t.Parallel()
	needTools(t)
	k := servertest.New(t)
	ctx := context.Background()
	token := func(tenant string, role auth.Role) string {
		tok, err := k.Auth.IssueAPIToken(ctx, tenant, "t-"+string(role), role, "test")
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	pm, rev, other := token(app.DemoTenant, auth.PM), token(app.DemoTenant, auth.Reviewer), token(app.OtherTenant, auth.Admin)
	js := func(v any) io.Reader { b, _ := json.Marshal(v); return bytes.NewReader(b) }

	st, out := apiCall(t, k, pm, "POST", "/api/v1/tenders", "application/json", js(map[string]any{"name": "Quay lighting", "reference": "QL-9",
		"budget": 300000, "currency": "EUR", "deadline": "2027-05-01T09:00:00Z"}))
	if st != http.StatusCreated {
		t.Fatalf("create: %d %v", st, out)
	}
	id := out["tender"].(map[string]any)["id"].(string)
	if st, out := apiCall(t, k, pm, "POST", "/api/v1/tenders", "application/json", js(map[string]any{"name": "Again", "reference": "ql-9",
		"budget": 1, "currency": "EUR"})); st != http.StatusConflict || errCode(out) != bideval.CodeReferenceTaken {
		t.Fatalf("duplicate reference: %d %v", st, out)
	}
	if st, _ := apiCall(t, k, rev, "POST", "/api/v1/tenders", "application/json", js(map[string]any{"name": "R", "reference": "R-1", "budget": 1, "currency": "EUR"})); st != http.StatusForbidden {
		t.Fatalf("a reviewer creates a tender: %d, want 403", st)
	}
	bad := strings.Replace(bideval.RulePackYAMLExample, "weight: 40", "weight: 30", 1)
	st, out = apiCall(t, k, pm, "POST", "/api/v1/tenders/"+id+"/rule-packs", "application/yaml", strings.NewReader(bad))
	if st != http.StatusBadRequest || errCode(out) != bideval.CodeRulePackInvalid || !strings.Contains(errMessage(out), "the weights sum to 90, not 100") {
		t.Fatalf("weights summing to 90: %d %v", st, out)
	}
	if st, out := apiCall(t, k, pm, "POST", "/api/v1/tenders/"+id+"/rule-packs", "application/yaml", strings.NewReader(bideval.RulePackYAMLExample)); st != http.StatusCreated || out["version"] != "v1" {
		t.Fatalf("rule pack: %d %v", st, out)
	}
	st, out = apiCall(t, k, pm, "POST", "/api/v1/tenders/"+id+"/suppliers", "application/json", js(map[string]string{"name": "Lumen BV"}))
	if st != http.StatusCreated {
		t.Fatalf("supplier: %d %v", st, out)
	}
	sid := out["supplier"].(map[string]any)["id"].(string)
	if st, out := apiCall(t, k, pm, "POST", "/api/v1/tenders/"+id+"/suppliers/"+sid+"/rename", "application/json", js(map[string]string{"name": "Lumen Lighting BV"})); st != 200 {
		t.Fatalf("rename: %d %v", st, out)
	}
	ct, body := multipartBody(t, "Offer", "lift-bid.docx", fixture(t, "lift-bid.docx"))
	if st, out := apiCall(t, k, pm, "POST", "/api/v1/tenders/"+id+"/suppliers/"+sid+"/documents", ct, body); st != http.StatusCreated || out["chunks"].(float64) < 1 {
		t.Fatalf("DOCX upload: %d %v", st, out)
	}
	ct, body = multipartBody(t, "Scan", "scan.pdf", fixture(t, "scan.pdf"))
	if st, out := apiCall(t, k, pm, "POST", "/api/v1/tenders/"+id+"/suppliers/"+sid+"/documents", ct, body); st != 400 || !strings.Contains(errMessage(out), "no text layer") {
		t.Fatalf("a scan: %d %v", st, out)
	}
	ct, body = multipartBody(t, "Huge", "huge.pdf", strings.Repeat("x", 30<<20))
	if st, _ := apiCall(t, k, pm, "POST", "/api/v1/tenders/"+id+"/suppliers/"+sid+"/documents", ct, body); st != http.StatusRequestEntityTooLarge {
		t.Fatalf("a 30 MB upload: %d, want 413", st)
	}
	// The reviewer reads; another tenant sees nothing.
	st, out = apiCall(t, k, rev, "GET", "/api/v1/tenders/"+id, "", nil)
	if st != 200 || out["tender"].(map[string]any)["rule_pack_version"] != "v1" || !strings.Contains(mustJSON(out["suppliers"]), "Lumen Lighting BV") {
		t.Fatalf("reviewer reads the tender: %d %v", st, out)
	}
	if st, _ := apiCall(t, k, rev, "POST", "/api/v1/tenders/"+id+"/suppliers", "application/json", js(map[string]string{"name": "X"})); st != http.StatusForbidden {
		t.Fatalf("a reviewer adds a supplier: %d", st)
	}
	for _, c := range []struct{ method, path string }{{"GET", "/api/v1/tenders/" + id}, {"GET", "/api/v1/tenders/" + id + "/rule-packs"},
		{"GET", "/api/v1/tenders/" + id + "/suppliers"}, {"POST", "/api/v1/tenders/" + id + "/suppliers/" + sid + "/rename"}} {
		var b io.Reader
		if c.method == "POST" {
			b = js(map[string]string{"name": "Stolen"})
		}
		if st, _ := apiCall(t, k, other, c.method, c.path, "application/json", b); st != http.StatusNotFound {
			t.Errorf("another tenant %s %s: %d, want 404", c.method, c.path, st)
		}
	}
	ct, body = multipartBody(t, "X", "lift-bid.docx", fixture(t, "lift-bid.docx"))
	if st, _ := apiCall(t, k, other, "POST", "/api/v1/tenders/"+id+"/suppliers/"+sid+"/documents", ct, body); st != http.StatusNotFound {
		t.Errorf("another tenant uploads: %d, want 404", st)
	}
	if st, out := apiCall(t, k, other, "POST", "/api/v1/tenders/"+id+"/rule-packs", "application/yaml", strings.NewReader(bideval.RulePackYAMLExample)); st != http.StatusNotFound {
		t.Errorf("another tenant posts a rule pack: %d %v", st, out)
	}
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }

func errCode(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

func errMessage(m map[string]any) string {
	e, _ := m["error"].(map[string]any)
	s, _ := e["message"].(string)
	return s
}
