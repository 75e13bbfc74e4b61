package pagegen

import (
	"encoding/json"
	"strings"
)

// What the platform's registry shows about the workflow (registry.Entry's fields), so
// registering it is one line.
const (
	Title       = "Page generation"
	Description = "Turns a request (and optionally a logo) into a small static website: brief, style tokens, components, pages, an optional aesthetic check, your feedback, and an accessible HTML + CSS build with a .zip."
)

// Path is the main path's nodes in order, for progress bars.
var Path = []string{NodeBrief, NodeStyle, NodeRegistry, NodeGenerate, NodeAesthetic, NodeRefineGate, NodeRefine, NodeRender}

// ExampleInput is a session's input as an example for the console's start form.
var ExampleInput = json.RawMessage(`{"user_input": "A landing page for Brewly, a coffee subscription service for busy professionals. Include pricing plans, an about page and a contact form. Use green.", "aesthetic_enabled": true}`)

// SubjectOf names a session by its request (at most 80 characters), or by its feedback for
// a later round's input.
func SubjectOf(input json.RawMessage) string {
	var in struct {
		UserInput    string `json:"user_input"`
		UserFeedback string `json:"user_feedback"`
	}
	if json.Unmarshal(input, &in) != nil {
		return ""
	}
	s := in.UserInput
	if strings.TrimSpace(s) == "" {
		s = in.UserFeedback
	}
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 80 {
		s = string(r[:79]) + "…"
	}
	return s
}
