package graph

import (
	"fmt"
	"strings"
)

// Mermaid draws the graph as a Mermaid flowchart: solid arrows for static
// edges and joins, dashed arrows labelled with their path-map key for
// conditional edges, dashed unlabelled arrows for Command destinations, and
// a dashed "any error" arrow into the error handler.
func (g *Graph[S]) Mermaid() string {
	st := g.Structure()
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	fmt.Fprintf(&b, "\t%s([START]):::first\n", MermaidID(START))
	for _, n := range st.Nodes {
		fmt.Fprintf(&b, "\t%s[\"%s\"]\n", MermaidID(n), strings.ReplaceAll(n, `"`, "#quot;"))
	}
	fmt.Fprintf(&b, "\t%s([END]):::last\n", MermaidID(END))
	for _, e := range st.Edges {
		switch e.Kind {
		case EdgeConditional:
			fmt.Fprintf(&b, "\t%s -.->|%s| %s\n", MermaidID(e.From), strings.ReplaceAll(e.Label, "|", "/"), MermaidID(e.To))
		case EdgeDestination:
			fmt.Fprintf(&b, "\t%s -.-> %s\n", MermaidID(e.From), MermaidID(e.To))
		default:
			fmt.Fprintf(&b, "\t%s --> %s\n", MermaidID(e.From), MermaidID(e.To))
		}
	}
	if st.ErrorHandler != "" {
		fmt.Fprintf(&b, "\t__error__([any error]):::error -.-> %s\n", MermaidID(st.ErrorHandler))
	}
	b.WriteString("\tclassDef error fill:#fdd\n\tclassDef first fill-opacity:0\n\tclassDef last fill:#bfb6fc\n")
	return b.String()
}

// MermaidID is the Mermaid node id used for a node name (callers that style
// nodes by state use it to address them).
func MermaidID(name string) string {
	switch name {
	case START:
		return "__start__"
	case END:
		return "__end__"
	}
	var b strings.Builder
	b.WriteString("n_")
	for _, r := range name {
		if r < 128 && (r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			fmt.Fprintf(&b, "_%x_", r)
		}
	}
	return b.String()
}
