package pagegen

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	_ "image/gif" // logo formats
	_ "image/jpeg"
	_ "image/png"
	"math"
	"sort"

	"github.com/lucasb-eyer/go-colorful"
)

// maxSamples bounds the pixels a quantisation reads (a stride over larger images).
const maxSamples = 40000

type rgb [3]uint8

// Quantize reduces an image to at most k colours by median cut over its opaque pixels
// (alpha ≥ 50%) and returns them most common first, with their share of those pixels.
// Colours closer than ΔE 2.3 (a just-noticeable difference) merge.
func Quantize(img image.Image, k int) []Swatch {
	px := samplePixels(img)
	if len(px) == 0 || k <= 0 {
		return nil
	}
	boxes := []*cutBox{newCutBox(px)}
	for len(boxes) < k {
		i := widest(boxes)
		if i < 0 {
			break
		}
		a, b := boxes[i].split()
		boxes = append(append(boxes[:i:i], boxes[i+1:]...), a, b)
	}
	var out []Swatch
	type merged struct {
		c colorful.Color
		n int
	}
	var ms []merged
	for _, b := range boxes {
		c := b.mean()
		found := false
		for i := range ms {
			if ms[i].c.DistanceCIEDE2000(c) < 0.023 {
				w := float64(b.n()) / float64(ms[i].n+b.n())
				ms[i].c, ms[i].n, found = ms[i].c.BlendRgb(c, w), ms[i].n+b.n(), true
				break
			}
		}
		if !found {
			ms = append(ms, merged{c, b.n()})
		}
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].n > ms[j].n })
	for _, m := range ms {
		out = append(out, Swatch{Hex: hexOf(m.c), Share: math.Round(float64(m.n)/float64(len(px))*1000) / 1000})
	}
	return out
}

// samplePixels reads the image's opaque pixels, with a stride keeping at most maxSamples.
func samplePixels(img image.Image) []rgb {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w <= 0 || h <= 0 {
		return nil
	}
	stride := max(1, int(math.Ceil(math.Sqrt(float64(w*h)/maxSamples))))
	px := make([]rgb, 0, min(w*h, maxSamples*2))
	for y := b.Min.Y; y < b.Max.Y; y += stride {
		for x := b.Min.X; x < b.Max.X; x += stride {
			c := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA)
			if c.A < 128 {
				continue
			}
			px = append(px, rgb{c.R, c.G, c.B})
		}
	}
	return px
}

type cutBox struct{ px []rgb }

func newCutBox(px []rgb) *cutBox { return &cutBox{px: px} }

func (b *cutBox) n() int { return len(b.px) }

// extent returns the box's longest channel and its range.
func (b *cutBox) extent() (ch int, span int) {
	lo, hi := [3]uint8{255, 255, 255}, [3]uint8{}
	for _, p := range b.px {
		for i := range 3 {
			lo[i], hi[i] = min(lo[i], p[i]), max(hi[i], p[i])
		}
	}
	for i := range 3 {
		if s := int(hi[i]) - int(lo[i]); s > span {
			ch, span = i, s
		}
	}
	return ch, span
}

// widest is the box to split next: the largest range weighted by the square root of its
// pixel count (so a big flat area and a small detail both get their colours); -1 when no
// box can be split.
func widest(boxes []*cutBox) int {
	best, bestScore := -1, 0.0
	for i, b := range boxes {
		if b.n() < 2 {
			continue
		}
		_, span := b.extent()
		if span == 0 {
			continue
		}
		if s := float64(span) * math.Sqrt(float64(b.n())); s > bestScore {
			best, bestScore = i, s
		}
	}
	return best
}

// split cuts the box at the median of its longest channel.
func (b *cutBox) split() (*cutBox, *cutBox) {
	ch, _ := b.extent()
	sort.Slice(b.px, func(i, j int) bool { return b.px[i][ch] < b.px[j][ch] })
	m := len(b.px) / 2
	// Keep equal values on one side, so a box never splits a single colour in two.
	for m < len(b.px)-1 && m > 0 && b.px[m][ch] == b.px[m-1][ch] {
		m++
	}
	if m >= len(b.px) {
		m = len(b.px) / 2
	}
	return newCutBox(b.px[:m]), newCutBox(b.px[m:])
}

func (b *cutBox) mean() colorful.Color {
	var s [3]float64
	for _, p := range b.px {
		for i := range 3 {
			s[i] += float64(p[i])
		}
	}
	n := float64(len(b.px))
	return colorful.Color{R: s[0] / n / 255, G: s[1] / n / 255, B: s[2] / n / 255}
}

// decodeImage decodes a PNG, JPEG or GIF.
func decodeImage(data []byte) (image.Image, string, error) {
	img, format, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return nil, "", fmt.Errorf("decode image: %w", err)
	}
	return img, format, nil
}
