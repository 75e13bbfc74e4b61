package pagegen

import (
	"archive/zip"
	"bytes"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"image"
	"image/png"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/image/draw"
)

//go:embed templates/page.html
var templateFS embed.FS

var pageTemplate = template.Must(template.New("site").ParseFS(templateFS, "templates/page.html"))

// texts are the fixed strings of the page chrome, per language.
type texts struct {
	Skip, MainNav, FooterNav, Features, Popular, Required string
}

func textsFor(lang string) texts {
	if isZH(lang) {
		return texts{Skip: "跳到主要内容", MainNav: "主导航", FooterNav: "页脚导航", Features: "功能", Popular: "最受欢迎", Required: "必填"}
	}
	return texts{Skip: "Skip to content", MainNav: "Main", FooterNav: "Footer", Features: "Features", Popular: "Most popular", Required: "required"}
}

// view is one component as the template sees it.
type view struct {
	C           Component
	T           texts
	Logo        template.URL // a data: URL of the downscaled logo, or ""
	LogoW       int
	Initial     string
	ContactHref string
}

type pageView struct {
	Lang, Title, Description string
	CSS                      template.CSS
	T                        texts
	Header, Main, Footer     []view
}

// renderedFile is one file of the built site.
type renderedFile struct {
	slug, title, file string
	data              []byte
}

// builtSite is everything render makes, before it is stored.
type builtSite struct {
	pages  []renderedFile
	zip    []byte
	tokens StyleTokens
	fixes  []ContrastFix
}

// zipTime is every zip entry's modification time: fixed, so the same pages make the same
// archive byte for byte.
var zipTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// buildSite renders every page with the final tokens (the palette raised to WCAG AA for
// every pair the pages use) and zips them. It is a pure function of its inputs.
func buildSite(doc ProductDoc, schemas []PageSchema, tokens StyleTokens, assets []Asset) (*builtSite, error) {
	if len(schemas) == 0 {
		return nil, fmt.Errorf("render: no pages to build")
	}
	final := tokens
	final.Type.Sizes = cloneSizes(tokens.Type.Sizes)
	var fixes []ContrastFix
	final.Palette, fixes = enforceAA(tokens.Palette, pairsOf(schemas))
	css := template.CSS(siteCSS(&final, doc.Lang))
	logo, logoW := logoURL(assets)
	initial := "·"
	if r, _ := utf8.DecodeRuneInString(doc.Name); r != utf8.RuneError {
		initial = strings.ToUpper(string(r))
	}
	contact := "#"
	for _, s := range schemas {
		if s.Slug == PageContact {
			contact = s.File
		}
	}
	out := &builtSite{tokens: final, fixes: fixes}
	for _, s := range schemas {
		t := textsFor(s.Lang)
		pv := pageView{Lang: s.Lang, Title: s.Title, Description: s.Description, CSS: css, T: t}
		for _, c := range s.Components {
			v := view{C: c, T: t, Logo: logo, LogoW: logoW, Initial: initial, ContactHref: contact}
			switch c.Type {
			case CompNav:
				pv.Header = append(pv.Header, v)
			case CompFooter:
				pv.Footer = append(pv.Footer, v)
			default:
				pv.Main = append(pv.Main, v)
			}
		}
		var buf bytes.Buffer
		if err := pageTemplate.ExecuteTemplate(&buf, "page", pv); err != nil {
			return nil, fmt.Errorf("render page %s: %w", s.Slug, err)
		}
		out.pages = append(out.pages, renderedFile{slug: s.Slug, title: s.Title, file: s.File, data: buf.Bytes()})
	}
	z, err := zipPages(out.pages)
	if err != nil {
		return nil, err
	}
	out.zip = z
	return out, nil
}

func cloneSizes(m map[string]float64) map[string]float64 {
	out := make(map[string]float64, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func zipPages(pages []renderedFile) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, p := range pages {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: p.file, Method: zip.Deflate, Modified: zipTime})
		if err != nil {
			return nil, fmt.Errorf("zip %s: %w", p.file, err)
		}
		if _, err := w.Write(p.data); err != nil {
			return nil, fmt.Errorf("zip %s: %w", p.file, err)
		}
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("zip site: %w", err)
	}
	return buf.Bytes(), nil
}

// logoURL is the uploaded logo scaled to 64px high (twice its 32px display, for sharp
// screens) as a PNG data: URL, so the page makes no request for it.
func logoURL(assets []Asset) (template.URL, int) {
	a := logoAsset(assets)
	if a == nil {
		return "", 0
	}
	img, _, err := decodeImage(a.Data)
	if err != nil {
		return "", 0
	}
	b := img.Bounds()
	const h = 64
	w := max(1, min(4*h, b.Dx()*h/max(1, b.Dy())))
	dst := image.NewNRGBA(image.Rect(0, 0, w, h))
	draw.CatmullRom.Scale(dst, dst.Bounds(), img, b, draw.Over, nil)
	var buf bytes.Buffer
	if err := png.Encode(&buf, dst); err != nil {
		return "", 0
	}
	return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())), max(1, w/2)
}

// logoAsset is the session's logo: an asset of kind "logo", else its first image.
func logoAsset(assets []Asset) *Asset {
	for i := range assets {
		if assets[i].Kind == "logo" {
			return &assets[i]
		}
	}
	for i := range assets {
		if strings.HasPrefix(assets[i].ContentType, "image/") {
			return &assets[i]
		}
	}
	return nil
}
