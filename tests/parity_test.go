package tests

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/explain"
	"github.com/flipflop-dev/flipflop/internal/graph"
)

// allEstates lists every estate of the repository (examples, rule samples, fix
// fixtures) and, when present, of the shared corpora of real manifests.
func allEstates(t *testing.T) []string {
	t.Helper()
	var dirs []string
	for _, pattern := range []string{
		"../examples/*", "../policies/rules/*/samples/*/*", "../internal/fix/testdata/*",
		"../../shared/corpus/real/*", "../../shared/corpus/real-world/*",
	} {
		m, _ := filepath.Glob(pattern)
		for _, d := range m {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() && filepath.Base(d) != "golden" {
				dirs = append(dirs, d)
			}
		}
	}
	return dirs
}

// What graph and explain claim about pins, writes and pointers is what the
// model says: graph draws exactly the model's pins and writes, and marks red
// exactly what the error findings name; explain replays exactly the Stages
// that pin and push to each pointer a timeline finding names.
func TestGraphAndExplainSayWhatTheModelSays(t *testing.T) {
	ctx := context.Background()
	ev, err := evaluator.New(ctx, evaluator.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	rules := ev.Rules()
	for _, dir := range allEstates(t) {
		t.Run(dir, func(t *testing.T) {
			objs, _ := (&loader.Loader{}).Load([]string{dir})
			r, m, err := ev.Analyze(ctx, objs)
			if err != nil {
				t.Fatal(err)
			}
			type edge struct{ kind, from, to string }
			g := graph.Build(m, r)
			key := map[string]string{}
			for _, n := range g.Nodes {
				key[n.ID] = n.Key
			}
			drawn, red := map[edge]bool{}, map[edge]bool{}
			for _, e := range g.Edges {
				x := edge{e.Kind, key[e.From], key[e.To]}
				drawn[x] = true
				if e.Error {
					red[x] = true
				}
			}
			want, wantRed := map[edge]bool{}, map[edge]bool{}
			ptr := func(p evaluator.Pointer, owner string) string {
				if p.Key != "" {
					return p.Key
				}
				return "?" + owner + "|" + p.Text
			}
			for _, p := range m.Pins {
				want[edge{graph.EdgePin, p.Stage, p.Application}] = true
			}
			for _, w := range m.Writes {
				want[edge{graph.EdgeWrite, w.Stage, ptr(w.Pointer, w.Stage)}] = true
			}
			for _, f := range r.Findings {
				if f.Severity != evaluator.SeverityError || f.Waived != nil {
					continue
				}
				for _, p := range m.PinsOf(f) {
					wantRed[edge{graph.EdgePin, p.Stage, p.Application}] = true
				}
				for _, w := range m.WritesOf(f) {
					wantRed[edge{graph.EdgeWrite, w.Stage, ptr(w.Pointer, w.Stage)}] = true
				}
			}
			for x := range drawn {
				if x.kind != graph.EdgeTrack && !want[x] {
					t.Errorf("graph draws %v, which the model does not have", x)
				}
				if x.kind != graph.EdgeTrack && red[x] != wantRed[x] {
					t.Errorf("graph marks %v red=%v, the findings say %v", x, red[x], wantRed[x])
				}
			}
			for x := range want {
				if !drawn[x] {
					t.Errorf("graph does not draw %v", x)
				}
			}

			for _, tl := range explain.Build(m, r, rules) {
				var pinners, writers []string
				for _, p := range m.Pins {
					if p.Pointer.Key == tl.Pointer.Key && !slices.Contains(pinners, p.Stage) {
						pinners = append(pinners, p.Stage)
					}
				}
				for _, w := range m.Writes {
					if w.Pointer.Key == tl.Pointer.Key && !slices.Contains(writers, w.Stage) {
						writers = append(writers, w.Stage)
					}
				}
				for _, s := range tl.Pinners {
					if !slices.Contains(pinners, s) {
						t.Errorf("explain replays %s as pinning %s; the model has no such pin", s, tl.Pointer.Text)
					}
				}
				for _, s := range tl.Writers {
					if !slices.Contains(writers, s) {
						t.Errorf("explain replays %s as pushing to %s; the model has no such write", s, tl.Pointer.Text)
					}
				}
				for _, s := range append(pinners, writers...) {
					if !slices.Contains(tl.Pinners, s) && !slices.Contains(tl.Writers, s) && !slices.Contains(tl.Omitted, s) {
						t.Errorf("explain leaves out %s, which pins or pushes to %s", s, tl.Pointer.Text)
					}
				}
			}
		})
	}
}
