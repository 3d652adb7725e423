// Package graph draws an estate as flipflop models it: Kargo Stages, the Argo CD
// Applications they pin (edges labelled with what the pin expects), the
// pointers (repository @ revision) the Applications track, and the pointers
// the Stages push to (dashed, labelled with the Stage that pushes). Stages are
// drawn in promotion order. Pointers, Stages, Applications and edges that an
// error finding is about are drawn in red. Output is Mermaid (renders in GitHub
// Markdown), Graphviz DOT, or SVG laid out here in layers (layout.go; for pages
// that must not run a script or reach the network), and is deterministic. Parts cuts the picture
// of one finding out of an estate's graph.
package graph

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

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

// Graph is the estate as nodes and edges, sorted: the Stages in promotion
// order (upstream first), the Applications in the order of the Stages that pin
// them, the pointers in the order of what tracks them; the edges by kind.
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
	short := shortNames(m)
	for _, w := range m.Writes {
		add(KindStage, w.Stage, w.Stage)
		pk := pointerKey(w.Pointer, w.Stage)
		add(KindPointer, pk, pointerLabel(w.Pointer))
		// Each write says whose it is: where several Stages push to one
		// branch, their edges meet, and "pushes" six times would not tell
		// them apart (Mermaid places the labels where it likes).
		edges[edgeKey{EdgeWrite, w.Stage, pk, short(w.Stage) + " pushes"}] = true
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
	// Stages in promotion order, then the Applications and pointers in the
	// order of what points at them, so that every format draws the
	// promotion line top to bottom with few crossings.
	rank := promotionOrder(m, g.Nodes)
	var links []edgeKey
	for k := range edges {
		links = append(links, k)
	}
	// next ranks the nodes of kind by the mean rank of the nodes that reach
	// them by an edge of kind via (those of from), then by the mean rank of
	// those that reach them by an edge of kind or (of orFrom), then by key.
	next := func(kind, via, from, or, orFrom string) {
		type mean struct {
			sum float64
			n   int
		}
		by := map[string]*[2]mean{}
		for _, l := range links {
			i := -1
			switch {
			case l.kind == via:
				i = 0
			case l.kind == or:
				i = 1
			}
			if i < 0 {
				continue
			}
			src := from
			if i == 1 {
				src = orFrom
			}
			r, ok := rank[nodeKey{src, l.from}]
			if !ok {
				continue
			}
			if by[l.to] == nil {
				by[l.to] = &[2]mean{}
			}
			by[l.to][i].sum += float64(r)
			by[l.to][i].n++
		}
		place := func(key string) (int, float64) {
			if b := by[key]; b != nil {
				for i, m := range b {
					if m.n > 0 {
						return i, m.sum / float64(m.n)
					}
				}
			}
			return 2, 0
		}
		var keys []string
		for _, n := range g.Nodes {
			if n.Kind == kind {
				keys = append(keys, n.Key)
			}
		}
		slices.SortFunc(keys, func(a, b string) int {
			ga, ma := place(a)
			gb, mb := place(b)
			return cmp.Or(cmp.Compare(ga, gb), cmp.Compare(ma, mb), cmp.Compare(a, b))
		})
		for i, k := range keys {
			rank[nodeKey{kind, k}] = i
		}
	}
	next(KindApplication, EdgePin, KindStage, "", "")
	next(KindPointer, EdgeTrack, KindApplication, EdgeWrite, KindStage)
	order := map[string]int{KindStage: 0, KindApplication: 1, KindPointer: 2}
	slices.SortFunc(g.Nodes, func(a, b Node) int {
		return cmp.Or(cmp.Compare(order[a.Kind], order[b.Kind]), cmp.Compare(rank[nodeKey{a.Kind, a.Key}], rank[nodeKey{b.Kind, b.Key}]), cmp.Compare(a.Key, b.Key))
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

type edgeKey struct{ kind, from, to, label string }

// promotionOrder ranks the Stages among nodes in promotion order: each after
// the Stages it takes Freight from (the model's Upstream, as the policies
// read requestedFreight), a line of promotion kept together (a Stage's
// downstream Stages right after it, once all their upstream Stages are
// placed), lines and siblings by key. A Stage in a cycle, which Kargo
// refuses, is placed when nothing else can be, by key.
func promotionOrder(m *evaluator.Model, nodes []Node) map[nodeKey]int {
	var keys []string
	in := map[string]bool{}
	for _, n := range nodes {
		if n.Kind == KindStage && !in[n.Key] {
			keys = append(keys, n.Key)
			in[n.Key] = true
		}
	}
	slices.Sort(keys)
	waiting := map[string]int{}         // upstream Stages not placed yet
	downstream := map[string][]string{} // in key order, since keys are
	for _, k := range keys {
		s := m.Stage(k)
		if s == nil {
			continue
		}
		for _, u := range slices.Compact(slices.Sorted(slices.Values(s.Upstream))) {
			if in[u] && u != k {
				waiting[k]++
				downstream[u] = append(downstream[u], k)
			}
		}
	}
	rank := map[nodeKey]int{}
	var place func(k string)
	place = func(k string) {
		if _, done := rank[nodeKey{KindStage, k}]; done {
			return
		}
		rank[nodeKey{KindStage, k}] = len(rank)
		for _, d := range downstream[k] {
			if waiting[d]--; waiting[d] == 0 {
				place(d)
			}
		}
	}
	for _, k := range keys {
		if waiting[k] == 0 {
			place(k)
		}
	}
	for _, k := range keys { // cycles
		place(k)
	}
	return rank
}

// shortNames returns a function naming a Stage by its name alone ("dev" for
// "acme/dev"), or by its key when Stages of two projects share the name.
func shortNames(m *evaluator.Model) func(string) string {
	count := map[string]int{}
	seen := map[string]bool{}
	note := func(key string) {
		if !seen[key] {
			seen[key] = true
			count[stageName(key)]++
		}
	}
	for _, s := range m.Stages {
		note(s.Key)
	}
	for _, p := range m.Pins {
		note(p.Stage)
	}
	for _, w := range m.Writes {
		note(w.Stage)
	}
	return func(key string) string {
		if count[stageName(key)] > 1 {
			return key
		}
		return stageName(key)
	}
}

// stageName is a Stage key's name: what follows its project (a namespace,
// which holds no '/'; a name from hostile input may).
func stageName(key string) string {
	if _, name, ok := strings.Cut(key, "/"); ok && name != "" {
		return name
	}
	return key
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
