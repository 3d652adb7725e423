package graph

import (
	"cmp"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// The SVG picture is laid out in layers, left to right, as a layered
// (Sugiyama) layout does, on the shape every flipflop graph has: Stages,
// Applications and pointers each in a column of their own, with a column for
// edge labels after the Stages (and after the Applications when a track edge
// has a label). An edge that skips a column (a Stage's write to a pointer)
// passes each column between in a slot of its own, and an edge's label has a
// slot of its own in the label column: so no edge crosses a node, and no two
// labels overlap, however many Stages push to one branch. The Stages keep the
// promotion order Build gave them; the other columns are ordered to cross
// less (barycentre sweeps), then every slot is moved as close to its
// neighbours as the columns' spacing allows (isotonic regression, pool
// adjacent violators), so that edges run as straight as they can. Edges meet
// a node at ports spread along its side, one per edge, and a node with many
// edges grows tall enough for them.

// Layout sizes, in pixels. Labels are set in a monospace font, so that a
// label's width is known from its length without measuring text.
const (
	svgCharWidth   = 7.3 // 12px monospace advance, with a little slack
	svgLabelChar   = 6.7 // 11px monospace advance, with a little slack
	svgMaxLabel    = 56  // runes of a node label drawn; the whole label is the node's tooltip
	svgMaxEdge     = 28  // runes of an edge label drawn
	svgNodeHeight  = 34
	svgPortGap     = 12 // between two edges' ends on one side of a node
	svgLabelHeight = 16
	svgPad         = 16
	svgHeader      = 30
	svgMinWidth    = 90
	svgLabelMin    = 24 // width of a label column whose labels are short
	svgGapMin      = 36 // between two columns
	svgGapMax      = 120
)

// slot is a node, or a piece of an edge in a column it passes.
type slot struct {
	node  int // index in g.Nodes, or -1
	edge  int // for an edge's piece: index in g.Edges
	label string
	w, h  float64
	layer int
	y     float64 // centre
	order float64 // sort key
	pos   int     // position in its layer
}

// route is an edge as drawn: the slots it passes, left to right, between its
// ends.
type route struct {
	from, to int   // slot of each end
	via      []int // slots between
	fromY    float64
	toY      float64
	label    int // slot holding the label, or -1
}

type layout struct {
	slots  []slot
	layers [][]int // slot indices, top to bottom
	x, w   []float64
	routes []route // by edge index; from == -1 for an edge not drawn
	width  float64
	height float64
	header []header
}

// header is a column's title.
type header struct {
	layer int
	x     float64
	title string
}

// lay lays g out.
func lay(g *Graph) *layout {
	lo := &layout{}
	byID := make(map[string]int, len(g.Nodes))
	for i, n := range g.Nodes {
		byID[n.ID] = i
	}
	// Columns: one per kind present, a label column after a kind whose
	// outgoing edges have labels.
	kindLayer := map[string]int{}
	labelled := map[string]bool{}
	present := map[string]bool{}
	for _, n := range g.Nodes {
		present[n.Kind] = true
	}
	for _, e := range g.Edges {
		if f, ok := byID[e.From]; ok && e.Label != "" {
			labelled[g.Nodes[f].Kind] = true
		}
	}
	layers := 0
	var headers []header
	for i, grp := range groups {
		if !present[grp.kind] {
			continue
		}
		kindLayer[grp.kind] = layers
		headers = append(headers, header{layer: layers, title: grp.title})
		layers++
		if labelled[grp.kind] && i < len(groups)-1 {
			layers++
		}
	}
	lo.layers = make([][]int, layers)
	add := func(s slot) int {
		lo.slots = append(lo.slots, s)
		i := len(lo.slots) - 1
		lo.layers[s.layer] = append(lo.layers[s.layer], i)
		return i
	}
	nodeSlot := make([]int, len(g.Nodes))
	for i, n := range g.Nodes {
		label := clip(safetext.Text(n.Label), svgMaxLabel)
		nodeSlot[i] = add(slot{node: i, edge: -1, label: label, layer: kindLayer[n.Kind], h: svgNodeHeight,
			w: max(svgMinWidth, float64(utf8.RuneCountInString(label))*svgCharWidth+28)})
	}
	// Edges: a slot in every column between their ends, the first holding
	// the label.
	in := make([]int, len(g.Nodes))
	out := make([]int, len(g.Nodes))
	lo.routes = make([]route, len(g.Edges))
	for i, e := range g.Edges {
		r := route{from: -1, to: -1, label: -1}
		f, okf := byID[e.From]
		t, okt := byID[e.To]
		if okf && okt && kindLayer[g.Nodes[t].Kind] > kindLayer[g.Nodes[f].Kind] {
			r.from, r.to = nodeSlot[f], nodeSlot[t]
			out[f]++
			in[t]++
			for l := kindLayer[g.Nodes[f].Kind] + 1; l < kindLayer[g.Nodes[t].Kind]; l++ {
				s := slot{node: -1, edge: i, layer: l, h: 2}
				if r.label < 0 && e.Label != "" {
					s.label = clip(safetext.Text(e.Label), svgMaxEdge)
					s.w = float64(utf8.RuneCountInString(s.label))*svgLabelChar + 8
					s.h = svgLabelHeight
				}
				j := add(s)
				if s.label != "" {
					r.label = j
				}
				r.via = append(r.via, j)
			}
		}
		lo.routes[i] = r
	}
	// A node grows to give each of its edges a port of its own.
	for i := range g.Nodes {
		s := &lo.slots[nodeSlot[i]]
		s.h = max(s.h, float64(max(in[i], out[i])+1)*svgPortGap)
	}

	// Neighbours of each slot in the layers before and after it.
	prev := make([][]int, len(lo.slots))
	next := make([][]int, len(lo.slots))
	for _, r := range lo.routes {
		if r.from < 0 {
			continue
		}
		path := append(append([]int{r.from}, r.via...), r.to)
		for k := 0; k+1 < len(path); k++ {
			next[path[k]] = append(next[path[k]], path[k+1])
			prev[path[k+1]] = append(prev[path[k+1]], path[k])
		}
	}

	// Order: the first column as Build sorted it (Stages in promotion
	// order); each other column by the mean position of its neighbours, down,
	// up and down again; ties keep the order before.
	reindex := func(l int) {
		for p, i := range lo.layers[l] {
			lo.slots[i].pos = p
		}
	}
	for l := range lo.layers {
		reindex(l)
	}
	sortBy := func(l int, nb [][]int) {
		for _, i := range lo.layers[l] {
			s := &lo.slots[i]
			s.order = float64(s.pos) + 0.5 // no neighbour there: stay
			if len(nb[i]) > 0 {
				sum := 0.0
				for _, j := range nb[i] {
					sum += float64(lo.slots[j].pos)
				}
				// Scaled to this layer, so that a slot without neighbours
				// keeps its place among the others.
				s.order = sum / float64(len(nb[i])) * float64(len(lo.layers[l])) / float64(max(1, len(lo.layers[lo.slots[nb[i][0]].layer])))
			}
		}
		slices.SortStableFunc(lo.layers[l], func(a, b int) int { return cmp.Compare(lo.slots[a].order, lo.slots[b].order) })
		reindex(l)
	}
	for l := 1; l < layers; l++ {
		sortBy(l, prev)
	}
	for l := layers - 2; l >= 1; l-- {
		sortBy(l, next)
	}
	for l := 1; l < layers; l++ {
		sortBy(l, prev)
	}

	// Vertical places: stacked, then each column pulled towards its
	// neighbours, down and up, keeping its order and spacing.
	sep := func(a, b int) float64 {
		sa, sb := lo.slots[a], lo.slots[b]
		gap := 4.0
		switch {
		case sa.node >= 0 && sb.node >= 0:
			gap = 18
		case sa.node >= 0 || sb.node >= 0:
			gap = 10
		}
		return sa.h/2 + gap + sb.h/2
	}
	for l := range lo.layers {
		y := 0.0
		for k, i := range lo.layers[l] {
			if k > 0 {
				y += sep(lo.layers[l][k-1], i)
			}
			lo.slots[i].y = y
		}
	}
	// meet is where slot i's edge meets slot j, a neighbour of it (after
	// it when ahead): a node's ports spread along its side in the order of
	// what they lead to, an edge's piece its middle.
	meet := func(i, j int, ahead bool) float64 {
		s := lo.slots[j]
		if s.node < 0 {
			return s.y
		}
		side := next[j]
		if ahead {
			side = prev[j]
		}
		k := 0
		for _, o := range side {
			if o != i && (lo.slots[o].y < lo.slots[i].y || lo.slots[o].y == lo.slots[i].y && lo.slots[o].pos < lo.slots[i].pos) {
				k++
			}
		}
		return s.y - s.h/2 + s.h*float64(k+1)/float64(len(side)+1)
	}
	// pull moves the slots of layer l as near as their spacing allows to
	// where their neighbours before it (or, up, after it) meet them. Going
	// up, only nodes move: an edge's pieces stay in line with where the edge
	// comes from, so that an edge bends once, into its target.
	pull := func(l int, down bool) {
		ids := lo.layers[l]
		want := make([]float64, len(ids))
		weight := make([]float64, len(ids))
		for k, i := range ids {
			want[k], weight[k] = lo.slots[i].y, 0.05
			nb := prev[i]
			if !down {
				nb = next[i]
				if lo.slots[i].node < 0 {
					nb = nil
				}
			}
			if len(nb) > 0 {
				sum := 0.0
				for _, j := range nb {
					sum += meet(i, j, !down)
				}
				want[k], weight[k] = sum/float64(len(nb)), 1
			}
		}
		ys := spaced(want, weight, func(k int) float64 { return sep(ids[k-1], ids[k]) })
		for k, i := range ids {
			lo.slots[i].y = ys[k]
		}
	}
	for range 12 {
		for l := 1; l < layers; l++ {
			pull(l, true)
		}
		for l := layers - 2; l >= 0; l-- {
			pull(l, false)
		}
	}
	top := math.Inf(1)
	for _, s := range lo.slots {
		top = min(top, s.y-s.h/2)
	}
	bottom := 0.0
	for i := range lo.slots {
		lo.slots[i].y += svgPad + svgHeader - top
		bottom = max(bottom, lo.slots[i].y+lo.slots[i].h/2)
	}
	if len(lo.slots) == 0 {
		bottom = svgPad + svgHeader
	}

	// Ports: a node's edges meet it in the order of where they come from
	// (or go to), spread evenly along its side.
	ports := func(node int, ends []int, other func(int) int, set func(int, float64)) {
		slices.SortStableFunc(ends, func(a, b int) int { return cmp.Compare(lo.slots[other(a)].y, lo.slots[other(b)].y) })
		s := lo.slots[node]
		for k, e := range ends {
			set(e, s.y-s.h/2+s.h*float64(k+1)/float64(len(ends)+1))
		}
	}
	into := map[int][]int{}
	outof := map[int][]int{}
	for i, r := range lo.routes {
		if r.from >= 0 {
			outof[r.from] = append(outof[r.from], i)
			into[r.to] = append(into[r.to], i)
		}
	}
	for _, i := range nodeSlot {
		ports(i, outof[i], func(e int) int {
			if r := lo.routes[e]; len(r.via) > 0 {
				return r.via[0]
			}
			return lo.routes[e].to
		}, func(e int, y float64) { lo.routes[e].fromY = y })
		ports(i, into[i], func(e int) int {
			if r := lo.routes[e]; len(r.via) > 0 {
				return r.via[len(r.via)-1]
			}
			return lo.routes[e].from
		}, func(e int, y float64) { lo.routes[e].toY = y })
	}

	// Columns: as wide as their widest slot (or header), apart as far as the
	// steepest edge between them needs.
	lo.x = make([]float64, layers)
	lo.w = make([]float64, layers)
	for l := range lo.layers {
		for _, i := range lo.layers[l] {
			lo.w[l] = max(lo.w[l], lo.slots[i].w)
		}
	}
	for _, h := range headers {
		lo.w[h.layer] = max(lo.w[h.layer], float64(utf8.RuneCountInString(h.title))*svgCharWidth)
	}
	for l := range lo.w {
		if lo.w[l] == 0 {
			lo.w[l] = svgLabelMin
		}
	}
	rise := make([]float64, layers)
	for _, r := range lo.routes {
		if r.from < 0 {
			continue
		}
		ys := []float64{r.fromY}
		for _, v := range r.via {
			ys = append(ys, lo.slots[v].y)
		}
		ys = append(ys, r.toY)
		l := lo.slots[r.from].layer
		for k := 0; k+1 < len(ys); k++ {
			rise[l+k] = max(rise[l+k], math.Abs(ys[k+1]-ys[k]))
		}
	}
	x := float64(svgPad)
	for l := range lo.layers {
		lo.x[l] = x
		x += lo.w[l] + min(svgGapMax, max(svgGapMin, rise[l]*0.5))
	}
	lo.width = svgPad * 2
	if layers > 0 {
		lo.width = lo.x[layers-1] + lo.w[layers-1] + svgPad
	}
	lo.width = max(lo.width, 2*svgPad+svgMinWidth)
	lo.height = bottom + svgPad
	for _, h := range headers {
		h.x = lo.x[h.layer]
		lo.header = append(lo.header, h)
	}
	return lo
}

// spaced returns the places nearest to want (least squares, by weight) that
// keep each at least gap(k) below the one before: isotonic regression, by
// pooling adjacent violators, on want less the running sum of the gaps.
func spaced(want, weight []float64, gap func(k int) float64) []float64 {
	n := len(want)
	off := make([]float64, n)
	for k := 1; k < n; k++ {
		off[k] = off[k-1] + gap(k)
	}
	type block struct {
		sum, weight float64
		start, end  int
	}
	var blocks []block
	for k := range n {
		blocks = append(blocks, block{(want[k] - off[k]) * weight[k], weight[k], k, k + 1})
		for len(blocks) > 1 {
			a, b := blocks[len(blocks)-2], blocks[len(blocks)-1]
			if a.sum/a.weight <= b.sum/b.weight {
				break
			}
			blocks = append(blocks[:len(blocks)-2], block{a.sum + b.sum, a.weight + b.weight, a.start, b.end})
		}
	}
	out := make([]float64, n)
	for _, b := range blocks {
		for k := b.start; k < b.end; k++ {
			out[k] = b.sum/b.weight + off[k]
		}
	}
	return out
}
