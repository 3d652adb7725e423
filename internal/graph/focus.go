package graph

import (
	"slices"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// Parts cuts the picture of one finding out of an estate's graph: the same
// nodes, labels, edges and colours Build drew, restricted to what the finding
// is about. It indexes the graph once, so that each picture costs what its
// finding names, not the size of the estate.
type Parts struct {
	g     *Graph
	nodes map[nodeKey]int  // node by kind and key
	edges map[string][]int // edges by the ID of either end
}

type nodeKey struct{ kind, key string }

// NewParts indexes g (from Build) for Of.
func NewParts(g *Graph) *Parts {
	p := &Parts{g: g, nodes: make(map[nodeKey]int, len(g.Nodes)), edges: map[string][]int{}}
	for i, n := range g.Nodes {
		p.nodes[nodeKey{n.Kind, n.Key}] = i
	}
	for i, e := range g.Edges {
		p.edges[e.From] = append(p.edges[e.From], i)
		if e.To != e.From {
			p.edges[e.To] = append(p.edges[e.To], i)
		}
	}
	return p
}

// Of returns the part of the graph finding f is about: its Stages,
// Applications and pointer, the Stages, Applications and pointers of the pins
// and writes it names (m resolves them), and every edge between two of those.
// Nodes and edges keep their IDs, labels and colours, in the graph's order. A
// finding about none of these (a duplicate key, an invalid waiver) gets an
// empty graph.
func (p *Parts) Of(m *evaluator.Model, f evaluator.Finding) *Graph {
	keep := map[int]bool{}
	add := func(kind, key string) {
		if i, ok := p.nodes[nodeKey{kind, key}]; ok {
			keep[i] = true
		}
	}
	for _, s := range f.Stages {
		add(KindStage, s)
	}
	for _, a := range f.Applications {
		add(KindApplication, a)
	}
	if f.Pointer != "" {
		add(KindPointer, f.Pointer)
	}
	if m != nil {
		for _, pin := range m.PinsOf(f) {
			add(KindStage, pin.Stage)
			add(KindApplication, pin.Application)
			add(KindPointer, pointerKey(pin.Pointer, pin.Application))
		}
		for _, w := range m.WritesOf(f) {
			add(KindStage, w.Stage)
			add(KindPointer, pointerKey(w.Pointer, w.Stage))
		}
	}
	out := &Graph{}
	ids := map[string]bool{}
	var nodes []int
	for i := range keep {
		nodes = append(nodes, i)
	}
	slices.Sort(nodes)
	for _, i := range nodes {
		out.Nodes = append(out.Nodes, p.g.Nodes[i])
		ids[p.g.Nodes[i].ID] = true
	}
	var edges []int
	seen := map[int]bool{}
	for _, i := range nodes {
		for _, e := range p.edges[p.g.Nodes[i].ID] {
			if !seen[e] && ids[p.g.Edges[e].From] && ids[p.g.Edges[e].To] {
				seen[e] = true
				edges = append(edges, e)
			}
		}
	}
	slices.Sort(edges)
	for _, e := range edges {
		out.Edges = append(out.Edges, p.g.Edges[e])
	}
	return out
}
