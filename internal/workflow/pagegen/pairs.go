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

// adjustOrder is the order enforceAA settles tokens in: the text colour first (muted text,
// borders and the footer derive from it), then the brand colours.
var adjustOrder = []string{TokText, TokPrimary, TokAccent, TokSecondary}

// enforceAA changes the palette until every pair reaches WCAG AA. Each base token moves
// in lightness only (its hue stays), by the smallest shift, darker or lighter, with which
// every pair that token answers for passes at once: in a dark theme, say, the primary gets
// lighter, so it reads on the dark surface and its buttons take dark text. It reports each
// change.
func enforceAA(p Palette, pairs []Pair) (Palette, []ContrastFix) {
	var fixes []ContrastFix
	surfaceFixes := map[int]Pair{} // index in fixes → the pair it was for, measured at the end
	for attempt := 0; ; attempt++ {
		var more []ContrastFix
		p, more = settleAll(p, pairs)
		fixes = append(fixes, more...)
		failing, worst := failingPairs(p, pairs)
		if len(failing) == 0 || attempt == 6 {
			s := schemeOf(p)
			for i, pr := range surfaceFixes {
				fixes[i].After = round2(ContrastRatio(s[pr.FG], s[pr.BG]))
			}
			return p, fixes
		}
		// A mid-tone surface leaves no room on one side of it: move the surface toward its
		// nearer end (white or black) and settle the rest again.
		from := p.Surface
		d := 10.0
		if lightnessOf(mustHex(from)) < 50 {
			d = -10
		}
		p.Surface = hexOf(shiftLightness(mustHex(from), d))
		surfaceFixes[len(fixes)] = failing[0]
		fixes = append(fixes, ContrastFix{Token: TokSurface, From: from, To: p.Surface, Pair: mainUse(failing[0]), Before: round2(worst)})
	}
}

// settleAll settles the tokens in adjustOrder, in rounds, until no token changes.
func settleAll(p Palette, pairs []Pair) (Palette, []ContrastFix) {
	var fixes []ContrastFix
	for round := 0; round < 3; round++ {
		changed := false
		for _, tok := range adjustOrder {
			var mine []Pair
			for _, pr := range pairs {
				if t, _ := adjustable(pr); t == tok {
					mine = append(mine, pr)
				}
			}
			failing, worst := failingPairs(p, mine)
			if len(failing) == 0 {
				continue
			}
			from := tokenOf(p, tok)
			to := settle(p, tok, mine)
			if to == "" || to == from {
				continue
			}
			p = setToken(p, tok, to)
			after := schemeOf(p)
			fixes = append(fixes, ContrastFix{Token: tok, From: from, To: to, Pair: mainUse(failing[0]), Before: round2(worst),
				After: round2(ContrastRatio(after[failing[0].FG], after[failing[0].BG]))})
			changed = true
		}
		if !changed {
			break
		}
	}
	return p, fixes
}

// failingPairs lists the pairs under AA and the lowest ratio among them.
func failingPairs(p Palette, pairs []Pair) ([]Pair, float64) {
	s := schemeOf(p)
	var out []Pair
	worst := 21.0
	for _, pr := range pairs {
		if r := ContrastRatio(s[pr.FG], s[pr.BG]); r < pr.Min() {
			out = append(out, pr)
			worst = min(worst, r)
		}
	}
	return out, worst
}

// settle finds the smallest lightness shift of tok with which all pairs pass, trying
// darker and lighter alternately; failing that, black or white, whichever passes; ""
// when nothing does.
func settle(p Palette, tok string, pairs []Pair) string {
	base := mustHex(tokenOf(p, tok))
	for d := 1.0; d <= 100; d++ {
		for _, sign := range []float64{-1, 1} {
			c := hexOf(shiftLightness(base, sign*d))
			if f, _ := failingPairs(setToken(p, tok, c), pairs); len(f) == 0 {
				return c
			}
		}
	}
	for _, c := range []string{"#000000", "#ffffff"} {
		if f, _ := failingPairs(setToken(p, tok, c), pairs); len(f) == 0 {
			return c
		}
	}
	return ""
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
