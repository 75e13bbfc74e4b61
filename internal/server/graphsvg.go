package server

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"weft/internal/graph"
	"weft/web/component"
)

// The drawing's metrics, in SVG user units (px at 1:1).
const (
	svgNodeH    = 42.0 // a node's height
	svgPillH    = 28.0 // START/END and "any error"
	svgLayerGap = 36.0 // vertical space between layers
	svgColGap   = 28.0 // horizontal space between nodes of a layer
	svgDummyW   = 14.0 // a long edge's slot in a layer it crosses
	svgMargin   = 20.0
	svgSideGap  = 70.0 // between the main graph and the error route
	svgLoopRoom = 56.0 // right of the main graph, for edges that go back up
	svgMinNodeW = 116.0
)

// drawing is what drawGraph needs besides the structure: each node's state
// (START and END included) and the edges the run went along.
type drawing struct {
	Title  string
	States map[string]string
	Taken  map[[2]string]bool
	Ended  bool // the run is over: nodes without a state were not run, rather than pending
}

// svgItem is a node, or a dummy slot a long edge takes in a layer it crosses.
type svgItem struct {
	name  string
	dummy bool
	w, h  float64
	layer int
	order int
	x, y  float64
}

type svgEdge struct {
	from, to, kind, label string
}

// drawGraph lays a graph out as layers (longest path from START, the classic
// Sugiyama steps: back edges set aside, long edges split by dummy slots,
// barycentre ordering, centred placement) with the error handler and the
// nodes only it reaches drawn in a column to the right, fed by an
// "any error" pill. It returns coordinates only; component.Graph draws.
func drawGraph(st graph.Structure, d drawing) component.GraphVM {
	var edges []svgEdge
	seen := map[svgEdge]bool{}
	for _, e := range st.Edges {
		if e.Kind == graph.EdgeError {
			continue
		}
		se := svgEdge{from: e.From, to: e.To, kind: e.Kind, label: e.Label}
		if !seen[se] {
			seen[se] = true
			edges = append(edges, se)
		}
	}
	out := map[string][]int{}
	for i, e := range edges {
		out[e.from] = append(out[e.from], i)
	}

	// Depth-first from START: discovery order, and the edges that go back.
	color := map[string]int{}
	var discovered []string
	back := map[int]bool{}
	var visit func(n string)
	visit = func(n string) {
		color[n] = 1
		discovered = append(discovered, n)
		for _, i := range out[n] {
			switch color[edges[i].to] {
			case 0:
				visit(edges[i].to)
			case 1:
				back[i] = true
			}
		}
		color[n] = 2
	}
	visit(graph.START)
	main := map[string]bool{}
	for _, n := range discovered {
		main[n] = true
	}
	if !main[graph.END] {
		main[graph.END] = true
		discovered = append(discovered, graph.END)
	}
	forward := func(i int) bool { return !back[i] && main[edges[i].from] && main[edges[i].to] }

	// Longest-path layering (Kahn's order over the forward edges).
	layer := map[string]int{}
	indeg := map[string]int{}
	for i, e := range edges {
		if forward(i) {
			indeg[e.to]++
		}
	}
	var queue []string
	for _, n := range discovered {
		if indeg[n] == 0 {
			queue = append(queue, n)
		}
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, i := range out[n] {
			if !forward(i) {
				continue
			}
			t := edges[i].to
			layer[t] = max(layer[t], layer[n]+1)
			if indeg[t]--; indeg[t] == 0 {
				queue = append(queue, t)
			}
		}
	}
	last := 0
	for _, n := range discovered {
		if n != graph.END {
			last = max(last, layer[n])
		}
	}
	layer[graph.END] = last + 1

	items := map[string]*svgItem{}
	layers := make([][]*svgItem, last+2)
	for _, n := range discovered {
		it := newSVGItem(n)
		it.layer = layer[n]
		items[n] = it
		layers[it.layer] = append(layers[it.layer], it)
	}
	// Long edges get a dummy slot in every layer they cross.
	chains := map[int][]*svgItem{}
	up, down := map[*svgItem][]*svgItem{}, map[*svgItem][]*svgItem{}
	for i, e := range edges {
		if !forward(i) {
			continue
		}
		chain := []*svgItem{items[e.from]}
		for l := layer[e.from] + 1; l < layer[e.to]; l++ {
			dm := &svgItem{name: fmt.Sprintf("dummy-%d-%d", i, l), dummy: true, w: svgDummyW, h: svgNodeH, layer: l}
			layers[l] = append(layers[l], dm)
			chain = append(chain, dm)
		}
		chain = append(chain, items[e.to])
		chains[i] = chain
		for k := 1; k < len(chain); k++ {
			up[chain[k]] = append(up[chain[k]], chain[k-1])
			down[chain[k-1]] = append(down[chain[k-1]], chain[k])
		}
	}

	// Barycentre ordering, down and up a few times.
	for _, l := range layers {
		for k, it := range l {
			it.order = k
		}
	}
	for range 4 {
		for l := 1; l < len(layers); l++ {
			orderByBarycentre(layers[l], up)
		}
		for l := len(layers) - 2; l >= 0; l-- {
			orderByBarycentre(layers[l], down)
		}
	}
	for l := 1; l < len(layers); l++ {
		orderByBarycentre(layers[l], up)
	}

	// Placement: each item under the mean of its predecessors, packed
	// without overlap, the layer shifted back to balance.
	rowH := svgNodeH + svgLayerGap
	for l, row := range layers {
		desired := make([]float64, len(row))
		for k, it := range row {
			if ps := up[it]; l > 0 && len(ps) > 0 {
				sum := 0.0
				for _, p := range ps {
					sum += p.x
				}
				desired[k] = sum / float64(len(ps))
			}
		}
		xs := make([]float64, len(row))
		for k, it := range row {
			xs[k] = desired[k]
			if k > 0 {
				xs[k] = max(xs[k], xs[k-1]+(row[k-1].w+it.w)/2+gap(row[k-1], it))
			}
		}
		shift := 0.0
		for k := range row {
			shift += desired[k] - xs[k]
		}
		if len(row) > 0 {
			shift /= float64(len(row))
		}
		for k, it := range row {
			it.x = xs[k] + shift
			it.y = svgMargin + svgNodeH/2 + float64(l)*rowH
		}
	}
	minX, maxX := math.Inf(1), math.Inf(-1)
	for _, row := range layers {
		for _, it := range row {
			minX, maxX = min(minX, it.x-it.w/2), max(maxX, it.x+it.w/2)
		}
	}
	for _, row := range layers {
		for _, it := range row {
			it.x += svgMargin - minX
		}
	}
	right := maxX - minX + svgMargin
	if len(back) > 0 {
		right += svgLoopRoom
	}
	height := svgMargin + float64(len(layers))*rowH - svgLayerGap + svgMargin

	vm := component.GraphVM{Title: d.Title}
	width := right + svgMargin

	// The error route: the handler and what only it reaches, in a column.
	var sideNodes []string
	for _, n := range st.Nodes {
		if !main[n] {
			sideNodes = append(sideNodes, n)
		}
	}
	var pill *svgItem
	if len(sideNodes) > 0 {
		sideLayer := map[string]int{}
		inSide := map[string]bool{}
		for _, n := range sideNodes {
			inSide[n] = true
		}
		// Longest path from the handler within the side nodes (bounded: cycles stop).
		if st.ErrorHandler != "" && inSide[st.ErrorHandler] {
			for range len(sideNodes) {
				changed := false
				for _, e := range edges {
					if inSide[e.from] && inSide[e.to] && e.to != st.ErrorHandler && sideLayer[e.to] < sideLayer[e.from]+1 && sideLayer[e.from]+1 < len(sideNodes) {
						sideLayer[e.to] = sideLayer[e.from] + 1
						changed = true
					}
				}
				if !changed {
					break
				}
			}
		}
		rows := map[int][]*svgItem{}
		maxRow := 0
		for _, n := range sideNodes {
			it := newSVGItem(n)
			it.layer = sideLayer[n]
			items[n] = it
			rows[it.layer] = append(rows[it.layer], it)
			maxRow = max(maxRow, it.layer)
		}
		rowW := 0.0
		for r := 0; r <= maxRow; r++ {
			w := 0.0
			for k, it := range rows[r] {
				if k > 0 {
					w += svgColGap
				}
				w += it.w
			}
			rowW = max(rowW, w)
		}
		left := right + svgSideGap
		center := left + rowW/2
		startRow := 1
		if st.ErrorHandler != "" {
			pill = &svgItem{name: "__any_error__", w: component.TextWidth("any error", 12) + 28, h: svgPillH,
				x: center, y: svgMargin + svgNodeH/2 + float64(startRow)*rowH}
			startRow++
		}
		for r := 0; r <= maxRow; r++ {
			w := 0.0
			for k, it := range rows[r] {
				if k > 0 {
					w += svgColGap
				}
				w += it.w
			}
			x := center - w/2
			for _, it := range rows[r] {
				it.x = x + it.w/2
				it.y = svgMargin + svgNodeH/2 + float64(startRow+r)*rowH
				x += it.w + svgColGap
			}
		}
		width = left + rowW + svgMargin
		height = max(height, svgMargin+float64(startRow+maxRow+1)*rowH-svgLayerGap+svgMargin)
	}

	// Edges.
	outPorts, inPorts := portOffsets(edges, chains, items)
	for i, e := range edges {
		from, to := items[e.from], items[e.to]
		if from == nil || to == nil {
			continue
		}
		ge := component.GraphEdge{Kind: e.kind, Label: e.label, Taken: d.Taken[[2]string{e.from, e.to}]}
		switch chain := chains[i]; {
		case chain != nil:
			ge.Path, ge.LX, ge.LY = chainPath(chain, outPorts[i], inPorts[i])
		case e.from == e.to:
			x, y := from.x+from.w/2, from.y
			ge.Path = fmt.Sprintf("M%s %s C%s %s %s %s %s %s", n1(x), n1(y-8), n1(x+40), n1(y-30), n1(x+40), n1(y+30), n1(x+2), n1(y+8))
			ge.LX, ge.LY = x+40, y
		case main[e.from] && main[e.to]: // back up the graph, round the right side
			x := maxX - minX + svgMargin + svgLoopRoom*0.6
			x1, y1 := from.x+from.w/2, from.y
			x2, y2 := to.x+to.w/2, to.y
			ge.Path = fmt.Sprintf("M%s %s C%s %s %s %s %s %s", n1(x1), n1(y1), n1(x), n1(y1), n1(x), n1(y2), n1(x2+2), n1(y2))
			ge.LX, ge.LY = (x1+x2)/2+(x-(x1+x2)/2)*0.75, (y1+y2)/2
		default:
			ge.Path, ge.LX, ge.LY = sidePath(from, to)
		}
		vm.Edges = append(vm.Edges, ge)
	}
	if pill != nil {
		if h := items[st.ErrorHandler]; h != nil {
			ge := component.GraphEdge{Kind: graph.EdgeError, Taken: d.States[st.ErrorHandler] != "" && d.States[st.ErrorHandler] != component.StatePending}
			ge.Path, _, _ = legPath(pill.x, pill.y+pill.h/2, h.x, h.y-h.h/2)
			vm.Edges = append(vm.Edges, ge)
		}
	}

	// Nodes: START, the graph's nodes in their order, END, the pill.
	add := func(n string) {
		it := items[n]
		if it == nil {
			return
		}
		gn := component.GraphNode{ID: graph.MermaidID(n), Label: n, State: d.States[n], Kind: "node", X: it.x, Y: it.y, W: it.w, H: it.h}
		if gn.State == "" {
			gn.State = component.StatePending
			if d.Ended {
				gn.State = component.StateSkipped
			}
		}
		switch n {
		case graph.START:
			gn.Label, gn.Kind = "START", "terminal"
		case graph.END:
			gn.Label, gn.Kind = "END", "terminal"
		default:
			gn.Subtitle = component.StateLabel(gn.State)
		}
		vm.Nodes = append(vm.Nodes, gn)
	}
	add(graph.START)
	for _, n := range st.Nodes {
		add(n)
	}
	add(graph.END)
	if pill != nil {
		vm.Nodes = append(vm.Nodes, component.GraphNode{ID: "__any_error__", Label: "any error", Kind: "anyerror",
			X: pill.x, Y: pill.y, W: pill.w, H: pill.h})
	}
	vm.Width, vm.Height = math.Ceil(width), math.Ceil(height)
	return vm
}

func newSVGItem(n string) *svgItem {
	switch n {
	case graph.START, graph.END:
		return &svgItem{name: n, w: 76, h: svgPillH}
	}
	return &svgItem{name: n, w: max(svgMinNodeW, math.Ceil(component.TextWidth(n, 12.5)+30)), h: svgNodeH}
}

func gap(a, b *svgItem) float64 {
	if a.dummy || b.dummy {
		return svgColGap / 2
	}
	return svgColGap
}

// orderByBarycentre sorts a layer by the mean order of each item's
// neighbours in the adjacent layer (items without neighbours keep theirs).
func orderByBarycentre(row []*svgItem, nb map[*svgItem][]*svgItem) {
	bary := make(map[*svgItem]float64, len(row))
	for _, it := range row {
		ns := nb[it]
		if len(ns) == 0 {
			bary[it] = float64(it.order)
			continue
		}
		sum := 0.0
		for _, n := range ns {
			sum += float64(n.order)
		}
		bary[it] = sum / float64(len(ns))
	}
	sort.SliceStable(row, func(a, b int) bool { return bary[row[a]] < bary[row[b]] })
	for k, it := range row {
		it.order = k
	}
}

// portOffsets spreads the edges leaving (and entering) a node along its
// bottom (top) side, in the order of where they go (come from).
func portOffsets(edges []svgEdge, chains map[int][]*svgItem, items map[string]*svgItem) (outs, ins map[int]float64) {
	outs, ins = map[int]float64{}, map[int]float64{}
	byFrom, byTo := map[string][]int{}, map[string][]int{}
	for i, e := range edges {
		if chains[i] == nil {
			continue
		}
		byFrom[e.from] = append(byFrom[e.from], i)
		byTo[e.to] = append(byTo[e.to], i)
	}
	spread := func(node string, ids []int, key func(int) float64, dst map[int]float64) {
		sort.SliceStable(ids, func(a, b int) bool { return key(ids[a]) < key(ids[b]) })
		it := items[node]
		step := min(18.0, (it.w-24)/float64(len(ids)))
		for k, i := range ids {
			dst[i] = (float64(k) - float64(len(ids)-1)/2) * step
		}
	}
	for n, ids := range byFrom {
		spread(n, ids, func(i int) float64 { return chains[i][1].x }, outs)
	}
	for n, ids := range byTo {
		spread(n, ids, func(i int) float64 { c := chains[i]; return c[len(c)-2].x }, ins)
	}
	return outs, ins
}

// chainPath runs an edge from its source's bottom through its dummy slots
// (straight down each crossed layer) to its target's top; the label sits on
// the first leg.
func chainPath(chain []*svgItem, outOff, inOff float64) (path string, lx, ly float64) {
	src, dst := chain[0], chain[len(chain)-1]
	x, y := src.x+outOff, src.y+src.h/2
	var b strings.Builder
	fmt.Fprintf(&b, "M%s %s", n1(x), n1(y))
	for k := 1; k < len(chain); k++ {
		it := chain[k]
		tx, ty := it.x, it.y-it.h/2
		if it == dst {
			tx = it.x + inOff
		}
		leg, mx, my := legPath(x, y, tx, ty)
		b.WriteString(" " + leg[strings.IndexByte(leg, 'C'):])
		if k == 1 {
			lx, ly = mx, my
		}
		x, y = tx, ty
		if it.dummy {
			y = it.y + it.h/2
			fmt.Fprintf(&b, " L%s %s", n1(x), n1(y))
		}
	}
	return b.String(), lx, ly
}

// legPath is a vertical S-curve from (x1, y1) down to (x2, y2), with its
// midpoint.
func legPath(x1, y1, x2, y2 float64) (string, float64, float64) {
	dy := (y2 - y1) / 2
	return fmt.Sprintf("M%s %s C%s %s %s %s %s %s", n1(x1), n1(y1), n1(x1), n1(y1+dy), n1(x2), n1(y2-dy), n1(x2), n1(y2)),
		(x1 + x2) / 2, (y1 + y2) / 2
}

// sidePath joins nodes of the error column with each other and with the
// main graph.
func sidePath(from, to *svgItem) (string, float64, float64) {
	switch {
	case to.y > from.y+from.h/2 && math.Abs(to.x-from.x) < 1: // straight down the column
		return legPath(from.x, from.y+from.h/2, to.x, to.y-to.h/2)
	case to.y > from.y+from.h/2: // down, then across into the target's side
		x1, y1 := from.x, from.y+from.h/2
		x2 := to.x + to.w/2
		if to.x > from.x {
			x2 = to.x - to.w/2
		}
		return fmt.Sprintf("M%s %s C%s %s %s %s %s %s", n1(x1), n1(y1), n1(x1), n1(to.y), n1(x1), n1(to.y), n1(x2), n1(to.y)),
			x1, (y1 + to.y) / 2
	default: // level or up: side to side
		x1, x2 := from.x-from.w/2, to.x+to.w/2
		if to.x > from.x {
			x1, x2 = from.x+from.w/2, to.x-to.w/2
		}
		mx := (x1 + x2) / 2
		return fmt.Sprintf("M%s %s C%s %s %s %s %s %s", n1(x1), n1(from.y), n1(mx), n1(from.y), n1(mx), n1(to.y), n1(x2), n1(to.y)),
			mx, (from.y + to.y) / 2
	}
}

func n1(v float64) string { return component.Num(v) }
