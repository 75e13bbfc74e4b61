package graph

import "sort"

// Edge kinds of a Structure.
const (
	EdgeStatic      = "static"      // AddEdge, AddJoin
	EdgeConditional = "conditional" // AddConditionalEdges, labelled by its path-map key
	EdgeDestination = "destination" // a node's declared Command.Goto destinations
	EdgeError       = "error"       // any node to the error handler
)

// StructureEdge is one edge of a compiled graph.
type StructureEdge struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Kind  string `json:"kind"`
	Label string `json:"label,omitempty"`
}

// Structure is a compiled graph's shape, for drawing: its nodes in the
// order they were added (START and END excluded) and its edges.
type Structure struct {
	Nodes []string        `json:"nodes"`
	Edges []StructureEdge `json:"edges"`
	// ErrorHandler is the node any failure routes to ("" without one).
	ErrorHandler string `json:"error_handler,omitempty"`
}

// Structure describes the graph for drawing (Mermaid, or an SVG drawn on
// the server).
func (g *Graph[S]) Structure() Structure {
	st := Structure{Nodes: g.Nodes(), ErrorHandler: g.cfg.errorNode}
	for _, f := range append([]string{START}, g.order...) {
		for _, to := range g.edges[f] {
			st.Edges = append(st.Edges, StructureEdge{From: f, To: to, Kind: EdgeStatic})
		}
		for _, br := range g.branches[f] {
			keys := make([]string, 0, len(br.paths))
			for k := range br.paths {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				st.Edges = append(st.Edges, StructureEdge{From: f, To: br.paths[k], Kind: EdgeConditional, Label: k})
			}
		}
		if n := g.nodes[f]; n != nil {
			for _, d := range n.destinations {
				st.Edges = append(st.Edges, StructureEdge{From: f, To: d, Kind: EdgeDestination})
			}
		}
	}
	for _, j := range g.joins {
		for _, s := range j.sources {
			st.Edges = append(st.Edges, StructureEdge{From: s, To: j.to, Kind: EdgeStatic})
		}
	}
	return st
}
