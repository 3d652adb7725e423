package loader

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// fakeRenderer claims directories as ClaimDirectory does and "renders" a
// directory by reading the files its kustomization lists (resources:, one per
// line, relative) or, for a chart, one object per template; it records what it
// rendered.
type fakeRenderer struct {
	mu       sync.Mutex
	rendered []string
}

func (f *fakeRenderer) Claim(dir string) string { return ClaimDirectory(dir) }

func (f *fakeRenderer) Render(dir, shown, mode string) Rendered {
	f.mu.Lock()
	f.rendered = append(f.rendered, shown)
	f.mu.Unlock()
	out := Rendered{Root: evaluator.RenderedRoot{Path: shown, Mode: mode}}
	switch mode {
	case evaluator.ModeKustomize:
		k := KustomizationFile(dir)
		out.Read = append(out.Read, realPath(k))
		data, _ := os.ReadFile(k)
		for _, line := range strings.Split(string(data), "\n") {
			ref, ok := strings.CutPrefix(strings.TrimSpace(line), "- ")
			if !ok {
				continue
			}
			p := filepath.Join(dir, ref)
			if fi, err := os.Stat(p); err == nil && fi.IsDir() {
				sub := f.Render(p, filepath.ToSlash(p), evaluator.ModeKustomize)
				out.Read = append(out.Read, sub.Read...)
				out.Bases = append(append(out.Bases, realPath(p)), sub.Bases...)
				out.Objects = append(out.Objects, sub.Objects...)
				continue
			}
			out.Read = append(out.Read, realPath(p))
			b, err := os.ReadFile(p)
			if err != nil {
				out.Errors = append(out.Errors, evaluator.LoadError{Path: shown, Message: err.Error()})
				out.Root.Failed = true
				continue
			}
			objs, _ := LoadBytes(filepath.ToSlash(p), b)
			out.Objects = append(out.Objects, objs...)
		}
	case evaluator.ModeHelm:
		entries, _ := os.ReadDir(filepath.Join(dir, "templates"))
		for _, e := range entries {
			out.Objects = append(out.Objects, evaluator.Object{Path: shown + "/templates/" + e.Name(), Kind: "Stage", Name: e.Name()})
		}
	}
	out.Root.Objects = len(out.Objects)
	return out
}

// loadRendered is LoadAll's objects, errors and rendered directories.
func loadRendered(l *Loader, paths []string) ([]evaluator.Object, []evaluator.LoadError, []evaluator.RenderedRoot) {
	r := l.LoadAll(paths)
	return r.Objects, r.Errors, r.Rendered
}

const stageDoc = "apiVersion: kargo.akuity.io/v1alpha1\nkind: Stage\nmetadata: {name: %s, namespace: p}\n"

func stageYAML(name string) string { return strings.ReplaceAll(stageDoc, "%s", name) }

func names(objs []evaluator.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.Kind+" "+o.Name)
	}
	slices.Sort(out)
	return out
}

func TestLoadAllKustomizationOwnsItsDirectory(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"plain.yaml":                  stageYAML("plain"),
		"base/kustomization.yaml":     "resources:\n- a.yaml\n",
		"base/a.yaml":                 stageYAML("a"),
		"base/unused.yaml":            stageYAML("unused"),
		"base/sub/also-unused.yaml":   stageYAML("also-unused"),
		"overlay/kustomization.yaml":  "resources:\n- ../base\n- b.yaml\n",
		"overlay/b.yaml":              stageYAML("b"),
		"chart/Chart.yaml":            "name: c\n",
		"chart/templates/t.yaml":      "{{ not yaml",
		"chart/charts/sub/Chart.yaml": "name: sub\n",
		"other/kustomization.yaml":    "resources:\n- c.yaml\n",
		"other/c.yaml":                stageYAML("c"),
	})
	fr := &fakeRenderer{}
	l := &Loader{Renderer: fr}
	objs, errs, roots := loadRendered(l, []string{dir})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	// base counts twice: as overlay reads it, and on its own (an
	// Application may point at it). Its unlisted file is not read; the one
	// in a plain directory below it is read as it stands.
	want := []string{"Stage a", "Stage a", "Stage also-unused", "Stage b", "Stage c", "Stage plain", "Stage t.yaml"}
	if got := names(objs); !slices.Equal(got, want) {
		t.Errorf("objects %v, want %v", got, want)
	}
	byPath := map[string]evaluator.RenderedRoot{}
	for _, r := range roots {
		byPath[strings.TrimPrefix(r.Path, filepath.ToSlash(dir)+"/")] = r
	}
	if len(roots) != 4 {
		t.Errorf("roots %+v", roots)
	}
	base := byPath["base"]
	if base.BaseOf != filepath.ToSlash(dir)+"/overlay" {
		t.Errorf("base %+v", base)
	}
	wantNotListed := []string{filepath.ToSlash(dir) + "/base/unused.yaml"}
	if !slices.Equal(base.NotListed, wantNotListed) {
		t.Errorf("base not listed %v, want %v", base.NotListed, wantNotListed)
	}
	if r := byPath["chart"]; r.Mode != evaluator.ModeHelm || r.Objects != 1 {
		t.Errorf("chart %+v", r)
	}
	if r := byPath["overlay"]; r.BaseOf != "" || len(r.NotListed) != 0 {
		t.Errorf("overlay %+v", r)
	}
	// The chart's subchart is the chart's, never rendered on its own.
	for _, p := range fr.rendered {
		if strings.Contains(p, "charts/sub") {
			t.Errorf("rendered the subchart on its own")
		}
	}
}

// A chart's directory is Helm's only where Helm reads it (templates/, charts/,
// crds/): a chart or kustomization kept elsewhere in it is rendered on its own
// and a plain directory in it is read as it stands (an Argo CD Application may
// point at either; issue 22 item 7: the Stages of a real repository lived
// exactly there; issue 39: a Chart.yaml added above them hid them). The
// manifests in the chart's own directory that Helm never templates are
// listed, not read and not silent. Values files are the chart's data.
func TestLoadAllChartHoldsOnlyWhatHelmReads(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"platform/Chart.yaml":                     "name: platform\n",
		"platform/values.yaml":                    "x: 1\n",
		"platform/values-prod.yaml":               "x: 2\n",
		"platform/ci/test-values.yaml":            "x: 3\n",
		"platform/templates/apps.yaml":            "{{ not yaml",
		"platform/crds/crd.yaml":                  "kind: CustomResourceDefinition\n",
		"platform/charts/sub/Chart.yaml":          "name: sub\n",
		"platform/charts/sub/templates/s.yaml":    "{{ not yaml",
		"platform/kargo/stages.yaml":              stageYAML("hidden"),
		"platform/stray.yaml":                     stageYAML("stray"),
		"platform/promotion/Chart.yaml":           "name: promotion\n",
		"platform/promotion/templates/stage.yaml": "{{ not yaml",
		"platform/promotion/notes/extra.yaml":     stageYAML("extra"),
		"platform/overlay/kustomization.yaml":     "resources:\n- o.yaml\n",
		"platform/overlay/o.yaml":                 stageYAML("o"),
	})
	fr := &fakeRenderer{}
	objs, errs, roots := loadRendered(&Loader{Renderer: fr}, []string{dir})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got, want := names(objs), []string{"Stage apps.yaml", "Stage extra", "Stage hidden", "Stage o", "Stage stage.yaml"}; !slices.Equal(got, want) {
		t.Errorf("objects %v, want %v", got, want)
	}
	byPath := map[string]evaluator.RenderedRoot{}
	for _, r := range roots {
		byPath[strings.TrimPrefix(r.Path, filepath.ToSlash(dir)+"/")] = r
	}
	if len(roots) != 3 || byPath["platform/promotion"].Mode != evaluator.ModeHelm || byPath["platform/overlay"].Mode != evaluator.ModeKustomize {
		t.Errorf("roots %+v", roots)
	}
	if got, want := byPath["platform"].NotListed, []string{filepath.ToSlash(dir) + "/platform/stray.yaml"}; !slices.Equal(got, want) {
		t.Errorf("platform: not listed %v, want %v", got, want)
	}
	if got := byPath["platform/promotion"].NotListed; len(got) != 0 {
		t.Errorf("promotion: not listed %v, want none", got)
	}
	for _, p := range fr.rendered {
		if strings.Contains(p, "charts/sub") {
			t.Errorf("rendered the subchart on its own")
		}
	}
}

func TestLoadAllRenderExplicitFiles(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"k/kustomization.yaml": "resources:\n- a.yaml\n",
		"k/a.yaml":             stageYAML("a"),
		"k/b.yaml":             stageYAML("b"),
	})
	l := &Loader{Renderer: &fakeRenderer{}}
	// The kustomization file stands for its directory; another file of the
	// directory given explicitly is read as it stands.
	objs, errs, roots := loadRendered(l, []string{filepath.Join(dir, "k", "kustomization.yaml"), filepath.Join(dir, "k", "b.yaml")})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := names(objs); !slices.Equal(got, []string{"Stage a", "Stage b"}) {
		t.Errorf("objects %v", got)
	}
	if len(roots) != 1 || roots[0].Mode != evaluator.ModeKustomize {
		t.Errorf("roots %+v", roots)
	}
}

func TestLoadWithoutRendererIsPlain(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"k/kustomization.yaml": "resources:\n- a.yaml\n",
		"k/a.yaml":             stageYAML("a"),
		"k/b.yaml":             stageYAML("b"),
	})
	objs, errs, roots := loadRendered(&Loader{}, []string{dir})
	if len(errs) > 0 || len(roots) > 0 {
		t.Fatal(errs, roots)
	}
	if got := names(objs); !slices.Equal(got, []string{"Stage a", "Stage b"}) {
		t.Errorf("objects %v", got)
	}
}

func TestLoadAllFailedBaseStandsAlone(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"k/kustomization.yaml": "resources:\n- missing.yaml\n",
		"k/other.yaml":         stageYAML("other"),
	})
	_, errs, roots := loadRendered(&Loader{Renderer: &fakeRenderer{}}, []string{dir})
	if len(errs) != 1 || len(roots) != 1 || !roots[0].Failed || len(roots[0].NotListed) != 0 {
		t.Errorf("errs %v roots %+v", errs, roots)
	}
}

// Issue 39: a pull request that adds a chart or a kustomization above other
// teams' directories takes nothing of theirs out of the check. An Argo CD
// Application reads exactly its own path, so a directory below the new
// Chart.yaml or kustomization.yaml is still read as an Application pointing
// at it reads it; and an overlay that adopts another team's kustomization as
// a base (and patches it) leaves that base counted as it stands too.
func TestLoadAllAddedRootHidesNothingBelowIt(t *testing.T) {
	for _, tc := range []struct {
		name  string
		added map[string]string
		want  []string
	}{{
		name:  "chart at the root",
		added: map[string]string{"Chart.yaml": "name: x\n", "templates/cm.yaml": "{{ not yaml"},
		want:  []string{"Stage acme", "Stage cm.yaml", "Stage team-b", "Stage team-b-base"},
	}, {
		name:  "kustomization at the root listing one file",
		added: map[string]string{"kustomization.yaml": "resources:\n- mine.yaml\n", "mine.yaml": stageYAML("mine")},
		want:  []string{"Stage acme", "Stage mine", "Stage team-b", "Stage team-b-base"},
	}, {
		name:  "overlay adopting a base",
		added: map[string]string{"evil/kustomization.yaml": "resources:\n- ../team-b\n"},
		want:  []string{"Stage acme", "Stage team-b", "Stage team-b", "Stage team-b-base", "Stage team-b-base"},
	}, {
		name:  "chart above one team",
		added: map[string]string{"teams/Chart.yaml": "name: x\n"},
		want:  []string{"Stage acme", "Stage team-b", "Stage team-b-base"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tree := map[string]string{
				"teams/acme/stages.yaml":             stageYAML("acme"),
				"team-b/kustomization.yaml":          "resources:\n- stage.yaml\n- base\n",
				"team-b/stage.yaml":                  stageYAML("team-b"),
				"team-b/base/kustomization.yaml":     "resources:\n- s.yaml\n",
				"team-b/base/s.yaml":                 stageYAML("team-b-base"),
				"team-b/base/unlisted-in-base.yaml":  stageYAML("never-applied"),
				"team-b/unlisted-in-team-b-dir.yaml": stageYAML("never-applied-either"),
			}
			for k, v := range tc.added {
				tree[k] = v
			}
			writeTree(t, dir, tree)
			objs, errs, roots := loadRendered(&Loader{Renderer: &fakeRenderer{}}, []string{dir})
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			// team-b/base counts on its own and as team-b's base: one more
			// team-b-base than the roots that read it minus one.
			want := slices.Clone(tc.want)
			want = append(want, "Stage team-b-base")
			slices.Sort(want)
			if got := names(objs); !slices.Equal(got, want) {
				t.Errorf("objects %v, want %v", got, want)
			}
			var notListed []string
			for _, r := range roots {
				for _, f := range r.NotListed {
					notListed = append(notListed, strings.TrimPrefix(f, filepath.ToSlash(dir)+"/"))
				}
			}
			slices.Sort(notListed)
			wantNotListed := []string{"team-b/base/unlisted-in-base.yaml", "team-b/unlisted-in-team-b-dir.yaml"}
			if !slices.Equal(notListed, wantNotListed) {
				t.Errorf("not listed %v, want %v", notListed, wantNotListed)
			}
		})
	}
}
