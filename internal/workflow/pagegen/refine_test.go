package pagegen

import (
	"slices"
	"strings"
	"testing"
)

// testSite is a built site in English (or Chinese) for refine to work on.
func testSite(t *testing.T, request string) *site {
	t.Helper()
	br := offlineBrief(BriefIn{Request: request, Lang: detectLang(request)})
	tok, err := extractStyle(styleInput{Request: request, Name: br.ProductDoc.Name})
	if err != nil {
		t.Fatal(err)
	}
	return &site{doc: br.ProductDoc, pages: br.Pages, dm: br.DataModel, tokens: *tok}
}

func slugs(ps []Page) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Slug
	}
	return out
}

// Feedback in plain English or Chinese is read and applied deterministically; what
// refine cannot apply comes back with the reason, never silently dropped.
func TestRefineFeedback(t *testing.T) {
	t.Parallel()
	const en = "A site for Brewly, a coffee roastery for busy professionals, with a contact form. Use teal."
	const zh = "为「青禾」做一个有机蔬菜配送网站，面向年轻家庭，包括联系表单。"
	tests := []struct {
		name, request, feedback string
		check                   func(t *testing.T, before, after *site)
		unapplied               []string // texts listed back
	}{
		{"darker primary", en, "make the primary colour darker", func(t *testing.T, b, a *site) {
			if lightnessOf(mustHex(a.tokens.Palette.Primary)) >= lightnessOf(mustHex(b.tokens.Palette.Primary))-10 {
				t.Errorf("primary %s → %s is not darker", b.tokens.Palette.Primary, a.tokens.Palette.Primary)
			}
			if hueGap(a.tokens.Palette.Primary, b.tokens.Palette.Primary) > 12 {
				t.Errorf("darkening changed the hue: %s → %s", b.tokens.Palette.Primary, a.tokens.Palette.Primary)
			}
		}, nil},
		{"use green", en, "use green", func(t *testing.T, b, a *site) {
			if a.tokens.Palette.Primary != "#16a34a" {
				t.Errorf("primary = %s, want green #16a34a", a.tokens.Palette.Primary)
			}
		}, nil},
		{"hex background", en, "make the background #fafaf9", func(t *testing.T, b, a *site) {
			if a.tokens.Palette.Surface != "#fafaf9" || a.tokens.Palette.Primary != b.tokens.Palette.Primary {
				t.Errorf("palette = %+v", a.tokens.Palette)
			}
		}, nil},
		{"add a pricing page", en, "add a pricing page", func(t *testing.T, b, a *site) {
			if !slices.Equal(slugs(a.pages), []string{PageHome, PagePricing, PageContact}) || len(a.doc.Plans) != 3 {
				t.Errorf("pages = %v, plans = %d", slugs(a.pages), len(a.doc.Plans))
			}
		}, nil},
		{"remove testimonials", en, "remove testimonials", func(t *testing.T, b, a *site) {
			if slices.Contains(a.doc.Sections, CompTestimonial) || !slices.Contains(a.doc.Removed, CompTestimonial) {
				t.Errorf("sections = %v, removed = %v", a.doc.Sections, a.doc.Removed)
			}
			if slices.Contains(componentsOf(PageAbout, a.doc.Sections, 1, a.doc.Removed), CompTestimonial) {
				t.Error("the about page still lays out testimonials")
			}
		}, nil},
		{"remove the FAQ, with a FAQ page", en + " Add a FAQ page.", "remove the FAQ", func(t *testing.T, b, a *site) {
			if !slices.Contains(slugs(b.pages), PageFAQ) || slices.Contains(slugs(a.pages), PageFAQ) {
				t.Errorf("pages %v → %v: the emptied FAQ page is still built", slugs(b.pages), slugs(a.pages))
			}
		}, nil},
		{"删除常见问题", zh + "需要常见问题页面。", "删除常见问题", func(t *testing.T, b, a *site) {
			if !slices.Contains(slugs(b.pages), PageFAQ) || slices.Contains(slugs(a.pages), PageFAQ) {
				t.Errorf("pages %v → %v: the emptied FAQ page is still built", slugs(b.pages), slugs(a.pages))
			}
		}, nil},
		{"remove the contact form", en, "remove the contact form", func(t *testing.T, b, a *site) {
			if !slices.Contains(slugs(b.pages), PageContact) || slices.Contains(slugs(a.pages), PageContact) {
				t.Errorf("pages %v → %v: the emptied contact page is still built", slugs(b.pages), slugs(a.pages))
			}
		}, nil},
		{"bigger headings", en, "bigger headings", func(t *testing.T, b, a *site) {
			if a.tokens.Type.Sizes["h1"] <= b.tokens.Type.Sizes["h1"] || a.tokens.Type.Sizes["body"] != b.tokens.Type.Sizes["body"] {
				t.Errorf("h1 %v → %v, body %v → %v", b.tokens.Type.Sizes["h1"], a.tokens.Type.Sizes["h1"], b.tokens.Type.Sizes["body"], a.tokens.Type.Sizes["body"])
			}
			if m := measureTypeScale(a.tokens.Type); m.CV > 0.01 {
				t.Errorf("bigger headings broke the scale's consistency: %+v", m)
			}
		}, nil},
		{"several at once, one not understood", en, "use a serif font, more whitespace and make it sparkle; rename it to Brewly Co", func(t *testing.T, b, a *site) {
			if a.tokens.Type.Family != "serif" || a.tokens.Spacing.Section <= b.tokens.Spacing.Section || a.doc.Name != "Brewly Co" {
				t.Errorf("family %s, section %d → %d, name %q", a.tokens.Type.Family, b.tokens.Spacing.Section, a.tokens.Spacing.Section, a.doc.Name)
			}
			if a.tokens.Spacing.Section%a.tokens.Spacing.Unit != 0 {
				t.Errorf("more whitespace left the grid: %dpx on %dpx", a.tokens.Spacing.Section, a.tokens.Spacing.Unit)
			}
		}, []string{"make it sparkle"}},
		{"unknown page kind", en, "add a blog page", nil, []string{"add a blog page"}},
		{"removing what is not there", en, "remove the pricing page", nil, []string{"remove the pricing page"}},
		{"headline with a comma", en, `change the headline to "Coffee, delivered"`, func(t *testing.T, b, a *site) {
			if a.doc.Headline != "Coffee, delivered" {
				t.Errorf("headline = %q", a.doc.Headline)
			}
		}, nil},
		{"主色改成蓝色", zh, "把主色改成蓝色", func(t *testing.T, b, a *site) {
			if a.tokens.Palette.Primary != "#2563eb" {
				t.Errorf("primary = %s, want blue #2563eb", a.tokens.Palette.Primary)
			}
		}, nil},
		{"中文多条", zh, "加一个价格页，删除用户评价，标题大一点，主色深一点", func(t *testing.T, b, a *site) {
			if !slices.Contains(slugs(a.pages), PagePricing) || slices.Contains(a.doc.Sections, CompTestimonial) {
				t.Errorf("pages %v, sections %v", slugs(a.pages), a.doc.Sections)
			}
			if a.tokens.Type.Ratio <= b.tokens.Type.Ratio || lightnessOf(mustHex(a.tokens.Palette.Primary)) >= lightnessOf(mustHex(b.tokens.Palette.Primary)) {
				t.Errorf("ratio %v → %v, primary %s → %s", b.tokens.Type.Ratio, a.tokens.Type.Ratio, b.tokens.Palette.Primary, a.tokens.Palette.Primary)
			}
		}, nil},
		{"深色模式", zh, "换成深色模式", func(t *testing.T, b, a *site) {
			if !a.tokens.Dark || lightnessOf(mustHex(a.tokens.Palette.Surface)) > 20 || lightnessOf(mustHex(a.tokens.Palette.Text)) < 80 {
				t.Errorf("dark = %v, surface %s, text %s", a.tokens.Dark, a.tokens.Palette.Surface, a.tokens.Palette.Text)
			}
		}, nil},
		{"中文无法理解", zh, "让它更有高级感", nil, []string{"让它更有高级感"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			before := testSite(t, tc.request)
			after := testSite(t, tc.request)
			read := parseFeedback(tc.feedback, before.doc.Lang)
			applied, unapplied := applyEdits(after, read.Edits)
			unapplied = append(read.Unapplied, unapplied...)
			var texts []string
			for _, u := range unapplied {
				texts = append(texts, u.Text)
				if u.Reason == "" {
					t.Errorf("%q listed back without a reason", u.Text)
				}
			}
			if !slices.Equal(texts, tc.unapplied) {
				t.Errorf("unapplied = %v, want %v (applied %v)", texts, tc.unapplied, applied)
			}
			if tc.check != nil {
				if len(applied) == 0 {
					t.Errorf("nothing applied from %q", tc.feedback)
				}
				tc.check(t, before, after)
			}
			again := parseFeedback(tc.feedback, before.doc.Lang)
			if !slices.Equal(again.Edits, read.Edits) {
				t.Error("reading the same feedback twice gave different edits")
			}
		})
	}
}

func hueGap(a, b string) float64 {
	d := hueOf(mustHex(a)) - hueOf(mustHex(b))
	if d < 0 {
		d = -d
	}
	return min(d, 360-d)
}

func TestIsNoChange(t *testing.T) {
	t.Parallel()
	for fb, want := range map[string]bool{
		"no changes": true, "Looks good!": true, "LGTM": true, "不用改": true, "可以了。": true,
		"no changes, but use green": false, "use green": false, "": false, "make it sparkle": false,
	} {
		if got := IsNoChange(fb); got != want {
			t.Errorf("IsNoChange(%q) = %v, want %v", fb, got, want)
		}
	}
}

func TestClausesKeepQuotedText(t *testing.T) {
	t.Parallel()
	got := clauses(`rename it to "Brew, Co." and use green; 标题改成「新鲜，直达」，删除用户评价`)
	want := []string{`rename it to "Brew, Co."`, "use green", "标题改成「新鲜，直达」", "删除用户评价"}
	if !slices.Equal(got, want) {
		t.Fatalf("clauses = %q, want %q", got, want)
	}
	if !strings.Contains(got[0], "Brew, Co.") {
		t.Fatal("the quoted name was split")
	}
}
