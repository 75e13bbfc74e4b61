package pagegen

import (
	"fmt"
	"math"
	"strings"

	"github.com/lucasb-eyer/go-colorful"
)

// WCAG 2.x contrast thresholds.
const (
	AANormal = 4.5 // text under 24px (18.66px bold)
	AALarge  = 3.0 // large text, and non-text UI such as a field's border (1.4.11)
)

// parseHex reads #rgb or #rrggbb.
func parseHex(s string) (colorful.Color, error) {
	s = strings.TrimSpace(s)
	if len(s) == 4 && s[0] == '#' {
		s = "#" + strings.Repeat(s[1:2], 2) + strings.Repeat(s[2:3], 2) + strings.Repeat(s[3:4], 2)
	}
	c, err := colorful.Hex(strings.ToLower(s))
	if err != nil {
		return colorful.Color{}, fmt.Errorf("colour %q is not #rgb or #rrggbb", s)
	}
	return c, nil
}

// mustHex is parseHex for colours the package itself wrote.
func mustHex(s string) colorful.Color {
	c, err := parseHex(s)
	if err != nil {
		return colorful.Color{}
	}
	return c
}

// linear is one sRGB channel (0..1) linearised as WCAG 2.x defines it (the 0.04045 knee of
// IEC 61966-2-1; WCAG 2.0's 0.03928 differs below 8-bit precision).
func linear(c float64) float64 {
	if c <= 0.04045 {
		return c / 12.92
	}
	return math.Pow((c+0.055)/1.055, 2.4)
}

// Luminance is a colour's WCAG relative luminance, 0 (black) to 1 (white), from its 8-bit
// channels.
func Luminance(c colorful.Color) float64 {
	r, g, b := c.Clamped().RGB255()
	return 0.2126*linear(float64(r)/255) + 0.7152*linear(float64(g)/255) + 0.0722*linear(float64(b)/255)
}

// ContrastRatio is the WCAG contrast ratio of two colours, 1 to 21.
func ContrastRatio(a, b colorful.Color) float64 {
	la, lb := Luminance(a), Luminance(b)
	if la < lb {
		la, lb = lb, la
	}
	return (la + 0.05) / (lb + 0.05)
}

// ContrastHex is ContrastRatio of two hex colours.
func ContrastHex(a, b string) (float64, error) {
	ca, err := parseHex(a)
	if err != nil {
		return 0, err
	}
	cb, err := parseHex(b)
	if err != nil {
		return 0, err
	}
	return ContrastRatio(ca, cb), nil
}

// ratio formats a contrast ratio as people write it: 3.1:1 (rounded down, so a ratio
// shown as passing passes).
func ratio(r float64) string {
	return fmt.Sprintf("%.1f:1", math.Floor(r*10)/10)
}

func hexOf(c colorful.Color) string { return c.Clamped().Hex() }

// shiftLightness moves c's CIE L* by d (−100..100), keeping its hue and chroma as far as
// sRGB allows.
func shiftLightness(c colorful.Color, d float64) colorful.Color {
	l, a, b := c.Lab()
	l = math.Max(0, math.Min(1, l+d/100))
	return colorful.Lab(l, a, b).Clamped()
}

// lightnessOf is CIE L* (0..100).
func lightnessOf(c colorful.Color) float64 {
	l, _, _ := c.Lab()
	return l * 100
}

// ensureContrast moves c's lightness away from against's until their contrast reaches
// min, in steps of 1 L*: darker against a light colour, lighter against a dark one. When
// no lightness of c's hue gets there it returns black or white, whichever is further.
func ensureContrast(c, against colorful.Color, min float64) colorful.Color {
	if ContrastRatio(c, against) >= min {
		return c
	}
	step := -1.0
	if Luminance(against) < 0.18 {
		step = 1
	}
	for i := 0; i < 100; i++ {
		c = shiftLightness(c, step)
		if ContrastRatio(c, against) >= min {
			return c
		}
	}
	black, white := colorful.Color{}, colorful.Color{R: 1, G: 1, B: 1}
	if ContrastRatio(black, against) > ContrastRatio(white, against) {
		return black
	}
	return white
}

// blend mixes a toward b by t (0..1) in Lab.
func blend(a, b colorful.Color, t float64) colorful.Color { return a.BlendLab(b, t).Clamped() }

// Colour tokens: the palette's five and the ones derived from them.
const (
	TokPrimary   = "primary"
	TokSecondary = "secondary"
	TokAccent    = "accent"
	TokSurface   = "surface"
	TokText      = "text"
	TokMuted     = "muted"      // secondary text: the text colour toward the surface
	TokOnPrimary = "on_primary" // text on a primary background
	TokOnAccent  = "on_accent"  // text on an accent background
	TokAlt       = "alt"        // card and alternate-section background
	TokBorder    = "border"     // form field borders
)

// scheme is every colour token of a palette.
type scheme map[string]colorful.Color

var (
	white    = colorful.Color{R: 1, G: 1, B: 1}
	nearInk  = mustHex("#111827")
	onDarkAt = 62.0 // L* below which a background takes white text
)

// onColour is the text colour for a background: white on one darker than L* 62, ink on
// lighter ones (a brand's buttons keep white text until they are really light).
func onColour(bg colorful.Color) colorful.Color {
	if lightnessOf(bg) < onDarkAt {
		return white
	}
	return nearInk
}

// schemeOf derives the full set of colour tokens from a palette. Derived tokens are
// computed so they keep whatever contrast their base colours have: muted text is the text
// colour moved toward the surface only as far as 4.5:1 on both surface and alt allows.
func schemeOf(p Palette) scheme {
	s := scheme{
		TokPrimary: mustHex(p.Primary), TokSecondary: mustHex(p.Secondary), TokAccent: mustHex(p.Accent),
		TokSurface: mustHex(p.Surface), TokText: mustHex(p.Text),
	}
	s[TokOnPrimary] = onColour(s[TokPrimary])
	s[TokOnAccent] = onColour(s[TokAccent])
	s[TokAlt] = blend(s[TokSurface], s[TokPrimary], 0.06)
	if lightnessOf(s[TokSurface]) < 50 {
		s[TokAlt] = shiftLightness(s[TokAlt], 5)
	}
	muted := s[TokText]
	for t := 0.05; t <= 0.6; t += 0.05 {
		m := blend(s[TokText], s[TokSurface], t)
		if ContrastRatio(m, s[TokSurface]) < AANormal+0.3 || ContrastRatio(m, s[TokAlt]) < AANormal+0.3 {
			break
		}
		muted = m
	}
	s[TokMuted] = muted
	s[TokBorder] = ensureContrast(blend(s[TokText], s[TokSurface], 0.45), s[TokSurface], AALarge+0.1)
	return s
}

// hexes lists the scheme's tokens as hex, for CSS.
func (s scheme) hex(tok string) string { return hexOf(s[tok]) }
