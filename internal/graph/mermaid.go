package graph

import (
	"fmt"
	"sort"
	"strings"
)

// Mermaid draws the graph as a Mermaid flowchart: solid arrows for static
// edges and joins, dashed arrows labelled with their path-map key for
// conditional edges, dashed unlabelled arrows for Command destinations.
func (g *Graph[S]) Mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	fmt.Fprintf(&b, "\t%s([START]):::first\n", MermaidID(START))
	for _, n := range g.order {
		fmt.Fprintf(&b, "\t%s[\"%s\"]\n", MermaidID(n), strings.ReplaceAll(n, `"`, "#quot;"))
	}
	fmt.Fprintf(&b, "\t%s([END]):::last\n", MermaidID(END))
	from := append([]string{START}, g.order...)
	for _, f := range from {
		for _, to := range g.edges[f] {
			fmt.Fprintf(&b, "\t%s --> %s\n", MermaidID(f), MermaidID(to))
		}
		for _, br := range g.branches[f] {
			keys := make([]string, 0, len(br.paths))
			for k := range br.paths {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				fmt.Fprintf(&b, "\t%s -.->|%s| %s\n", MermaidID(f), strings.ReplaceAll(k, "|", "/"), MermaidID(br.paths[k]))
			}
		}
		if n := g.nodes[f]; n != nil {
			for _, d := range n.destinations {
				fmt.Fprintf(&b, "\t%s -.-> %s\n", MermaidID(f), MermaidID(d))
			}
		}
	}
	for _, j := range g.joins {
		for _, s := range j.sources {
			fmt.Fprintf(&b, "\t%s --> %s\n", MermaidID(s), MermaidID(j.to))
		}
	}
	if g.cfg.errorNode != "" {
		fmt.Fprintf(&b, "\t__error__([any error]):::error -.-> %s\n", MermaidID(g.cfg.errorNode))
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
