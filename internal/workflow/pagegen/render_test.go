package pagegen_test

import (
	"archive/zip"
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

	"weft/internal/fault"
	"weft/internal/graph"
	"weft/internal/workflow"
	"weft/internal/workflow/pagegen"
)

// The built pages are complete documents with the accessibility basics in the markup:
// lang, one h1, landmarks, labelled fields, alt on images; and the .zip holds them all.
func TestBuiltPagesAreAccessibleDocuments(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, d := range pagegen.Demos() {
		s := runDemo(t, b, d)
		lang := `lang="en"`
		if strings.ContainsAny(d.Request.Text, "为做") {
			lang = `lang="zh-CN"`
		}
		built := pages(t, b, d.Session, s)
		for file, html := range built {
			h := string(html)
			for _, want := range []string{"<!doctype html>", "<html " + lang, `<meta name="viewport"`, "<title>", `<main id="main">`,
				`<header class="site-header">`, `<nav aria-label=`, `<footer class="site-footer">`, `class="skip" href="#main"`, "@media"} {
				if !strings.Contains(h, want) {
					t.Errorf("%s/%s lacks %s", d.Session, file, want)
				}
			}
			if n := strings.Count(h, "<h1"); n != 1 {
				t.Errorf("%s/%s has %d h1", d.Session, file, n)
			}
			for _, m := range regexp.MustCompile(`<(?:input|textarea) id="([^"]+)"`).FindAllStringSubmatch(h, -1) {
				if !strings.Contains(h, `<label for="`+m[1]+`">`) {
					t.Errorf("%s/%s: field %s has no label", d.Session, file, m[1])
				}
			}
			for _, img := range regexp.MustCompile(`<img [^>]*>`).FindAllString(h, -1) {
				if !strings.Contains(img, "alt=") {
					t.Errorf("%s/%s: image without alt: %.80s", d.Session, file, img)
				}
			}
		}
		zipped, _ := b.arts.Get(d.Session, "site.zip")
		zr, err := zip.NewReader(bytes.NewReader(zipped.Data), int64(len(zipped.Data)))
		if err != nil {
			t.Fatal(err)
		}
		if len(zr.File) != len(built) {
			t.Errorf("%s: zip holds %d files, %d pages were built", d.Session, len(zr.File), len(built))
		}
		for _, f := range zr.File {
			rc, _ := f.Open()
			data, _ := io.ReadAll(rc)
			rc.Close()
			if !bytes.Equal(data, built[f.Name]) {
				t.Errorf("%s: %s in the zip differs from the page", d.Session, f.Name)
			}
		}
	}
}

// The logo is in the pages as a data: URL (no request), and its colours drive the palette.
func TestLogoDrivesPaletteAndIsInlined(t *testing.T) {
	t.Parallel()
	b := setup(t)
	d := pagegen.Demos()[2]
	s := runDemo(t, b, d)
	if s.StyleTokens.Source != "logo" || len(s.StyleTokens.Swatches) < 2 {
		t.Fatalf("tokens = %+v", s.StyleTokens)
	}
	if s.StyleTokens.Swatches[0].Hex != "#ffffff" || s.StyleTokens.Palette.Primary != "#0f766e" {
		t.Errorf("swatches %+v, palette %+v; want white background first and the teal as primary", s.StyleTokens.Swatches, s.StyleTokens.Palette)
	}
	home := pages(t, b, d.Session, s)["index.html"]
	if !bytes.Contains(home, []byte(`<img src="data:image/png;base64,`)) {
		t.Error("the logo is not inlined in the page")
	}
}

// failingStore fails every artifact write with err.
type failingStore struct{ err error }

func (f failingStore) PutArtifact(context.Context, workflow.Artifact) (workflow.ArtifactRef, error) {
	return workflow.ArtifactRef{}, f.err
}

// A storage failure the platform can retry fails render (and says build_failed); any other
// is recorded as build_status "failed" and the session stays open for another round.
func TestRenderFailures(t *testing.T) {
	t.Parallel()
	t.Run("permanent", func(t *testing.T) {
		t.Parallel()
		b := setup(t, func(d *pagegen.Deps) {
			d.Artifacts = failingStore{fmt.Errorf("%w: disk quota of the tenant reached", workflow.ErrArtifactInvalid)}
		})
		if _, err := pagegen.Start(b.ctx, b.g, "perm", pagegen.Request{Text: "A site for Crumb, a bakery."}); err != nil {
			t.Fatal(err)
		}
		cmd, _ := pagegen.Resume("no changes")
		var names []string
		var final pagegen.GraphState
		for ev, err := range b.g.Stream(b.ctx, graph.Config{ThreadID: "perm"}, cmd, graph.ModeTasks|graph.ModeCustom) {
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range pagegen.StreamEvents(ev) {
				names = append(names, e.Name)
			}
			if r, ok := ev.Data.(graph.Result[pagegen.GraphState]); ok {
				final = r.State
			}
		}
		if final.BuildStatus != pagegen.BuildFailed || !strings.Contains(final.Error, "disk quota") {
			t.Fatalf("status %q, error %q", final.BuildStatus, final.Error)
		}
		if !slices.Equal(names, []string{"build_start", "build_failed"}) {
			t.Fatalf("events = %v", names)
		}
		// The failed build leaves the session open: feedback starts another round.
		if _, err := pagegen.Feedback(b.ctx, b.g, "perm", "use blue"); err != nil {
			t.Fatalf("feedback after a failed build: %v", err)
		}
	})
	t.Run("transient", func(t *testing.T) {
		t.Parallel()
		b := setup(t, func(d *pagegen.Deps) {
			d.Artifacts = failingStore{fault.New(fault.Transient, fault.CodeConnectionLost, "database connection lost")}
		})
		if _, err := pagegen.Start(b.ctx, b.g, "trans", pagegen.Request{Text: "A site for Crumb, a bakery."}); err != nil {
			t.Fatal(err)
		}
		_, err := pagegen.Feedback(b.ctx, b.g, "trans", "no changes")
		if class, _ := fault.Classify(err); class != fault.Transient {
			t.Fatalf("err = %v (%s), want the transient failure for the platform to retry", err, class)
		}
	})
}

// The brief reads the request's words, in English and Chinese.
func TestBriefReadsTheRequest(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tests := []struct {
		request, name, audience string
		pages                   []string
		forms                   []string
	}{
		{"A landing page for Brewly, a coffee subscription service for busy professionals. Include pricing plans and a contact form.",
			"Brewly", "busy professionals", []string{"home", "pricing", "contact"}, []string{"contact_message"}},
		{"Build a one-page site called Lumen Labs for developers with a newsletter signup.",
			"Lumen Labs", "developers", []string{"home"}, []string{"newsletter_signup"}},
		{"为「青禾」做一个有机蔬菜配送网站，面向年轻家庭，包括价格页和联系表单。",
			"青禾", "年轻家庭", []string{"home", "pricing", "contact"}, []string{"contact_message"}},
		{"为“川味小馆”餐厅做一个网站，支持在线订座，有常见问题和关于我们。",
			"川味小馆", "顾客", []string{"home", "about", "faq", "contact"}, []string{"contact_message", "booking"}},
	}
	for i, tc := range tests {
		res, err := pagegen.Start(b.ctx, b.g, "brief-"+string(rune('a'+i)), pagegen.Request{Text: tc.request})
		if err != nil {
			t.Fatal(err)
		}
		s := res.State
		var pg, forms []string
		for _, p := range s.Pages {
			pg = append(pg, p.Slug)
		}
		for _, e := range s.DataModel.Entities {
			forms = append(forms, e.Name)
		}
		if s.ProductDoc.Name != tc.name || s.ProductDoc.Audience != tc.audience || !slices.Equal(pg, tc.pages) || !slices.Equal(forms, tc.forms) {
			t.Errorf("%q:\n name %q audience %q pages %v forms %v\n want %q %q %v %v", tc.request, s.ProductDoc.Name, s.ProductDoc.Audience, pg, forms,
				tc.name, tc.audience, tc.pages, tc.forms)
		}
		if s.ProductDoc.ValueProposition == "" || len(s.ProductDoc.Features) < 3 {
			t.Errorf("%q: doc %+v", tc.request, s.ProductDoc)
		}
	}
}
