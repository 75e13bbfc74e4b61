package pagegen

import (
	"math"
)

// Type scale ratios (the classic modular scales).
const (
	ratioMinorThird    = 1.2
	ratioMajorThird    = 1.25
	ratioPerfectFourth = 1.333
	ratioAugFourth     = 1.414
)

// typeRoles are the type scale's roles from small to large, and their step.
var typeRoles = []struct {
	role string
	step int
}{{"small", -1}, {"body", 0}, {"h4", 1}, {"h3", 2}, {"h2", 3}, {"h1", 4}}

// newTypeScale computes sizes for a base and ratio: size = base × ratio^step, to 0.01px.
func newTypeScale(family string, base, ratio float64) TypeScale {
	t := TypeScale{Family: family, Base: base, Ratio: ratio, Sizes: map[string]float64{}}
	for _, r := range typeRoles {
		t.Sizes[r.role] = round2(base * math.Pow(ratio, float64(r.step)))
	}
	return t
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// newSpacing is a spacing scale on a unit grid; section padding and card gap are steps of
// it.
func newSpacing(unit, section, gap int) Spacing {
	s := Spacing{Unit: unit, Section: section, Gap: gap}
	for _, m := range []int{1, 2, 3, 4, 6, 8, 12, 16} {
		s.Scale = append(s.Scale, unit*m)
	}
	return s
}

// styleInput is what the style extractor reads (its cache key hashes exactly this).
type styleInput struct {
	Request string
	Name    string
	Logo    *Asset
}

// extractStyle derives the site's tokens: colours from the logo (median cut) or from the
// colours the request names, or from its subject; type, spacing and radius from its words.
func extractStyle(in styleInput) (*StyleTokens, error) {
	folded := foldText(in.Request)
	lang := detectLang(in.Request)
	t := &StyleTokens{Dark: mentions(folded, `dark mode|dark theme|dark background|night mode|深色|暗色|夜间|黑色背景`)}
	mentioned := colourMentions(in.Request)
	switch {
	case in.Logo != nil:
		img, _, err := decodeImage(in.Logo.Data)
		if err != nil {
			return nil, inputError("assets", CodeLogoNotImage, ErrLogoNotImage, "the logo %q is not a PNG, JPEG or GIF image: %v", in.Logo.Name, err)
		}
		t.Swatches = Quantize(img, 8)
		t.Palette = paletteFromSwatches(t.Swatches, t.Dark)
		t.Source = "logo"
		for _, m := range mentioned { // a role the request names explicitly beats the logo
			if m.role != "" {
				t.Palette = setToken(t.Palette, m.role, m.hex)
			}
		}
	case len(mentioned) > 0:
		p := paletteFromMentions(mentioned, t.Dark)
		if p.Primary == "" {
			p.Primary = defaultPrimary(in.Request, in.Name)
		}
		t.Palette = completePalette(p, t.Dark)
		t.Source = "request"
	default:
		t.Palette = completePalette(Palette{Primary: defaultPrimary(in.Request, in.Name)}, t.Dark)
		t.Source = "default"
	}

	family := "sans"
	if mentions(folded, `serif|elegant|classic|editorial|luxury|优雅|经典|衬线|高端|典雅`) && !mentions(folded, `sans-serif|sans serif|无衬线`) {
		family = "serif"
	}
	base := 16.0
	if mentions(folded, `large text|larger text|readable|seniors?|elderly|大字|老人|长者|老年`) {
		base = 18
	}
	ratio := ratioMajorThird
	switch {
	case mentions(folded, `bold|big|striking|dramatic|醒目|大气|震撼`):
		ratio = ratioPerfectFourth
	case mentions(folded, `minimal\w*|clean|simple|understated|简洁|极简|简约|素雅`):
		ratio = ratioMinorThird
	}
	t.Type = newTypeScale(family, base, ratio)

	unit, section, gap := 8, 80, 24
	switch {
	case mentions(folded, `compact|dense|tight|紧凑|密集`):
		unit, section, gap = 4, 48, 16
	case mentions(folded, `airy|spacious|whitespace|breath\w*|宽松|留白|透气`):
		section, gap = 112, 32
	}
	t.Spacing = newSpacing(unit, section, gap)

	t.Radius = 8
	switch {
	case mentions(folded, `sharp|square|brutal\w*|boxy|直角|方正|硬朗`):
		t.Radius = 0
	case mentions(folded, `rounded|soft|friendly|playful|cute|圆润|圆角|可爱|柔和|亲切`):
		t.Radius = 16
	}
	t.Measure = 65
	if isZH(lang) {
		t.Measure = 36
	}
	return t, nil
}
