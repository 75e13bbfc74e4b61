package pagegen_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"weft/internal/workflow/pagegen"
)

// axeSHA256 is the vendored axe-core 4.10.3's axe.min.js (testdata/axe/README.md).
const axeSHA256 = "880970c081707360e64f34cea25ff91892f5bc95675b0776925b9709dd8a68bb"

func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{os.Getenv("WEFT_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("WEFT_REQUIRE_BROWSER") != "" {
		t.Fatal("no Chromium found (install Debian's chromium package); WEFT_REQUIRE_BROWSER is set")
	}
	t.Skip("no Chromium on PATH: install Debian's chromium package to run the accessibility audit")
	return ""
}

func headless(t *testing.T, path string) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx
}

type violation struct {
	ID     string   `json:"id"`
	Impact string   `json:"impact"`
	Help   string   `json:"help"`
	Nodes  []string `json:"nodes"`
}

// externalRE finds anything in a page that would make a request: a URL with a scheme or
// protocol-relative, an @import or a url() other than a data: URL.
var externalRE = regexp.MustCompile(`(?i)(?:src|href|action)\s*=\s*"(?:https?:)?//|@import|url\((?:["']?)(?:https?:)?//`)

// TestDemoPagesPassAxe builds every demo session (after its feedback round) and audits
// every page with axe-core in headless Chromium, at desktop and phone widths: no serious
// or critical violation, and no request beyond the page itself.
func TestDemoPagesPassAxe(t *testing.T) {
	t.Parallel()
	path := chromiumPath(t)
	axe, err := os.ReadFile("testdata/axe/axe.min.js")
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(axe); hex.EncodeToString(sum[:]) != axeSHA256 {
		t.Fatalf("testdata/axe/axe.min.js is not the vendored axe-core 4.10.3 (sha256 %x)", sum)
	}
	b := setup(t)
	site := map[string][]byte{}
	var urls []string
	for _, d := range pagegen.Demos() {
		s := runDemo(t, b, d)
		for file, html := range pages(t, b, d.Session, s) {
			if m := externalRE.Find(html); m != nil {
				t.Errorf("%s/%s makes an external request: %s", d.Session, file, m)
			}
			site["/"+d.Session+"/"+file] = html
			urls = append(urls, "/"+d.Session+"/"+file)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		html, ok := site[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write(html)
	}))
	defer srv.Close()

	ctx := headless(t, path)
	audit := `axe.run(document, {resultTypes: ['violations']}).then(r => r.violations.map(v => ({id: v.id, impact: v.impact,
		help: v.help, nodes: v.nodes.map(n => n.target.join(' ') + ': ' + (n.failureSummary || ''))})))`
	for _, u := range urls {
		for _, width := range []int64{1280, 390} {
			tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			err := chromedp.Do(tctx, chromedp.EmulateViewport(width, 900), chromedp.Navigate(srv.URL+u),
				chromedp.Evaluate[chromedp.Void](string(axe)))
			if err != nil {
				cancel()
				t.Fatalf("%s at %dpx: %v", u, width, err)
			}
			vs, err := chromedp.Run(tctx, chromedp.Evaluate[[]violation](audit, chromedp.EvalAwaitPromise))
			if err != nil {
				cancel()
				t.Fatalf("%s at %dpx: axe.run: %v", u, width, err)
			}
			requests, err := chromedp.Run(tctx, chromedp.Evaluate[[]string](`performance.getEntriesByType('resource').map(e => e.name)`))
			cancel()
			if err != nil {
				t.Fatal(err)
			}
			if len(requests) > 0 {
				t.Errorf("%s at %dpx requested %v; pages must make no request", u, width, requests)
			}
			for _, v := range vs {
				msg := fmt.Sprintf("%s at %dpx: axe %s (%s): %s\n  %s", u, width, v.ID, v.Impact, v.Help, strings.Join(v.Nodes, "\n  "))
				if v.Impact == "serious" || v.Impact == "critical" {
					t.Error(msg)
				} else {
					t.Log(msg)
				}
			}
		}
	}
	t.Logf("audited %d pages of %d demo sessions at 1280px and 390px", len(urls), len(pagegen.Demos()))
}
