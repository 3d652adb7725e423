package loader

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// A Renderer reads the directories that are not plain YAML: Helm charts and
// kustomizations. A Loader without one reads every directory as plain YAML.
type Renderer interface {
	// Claim says how the directory dir is read: "" for plain YAML (its files are
	// read one by one), else a mode (evaluator.ModeHelm, evaluator.ModeKustomize) for a directory
	// Render reads whole.
	Claim(dir string) string
	// Render reads the directory dir, shown to the user as shown, in the mode
	// Claim gave it. Objects carry the file (and line, when it can be known)
	// they were rendered from.
	Render(dir, shown, mode string) Rendered
}

// An ExcludingRenderer is told, before the first Render, the paths the run
// excludes, so that no render reads them: a render that needs one fails,
// naming it.
type ExcludingRenderer interface {
	Renderer
	SetExcluded([]ExcludedPath)
}

// A DecodingRenderer decodes the documents it renders with the function the
// Loader gives it, within the run's alias budget (AliasBudget), instead of
// with LoadBytes, where each call has a budget of its own. The Loader calls
// RenderDecoding instead of Render.
type DecodingRenderer interface {
	Renderer
	RenderDecoding(dir, shown, mode string, decode DecodeFunc) Rendered
}

// ExcludedPath is a path the run excludes, for a Renderer.
type ExcludedPath struct {
	// Real is the absolute path with symbolic links resolved; a directory
	// (Dir) excludes everything under it.
	Real string
	Dir  bool
	// Pattern and Source say which pattern excluded it, and where it is written.
	Pattern, Source string
}

// Rendered is what rendering one directory gave.
type Rendered struct {
	Root    evaluator.RenderedRoot
	Objects []evaluator.Object
	Errors  []evaluator.LoadError
	// Read lists the files the rendering read (absolute paths with symbolic
	// links resolved), so that the files no kustomization lists can be named.
	Read []string
	// Bases lists the kustomization directories the build read as
	// kustomizations (bases, components, generator and transformer
	// directories; absolute, symbolic links resolved), so that one another
	// kustomization builds is counted once, there. A kustomization file read
	// only as data does not make its directory a base.
	Bases []string
	// Skipped counts the rendered objects of kinds no rule reads, dropped
	// unconverted.
	Skipped int
}

// kustomizationNames are the file names that make a directory a kustomization,
// in the order kustomize looks for them.
var kustomizationNames = []string{"kustomization.yaml", "kustomization.yml", "Kustomization"}

// KustomizationFile returns the kustomization file of dir ("" when there is none).
func KustomizationFile(dir string) string {
	for _, n := range kustomizationNames {
		p := filepath.Join(dir, n)
		if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

// ChartFile returns the Chart.yaml of dir ("" when there is none).
func ChartFile(dir string) string {
	p := filepath.Join(dir, "Chart.yaml")
	if fi, err := os.Lstat(p); err == nil && fi.Mode().IsRegular() {
		return p
	}
	return ""
}

// ClaimDirectory is how flipflop's own renderer claims directories: a
// kustomization (which Argo CD prefers when both are present), else a Helm chart,
// else plain YAML.
func ClaimDirectory(dir string) string {
	switch {
	case KustomizationFile(dir) != "":
		return evaluator.ModeKustomize
	case ChartFile(dir) != "":
		return evaluator.ModeHelm
	}
	return ""
}

// renderWalk tracks, during a directory walk, the rendered directories the
// walk is inside: the files of a rendered directory itself are read only
// through kustomize or Helm, and so are a chart's templates/, charts/ and
// crds/. The walk still enters a chart's directories, so that the run's
// exclusions are decided there too (a render never reads an excluded path).
// Any other directory below a rendered one is read as an Argo CD Application
// pointing at it would read it: rendered when it is a chart or a
// kustomization of its own, else as plain YAML; the manifest files a
// rendered directory holds that its render does not read are listed, not
// read.
type renderWalk struct {
	renderer Renderer
	open     []openDir           // rendered directories enclosing the current path, innermost last
	owned    map[string][]string // kustomization directory -> manifest files under it (walk paths)
}

type openDir struct{ dir, mode string }

// enter is called for each directory of a walk; it returns the render task for
// it, if any (path cleaned).
func (rw *renderWalk) enter(path string) (mode string) {
	path = filepath.Clean(path)
	rw.leave(path)
	if rw.renderer == nil {
		return ""
	}
	if chart := rw.chart(); chart != "" && helmReads(chart, path) {
		return "" // the chart's own: templates, subcharts, CRDs
	}
	mode = rw.renderer.Claim(path)
	if mode != "" {
		rw.open = append(rw.open, openDir{path, mode})
	}
	return mode
}

// chart is the innermost chart directory the walk is in ("" when none).
func (rw *renderWalk) chart() string {
	for i := len(rw.open) - 1; i >= 0; i-- {
		if rw.open[i].mode == evaluator.ModeHelm {
			return rw.open[i].dir
		}
	}
	return ""
}

// helmReads reports whether Helm reads path, under chart dir, as part of the
// chart: its templates, its subcharts and its CRDs.
func helmReads(chart, path string) bool {
	rel, err := filepath.Rel(chart, path)
	if err != nil {
		return false
	}
	first, _, _ := strings.Cut(filepath.ToSlash(rel), "/")
	return first == "templates" || first == "charts" || first == "crds"
}

// chartData reports whether a file in a chart's directory is the chart's own
// data rather than a manifest Helm leaves unread: Chart.yaml and its lock,
// values files (values.yaml, values-prod.yaml, ci/test-values.yaml) and their
// schema, and the Helm 2 requirements files.
func chartData(name string) bool {
	lower := strings.ToLower(name)
	switch lower {
	case "chart.yaml", "chart.lock", "requirements.yaml", "requirements.lock", "values.schema.json":
		return true
	}
	return strings.Contains(lower, "values")
}

// leave closes the rendered directories path is not under.
func (rw *renderWalk) leave(path string) {
	for len(rw.open) > 0 && !under(path, rw.open[len(rw.open)-1].dir) {
		rw.open = rw.open[:len(rw.open)-1]
	}
}

// owner returns the innermost rendered directory a file is under and its
// mode ("" when none).
func (rw *renderWalk) owner(file string) (string, string) {
	rw.leave(file)
	if len(rw.open) == 0 {
		return "", ""
	}
	o := rw.open[len(rw.open)-1]
	return o.dir, o.mode
}

// own records a manifest file under a kustomization directory, to name it
// when no kustomization reads it.
func (rw *renderWalk) own(dir, file string) {
	if rw.owned == nil {
		rw.owned = map[string][]string{}
	}
	rw.owned[dir] = append(rw.owned[dir], file)
}

// under reports whether path is dir or lies below it, however the two are
// spelled ("." and "./" stand for the working directory, which holds every
// relative path that does not leave it).
func under(path, dir string) bool {
	path, dir = filepath.Clean(path), filepath.Clean(dir)
	if dir == "." {
		return !filepath.IsAbs(path) && path != ".." && !strings.HasPrefix(path, ".."+string(filepath.Separator))
	}
	return path == dir || strings.HasPrefix(path, strings.TrimSuffix(dir, string(filepath.Separator))+string(filepath.Separator))
}

// realPath resolves symbolic links in an absolute path; on failure it returns
// the cleaned absolute path.
func realPath(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	return abs
}

// settleRenders turns the render results of one Load into roots: a
// kustomization that another rendered kustomization reads (a base, a
// component) says so, and still counts on its own, since an Application that
// points at its directory builds it unpatched whatever overlay also reads it;
// the manifest files in a kustomization's or chart's own directory that no
// render read are listed as not part of the estate.
func settleRenders(results []renderResult, owned map[string][]string) []evaluator.RenderedRoot {
	read := map[string]bool{}            // real paths some render read
	bases := map[string][]int{}          // real kustomization directory -> the results that built it as a base
	dirs := make([]string, len(results)) // each result's directory, resolved once
	for i, r := range results {
		dirs[i] = realPath(r.dir)
		for _, p := range r.out.Read {
			read[p] = true
		}
		for _, d := range r.out.Bases {
			bases[d] = append(bases[d], i)
		}
	}
	var roots []evaluator.RenderedRoot
	for i, r := range results {
		root := r.out.Root
		if r.mode == evaluator.ModeKustomize {
			// Built as a base by other roots (a root never lists itself):
			// named by the first of them.
			for _, j := range bases[dirs[i]] {
				o := results[j]
				if dirs[j] == dirs[i] || o.mode != evaluator.ModeKustomize || o.out.Root.Failed {
					continue
				}
				if root.BaseOf == "" || o.out.Root.Path < root.BaseOf {
					root.BaseOf = o.out.Root.Path
				}
			}
			for _, f := range owned[r.dir] {
				if root.Failed {
					break // what a failed build would have read is unknown
				}
				if !read[realPath(f)] {
					root.NotListed = append(root.NotListed, filepath.ToSlash(f))
				}
			}
		}
		if r.mode == evaluator.ModeHelm {
			// Helm never templates these, whatever it loads as .Files.
			for _, f := range owned[r.dir] {
				root.NotListed = append(root.NotListed, filepath.ToSlash(f))
			}
		}
		roots = append(roots, root)
	}
	slices.SortStableFunc(roots, func(a, b evaluator.RenderedRoot) int { return cmp.Compare(a.Path, b.Path) })
	return roots
}

// A reading is one object as one reader gives it: a kustomization that no
// other reads, a base, or the plain file (path, for the plain reading: the
// file system path it was read from).
type reading struct {
	obj  evaluator.Object
	rank int
	path string
}

// Reading ranks: when readings of one document are equal, the lowest rank is
// kept.
const (
	readingOutermost = iota // a render no other reads (a chart, an overlay)
	readingBase             // a kustomization another one reads as a base
	readingPlain            // the file as it stands
)

// oneReadingEach returns the objects, in order, less the readings that
// repeat another exactly: when kustomizations (an overlay, its base built on
// its own) or a kustomization and the plain directory it lists files from
// give one document of one file unchanged, an Application pointing at any of
// them applies the same object, so it counts once: as the outermost
// kustomization gives it (what the findings name when they were read once).
// A reading that differs (a patch, a namespace, an annotation) is kept: each
// is what some Application may apply.
func oneReadingEach(rs []reading) []evaluator.Object {
	reals := map[string]string{}
	real := func(p string) string {
		r, ok := reals[p]
		if !ok {
			r = realPath(p)
			reals[p] = r
		}
		return r
	}
	type place struct {
		file string // real path
		line int
		hash int
	}
	// Only a document a kustomization read can have two readings.
	kustomized := map[string]bool{}
	for _, r := range rs {
		if r.obj.Rendered == evaluator.ModeKustomize && r.obj.Line > 0 {
			kustomized[real(r.obj.Path)] = true
		}
	}
	if len(kustomized) == 0 {
		if len(rs) == 0 {
			return nil
		}
		out := make([]evaluator.Object, len(rs))
		for i, r := range rs {
			out[i] = r.obj
		}
		return out
	}
	placeOf := func(r reading) (place, bool) {
		if r.obj.Line <= 0 || r.obj.Value == nil || (r.obj.Rendered != evaluator.ModeKustomize && r.rank != readingPlain) {
			return place{}, false
		}
		p := r.obj.Path
		if r.rank == readingPlain {
			p = r.path
		}
		f := real(p)
		if !kustomized[f] {
			return place{}, false
		}
		return place{f, r.obj.Line, r.obj.Value.Hash()}, true
	}
	kept := map[place][]int{} // the reading kept for each place and value
	drop := make([]bool, len(rs))
	for i, r := range rs {
		p, ok := placeOf(r)
		if !ok {
			continue
		}
		for n, j := range kept[p] {
			if rs[j].obj.Value.Compare(r.obj.Value) != 0 {
				continue
			}
			if r.rank < rs[j].rank {
				drop[j] = true
				kept[p][n] = i
			} else {
				drop[i] = true
			}
			ok = false
			break
		}
		if ok {
			kept[p] = append(kept[p], i)
		}
	}
	var out []evaluator.Object
	for i, r := range rs {
		if !drop[i] {
			out = append(out, r.obj)
		}
	}
	return out
}

// renderResult is one render task's outcome.
type renderResult struct {
	dir, mode string
	out       Rendered
}
