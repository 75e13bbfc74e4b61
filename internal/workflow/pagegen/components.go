package pagegen

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
)

// Component types: the registry's vocabulary.
const (
	CompNav         = "nav"
	CompHero        = "hero"
	CompFeatureGrid = "feature_grid"
	CompPricing     = "pricing_table"
	CompTestimonial = "testimonial"
	CompFAQ         = "faq"
	CompContactForm = "contact_form"
	CompFooter      = "footer"
)

// Link is a labelled link to a page of the site.
type Link struct {
	Label string `json:"label"`
	Href  string `json:"href"`
}

// NavProps: the site's brand and its pages.
type NavProps struct {
	Brand   string `json:"brand"`
	Links   []Link `json:"links"`
	Current string `json:"current"` // href of the page it is on
}

// HeroProps: the page's headline block.
type HeroProps struct {
	Heading    string `json:"heading"`
	Subheading string `json:"subheading"`
	CTA        *Link  `json:"cta,omitempty"`
	Secondary  *Link  `json:"secondary,omitempty"`
	Variant    string `json:"variant"` // "bold" (primary background) or "plain"
}

// Feature is one card of a feature grid.
type Feature struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

// FeatureGridProps: a heading and cards.
type FeatureGridProps struct {
	Heading string    `json:"heading"`
	Items   []Feature `json:"items"`
	Columns int       `json:"columns"`
}

// Plan is one pricing plan.
type Plan struct {
	Name      string   `json:"name"`
	Price     string   `json:"price"`  // "$29", "¥99", "Free"
	Period    string   `json:"period"` // "/month", "/月"
	Features  []string `json:"features"`
	Highlight bool     `json:"highlight"`
}

// PricingTableProps: plans side by side.
type PricingTableProps struct {
	Heading string `json:"heading"`
	Plans   []Plan `json:"plans"`
	CTA     string `json:"cta"`
}

// Quote is one testimonial.
type Quote struct {
	Text   string `json:"text"`
	Author string `json:"author"`
	Role   string `json:"role"`
}

// TestimonialProps: quotes from customers.
type TestimonialProps struct {
	Heading string  `json:"heading"`
	Quotes  []Quote `json:"quotes"`
}

// QA is one question and answer.
type QA struct {
	Q string `json:"q"`
	A string `json:"a"`
}

// FAQProps: questions and answers (native <details>, no script).
type FAQProps struct {
	Heading string `json:"heading"`
	Items   []QA   `json:"items"`
}

// ContactFormProps: one form of the data model.
type ContactFormProps struct {
	Heading string      `json:"heading"`
	Intro   string      `json:"intro"`
	Entity  string      `json:"entity"`
	Fields  []FormField `json:"fields"`
	Submit  string      `json:"submit"`
}

// FooterProps: brand, links and a note.
type FooterProps struct {
	Brand string `json:"brand"`
	Links []Link `json:"links"`
	Note  string `json:"note"`
}

// Component is one node of a page's component tree: its type and exactly one props
// field, the one of its type.
type Component struct {
	ID          string             `json:"id"`
	Type        string             `json:"type"`
	Nav         *NavProps          `json:"nav,omitempty"`
	Hero        *HeroProps         `json:"hero,omitempty"`
	FeatureGrid *FeatureGridProps  `json:"feature_grid,omitempty"`
	Pricing     *PricingTableProps `json:"pricing_table,omitempty"`
	Testimonial *TestimonialProps  `json:"testimonial,omitempty"`
	FAQ         *FAQProps          `json:"faq,omitempty"`
	ContactForm *ContactFormProps  `json:"contact_form,omitempty"`
	Footer      *FooterProps       `json:"footer,omitempty"`
}

// PageSchema is one page: its metadata and its component tree, top to bottom.
type PageSchema struct {
	Slug        string      `json:"slug"`
	Title       string      `json:"title"`
	File        string      `json:"file"`
	Lang        string      `json:"lang"`
	Description string      `json:"description"`
	Components  []Component `json:"components"`
}

// catalogue is every component the registry knows, with its props type.
var catalogue = []struct {
	typ, name, desc string
	props           reflect.Type
	region          string // header, main or footer
}{
	{CompNav, "Navigation", "Brand and links to every page; marks the current one.", reflect.TypeFor[NavProps](), "header"},
	{CompHero, "Hero", "The page's h1, a sentence under it and up to two calls to action.", reflect.TypeFor[HeroProps](), "main"},
	{CompFeatureGrid, "Feature grid", "Cards of features in a responsive grid.", reflect.TypeFor[FeatureGridProps](), "main"},
	{CompPricing, "Pricing table", "Plans side by side, one highlighted.", reflect.TypeFor[PricingTableProps](), "main"},
	{CompTestimonial, "Testimonials", "Customer quotes with author and role.", reflect.TypeFor[TestimonialProps](), "main"},
	{CompFAQ, "FAQ", "Questions and answers as disclosure widgets.", reflect.TypeFor[FAQProps](), "main"},
	{CompContactForm, "Contact form", "A labelled form for one entity of the data model.", reflect.TypeFor[ContactFormProps](), "main"},
	{CompFooter, "Footer", "Brand, links and a note.", reflect.TypeFor[FooterProps](), "footer"},
}

// props returns the component's props (nil when the field of its type is unset) and
// reports whether its type is known.
func (c Component) props() (any, bool) {
	switch c.Type {
	case CompNav:
		return nilIf(c.Nav), true
	case CompHero:
		return nilIf(c.Hero), true
	case CompFeatureGrid:
		return nilIf(c.FeatureGrid), true
	case CompPricing:
		return nilIf(c.Pricing), true
	case CompTestimonial:
		return nilIf(c.Testimonial), true
	case CompFAQ:
		return nilIf(c.FAQ), true
	case CompContactForm:
		return nilIf(c.ContactForm), true
	case CompFooter:
		return nilIf(c.Footer), true
	}
	return nil, false
}

func nilIf[T any](p *T) any {
	if p == nil {
		return nil
	}
	return p
}

// Validate checks that a component has a known type, its props, and every required
// prop (the registry's Required flags) non-empty.
func (c Component) Validate(reg *ComponentRegistry) error {
	p, known := c.props()
	if !known {
		return fmt.Errorf("component %q: unknown type %q", c.ID, c.Type)
	}
	if p == nil {
		return fmt.Errorf("component %q (%s): no %s props", c.ID, c.Type, c.Type)
	}
	spec := reg.Spec(c.Type)
	if spec == nil {
		return fmt.Errorf("component %q: type %q is not in the registry", c.ID, c.Type)
	}
	v := reflect.ValueOf(p).Elem()
	for _, ps := range spec.Props {
		if ps.Required && v.Field(ps.index).IsZero() {
			return fmt.Errorf("component %q (%s): required prop %q is empty", c.ID, c.Type, ps.Name)
		}
	}
	return nil
}

// propSpecs describes a props struct's fields from its Go type: name (the JSON name),
// type (string, int, bool, link, list of …), required unless the JSON tag says omitempty.
func propSpecs(t reflect.Type) []PropSpec {
	var out []PropSpec
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		out = append(out, PropSpec{Name: name, Type: typeName(f.Type), Required: !slices.Contains(strings.Split(opts, ","), "omitempty") && f.Type.Kind() != reflect.Bool, index: i})
	}
	return out
}

func typeName(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return typeName(t.Elem())
	case reflect.Slice:
		return "list of " + typeName(t.Elem())
	case reflect.Struct:
		return strings.ToLower(t.Name())
	}
	return t.Kind().String()
}
