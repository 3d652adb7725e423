// Package graph draws an estate as flipflop models it: Kargo Stages, the Argo CD
// Applications they pin (edges labelled with what the pin expects), the
// pointers (repository @ revision) the Applications track, and the pointers
// the Stages push to (dashed). Pointers, Stages, Applications and edges that an
// error finding is about are drawn in red. Output is Mermaid (renders in GitHub
// Markdown), Graphviz DOT, or SVG laid out here (for pages that must not run a
// script or reach the network), and is deterministic. Parts cuts the picture
// of one finding out of an estate's graph.
package graph

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// Formats lists the output formats Write knows.
func Formats() []string { return []string{"mermaid", "dot", "svg"} }

// Node kinds, in drawing order.
const (
	KindStage       = "stage"
	KindApplication = "application"
	KindPointer     = "pointer"
)

// Edge kinds.
const (
	EdgePin   = "pin"   // Stage → Application: the Stage pins desiredRevision on it
	EdgeTrack = "track" // Application → pointer: a source tracks it
	EdgeWrite = "write" // Stage → pointer: the Stage pushes to it
)

// Node is a Stage, an Application or a pointer.
type Node struct {
	// ID is a short identifier valid in Mermaid and DOT: s1, a1, p1, ...
	ID    string
	Kind  string
	Key   string
	Label string
	Error bool
}

// Edge joins two nodes.
type Edge struct {
	From, To string // node IDs
	Kind     string
	Label    string
	Error    bool
}

// Graph is the estate as nodes and edges, sorted.
type Graph struct {
	Nodes []Node
	Edges []Edge
}

// Build draws model m and marks what the error findings of report are about.
func Build(m *evaluator.Model, report *evaluator.Report) *Graph {
	nodes := map[nodeKey]*Node{}
	add := func(kind, key, label string) {
		k := nodeKey{kind, key}
		if n, ok := nodes[k]; !ok {
			nodes[k] = &Node{Kind: kind, Key: key, Label: label}
		} else if label < n.Label {
			// One pointer may read differently from its sources ("@ HEAD
			// (taken to be main)", "@ main"): the label must not depend on
			// the order of the documents.
			n.Label = label
		}
	}
	type edgeKey struct{ kind, from, to, label string }
	edges := map[edgeKey]bool{}

	for _, s := range m.Stages {
		add(KindStage, s.Key, s.Key)
	}
	sources := map[string]int{} // sources per Application
	for _, a := range m.Applications {
		sources[a.Key] = max(sources[a.Key], len(a.Sources))
	}
	track := func(app string, index int, p evaluator.Pointer) {
		pk := pointerKey(p, app)
		add(KindPointer, pk, pointerLabel(p))
		label := ""
		if sources[app] > 1 || index > 0 {
			label = fmt.Sprintf("source %d", index)
		}
		edges[edgeKey{EdgeTrack, app, pk, label}] = true
	}
	for _, a := range m.Applications {
		add(KindApplication, a.Key, a.Key)
		for _, src := range a.Sources {
			track(a.Key, src.Index, src.Pointer)
		}
	}
	for _, p := range m.Pins {
		add(KindStage, p.Stage, p.Stage)
		add(KindApplication, p.Application, p.Application)
		edges[edgeKey{EdgePin, p.Stage, p.Application, pinLabel(p)}] = true
		// The pinned source tracks the pin's pointer (also when the
		// Application is an instance of an ApplicationSet pattern).
		track(p.Application, p.Source, p.Pointer)
	}
	for _, w := range m.Writes {
		add(KindStage, w.Stage, w.Stage)
		pk := pointerKey(w.Pointer, w.Stage)
		add(KindPointer, pk, pointerLabel(w.Pointer))
		edges[edgeKey{EdgeWrite, w.Stage, pk, "pushes"}] = true
	}

	// What the error findings are about, joined by the ids the findings carry.
	errNodes := map[nodeKey]bool{}
	type pair struct{ from, to string }
	errEdges := map[string]map[pair]bool{EdgePin: {}, EdgeTrack: {}, EdgeWrite: {}}
	for _, f := range report.Findings {
		if f.Severity != evaluator.SeverityError || f.Waived != nil {
			continue
		}
		for _, s := range f.Stages {
			errNodes[nodeKey{KindStage, s}] = true
		}
		for _, a := range f.Applications {
			errNodes[nodeKey{KindApplication, a}] = true
		}
		if f.Pointer != "" {
			errNodes[nodeKey{KindPointer, f.Pointer}] = true
		}
		for _, p := range m.PinsOf(f) {
			errEdges[EdgePin][pair{p.Stage, p.Application}] = true
			errEdges[EdgeTrack][pair{p.Application, pointerKey(p.Pointer, p.Application)}] = true
		}
		for _, w := range m.WritesOf(f) {
			errEdges[EdgeWrite][pair{w.Stage, pointerKey(w.Pointer, w.Stage)}] = true
		}
	}

	g := &Graph{}
	for k, n := range nodes {
		n.Error = errNodes[k]
		g.Nodes = append(g.Nodes, *n)
	}
	order := map[string]int{KindStage: 0, KindApplication: 1, KindPointer: 2}
	slices.SortFunc(g.Nodes, func(a, b Node) int {
		return cmp.Or(cmp.Compare(order[a.Kind], order[b.Kind]), cmp.Compare(a.Key, b.Key))
	})
	ids := map[nodeKey]string{}
	counts := map[string]int{}
	prefix := map[string]string{KindStage: "s", KindApplication: "a", KindPointer: "p"}
	for i := range g.Nodes {
		n := &g.Nodes[i]
		counts[n.Kind]++
		n.ID = fmt.Sprintf("%s%d", prefix[n.Kind], counts[n.Kind])
		ids[nodeKey{n.Kind, n.Key}] = n.ID
	}
	kinds := map[string][2]string{
		EdgePin: {KindStage, KindApplication}, EdgeTrack: {KindApplication, KindPointer}, EdgeWrite: {KindStage, KindPointer},
	}
	for k := range edges {
		ends := kinds[k.kind]
		g.Edges = append(g.Edges, Edge{
			From: ids[nodeKey{ends[0], k.from}], To: ids[nodeKey{ends[1], k.to}], Kind: k.kind, Label: k.label,
			Error: errEdges[k.kind][pair{k.from, k.to}],
		})
	}
	edgeOrder := map[string]int{EdgePin: 0, EdgeTrack: 1, EdgeWrite: 2}
	slices.SortFunc(g.Edges, func(a, b Edge) int {
		return cmp.Or(cmp.Compare(edgeOrder[a.Kind], edgeOrder[b.Kind]), compareID(a.From, b.From), compareID(a.To, b.To), cmp.Compare(a.Label, b.Label))
	})
	return g
}

// pointerKey is the key of pointer p's node: its own key, or for an unknown
// pointer one that is its owner's (the Application that tracks it, the Stage
// that pushes to it) alone.
func pointerKey(p evaluator.Pointer, owner string) string {
	if p.Key != "" {
		return p.Key
	}
	return "?" + owner + "|" + p.Text // an unknown pointer is nobody else's
}

// compareID orders node IDs by kind letter, then number (s2 before s10).
func compareID(a, b string) int {
	var an, bn int
	fmt.Sscanf(a[1:], "%d", &an)
	fmt.Sscanf(b[1:], "%d", &bn)
	return cmp.Or(cmp.Compare(a[:1], b[:1]), cmp.Compare(an, bn))
}

func pointerLabel(p evaluator.Pointer) string {
	if p.Text != "" {
		return p.Text
	}
	return "unknown revision"
}

// pinLabel says what a pin expects.
func pinLabel(p evaluator.Pin) string {
	switch p.DesiredClass {
	case "own":
		return "pins its own commit"
	case "freight":
		return "pins a Freight commit"
	case "literal":
		return "pins " + p.DesiredRevision
	default:
		return "pins an expression"
	}
}
