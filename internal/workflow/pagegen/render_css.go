package pagegen

import (
	"fmt"
	"strings"
)

var fontStacks = map[string]string{
	"sans":  `system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", "PingFang SC", "Microsoft YaHei", sans-serif`,
	"serif": `Georgia, "Times New Roman", "Noto Serif", "Songti SC", "SimSun", serif`,
}

// siteCSS is the stylesheet every page inlines. Every colour is a token of schemeOf, used
// exactly where pairs.go says (usesOf): the contrast the scorer measures and render
// enforces is the contrast drawn. Every spacing value is one of spacingUses.
func siteCSS(t *StyleTokens, lang string) string {
	s := schemeOf(t.Palette)
	sp := spacingUses(t)
	px := func(name string) string {
		for _, u := range sp {
			if u.Name == name {
				return fmt.Sprintf("%dpx", u.Px)
			}
		}
		return "0"
	}
	rem := func(role string) string { return fmt.Sprintf("%.4grem", t.Type.Sizes[role]/16) }
	font := fontStacks[t.Type.Family]
	if font == "" {
		font = fontStacks["sans"]
	}
	measure := fmt.Sprintf("%dch", t.Measure)
	if isZH(lang) {
		measure = fmt.Sprintf("%dem", t.Measure)
	}
	vars := []string{
		"--primary:" + s.hex(TokPrimary), "--secondary:" + s.hex(TokSecondary), "--accent:" + s.hex(TokAccent),
		"--surface:" + s.hex(TokSurface), "--text:" + s.hex(TokText), "--muted:" + s.hex(TokMuted),
		"--on-primary:" + s.hex(TokOnPrimary), "--on-accent:" + s.hex(TokOnAccent), "--alt:" + s.hex(TokAlt),
		"--border:" + s.hex(TokBorder), fmt.Sprintf("--radius:%dpx", t.Radius),
		"--section:" + px("section padding"), "--gap:" + px("card gap"), "--card:" + px("card padding"),
		"--hero:" + px("hero padding"), "--nav:" + px("navigation padding"), "--field:" + px("form field gap"),
		"--btn:" + px("button padding"), "--measure:" + measure,
	}
	var b strings.Builder
	fmt.Fprintf(&b, ":root{%s}\n", strings.Join(vars, ";"))
	b.WriteString(`*,*::before,*::after{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
`)
	fmt.Fprintf(&b, "body{margin:0;font-family:%s;font-size:%s;line-height:1.6;color:var(--text);background:var(--surface)}\n", font, rem("body"))
	fmt.Fprintf(&b, "h1{font-size:clamp(%s,6vw,%s);line-height:1.15;margin:0 0 var(--field)}\n", rem("h3"), rem("h1"))
	fmt.Fprintf(&b, "h2{font-size:clamp(%s,4vw,%s);line-height:1.2;margin:0 0 var(--card)}\n", rem("h4"), rem("h2"))
	fmt.Fprintf(&b, "h3{font-size:%s;line-height:1.3;margin:0 0 var(--nav)}\n", rem("h4"))
	fmt.Fprintf(&b, "small,.hint,.period,figcaption,.req{font-size:%s}\n", rem("small"))
	fmt.Fprintf(&b, ".price .amount{font-size:%s;font-weight:700}\n", rem("h3"))
	b.WriteString(layoutCSS)
	return b.String()
}

// layoutCSS is the part of the stylesheet that takes no token values directly: it uses
// the custom properties siteCSS defines.
const layoutCSS = `p{margin:0 0 var(--field)}
img,svg{max-width:100%;height:auto}
a{color:var(--primary)}
:focus-visible{outline:3px solid var(--primary);outline-offset:2px}
.wrap{max-width:1120px;margin:0 auto;padding:0 var(--card)}
.measure{max-width:var(--measure)}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.skip{position:absolute;left:var(--nav);top:-100px;background:var(--primary);color:var(--on-primary);padding:var(--btn) var(--card);border-radius:var(--radius);z-index:10}
.skip:focus{top:var(--nav)}
.site-header{background:var(--surface);border-bottom:1px solid var(--border)}
.bar{display:flex;flex-wrap:wrap;align-items:center;justify-content:space-between;gap:var(--nav);padding-top:var(--nav);padding-bottom:var(--nav)}
.brand{display:inline-flex;align-items:center;gap:var(--nav);color:var(--text);font-weight:700;text-decoration:none}
.brand img{height:32px;width:auto}
.mark rect{fill:var(--primary)}
.mark text{fill:var(--on-primary);font:700 18px/1 sans-serif}
.site-header ul,.site-footer ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:var(--field)}
.site-header nav a{color:var(--text);text-decoration:none;display:inline-block;padding:var(--btn) 0}
.site-header nav a[aria-current=page]{color:var(--primary);text-decoration:underline;text-underline-offset:4px;font-weight:600}
.hero{padding:var(--hero) 0;background:var(--surface)}
.hero .lead{color:var(--muted);max-width:var(--measure)}
.hero-bold{background:var(--primary);color:var(--on-primary)}
.hero-bold h1,.hero-bold .lead{color:var(--on-primary)}
.hero-bold .btn{background:var(--surface);color:var(--primary)}
.hero-bold .link{color:var(--on-primary)}
.actions{display:flex;flex-wrap:wrap;align-items:center;gap:var(--card);margin-top:var(--card)}
.btn{display:inline-block;background:var(--primary);color:var(--on-primary);padding:var(--btn) var(--card);border:0;border-radius:var(--radius);font:inherit;font-weight:600;text-decoration:none;cursor:pointer}
.link{color:var(--primary);font-weight:600}
.section{padding:var(--section) 0}
.eyebrow{color:var(--secondary);font-weight:700;text-transform:uppercase;letter-spacing:.08em;margin-bottom:var(--btn)}
.grid{list-style:none;margin:0;padding:0;display:grid;gap:var(--gap);grid-template-columns:1fr}
@media (min-width:720px){.cols-2,.cols-3,.cols-4{grid-template-columns:repeat(2,1fr)}}
@media (min-width:1000px){.cols-3{grid-template-columns:repeat(3,1fr)}.cols-4{grid-template-columns:repeat(4,1fr)}}
.card{background:var(--alt);color:var(--text);padding:var(--card);border-radius:var(--radius);margin:0}
.card-text{color:var(--muted)}
.card h3{color:var(--text)}
.icon{fill:none;stroke:var(--primary);stroke-width:2.5;margin-bottom:var(--btn)}
.plan{display:flex;flex-direction:column}
.plan .btn{margin-top:auto;text-align:center}
.plan-highlight{outline:3px solid var(--accent)}
.plan .badge{display:inline-block;align-self:flex-start;background:var(--accent);color:var(--on-accent);padding:0 var(--btn);border-radius:var(--radius);font-weight:700}
.plan .price{color:var(--text)}
.plan .price .period{color:var(--muted)}
.ticks{padding-left:1.2em;margin:0 0 var(--card);color:var(--muted)}
.quote blockquote{margin:0 0 var(--field);color:var(--text)}
.quote blockquote p{color:var(--text)}
.quote figcaption{color:var(--muted)}
details{border-bottom:1px solid var(--border);padding:var(--field) 0}
summary{cursor:pointer;font-weight:600;color:var(--text)}
details p{color:var(--muted);margin-top:var(--field)}
.form .field{display:flex;flex-direction:column;gap:var(--btn);margin-bottom:var(--field)}
label{color:var(--text);font-weight:600}
.req,.hint{color:var(--muted)}
input,textarea{font:inherit;color:var(--text);background:var(--surface);border:2px solid var(--border);border-radius:var(--radius);padding:var(--btn);width:100%}
.site-footer{background:var(--text);color:var(--surface);padding:var(--section) 0}
.site-footer a,.site-footer p{color:var(--surface)}
.brand-name{font-weight:700}
@media (max-width:719px){.hero{padding:var(--section) 0}}
@media (prefers-reduced-motion:reduce){*{scroll-behavior:auto!important}}
`
