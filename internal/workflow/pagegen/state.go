package pagegen

import (
	"time"

	"weft/internal/graph"
)

// GraphState is seed 001 §3.1's state: every field, named as in the seed, plus
// refinements (one entry per refine round, so a session's rounds read back in order).
// thread_id = session_id (§3.2).
type GraphState struct {
	// input
	SessionID string  `json:"session_id"`
	UserInput string  `json:"user_input"`
	Assets    []Asset `json:"assets"`
	// brief
	ProductDoc *ProductDoc `json:"product_doc"`
	Pages      []Page      `json:"pages"`
	DataModel  *DataModel  `json:"data_model"`
	// style
	StyleTokens *StyleTokens `json:"style_tokens"`
	// component registry
	ComponentRegistry *ComponentRegistry `json:"component_registry"`
	// generate
	PageSchemas []PageSchema `json:"page_schemas"`
	// aesthetic scorer
	AestheticEnabled     bool             `json:"aesthetic_enabled"`
	AestheticScores      *AestheticScores `json:"aesthetic_scores"`
	AestheticSuggestions []Suggestion     `json:"aesthetic_suggestions"`
	// refine: the feedback of the round under way ("" when none is pending)
	UserFeedback string `json:"user_feedback"`
	// render
	BuildArtifacts *BuildArtifacts `json:"build_artifacts"`
	BuildStatus    string          `json:"build_status"`
	// runtime
	RunID string `json:"run_id"`
	Error string `json:"error"`
	// Refinements is the history of refine rounds (Weft's addition).
	Refinements []Refinement `json:"refinements" weft:"append"`
}

// Build statuses.
const (
	BuildSucceeded = "succeeded"
	BuildFailed    = "failed"
)

// Asset is an uploaded file. Kind "logo" (or any image) feeds the style extractor.
type Asset struct {
	Kind        string `json:"kind"`
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	Data        []byte `json:"data"`
}

// ProductDoc is the brief's product document.
type ProductDoc struct {
	// Request is the user_input the doc was written from (a new request regenerates).
	Request          string    `json:"request"`
	Lang             string    `json:"lang"` // "en" or "zh-CN"
	Name             string    `json:"name"`
	Topic            string    `json:"topic"`
	Audience         string    `json:"audience"`
	ValueProposition string    `json:"value_proposition"`
	Headline         string    `json:"headline,omitempty"` // a headline the user set by feedback
	Features         []Feature `json:"features"`
	Sections         []string  `json:"sections"`          // home page sections, in order (component types)
	Removed          []string  `json:"removed,omitempty"` // component types removed site-wide by feedback
	Plans            []Plan    `json:"plans,omitempty"`
	FAQ              []QA      `json:"faq,omitempty"`
	Testimonials     []Quote   `json:"testimonials,omitempty"`
}

// Page is one page of the site.
type Page struct {
	Slug    string `json:"slug"` // home, pricing, about, contact, faq
	Title   string `json:"title"`
	File    string `json:"file"` // index.html, pricing.html, …
	Purpose string `json:"purpose"`
}

// DataModel is what the site's forms collect.
type DataModel struct {
	Entities []Entity `json:"entities"`
}

// Entity is one form's record.
type Entity struct {
	Name   string      `json:"name"` // contact_message, booking, newsletter_signup
	Title  string      `json:"title"`
	Fields []FormField `json:"fields"`
}

// FormField is one field of a form.
type FormField struct {
	Name         string `json:"name"`
	Label        string `json:"label"`
	Type         string `json:"type"` // text, email, tel, date, time, number, textarea
	Required     bool   `json:"required"`
	Autocomplete string `json:"autocomplete,omitempty"`
}

// StyleTokens are the site's design tokens.
type StyleTokens struct {
	Palette Palette `json:"palette"`
	// Source says where the palette came from: "logo", "request" or "default".
	Source string `json:"source"`
	// Swatches are the logo's quantised colours, most common first.
	Swatches []Swatch  `json:"swatches,omitempty"`
	Type     TypeScale `json:"type"`
	Spacing  Spacing   `json:"spacing"`
	Radius   int       `json:"radius"` // px
	Dark     bool      `json:"dark"`
	// Measure is the longest text line, in ch (latin) or em (CJK).
	Measure int `json:"measure"`
}

// Palette holds the site's colours as #rrggbb.
type Palette struct {
	Primary   string `json:"primary"`
	Secondary string `json:"secondary"`
	Accent    string `json:"accent"`
	Surface   string `json:"surface"`
	Text      string `json:"text"`
}

// Swatch is one quantised colour and its share of the image's opaque pixels.
type Swatch struct {
	Hex   string  `json:"hex"`
	Share float64 `json:"share"`
}

// TypeScale is a modular type scale: size(step) = Base × Ratio^step.
type TypeScale struct {
	Family string  `json:"family"` // sans, serif
	Base   float64 `json:"base"`   // px
	Ratio  float64 `json:"ratio"`
	// Sizes in px by role: small, body, h4, h3, h2, h1.
	Sizes map[string]float64 `json:"sizes"`
}

// Spacing is a spacing scale on a base grid.
type Spacing struct {
	Unit  int   `json:"unit"`  // px
	Scale []int `json:"scale"` // px, ascending
	// Section is a section's vertical padding, Gap the gap between cards (px).
	Section int `json:"section"`
	Gap     int `json:"gap"`
}

// Refinement is one refine round.
type Refinement struct {
	Round     int          `json:"round"`
	Feedback  string       `json:"feedback"`
	Applied   []string     `json:"applied"`
	Unapplied []Unapplied  `json:"unapplied"`
	Edits     []Edit       `json:"edits"`
	Scores    *ScoreSketch `json:"scores,omitempty"`
	At        time.Time    `json:"at"`
}

// ScoreSketch is the aesthetic overall score before and after a round.
type ScoreSketch struct {
	Before float64 `json:"before"`
	After  float64 `json:"after"`
}

// Unapplied is a piece of feedback refine could not apply, and why.
type Unapplied struct {
	Text   string `json:"text"`
	Reason string `json:"reason"`
}

// BuildArtifacts is what render stored.
type BuildArtifacts struct {
	Round int           `json:"round"`
	Pages []BuiltPage   `json:"pages"`
	Zip   *StoredFile   `json:"zip,omitempty"`
	Fixes []ContrastFix `json:"contrast_fixes,omitempty"`
	// Tokens are the final tokens the pages use (after the AA contrast fixes).
	Tokens *StyleTokens `json:"tokens,omitempty"`
}

// BuiltPage is one rendered page.
type BuiltPage struct {
	Slug  string `json:"slug"`
	Title string `json:"title"`
	StoredFile
}

// StoredFile is an artifact render wrote.
type StoredFile struct {
	Key        string `json:"key"`
	File       string `json:"file"`
	ArtifactID string `json:"artifact_id"`
	Size       int64  `json:"size"`
	SHA256     string `json:"sha256"`
}

// ContrastFix is a colour render changed so a text/background pair reaches WCAG AA.
type ContrastFix struct {
	Token  string  `json:"token"`
	From   string  `json:"from"`
	To     string  `json:"to"`
	Pair   string  `json:"pair"`
	Before float64 `json:"before"`
	After  float64 `json:"after"`
}

// Typed channel keys (graph.KeyOf checks each against GraphState when the package loads).
var (
	keySessionID            = graph.KeyOf[GraphState, string]("session_id")
	keyUserInput            = graph.KeyOf[GraphState, string]("user_input")
	keyAssets               = graph.KeyOf[GraphState, []Asset]("assets")
	keyProductDoc           = graph.KeyOf[GraphState, *ProductDoc]("product_doc")
	keyPages                = graph.KeyOf[GraphState, []Page]("pages")
	keyDataModel            = graph.KeyOf[GraphState, *DataModel]("data_model")
	keyStyleTokens          = graph.KeyOf[GraphState, *StyleTokens]("style_tokens")
	keyComponentRegistry    = graph.KeyOf[GraphState, *ComponentRegistry]("component_registry")
	keyPageSchemas          = graph.KeyOf[GraphState, []PageSchema]("page_schemas")
	keyAestheticEnabled     = graph.KeyOf[GraphState, bool]("aesthetic_enabled")
	keyAestheticScores      = graph.KeyOf[GraphState, *AestheticScores]("aesthetic_scores")
	keyAestheticSuggestions = graph.KeyOf[GraphState, []Suggestion]("aesthetic_suggestions")
	keyUserFeedback         = graph.KeyOf[GraphState, string]("user_feedback")
	keyBuildArtifacts       = graph.KeyOf[GraphState, *BuildArtifacts]("build_artifacts")
	keyBuildStatus          = graph.KeyOf[GraphState, string]("build_status")
	keyRunID                = graph.KeyOf[GraphState, string]("run_id")
	keyError                = graph.KeyOf[GraphState, string]("error")
	keyRefinements          = graph.KeyOf[GraphState, []Refinement]("refinements")
)
