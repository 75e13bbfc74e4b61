package pagegen

import (
	"testing"
)

// BenchmarkRender is render's throughput: pages rendered (HTML + CSS, AA enforcement,
// zip) per second, for the first demo's five-page site.
func BenchmarkRender(b *testing.B) {
	d := Demos()[0]
	br := offlineBrief(BriefIn{Request: d.Request.Text, Lang: detectLang(d.Request.Text)})
	tok, err := extractStyle(styleInput{Request: d.Request.Text, Name: br.ProductDoc.Name})
	if err != nil {
		b.Fatal(err)
	}
	var schemas []PageSchema
	for _, p := range br.Pages {
		schemas = append(schemas, offlinePage(PageIn{Doc: br.ProductDoc, Page: p, Pages: br.Pages, DataModel: br.DataModel, HeroVariant: "plain",
			Layout: componentsOf(p.Slug, br.ProductDoc.Sections, len(br.DataModel.Entities), nil)}))
	}
	b.ReportAllocs()
	pages := 0
	for b.Loop() {
		site, err := buildSite(br.ProductDoc, schemas, *tok, nil)
		if err != nil {
			b.Fatal(err)
		}
		pages += len(site.pages)
	}
	b.ReportMetric(float64(pages)/b.Elapsed().Seconds(), "pages/s")
}
