package pagegen

import (
	"slices"
	"sort"
)

// Pair is one text (or UI) colour on one background, as the rendered pages use it.
type Pair struct {
	FG    string   `json:"fg"`    // colour token
	BG    string   `json:"bg"`    // colour token
	Large bool     `json:"large"` // large text or non-text UI: 3:1 suffices
	Uses  []string `json:"uses"`  // where, in words: "the primary button's text"
}

// Min is the WCAG AA contrast the pair needs.
func (p Pair) Min() float64 {
	if p.Large {
		return AALarge
	}
	return AANormal
}

// use is one place a component puts a colour on a background.
type use struct {
	what   string
	fg, bg string
	large  bool
}

// uses lists, per component type (and hero variant), every colour pair the renderer
// draws. The renderer's CSS (render_css.go) uses exactly these tokens in these places.
func usesOf(c Component) []use {
	switch c.Type {
	case CompNav:
		return []use{{"the navigation links", TokText, TokSurface, false}, {"the current page's link", TokPrimary, TokSurface, false}}
	case CompHero:
		if c.Hero != nil && c.Hero.Variant == "bold" {
			return []use{{"the hero heading", TokOnPrimary, TokPrimary, true}, {"the hero text", TokOnPrimary, TokPrimary, false},
				{"the hero button's text", TokPrimary, TokSurface, false}}
		}
		return []use{{"the hero heading", TokText, TokSurface, true}, {"the hero text", TokMuted, TokSurface, false},
			{"the primary button's text", TokOnPrimary, TokPrimary, false}, {"the secondary link", TokPrimary, TokSurface, false}}
	case CompFeatureGrid:
		return []use{{"section headings", TokText, TokSurface, true}, {"section labels", TokSecondary, TokSurface, false},
			{"card titles", TokText, TokAlt, false}, {"card text", TokMuted, TokAlt, false}}
	case CompPricing:
		return []use{{"section headings", TokText, TokSurface, true}, {"plan names and prices", TokText, TokAlt, false},
			{"plan details", TokMuted, TokAlt, false}, {"the highlighted plan's badge", TokOnAccent, TokAccent, false},
			{"the primary button's text", TokOnPrimary, TokPrimary, false}}
	case CompTestimonial:
		return []use{{"section headings", TokText, TokSurface, true}, {"quotes", TokText, TokAlt, false}, {"quote authors", TokMuted, TokAlt, false}}
	case CompFAQ:
		return []use{{"section headings", TokText, TokSurface, true}, {"questions", TokText, TokSurface, false}, {"answers", TokMuted, TokSurface, false}}
	case CompContactForm:
		return []use{{"section headings", TokText, TokSurface, true}, {"form labels and input text", TokText, TokSurface, false},
			{"form hints", TokMuted, TokSurface, false}, {"form field borders", TokBorder, TokSurface, true},
			{"the primary button's text", TokOnPrimary, TokPrimary, false}}
	case CompFooter:
		return []use{{"the footer text and links", TokSurface, TokText, false}}
	}
	return nil
}

// bodyUses are the page-level pairs every page has.
var bodyUses = []use{{"body text", TokText, TokSurface, false}, {"the skip link", TokOnPrimary, TokPrimary, false}}

// pairsOf lists the distinct colour pairs the pages use, in a stable order, each with
// every place it is used. A pair used both as large and as normal text needs the normal
// threshold, so it counts as normal.
func pairsOf(schemas []PageSchema) []Pair {
	byKey := map[[2]string]*Pair{}
	var order [][2]string
	add := func(u use) {
		k := [2]string{u.fg, u.bg}
		p := byKey[k]
		if p == nil {
			p = &Pair{FG: u.fg, BG: u.bg, Large: u.large}
			byKey[k] = p
			order = append(order, k)
		}
		p.Large = p.Large && u.large
		if !slices.Contains(p.Uses, u.what) {
			p.Uses = append(p.Uses, u.what)
		}
	}
	for _, u := range bodyUses {
		add(u)
	}
	for _, s := range schemas {
		for _, c := range s.Components {
			for _, u := range usesOf(c) {
				add(u)
			}
		}
	}
	out := make([]Pair, 0, len(order))
	for _, k := range order {
		p := *byKey[k]
		sort.Strings(p.Uses)
		out = append(out, p)
	}
	return out
}

// adjustable is the base token enforce changes for a pair: derived tokens follow their
// base, so a pair on a primary background moves the primary, text on the text-coloured
// footer moves the text colour, and so on.
func adjustable(p Pair) (token string, against string) {
	switch {
	case p.BG == TokPrimary || p.BG == TokAccent:
		return p.BG, p.FG
	case p.FG == TokSurface:
		return p.BG, p.FG
	case p.FG == TokMuted || p.FG == TokBorder || p.FG == TokOnPrimary || p.FG == TokOnAccent:
		return TokText, p.BG
	}
	return p.FG, p.BG
}

// enforceAA changes the palette until every pair reaches WCAG AA, moving each failing
// pair's adjustable token in lightness only (its hue stays), and reports what changed.
func enforceAA(p Palette, pairs []Pair) (Palette, []ContrastFix) {
	var fixes []ContrastFix
	for round := 0; round < 4; round++ {
		changed := false
		for _, pr := range pairs {
			s := schemeOf(p)
			before := ContrastRatio(s[pr.FG], s[pr.BG])
			if before >= pr.Min() {
				continue
			}
			tok, against := adjustable(pr)
			from := s[tok]
			min := pr.Min()
			if tok == TokText && (pr.FG == TokMuted || pr.FG == TokBorder) {
				min = AANormal + 0.5 // room for the derived colour between text and surface
			}
			to := ensureContrast(from, s[against], min)
			if tok == TokPrimary || tok == TokAccent { // their on-colour follows them: check the pair itself
				for i := 0; i < 100 && ContrastRatio(onColour(to), to) < pr.Min() && pr.FG != TokSurface && pr.FG != TokText; i++ {
					to = shiftLightness(to, lightDir(onColour(to)))
				}
			}
			if hexOf(to) == hexOf(from) {
				continue
			}
			p = setToken(p, tok, hexOf(to))
			after := schemeOf(p)
			fixes = append(fixes, ContrastFix{Token: tok, From: hexOf(from), To: hexOf(to), Pair: pr.Uses[0],
				Before: before, After: ContrastRatio(after[pr.FG], after[pr.BG])})
			changed = true
		}
		if !changed {
			break
		}
	}
	return p, fixes
}

// lightDir is the direction to move a background away from text colour fg: darker under
// white text, lighter under dark text.
func lightDir(fg interface {
	Lab() (float64, float64, float64)
}) float64 {
	if l, _, _ := fg.Lab(); l > 0.5 {
		return -1
	}
	return 1
}

func setToken(p Palette, tok, hex string) Palette {
	switch tok {
	case TokPrimary:
		p.Primary = hex
	case TokSecondary:
		p.Secondary = hex
	case TokAccent:
		p.Accent = hex
	case TokSurface:
		p.Surface = hex
	case TokText:
		p.Text = hex
	}
	return p
}
