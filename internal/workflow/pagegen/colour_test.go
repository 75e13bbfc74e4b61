package pagegen

import (
	"bytes"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"strings"
	"testing"
)

// WCAG 2.x contrast: the reference values (black/white 21:1, identical colours 1:1) and
// widely quoted pairs, to two decimals.
func TestContrastRatio(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want float64
	}{
		{"#000000", "#ffffff", 21},
		{"#ffffff", "#000000", 21},
		{"#777777", "#777777", 1},
		{"#777777", "#ffffff", 4.48}, // the classic just-fails-AA grey
		{"#767676", "#ffffff", 4.54}, // …and the lightest grey that passes
		{"#0000ff", "#ffffff", 8.59},
		{"#ff0000", "#ffffff", 4.00},
		{"#00ff00", "#000000", 15.3},
		{"#2563eb", "#ffffff", 5.17},
		{"#fff", "#000", 21},
	}
	for _, tc := range tests {
		got, err := ContrastHex(tc.a, tc.b)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-tc.want) > 0.01 {
			t.Errorf("contrast(%s, %s) = %.3f, want %.2f", tc.a, tc.b, got, tc.want)
		}
	}
	if _, err := ContrastHex("blue", "#fff"); err == nil {
		t.Error("a colour name parsed as hex")
	}
}

func TestLuminance(t *testing.T) {
	t.Parallel()
	for hex, want := range map[string]float64{"#000000": 0, "#ffffff": 1, "#ff0000": 0.2126, "#00ff00": 0.7152, "#0000ff": 0.0722, "#808080": 0.2159} {
		if got := Luminance(mustHex(hex)); math.Abs(got-want) > 0.0005 {
			t.Errorf("luminance(%s) = %.4f, want %.4f", hex, got, want)
		}
	}
}

// ratio() rounds down, so a ratio shown as passing passes.
func TestRatioFormat(t *testing.T) {
	t.Parallel()
	for r, want := range map[float64]string{4.499: "4.4:1", 3.14: "3.1:1", 21: "21.0:1"} {
		if got := ratio(r); got != want {
			t.Errorf("ratio(%v) = %s, want %s", r, got, want)
		}
	}
}

// Every pair the pages use reaches AA after enforceAA, whatever the palette: light, dark,
// pale brand colours, and colours that cannot be fixed by one direction.
func TestEnforceAAFixesEveryPair(t *testing.T) {
	t.Parallel()
	schemas := []PageSchema{{Components: []Component{{Type: CompNav}, {Type: CompHero, Hero: &HeroProps{Variant: "plain"}},
		{Type: CompFeatureGrid}, {Type: CompPricing}, {Type: CompTestimonial}, {Type: CompFAQ}, {Type: CompContactForm}, {Type: CompFooter}}},
		{Components: []Component{{Type: CompHero, Hero: &HeroProps{Variant: "bold"}}}}}
	pairs := pairsOf(schemas)
	palettes := []Palette{
		{Primary: "#4caf50", Secondary: "#8bc34a", Accent: "#ffeb3b", Surface: "#ffffff", Text: "#9e9e9e"},
		{Primary: "#4f46e5", Secondary: "#7b28bd", Accent: "#f59e0b", Surface: "#111318", Text: "#eeeeee"},
		{Primary: "#ffd1dc", Secondary: "#fff3b0", Accent: "#b5ead7", Surface: "#fffaf3", Text: "#444444"},
		{Primary: "#777777", Secondary: "#888888", Accent: "#999999", Surface: "#777777", Text: "#808080"},
	}
	for _, p := range palettes {
		fixed, fixes := enforceAA(p, pairs)
		s := schemeOf(fixed)
		for _, pr := range pairs {
			if r := ContrastRatio(s[pr.FG], s[pr.BG]); r < pr.Min() {
				t.Errorf("palette %+v: %s is %.2f:1 after enforcement (want %.1f)", p, mainUse(pr), r, pr.Min())
			}
		}
		if len(fixes) == 0 {
			t.Errorf("palette %+v needed fixes and reported none", p)
		}
		for _, f := range fixes {
			if f.After < f.Before {
				t.Errorf("fix %+v made contrast worse", f)
			}
		}
	}
	// A palette that passes is left alone.
	good := Palette{Primary: "#1d4ed8", Secondary: "#0f766e", Accent: "#b45309", Surface: "#ffffff", Text: "#111827"}
	if fixed, fixes := enforceAA(good, pairs); fixed != good || len(fixes) != 0 {
		t.Errorf("a passing palette changed: %+v %+v", fixed, fixes)
	}
}

// The scorer names the failing pair, its measured ratio and the target.
func TestScorerSuggestsContrastFix(t *testing.T) {
	t.Parallel()
	tok, _ := extractStyle(styleInput{Request: "A site for Brewly, a café. Primary colour #4a90e2.", Name: "Brewly"})
	schemas := []PageSchema{{Lang: LangEN, Components: []Component{{Type: CompHero, Hero: &HeroProps{Variant: "plain"}}, {Type: CompFooter}}}}
	sc, sug := scoreAesthetics(tok, schemas)
	var msg string
	for _, s := range sug {
		if strings.Contains(s.Message, "primary button") {
			msg = s.Message
		}
	}
	if !strings.HasPrefix(msg, "raise the primary button's text contrast from 3.") || !strings.Contains(msg, "to at least 4.5:1") || !strings.Contains(msg, "darken the primary colour from #4a90e2 to #") {
		t.Fatalf("suggestion = %q in %+v", msg, sug)
	}
	if sc.Contrast.Score >= 100 || sc.Overall >= 100 {
		t.Errorf("scores %+v do not reflect the failing pair", sc.Contrast)
	}
}

func TestTypeScaleMeasure(t *testing.T) {
	t.Parallel()
	steady := measureTypeScale(newTypeScale("sans", 16, 1.25))
	if steady.Score != 100 || steady.CV != 0 || !steady.Monotonic {
		t.Errorf("a modular scale measures %+v", steady)
	}
	uneven := newTypeScale("sans", 16, 1.25)
	uneven.Sizes["h1"] = 60 // only h1 made bigger by hand
	m := measureTypeScale(uneven)
	if m.Score >= 90 || m.CV < 0.05 {
		t.Errorf("an uneven scale measures %+v", m)
	}
	flat := newTypeScale("sans", 16, 1.25)
	flat.Sizes["h3"] = flat.Sizes["h4"]
	if m := measureTypeScale(flat); m.Monotonic || m.Score > 50 {
		t.Errorf("a scale with two equal steps measures %+v", m)
	}
}

// twoColour draws a w×h image: the left 3/4 in a, the rest in b, a transparent border.
func twoColour(w, h int, a, b color.NRGBA) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			switch {
			case x < 2 || y < 2 || x >= w-2 || y >= h-2:
				img.SetNRGBA(x, y, color.NRGBA{})
			case x < w*3/4:
				img.SetNRGBA(x, y, a)
			default:
				img.SetNRGBA(x, y, b)
			}
		}
	}
	return img
}

// Median cut finds an image's colours and their shares, skipping transparent pixels.
func TestQuantizeGeneratedPNG(t *testing.T) {
	t.Parallel()
	navy, orange := color.NRGBA{0x1e, 0x3a, 0x8a, 0xff}, color.NRGBA{0xea, 0x58, 0x0c, 0xff}
	var buf bytes.Buffer
	if err := png.Encode(&buf, twoColour(404, 204, navy, orange)); err != nil {
		t.Fatal(err)
	}
	img, format, err := decodeImage(buf.Bytes())
	if err != nil || format != "png" {
		t.Fatalf("decode: %s %v", format, err)
	}
	sw := Quantize(img, 8)
	if len(sw) != 2 {
		t.Fatalf("swatches = %+v, want the two colours", sw)
	}
	if sw[0].Hex != "#1e3a8a" || sw[1].Hex != "#ea580c" || math.Abs(sw[0].Share-0.75) > 0.01 {
		t.Fatalf("swatches = %+v, want #1e3a8a (75%%) then #ea580c", sw)
	}
	p := paletteFromSwatches(sw, false)
	if p.Primary != "#1e3a8a" || p.Secondary != "#ea580c" || p.Surface != "#ffffff" {
		t.Errorf("palette from the logo = %+v", p)
	}
}

// A photo-like gradient quantises to k colours whose shares add up to 1, and JPEG and
// GIF decode as well as PNG.
func TestQuantizeGradientAndFormats(t *testing.T) {
	t.Parallel()
	img := image.NewNRGBA(image.Rect(0, 0, 300, 200))
	for y := 0; y < 200; y++ {
		for x := 0; x < 300; x++ {
			img.SetNRGBA(x, y, color.NRGBA{uint8(x * 255 / 299), uint8(y * 255 / 199), 128, 255})
		}
	}
	sw := Quantize(img, 6)
	total := 0.0
	for _, s := range sw {
		total += s.Share
	}
	if len(sw) < 5 || len(sw) > 6 || math.Abs(total-1) > 0.01 {
		t.Fatalf("gradient swatches = %+v (sum %.3f)", sw, total)
	}
	var j, g bytes.Buffer
	if err := jpeg.Encode(&j, img, nil); err != nil {
		t.Fatal(err)
	}
	if err := gif.Encode(&g, img, nil); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"jpeg": j.Bytes(), "gif": g.Bytes()} {
		if _, f, err := decodeImage(data); err != nil || f != name {
			t.Errorf("%s: %s %v", name, f, err)
		}
	}
}

// Colours named in the request, in words or hex, in English or Chinese, fill the roles.
func TestPaletteFromRequestWords(t *testing.T) {
	t.Parallel()
	tests := []struct {
		request string
		primary string
		surface string
	}{
		{"A site for a bakery. Use green.", "#16a34a", "#ffffff"},
		{"Brand colour #0f766e with a background #fafaf9", "#0f766e", "#fafaf9"},
		{"主色用蓝色，背景用米色", "#2563eb", "#f5efe0"},
		{"A black and gold jewellery shop", "#b8860b", "#ffffff"},
		{"A coffee shop called Bean", "#6f4e37", "#ffffff"}, // the subject's colour
	}
	for _, tc := range tests {
		tok, err := extractStyle(styleInput{Request: tc.request, Name: "X"})
		if err != nil {
			t.Fatal(err)
		}
		if tok.Palette.Primary != tc.primary || tok.Palette.Surface != tc.surface {
			t.Errorf("%q: palette %+v, want primary %s surface %s", tc.request, tok.Palette, tc.primary, tc.surface)
		}
	}
}
