package bidevalhttp_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"weft/internal/app"
	"weft/internal/app/servertest"
	"weft/internal/postgres"
)

func TestUploadBidDocument(t *testing.T) {
	t.Parallel()
	k := servertest.New(t)
	pm := k.Login("pm@demo.weft")
	pm.Get("/projects/demo-dc-network-2026")
	const path = "/projects/demo-dc-network-2026/documents"
	doc := "# Service level agreement\n\nBluewater guarantees 24/7 support with a response time of 2 hours.\n\n质保期 36 个月，提供备件库。"
	res, _ := pm.Upload(path, map[string]string{"evaluation_id": "ev_demo-bluewater", "title": "SLA"}, "sla.md", doc)
	if res.StatusCode != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), "uploaded=") {
		t.Fatalf("upload: %d → %s", res.StatusCode, res.Header.Get("Location"))
	}
	_, page := pm.Get(res.Header.Get("Location"))
	if !strings.Contains(text(page), "Document added") {
		t.Fatal("the page does not confirm the upload")
	}
	// The tender page lists it with its supplier, size and chunks.
	// The size is the text's, in bytes (its Chinese characters take three each; a text file's
	// text ends with one line break).
	if !regexp.MustCompile(`Bluewater Systems SLA ` + strconv.Itoa(len(doc)+1) + ` B [1-9]\d* \d{4}-\d\d-\d\d`).MatchString(text(page)) {
		t.Fatalf("the uploaded document is not listed: %s", text(page))
	}
	found, err := app.Bid(k.App).Store.Retrieve(context.Background(), app.DemoTenant, "demo-bluewater", "response time 2 hours", 3)
	if err != nil || len(found) == 0 || !strings.Contains(found[0].Text, "response time of 2 hours") {
		t.Fatalf("the uploaded text is not retrievable: %+v %v", found, err)
	}
	zh, _ := app.Bid(k.App).Store.Retrieve(context.Background(), app.DemoTenant, "demo-bluewater", "质保期", 3)
	if len(zh) == 0 {
		t.Fatal("the Chinese part of the upload is not retrievable")
	}
	audit, _, _ := k.App.Audit.List(context.Background(), postgres.AuditFilter{TenantID: app.DemoTenant, Action: "document.upload"}, 0, 5)
	if len(audit) != 1 || audit[0].Actor != "u_pm" {
		t.Fatalf("upload audit rows: %+v", audit)
	}
	// The same text again for this bid is refused (its chunks would take evidence slots
	// twice); another supplier's bid may have it.
	if res, body := pm.Upload(path, map[string]string{"evaluation_id": "ev_demo-bluewater", "title": "SLA again"}, "sla2.md", doc); res.StatusCode != http.StatusBadRequest ||
		!strings.Contains(text(body), "This bid already has this document, as “SLA” (added") || !strings.Contains(text(body), "nothing was added") {
		t.Fatalf("the same document twice: %d %s", res.StatusCode, text(body))
	}
	// The same text with other line endings and a trailing newline is the same document.
	if res, body := pm.Upload(path, map[string]string{"evaluation_id": "ev_demo-bluewater", "title": "SLA crlf"}, "sla3.md", strings.ReplaceAll(doc, "\n", "\r\n")+"\r\n"); res.StatusCode != http.StatusBadRequest ||
		!strings.Contains(text(body), "This bid already has this document, as") {
		t.Fatalf("the same document with CRLF line endings: %d", res.StatusCode)
	}
	if docs, err := app.Bid(k.App).Store.ProjectDocuments(context.Background(), app.DemoTenant, "demo-dc-network-2026"); err != nil {
		t.Fatal(err)
	} else {
		for _, d := range docs {
			if d.Title == "SLA again" {
				t.Fatalf("the refused duplicate was stored: %+v", d)
			}
		}
	}
	if res, _ := pm.Upload(path, map[string]string{"evaluation_id": "ev_demo-northwind", "title": "SLA"}, "sla.md", doc); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("another supplier's copy of the text: %d, want it accepted", res.StatusCode)
	}
	if res, body := pm.Upload(path, map[string]string{"evaluation_id": "ev_demo-bluewater", "title": "Scan"}, "scan.pdf", "%PDF-1.4"); res.StatusCode != http.StatusBadRequest || !strings.Contains(text(body), "could not read it") {
		t.Fatalf("a broken PDF upload: %d %s", res.StatusCode, text(body))
	} else if !strings.Contains(text(body), "Add a bid document") || !strings.Contains(body, `value="Scan"`) ||
		!strings.Contains(body, `<option value="ev_demo-bluewater" selected>`) {
		// The tender page again, the message at the form, the supplier and title kept.
		t.Fatalf("a refused upload does not show the form with what was typed: %s", text(body))
	}
	// The refused upload's page is on the upload's address: reloading it leads back to the tender.
	if res, _ := pm.Get(path); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/projects/demo-dc-network-2026" {
		t.Fatalf("GET the upload address: %d → %q", res.StatusCode, res.Header.Get("Location"))
	}
	if res, _ := pm.Upload(path, map[string]string{"evaluation_id": "ev_demo-bluewater", "title": "Bad"}, "bad.txt", "\xff\xfe\x00"); res.StatusCode != http.StatusBadRequest {
		t.Fatalf("a non-UTF-8 upload: %d", res.StatusCode)
	}
	if res, body := pm.Upload(path, map[string]string{"evaluation_id": "ev_demo-bluewater", "title": "Nul"}, "nul.txt", "text\x00more"); res.StatusCode != http.StatusBadRequest ||
		!strings.Contains(text(body), "The file holds a control character (U+0000) at character 5: it is not a text file") {
		t.Fatalf("an upload holding a NUL byte: %d %s", res.StatusCode, between(text(body), "Add a bid document", "PDF ("))
	}
	if res, body := pm.Upload(path, map[string]string{"evaluation_id": "ev_demo-bluewater", "title": "SLA\x00v2"}, "sla.txt", "text"); res.StatusCode != http.StatusBadRequest ||
		!strings.Contains(text(body), "The title holds a control character (U+0000) at character 4. Type it again without it.") || !strings.Contains(body, `value="SLAv2"`) {
		t.Fatalf("a title holding a NUL byte: %d %s", res.StatusCode, text(body))
	}
	// Titles are limited in characters, as the form's maxlength counts them, not in bytes.
	if res, _ := pm.Upload(path, map[string]string{"evaluation_id": "ev_demo-bluewater", "title": strings.Repeat("标", 200)}, "t.txt", "text"); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("a title of 200 Chinese characters: %d, want it accepted", res.StatusCode)
	}
	if res, body := pm.Upload(path, map[string]string{"evaluation_id": "ev_demo-bluewater", "title": strings.Repeat("标", 201)}, "t.txt", "text"); res.StatusCode != http.StatusBadRequest ||
		!strings.Contains(text(body), "up to 200 characters") {
		t.Fatalf("a title of 201 characters: %d", res.StatusCode)
	}
	if res, body := pm.Upload(path, map[string]string{"title": "No supplier"}, "t.txt", "text"); res.StatusCode != http.StatusBadRequest ||
		!strings.Contains(text(body), "Choose the supplier") || !strings.Contains(body, `value="No supplier"`) {
		t.Fatalf("an upload without a supplier: %d %s", res.StatusCode, text(body))
	}
	acme := k.Login("admin@acme.weft")
	acme.Get("/dashboard")
	if res, _ := acme.Upload(path, map[string]string{"evaluation_id": "ev_demo-bluewater", "title": "x"}, "x.txt", "x"); res.StatusCode != http.StatusNotFound {
		t.Fatalf("another tenant's upload: %d, want 404", res.StatusCode)
	}
	rev := k.Login("reviewer@demo.weft")
	rev.Get("/reviews")
	if res, _ := rev.Upload(path, map[string]string{"evaluation_id": "ev_demo-bluewater", "title": "x"}, "x.txt", "x"); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a reviewer's upload: %d, want 403", res.StatusCode)
	}
}

// TestBidDocumentPage: a tender's bid document opens from the tender page and shows its text
// (escaped) in its chunks, each with the id evidence cites; a document of another tenant, or
// one named under a tender it is not in, is a 404.
func TestBidDocumentPage(t *testing.T) {
	t.Parallel()
	k := servertest.New(t)
	pm := k.Login("pm@demo.weft")
	pm.Get("/projects/demo-dc-network-2026")
	doc := "# Support <script>alert(1)</script>\n\nNorthwind answers within 4 hours & keeps spares on site."
	res, _ := pm.Upload("/projects/demo-dc-network-2026/documents", map[string]string{"evaluation_id": "ev_demo-northwind",
		"title": "Support <b>plan</b>"}, "support.md", doc)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("upload: %d", res.StatusCode)
	}
	_, project := pm.Get("/projects/demo-dc-network-2026")
	link := regexp.MustCompile(`<a href="(/projects/demo-dc-network-2026/documents/[^"]+)">Support &lt;b&gt;plan&lt;/b&gt;</a>`).FindStringSubmatch(project)
	if link == nil {
		t.Fatal("the tender page does not link the document by its title")
	}
	res, body := pm.Get(link[1])
	if res.StatusCode != http.StatusOK {
		t.Fatalf("document page: %d", res.StatusCode)
	}
	if strings.Contains(body, "<script>alert(1)</script>") || !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Error("the document's text is not escaped")
	}
	page := text(body)
	for _, want := range []string{"Support &lt;b&gt;plan&lt;/b&gt;", "Northwind Networks", "1 chunk ·", "answers within 4 hours", "#1"} {
		if !strings.Contains(page, want) {
			t.Errorf("the document page does not show %q: %s", want, page)
		}
	}
	// The demo's own documents open too, and each chunk has its anchor.
	if res, body := pm.Get("/projects/demo-dc-network-2026/documents/demo-crestline-tech"); res.StatusCode != http.StatusOK ||
		!strings.Contains(body, `id="chunk-1"`) || !strings.Contains(text(body), "demo-crestline-tech#1") {
		t.Errorf("a demo document: %d", res.StatusCode)
	}
	// Another tenant's document (under its own tender or this one's), and a document id
	// that names nothing, are 404s.
	acme := k.Login("admin@acme.weft")
	for _, path := range []string{"/projects/demo-dc-network-2026/documents/demo-crestline-tech",
		"/projects/acme-dc-network-2026/documents/demo-crestline-tech"} {
		if res, _ := acme.Get(path); res.StatusCode != http.StatusNotFound {
			t.Errorf("another tenant opens %s: %d", path, res.StatusCode)
		}
	}
	if res, _ := pm.Get("/projects/demo-dc-network-2026/documents/nope"); res.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown document: %d", res.StatusCode)
	}
}

// TestUploadRefusesDirectionControls: a text or title with an invisible bidirectional
// override (which would show "1200" where the rules read "0021") is refused with the line;
// right-to-left marks are fine.
func TestUploadRefusesDirectionControls(t *testing.T) {
	t.Parallel()
	k := servertest.New(t)
	pm := k.Login("pm@demo.weft")
	pm.Get("/projects/demo-dc-network-2026")
	const path = "/projects/demo-dc-network-2026/documents"
	for _, c := range []struct{ title, body, want string }{
		{"Price", "# Price\n\nTotal: \u202e0021\u202c CNY", "The file holds the invisible direction control U+202E at line 3, character 8"},
		{"Price \u2067note\u2069", "Total 1200 CNY", "The title holds the invisible direction control U+2067"},
	} {
		res, body := pm.Upload(path, map[string]string{"evaluation_id": "ev_demo-bluewater", "title": c.title}, "p.md", c.body)
		if res.StatusCode != http.StatusBadRequest || !strings.Contains(text(body), c.want) {
			t.Errorf("upload %q: %d, want a 400 saying %q: %s", c.title, res.StatusCode, c.want, text(body))
		}
	}
	if res, _ := pm.Upload(path, map[string]string{"evaluation_id": "ev_demo-bluewater", "title": "שלום"},
		"rtl.md", "\u200fשלום עולם\u200e 1200"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("a right-to-left text with direction marks: %d", res.StatusCode)
	}
}

// TestWithdrawBidDocument: a pm withdraws a bid document added by mistake from the tender
// page (after its confirmation). Retrieval no longer finds its text, the page lists it as
// withdrawn by whom, its own page still opens for the evidence that cites it, the audit log
// has the action, and the same text may be added again. Withdrawing twice is a 409 with the
// reason; another tenant gets a 404, a reviewer a 403, a post without the CSRF token a 403.
// Restore puts it back, unless the bid has its text again.
func TestWithdrawBidDocument(t *testing.T) {
	t.Parallel()
	k := servertest.New(t)
	ctx := context.Background()
	pm := k.Login("pm@demo.weft")
	pm.Get("/projects/demo-dc-network-2026")
	const project = "/projects/demo-dc-network-2026"
	doc := "Bluewater offers a sapphire-grade warranty on every quantum switch for 99 months."
	res, _ := pm.Upload(project+"/documents", map[string]string{"evaluation_id": "ev_demo-bluewater", "title": "Wrong file"}, "wrong.txt", doc)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("upload: %d", res.StatusCode)
	}
	retrieved := func() bool {
		found, err := app.Bid(k.App).Store.Retrieve(ctx, app.DemoTenant, "demo-bluewater", "sapphire quantum warranty", 5)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range found {
			if strings.Contains(f.Text, "sapphire-grade") {
				return true
			}
		}
		return false
	}
	if !retrieved() {
		t.Fatal("the uploaded text is not retrievable")
	}
	_, page := pm.Get(project)
	form := regexp.MustCompile(`<form method="post" action="(/projects/demo-dc-network-2026/documents/[^"]+/withdraw)">`).FindAllStringSubmatch(page, -1)
	row := between(page, "Wrong file</a>", "</tr>")
	if len(form) == 0 || !strings.Contains(row, "Withdraw…") || !strings.Contains(text(row), "Withdraw “Wrong file”?") {
		t.Fatalf("the tender page has no Withdraw… form with its confirmation for the document: %s", text(row))
	}
	var action string
	for _, f := range form {
		if strings.Contains(between(page, f[0], "</form>"), "Wrong file") {
			action = f[1]
		}
	}
	if action == "" {
		t.Fatal("no Withdraw… form names the uploaded document")
	}
	if res, _ := pm.PostRaw(action, url.Values{}); res.StatusCode != http.StatusForbidden {
		t.Fatalf("withdraw without the CSRF token: %d, want 403", res.StatusCode)
	}
	rev := k.Login("reviewer@demo.weft")
	rev.Get("/reviews")
	if res, _ := rev.Post(action, nil); res.StatusCode != http.StatusForbidden {
		t.Fatalf("a reviewer withdraws: %d, want 403", res.StatusCode)
	}
	acme := k.Login("admin@acme.weft")
	acme.Get("/dashboard")
	if res, _ := acme.Post(action, nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("another tenant withdraws: %d, want 404", res.StatusCode)
	}
	if !retrieved() {
		t.Fatal("a refused withdrawal withdrew the document")
	}

	// done posts a withdrawal or a restore that succeeds and returns the tender page it leads
	// to, which says so.
	done := func(path, query, notice string) string {
		t.Helper()
		res, _ := pm.Post(path, nil)
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != project+"?"+query {
			t.Fatalf("%s: %d → %q", path, res.StatusCode, res.Header.Get("Location"))
		}
		_, page := pm.Get(res.Header.Get("Location"))
		if !strings.Contains(text(page), notice) {
			t.Errorf("the page does not say %q: %s", notice, text(page))
		}
		return page
	}
	page = done(action, "withdrawn=1", "Document withdrawn. Evaluations that search this bid from now on leave it out")
	row = between(page, "Wrong file</a>", "</tr>")
	if !strings.Contains(row, `class="badge withdrawn"`) || !strings.Contains(text(row), "withdrawn Restore Withdrawn by Paula Meyer on ") || strings.Contains(row, "Withdraw…") {
		t.Errorf("the row does not show the document withdrawn (and by whom), or still offers to withdraw it: %s", row)
	}
	if retrieved() {
		t.Error("retrieval still finds the withdrawn document's text")
	}
	// Its page still opens, for the reports and reviews that cite it, and says it was withdrawn.
	if res, body := pm.Get(action[:len(action)-len("/withdraw")]); res.StatusCode != http.StatusOK ||
		!strings.Contains(text(body), "Withdrawn by Paula Meyer on") || !strings.Contains(text(body), "sapphire-grade") {
		t.Errorf("the withdrawn document's page: %d %s", res.StatusCode, text(body))
	}
	audit, _, _ := k.App.Audit.List(ctx, postgres.AuditFilter{TenantID: app.DemoTenant, Action: "document.withdraw"}, 0, 5)
	if len(audit) != 1 || audit[0].Actor != "u_pm" || audit[0].Subject != "ev_demo-bluewater" || !strings.Contains(string(audit[0].Payload), `"title": "Wrong file"`) {
		t.Fatalf("withdraw audit rows: %+v", audit)
	}
	// Twice: the reason, nothing changed, no second audit row.
	if res, body := pm.Post(action, nil); res.StatusCode != http.StatusConflict || !strings.Contains(text(body), "withdrawn already; nothing changed") {
		t.Fatalf("withdraw twice: %d %s", res.StatusCode, text(body))
	}
	if audit, _, _ := k.App.Audit.List(ctx, postgres.AuditFilter{TenantID: app.DemoTenant, Action: "document.withdraw"}, 0, 5); len(audit) != 1 {
		t.Errorf("withdrawing twice wrote %d audit rows", len(audit))
	}
	// The address opened (a reload of the refusal) leads back to the tender.
	if res, _ := pm.Get(action); res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != project {
		t.Errorf("GET the withdraw address: %d → %q", res.StatusCode, res.Header.Get("Location"))
	}
	if res, _ := pm.Post(project+"/documents/nope/withdraw", nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("withdraw an unknown document: %d, want 404", res.StatusCode)
	}
	// The same text may be added again (the right file, after all).
	if res, _ := pm.Upload(project+"/documents", map[string]string{"evaluation_id": "ev_demo-bluewater", "title": "Right file"}, "right.txt", doc); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("the withdrawn text added again: %d, want it accepted", res.StatusCode)
	}
	if !retrieved() {
		t.Error("the text added again is not retrievable")
	}

	// Restore: refused while the bid has the text again (it would count twice), and for a
	// document that is not withdrawn; refused to others as the withdrawal is.
	restore := strings.TrimSuffix(action, "/withdraw") + "/restore"
	if res, body := pm.Post(restore, nil); res.StatusCode != http.StatusConflict ||
		!strings.Contains(text(body), "This bid has the same text again, as “Right file” (added") || !strings.Contains(text(body), "Withdraw that one first; nothing changed.") {
		t.Fatalf("restore while the text is there again: %d %s", res.StatusCode, text(body))
	}
	if res, body := pm.Post(project+"/documents/demo-bluewater-proposal/restore", nil); res.StatusCode != http.StatusConflict ||
		!strings.Contains(text(body), "That document is not withdrawn; nothing changed.") {
		t.Fatalf("restore a document that is not withdrawn: %d %s", res.StatusCode, text(body))
	}
	if res, _ := pm.PostRaw(restore, url.Values{}); res.StatusCode != http.StatusForbidden {
		t.Errorf("restore without the CSRF token: %d, want 403", res.StatusCode)
	}
	if res, _ := rev.Post(restore, nil); res.StatusCode != http.StatusForbidden {
		t.Errorf("a reviewer restores: %d, want 403", res.StatusCode)
	}
	if res, _ := acme.Post(restore, nil); res.StatusCode != http.StatusNotFound {
		t.Errorf("another tenant restores: %d, want 404", res.StatusCode)
	}
	// With the copy withdrawn, the first one comes back: searched again, audited, its row
	// offering Withdraw… again.
	_, page = pm.Get(project)
	right := regexp.MustCompile(`<a href="(/projects/demo-dc-network-2026/documents/[^"]+)">Right file</a>`).FindStringSubmatch(page)
	if right == nil {
		t.Fatal("the copy is not listed")
	}
	done(right[1]+"/withdraw", "withdrawn=1", "Document withdrawn.")
	if retrieved() {
		t.Fatal("both copies withdrawn, the text is still retrieved")
	}
	page = done(restore, "restored=1", "Document restored. Evaluations that search this bid from now on use it again")
	if row := between(page, "Wrong file</a>", "</tr>"); !strings.Contains(row, "Withdraw…") || strings.Contains(row, "badge withdrawn") {
		t.Errorf("the restored document's row: %s", text(row))
	}
	if !retrieved() {
		t.Error("the restored document's text is not retrieved")
	}
	if audit, _, _ := k.App.Audit.List(ctx, postgres.AuditFilter{TenantID: app.DemoTenant, Action: "document.restore"}, 0, 5); len(audit) != 1 ||
		audit[0].Actor != "u_pm" || audit[0].Subject != "ev_demo-bluewater" {
		t.Errorf("restore audit rows: %+v", audit)
	}
}
