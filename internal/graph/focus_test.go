package graph

import (
	"context"
	"slices"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/race"
)

func analyze(t *testing.T, path string) (*evaluator.Model, *evaluator.Report) {
	t.Helper()
	ev, err := sharedEvaluator()
	if err != nil {
		t.Fatal(err)
	}
	objs, errs := (&loader.Loader{}).Load([]string{path})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r, m, err := ev.Analyze(context.Background(), objs)
	if err != nil {
		t.Fatal(err)
	}
	return m, r
}

func ids(g *Graph) (nodes, edges []string) {
	for _, n := range g.Nodes {
		nodes = append(nodes, n.ID+" "+n.Key)
	}
	for _, e := range g.Edges {
		edges = append(edges, e.From+"->"+e.To+" "+e.Kind)
	}
	return nodes, edges
}

// A finding's picture holds what it is about and the edges among those, with
// the estate graph's IDs, labels and colours; what it is not about stays out.
func TestPartsOfAFinding(t *testing.T) {
	race.Sequential(t)
	// Two estates side by side: the contradiction, and Stages with branches
	// of their own (other keys: the examples use the same names).
	m, r := analyze(t, estates["foreign-writer"])
	g := Build(m, r)
	parts := NewParts(g)
	var errs int
	for _, f := range r.Findings {
		if f.Severity != evaluator.SeverityError {
			continue
		}
		errs++
		part := parts.Of(m, f)
		nodes, edges := ids(part)
		if len(part.Nodes) == 0 {
			t.Fatalf("%s: empty picture", f.Rule)
		}
		for _, s := range f.Stages {
			if !slices.ContainsFunc(part.Nodes, func(n Node) bool { return n.Kind == KindStage && n.Key == s }) {
				t.Errorf("%s: Stage %s missing from %v", f.Rule, s, nodes)
			}
		}
		for _, a := range f.Applications {
			if !slices.ContainsFunc(part.Nodes, func(n Node) bool { return n.Kind == KindApplication && n.Key == a }) {
				t.Errorf("%s: Application %s missing from %v", f.Rule, a, nodes)
			}
		}
		if f.Pointer != "" && !slices.ContainsFunc(part.Nodes, func(n Node) bool { return n.Kind == KindPointer && n.Key == f.Pointer }) {
			t.Errorf("%s: pointer %s missing from %v", f.Rule, f.Pointer, nodes)
		}
		for _, n := range part.Nodes {
			i := slices.IndexFunc(g.Nodes, func(o Node) bool { return o.ID == n.ID })
			if i < 0 || g.Nodes[i] != n {
				t.Errorf("%s: node %+v is not the estate's", f.Rule, n)
			}
		}
		for _, e := range part.Edges {
			if !slices.Contains(g.Edges, e) {
				t.Errorf("%s: edge %+v is not the estate's", f.Rule, e)
			}
		}
		// Every estate edge between two kept nodes is kept.
		kept := map[string]bool{}
		for _, n := range part.Nodes {
			kept[n.ID] = true
		}
		for _, e := range g.Edges {
			if kept[e.From] && kept[e.To] && !slices.Contains(part.Edges, e) {
				t.Errorf("%s: edge %+v between kept nodes dropped (%v)", f.Rule, e, edges)
			}
		}
		checkMermaid(t, Mermaid(part))
	}
	if errs == 0 {
		t.Fatal("the sample holds no error finding")
	}
}

// Nodes the finding is not about stay out of its picture.
func TestPartsLeaveOutTheRest(t *testing.T) {
	g := &Graph{
		Nodes: []Node{
			{ID: "s1", Kind: KindStage, Key: "p/a", Label: "p/a", Error: true},
			{ID: "s2", Kind: KindStage, Key: "p/b", Label: "p/b"},
			{ID: "a1", Kind: KindApplication, Key: "argocd/a", Label: "argocd/a", Error: true},
			{ID: "a2", Kind: KindApplication, Key: "argocd/b", Label: "argocd/b"},
			{ID: "p1", Kind: KindPointer, Key: "r@main", Label: "r @ main", Error: true},
			{ID: "p2", Kind: KindPointer, Key: "r@b", Label: "r @ b"},
		},
		Edges: []Edge{
			{From: "s1", To: "a1", Kind: EdgePin, Error: true},
			{From: "s2", To: "a2", Kind: EdgePin},
			{From: "a1", To: "p1", Kind: EdgeTrack, Error: true},
			{From: "a2", To: "p2", Kind: EdgeTrack},
			{From: "s2", To: "p1", Kind: EdgeWrite},
		},
	}
	part := NewParts(g).Of(nil, evaluator.Finding{Stages: []string{"p/a"}, Applications: []string{"argocd/a"}, Pointer: "r@main"})
	nodes, edges := ids(part)
	if want := []string{"s1 p/a", "a1 argocd/a", "p1 r@main"}; !slices.Equal(nodes, want) {
		t.Errorf("nodes %v, want %v", nodes, want)
	}
	if want := []string{"s1->a1 pin", "a1->p1 track"}; !slices.Equal(edges, want) {
		t.Errorf("edges %v, want %v", edges, want)
	}
	if none := NewParts(g).Of(nil, evaluator.Finding{Rule: "duplicate-key"}); len(none.Nodes)+len(none.Edges) != 0 {
		t.Errorf("a finding about no Stage, Application or pointer drew %v", none)
	}
}
