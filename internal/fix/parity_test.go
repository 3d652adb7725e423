package fix

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// parityEstates are every estate the repository holds (examples, rule
// samples, fix fixtures) and, when present, the shared corpora of real
// manifests: a real-world repository's at-<sha> folders (an older commit of
// the same files, defining the same objects) are estates of their own, as the
// corpus README checks them, and loadEstate leaves them out of the
// repository's.
func parityEstates(t *testing.T) []string {
	t.Helper()
	var dirs []string
	for _, pattern := range []string{
		"examples/*", "policies/rules/*/samples/*/*", "internal/fix/testdata/*",
		"../shared/corpus/real/*", "../shared/corpus/real-world/*",
	} {
		m, err := filepath.Glob(filepath.Join(repoRoot, pattern))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range m {
			if fi, err := os.Stat(d); err == nil && fi.IsDir() && filepath.Base(d) != "golden" {
				dirs = append(dirs, d)
				commits, _ := filepath.Glob(filepath.Join(d, "at-*"))
				dirs = append(dirs, commits...)
			}
		}
	}
	return dirs
}

// Every location the model gives leads to the YAML node it names: steps to a
// step with that uses (a task step for a placeholder), pins to their
// sources[] and apps[] entries, writes to their clone's checkout, written
// Applications' sources to a source with that repoURL. fix edits what the
// model points at, so a location that leads nowhere would be a fix that
// silently does not apply.
func TestModelLocationsLeadToTheirNodes(t *testing.T) {
	race.Sequential(t)
	ev := evaluatorFor(t)
	for _, dir := range parityEstates(t) {
		rel, _ := filepath.Rel(repoRoot, dir)
		t.Run(rel, func(t *testing.T) {
			objs, _ := loadEstate(dir)
			_, m, err := ev.Analyze(context.Background(), objs, evaluator.Detailed())
			if err != nil {
				t.Fatal(err)
			}
			e := newEstate(objs, m, nil)
			at := func(what string, loc evaluator.Location) *yaml.Node {
				t.Helper()
				_, n, err := e.node(loc)
				if err != nil {
					t.Errorf("%s: %v", what, err)
					return nil
				}
				return n
			}
			for _, s := range m.Stages {
				for _, st := range s.Steps {
					n := at("step "+st.ID, st.Origin)
					switch {
					case n == nil:
					case !st.TaskResolved && lookup(n, "task") == nil:
						t.Errorf("step %s: %s is not a task step", st.ID, st.Origin.Path)
					case st.TaskResolved && str(n, "uses") != st.Uses:
						t.Errorf("step %s: %s uses %q, the model says %q", st.ID, st.Origin.Path, str(n, "uses"), st.Uses)
					}
					if st.Via != "" {
						if v := at("task step of "+st.ID, evaluator.Location{Ref: s.Ref, Path: st.Via}); v != nil && lookup(v, "task") == nil {
							t.Errorf("step %s: %s is not a task step", st.ID, st.Via)
						}
					}
				}
			}
			for _, p := range m.Pins {
				if p.Mechanisms {
					if n := at("pin "+p.ID, p.Entry); n != nil && lookup(n, "appName") == nil {
						t.Errorf("pin %s: %s has no appName", p.ID, p.Entry.Path)
					}
					continue
				}
				if n := at("pin "+p.ID, p.Entry); n != nil && lookup(n, "repoURL") == nil {
					t.Errorf("pin %s: %s has no repoURL", p.ID, p.Entry.Path)
				}
				if n := at("pin "+p.ID+" apps entry", p.AppEntry); n != nil && lookup(n, "sources") == nil {
					t.Errorf("pin %s: %s has no sources", p.ID, p.AppEntry.Path)
				}
				if m.Step(p.Step) == nil {
					t.Errorf("pin %s names no step of the model", p.ID)
				}
			}
			for _, w := range m.Writes {
				if w.Clone == "" {
					at("write "+w.ID, w.Origin)
					continue
				}
				c := m.Step(w.Clone)
				if c == nil || m.Step(w.Step) == nil {
					t.Errorf("write %s names steps the model does not have", w.ID)
					continue
				}
				if n := at("clone of "+w.ID, c.Origin); n != nil && walkPointer(n, "/config/checkout/"+itoa(w.Checkout)) == nil {
					t.Errorf("write %s: clone %s has no checkout %d", w.ID, c.ID, w.Checkout)
				}
				for _, id := range append(append([]string{}, w.Commits...), w.Edits...) {
					if m.Step(id) == nil {
						t.Errorf("write %s names step %s the model does not have", w.ID, id)
					}
				}
			}
			for _, a := range m.Applications {
				for _, s := range a.Sources {
					n := at("source of "+a.Key, evaluator.Location{Ref: a.Object, Path: s.Path})
					if n != nil && a.Generator == nil && !s.Hydrator && str(n, "repoURL") != s.RepoURL {
						t.Errorf("Application %s: %s has repoURL %q, the model says %q", a.Key, s.Path, str(n, "repoURL"), s.RepoURL)
					}
				}
				if g := a.Generator; g != nil {
					for _, el := range g.Elements {
						if el.Generator == "list" {
							at("generator element of "+a.Key, evaluator.Location{Ref: g.AppSet, Path: el.Path})
						}
					}
				}
			}
		})
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// loadEstate reads an estate of parityEstates as plain YAML, without the
// at-<sha> folders below it (estates of their own).
func loadEstate(dir string) ([]evaluator.Object, []evaluator.LoadError) {
	l := &loader.Loader{Exclude: []loader.Exclude{{Pattern: "at-*/", Dir: dir, Source: "parity test"}}}
	return l.Load([]string{dir})
}
