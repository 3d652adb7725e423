package evaluator

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Render modes: how a directory is read.
const (
	// ModeHelm renders a Helm chart (a directory with Chart.yaml).
	ModeHelm = "helm"
	// ModeKustomize builds a kustomization (a directory with kustomization.yaml,
	// kustomization.yml or Kustomization).
	ModeKustomize = "kustomize"
)

// A Renderer reads the directories that are not plain YAML: Helm charts and
// kustomizations. A Loader without one reads every directory as plain YAML.
type Renderer interface {
	// Claim says how the directory dir is read: "" for plain YAML (its files are
	// read one by one), else a mode (ModeHelm, ModeKustomize) for a directory
	// Render reads whole.
	Claim(dir string) string
	// Render reads the directory dir, shown to the user as shown, in the mode
	// Claim gave it. Objects carry the file (and line, when it can be known)
	// they were rendered from.
	Render(dir, shown, mode string) Rendered
}

// Rendered is what rendering one directory gave.
type Rendered struct {
	Root    RenderedRoot
	Objects []Object
	Errors  []LoadError
	// Read lists the files the rendering read (absolute paths with symbolic
	// links resolved), so that a kustomization another one reads as a base is
	// counted once, and the files no kustomization lists can be named.
	Read []string
}

// RenderedRoot says how one directory was read. Reports list them so that a
// user can tell what was checked.
type RenderedRoot struct {
	// Path is the directory, as the user named it (slash-separated).
	Path string `json:"path"`
	// Mode is ModeHelm or ModeKustomize.
	Mode string `json:"mode"`
	// Objects counts the Kubernetes objects the rendering produced (of any kind).
	Objects int `json:"objects"`
	// Chart is "name version" of a Helm chart.
	Chart string `json:"chart,omitempty"`
	// Values lists the values a chart was rendered with: "values.yaml" (the
	// chart's defaults), then each --values file and --set flag.
	Values []string `json:"values,omitempty"`
	// BaseOf names the kustomization that reads this one as a base or
	// component: its objects are counted there, not here.
	BaseOf string `json:"baseOf,omitempty"`
	// NotListed lists the manifest files under a kustomization's directory
	// that no kustomization reads: they are not part of the estate and were
	// not checked.
	NotListed []string `json:"notListed,omitempty"`
	// Failed is set when the directory, or part of its output, could not be
	// rendered or read (the input errors say why).
	Failed bool `json:"failed,omitempty"`
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
		return ModeKustomize
	case ChartFile(dir) != "":
		return ModeHelm
	}
	return ""
}

// renderWalk tracks, during a directory walk, the kustomization directories the
// walk is inside: their files are read only through kustomize.
type renderWalk struct {
	renderer Renderer
	open     []string            // kustomization directories enclosing the current path, innermost last
	owned    map[string][]string // kustomization directory -> manifest files under it (walk paths)
}

// enter is called for each directory of a walk; it returns the render task for
// it, if any, and whether to skip the directory's contents.
func (rw *renderWalk) enter(path string) (mode string, skip bool) {
	rw.leave(path)
	if rw.renderer == nil {
		return "", false
	}
	mode = rw.renderer.Claim(path)
	switch mode {
	case "":
		return "", false
	case ModeKustomize:
		rw.open = append(rw.open, path)
		return mode, false
	default:
		return mode, true
	}
}

// leave closes the kustomization directories path is not under.
func (rw *renderWalk) leave(path string) {
	for len(rw.open) > 0 && !under(path, rw.open[len(rw.open)-1]) {
		rw.open = rw.open[:len(rw.open)-1]
	}
}

// owner returns the innermost kustomization directory a file is under ("" when
// none), recording the file as that kustomization's.
func (rw *renderWalk) owner(file string) string {
	rw.leave(file)
	if len(rw.open) == 0 {
		return ""
	}
	dir := rw.open[len(rw.open)-1]
	if rw.owned == nil {
		rw.owned = map[string][]string{}
	}
	rw.owned[dir] = append(rw.owned[dir], file)
	return dir
}

func under(path, dir string) bool {
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

// settleRenders turns the render results of one Load into objects, errors and
// roots: a kustomization another rendered kustomization read (a base, a
// component) is counted there only; files under a kustomization that no
// kustomization read are listed as not part of the estate.
func settleRenders(results []renderResult, owned map[string][]string) ([]RenderedRoot, map[int]bool) {
	read := map[string][]int{} // real path -> the results that read it
	for i, r := range results {
		for _, p := range r.out.Read {
			read[p] = append(read[p], i)
		}
	}
	dropped := map[int]bool{}
	var roots []RenderedRoot
	for i, r := range results {
		root := r.out.Root
		if r.mode == ModeKustomize {
			if k := KustomizationFile(r.dir); k != "" {
				// Read by another root (a root always reads its own file).
				for _, j := range read[realPath(k)] {
					o := results[j]
					if o.dir == r.dir || o.mode != ModeKustomize || o.out.Root.Failed {
						continue
					}
					root.BaseOf = o.out.Root.Path
					dropped[i] = true
					break
				}
			}
			for _, f := range owned[r.dir] {
				if root.Failed {
					break // what a failed build would have read is unknown
				}
				if _, ok := read[realPath(f)]; !ok {
					root.NotListed = append(root.NotListed, filepath.ToSlash(f))
				}
			}
		}
		roots = append(roots, root)
	}
	slices.SortStableFunc(roots, func(a, b RenderedRoot) int { return cmp.Compare(a.Path, b.Path) })
	return roots, dropped
}

// renderResult is one render task's outcome.
type renderResult struct {
	dir, mode string
	out       Rendered
}
