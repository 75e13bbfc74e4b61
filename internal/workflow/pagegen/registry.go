package pagegen

import (
	"slices"
)

// RegistryVersion changes when the catalogue changes (it is part of the cache key).
const RegistryVersion = "2026-1"

// ComponentRegistry is the set of components a site may use: each with its typed props,
// the variant chosen for this site, and the pages it appears on.
type ComponentRegistry struct {
	Version    string          `json:"version"`
	Components []ComponentSpec `json:"components"`
}

// ComponentSpec describes one component.
type ComponentSpec struct {
	Type        string     `json:"type"`
	Name        string     `json:"name"`
	Description string     `json:"description"`
	Region      string     `json:"region"` // header, main, footer: the landmark it renders in
	Props       []PropSpec `json:"props"`
	Variant     string     `json:"variant,omitempty"`
	UsedOn      []string   `json:"used_on"`
}

// PropSpec is one typed prop.
type PropSpec struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
	index    int
}

// Spec finds a component type's spec (nil when the registry lacks it).
func (r *ComponentRegistry) Spec(typ string) *ComponentSpec {
	if r == nil {
		return nil
	}
	for i := range r.Components {
		if r.Components[i].Type == typ {
			return &r.Components[i]
		}
	}
	return nil
}

// registryInput is what component_registry reads (its cache key hashes exactly this).
type registryInput struct {
	Sections []string `json:"sections"`
	Pages    []string `json:"pages"`
	Forms    int      `json:"forms"`
	Bold     bool     `json:"bold"`
	Removed  []string `json:"removed,omitempty"`
	Version  string   `json:"version"`
}

// buildRegistry lists every catalogue component with its props, and for this site which
// pages use it and which variant: a bold hero when the request asks for boldness.
func buildRegistry(in registryInput) *ComponentRegistry {
	reg := &ComponentRegistry{Version: RegistryVersion}
	for _, c := range catalogue {
		spec := ComponentSpec{Type: c.typ, Name: c.name, Description: c.desc, Region: c.region, Props: propSpecs(c.props), UsedOn: []string{}}
		for _, page := range in.Pages {
			if slices.Contains(componentsOf(page, in.Sections, in.Forms, in.Removed), c.typ) {
				spec.UsedOn = append(spec.UsedOn, page)
			}
		}
		if c.typ == CompHero {
			spec.Variant = "plain"
			if in.Bold {
				spec.Variant = "bold"
			}
		}
		reg.Components = append(reg.Components, spec)
	}
	return reg
}

// componentsOf is a page's layout: the component types from top to bottom, without the
// types removed site-wide.
func componentsOf(page string, homeSections []string, forms int, removed []string) []string {
	var mid []string
	switch page {
	case PageHome:
		mid = homeSections
	case PagePricing:
		mid = []string{CompHero, CompPricing, CompFAQ}
	case PageAbout:
		mid = []string{CompHero, CompFeatureGrid, CompTestimonial}
	case PageFAQ:
		mid = []string{CompHero, CompFAQ}
	case PageContact:
		mid = []string{CompHero}
		for range forms {
			mid = append(mid, CompContactForm)
		}
	}
	out := []string{CompNav}
	for _, c := range mid {
		if !slices.Contains(removed, c) {
			out = append(out, c)
		}
	}
	return append(out, CompFooter)
}
