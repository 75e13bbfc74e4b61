// Package component holds templ components shared by several pages, with
// the view models they take. Like all of web/, it imports nothing from
// internal/, db/, pgx or echo.
package component

import (
	"strconv"
	"strings"
)

// Node states a drawn graph colours its nodes by.
const (
	StatePending     = "pending"
	StateRunning     = "running"
	StateDone        = "done"
	StateFailed      = "failed"
	StateInterrupted = "interrupted"
	StateSkipped     = "skipped" // the run ended without it
)

// States lists the node states in the order a legend shows them.
var States = []string{StatePending, StateRunning, StateDone, StateInterrupted, StateFailed, StateSkipped}

// StateLabel is how a node state reads in the drawing and the legend.
func StateLabel(s string) string {
	switch s {
	case StateRunning:
		return "running"
	case StateDone:
		return "done"
	case StateFailed:
		return "failed"
	case StateInterrupted:
		return "waiting for review"
	case StateSkipped:
		return "not run"
	}
	return "pending"
}

// GraphVM is a laid-out graph: every coordinate is computed on the server,
// the component only draws.
type GraphVM struct {
	Title         string // accessible name, e.g. "bid_evaluation graph"
	Width, Height float64
	Nodes         []GraphNode
	Edges         []GraphEdge
}

// GraphNode is one drawn node, centred on (X, Y).
type GraphNode struct {
	ID       string // a safe element id (graph.MermaidID)
	Label    string
	State    string // one of the States ("" for the "any error" source)
	Kind     string // "node", "terminal" (START/END pills) or "anyerror"
	X, Y     float64
	W, H     float64
	Subtitle string // e.g. the state in words; empty for pills
}

// GraphEdge is one drawn edge: an SVG path and an optional label.
type GraphEdge struct {
	Kind   string // static, conditional, destination, error
	Path   string // SVG path data
	Label  string
	LX, LY float64 // label centre
	Taken  bool    // the run went along it
}

// Class is the node's class list.
func (n GraphNode) Class() string {
	parts := []string{"node", n.Kind}
	if n.State != "" {
		parts = append(parts, n.State)
	}
	return strings.Join(parts, " ")
}

// Tooltip is the node's accessible description.
func (n GraphNode) Tooltip() string {
	if n.Kind == "anyerror" {
		return "Any node that fails routes to the error handler"
	}
	if n.Kind == "terminal" {
		return n.Label + ": " + StateLabel(n.State)
	}
	return n.Label + ": " + StateLabel(n.State)
}

// Class is the edge's class list.
func (e GraphEdge) Class() string {
	c := "edge " + e.Kind
	if e.Taken {
		c += " taken"
	}
	return c
}

// Marker is the arrowhead the edge ends with.
func (e GraphEdge) Marker() string {
	switch {
	case e.Kind == "error":
		return "url(#arrow-error)"
	case e.Taken:
		return "url(#arrow-taken)"
	}
	return "url(#arrow)"
}

// LabelWidth is the width of the label's backdrop.
func (e GraphEdge) LabelWidth() float64 { return TextWidth(e.Label, 10) + 10 }

// TextWidth estimates the width of text set at size px (the drawing is
// laid out without a browser to measure it).
func TextWidth(s string, size float64) float64 {
	w := 0.0
	for _, r := range s {
		switch {
		case r > 0x2e80: // CJK and other wide scripts
			w += 1.0
		case r == 'i' || r == 'l' || r == 'j' || r == '.' || r == ',' || r == '\'' || r == '|':
			w += 0.3
		case r == 'm' || r == 'w' || r >= 'A' && r <= 'Z':
			w += 0.8
		default:
			w += 0.58
		}
	}
	return w * size
}

// Num formats a coordinate.
func Num(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// ViewBox is the SVG viewBox.
func (g GraphVM) ViewBox() string { return "0 0 " + Num(g.Width) + " " + Num(g.Height) }

// HasErrorRoute reports whether the graph draws an error handler.
func (g GraphVM) HasErrorRoute() bool {
	for _, e := range g.Edges {
		if e.Kind == "error" {
			return true
		}
	}
	return false
}
