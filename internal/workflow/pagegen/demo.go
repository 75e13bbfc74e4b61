package pagegen

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
)

// Demo is a ready-made session: a request and the feedback its first round gets. The
// tests audit every page the demos build; a console or CLI may offer them as examples.
type Demo struct {
	Session  string
	Request  Request
	Feedback string
}

// Demos are sessions in English and Chinese covering every page kind, form kind, a logo,
// dark mode, a bold hero and each kind of feedback.
func Demos() []Demo {
	return []Demo{
		{Session: "demo-brewly", Request: Request{Aesthetic: true,
			Text: "A landing page for Brewly, a coffee subscription service for busy professionals. Include pricing plans, an about page and a contact form. Use green."},
			Feedback: "make the primary colour darker, add a FAQ page, bigger headings"},
		{Session: "demo-qinghe", Request: Request{Aesthetic: true,
			Text: "为「青禾」做一个有机蔬菜配送网站，面向年轻家庭，包括价格页和联系表单，主色用绿色。"},
			Feedback: "把主色改成蓝色，删除用户评价"},
		{Session: "demo-northwind", Request: Request{Aesthetic: true, Logo: &Asset{Kind: "logo", Name: "northwind.png", ContentType: "image/png", Data: DemoLogo()},
			Text: "A website for \"Northwind Yoga\", a yoga studio for beginners, with features: gentle classes, small groups and flexible passes. Pages: about, pricing and contact; booking for classes; rounded and friendly."},
			Feedback: "no changes"},
		{Session: "demo-pixelforge", Request: Request{
			Text: "A bold, vibrant one-page site for Pixel Forge, a software agency that helps startups ship faster. Add FAQ and a contact form with company and phone. Dark mode, accent #f59e0b."},
			Feedback: "remove testimonials, rounder corners, use a serif font"},
		{Session: "demo-chuanwei", Request: Request{Aesthetic: true,
			Text: "为“川味小馆”餐厅做一个网站，支持在线订座和联系方式，有常见问题，主色用红色，深色模式。"},
			Feedback: "标题大一点，加一个关于页面"},
	}
}

// DemoLogo draws a 240×240 logo (a teal disc with a coral crescent on white) as a PNG:
// a real image for the style extractor to quantise.
func DemoLogo() []byte {
	const n = 240
	img := image.NewNRGBA(image.Rect(0, 0, n, n))
	teal, coral := color.NRGBA{0x0f, 0x76, 0x6e, 0xff}, color.NRGBA{0xf9, 0x73, 0x5b, 0xff}
	for y := 0; y < n; y++ {
		for x := 0; x < n; x++ {
			c := color.NRGBA{0xff, 0xff, 0xff, 0xff}
			dx, dy := float64(x-n/2), float64(y-n/2)
			switch {
			case math.Hypot(dx-30, dy+20) < 45 && math.Hypot(dx, dy) < 100:
				c = coral
			case math.Hypot(dx, dy) < 100:
				c = teal
			}
			img.SetNRGBA(x, y, c)
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}
