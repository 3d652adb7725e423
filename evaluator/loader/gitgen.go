package loader

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"go.yaml.in/yaml/v3"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// RepoRoot is a local checkout that ApplicationSet git generators read.
type RepoRoot struct {
	// Dir is the checkout's directory.
	Dir string
	// Origin is the repository identity of the checkout's origin remote
	// ("host/org/repo"), read from Dir/.git/config; empty when unknown, in which
	// case the checkout stands in for every git generator.
	Origin string
	// MaxFileSize bounds each file a git files generator reads, in bytes; 0
	// means DefaultMaxFileSize.
	MaxFileSize int64
}

func (r RepoRoot) maxFileSize() int64 {
	if r.MaxFileSize > 0 {
		return r.MaxFileSize
	}
	return DefaultMaxFileSize
}

// NewRepoRoot describes the checkout at dir.
func NewRepoRoot(dir string) (RepoRoot, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return RepoRoot{}, err
	}
	if !fi.IsDir() {
		return RepoRoot{}, fmt.Errorf("%s is not a directory", dir)
	}
	return RepoRoot{Dir: dir, Origin: originOf(dir)}, nil
}

// originOf reads the URL of remote "origin" from dir/.git/config (a regular
// file of at most 1 MiB; anything else is taken as no origin).
func originOf(dir string) string {
	b, lerr := readFileLimited(filepath.Join(dir, ".git", "config"), ".git/config", 1<<20)
	if lerr != nil {
		return ""
	}
	inOrigin := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			inOrigin = line == `[remote "origin"]`
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok && inOrigin && strings.TrimSpace(k) == "url" {
			return RepoID(strings.TrimSpace(v))
		}
	}
	return ""
}

var (
	schemeRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*://`)
	scpRE    = regexp.MustCompile(`^([^/:]+):([^/:][^:]*)$`)
	portRE   = regexp.MustCompile(`:[0-9]*$`)
	scpPort  = regexp.MustCompile(`^[^:]*:[0-9]+(/|$)`)
)

// RepoID is the Go twin of the policies' repository identity (lib.flipflop.repo.id):
// host/path, lower case, without scheme, credentials, port, trailing "/" or ".git".
func RepoID(url string) string {
	u := strings.ToLower(strings.TrimSpace(url))
	var host, rest string
	switch {
	case schemeRE.MatchString(u):
		u = schemeRE.ReplaceAllString(u, "")
		host, rest, _ = strings.Cut(u, "/")
	case scpRE.MatchString(u) && !scpPort.MatchString(u):
		m := scpRE.FindStringSubmatch(u)
		host, rest = m[1], m[2]
	default:
		host, rest, _ = strings.Cut(u, "/")
	}
	if i := strings.LastIndex(host, "@"); i >= 0 {
		host = host[i+1:]
	}
	host = portRE.ReplaceAllString(host, "")
	id := host
	if rest != "" {
		id += "/" + rest
	}
	return strings.TrimSuffix(strings.TrimRight(id, "/"), ".git")
}

// ExpandGitGenerators rewrites the git directory and file generators of every
// ApplicationSet whose repository one of roots checks out into the list
// generators they would produce, so the policies expand them exactly. Objects
// other than ApplicationSets pass through untouched. The aliases of the files
// they read expand within a budget of their own (AliasValuesBase, and
// AliasValuesPerByte for each byte read); ExpandGitGeneratorsWithin shares a
// run's.
func ExpandGitGenerators(objs []evaluator.Object, roots []RepoRoot) ([]evaluator.Object, []evaluator.LoadError) {
	return ExpandGitGeneratorsWithin(objs, roots, nil)
}

// ExpandGitGeneratorsWithin is ExpandGitGenerators with the files git
// generators read expanding their aliases within the run's budget (the one
// its Loader had; nil: a new one), each file after the inputs the run read
// before. A file whose aliases the budget cannot pay for is an error naming
// the file and line, and stops its generator as an unreadable file does.
func ExpandGitGeneratorsWithin(objs []evaluator.Object, roots []RepoRoot, aliases *AliasBudget) ([]evaluator.Object, []evaluator.LoadError) {
	if len(roots) == 0 {
		return objs, nil
	}
	if aliases == nil {
		aliases = NewAliasBudget()
	}
	var errs []evaluator.LoadError
	out := make([]evaluator.Object, len(objs))
	copy(out, objs)
	gr := newGitReader(roots, aliases)
	for i, o := range out {
		if o.Kind != "ApplicationSet" || !strings.HasPrefix(o.APIVersion, "argoproj.io/") {
			continue
		}
		doc, err := ast.JSON(o.Value)
		if err != nil {
			continue
		}
		m, ok := doc.(map[string]any)
		if !ok {
			continue
		}
		spec, _ := m["spec"].(map[string]any)
		if spec == nil {
			continue
		}
		goTemplate, _ := spec["goTemplate"].(bool)
		gens, _ := spec["generators"].([]any)
		changed := false
		for gi, g := range gens {
			ng, ch, err := expandGenerator(g, gr, goTemplate)
			if err != nil {
				errs = append(errs, evaluator.LoadError{Path: o.Path, Line: o.Line, Message: fmt.Sprintf("ApplicationSet %s/%s: %v", o.Namespace, o.Name, err)})
				continue
			}
			if ch {
				gens[gi] = ng
				changed = true
			}
		}
		if !changed {
			continue
		}
		v, err := ast.InterfaceToValue(m)
		if err != nil {
			errs = append(errs, evaluator.LoadError{Path: o.Path, Line: o.Line, Message: err.Error()})
			continue
		}
		out[i].Value = v
	}
	return out, errs
}

// expandGenerator expands a git generator (also inside matrix and merge).
func expandGenerator(g any, gr *gitReader, goTemplate bool) (any, bool, error) {
	gm, ok := g.(map[string]any)
	if !ok {
		return g, false, nil
	}
	for _, combo := range []string{"matrix", "merge"} {
		c, ok := gm[combo].(map[string]any)
		if !ok {
			continue
		}
		children, _ := c["generators"].([]any)
		if combo == "matrix" {
			if ng, handled, changed, err := expandMatrixWithParams(gm, children, gr, goTemplate); handled {
				return ng, changed, err
			}
		}
		changed := false
		for i, child := range children {
			n, ch, err := expandGenerator(child, gr, goTemplate)
			if err != nil {
				return g, false, err
			}
			if ch {
				children[i], changed = n, true
			}
		}
		return g, changed, nil
	}
	git, ok := gm["git"].(map[string]any)
	if !ok {
		return g, false, nil
	}
	if templated(git) {
		return g, false, nil // a parameter no generator gives here: left unknown
	}
	repoURL, _ := git["repoURL"].(string)
	root, ok := gr.rootFor(repoURL)
	if !ok {
		return g, false, nil
	}
	if git["directories"] == nil && git["files"] == nil {
		return g, false, nil
	}
	if gr.budget.over != "" {
		return notExpanded(gm, gr.budget), true, nil
	}
	work, bytes := gr.work()
	var elems []any
	var err error
	if git["directories"] != nil {
		elems, err = directoryParams(root, git, goTemplate)
	} else {
		elems, err = fileParams(root, git, goTemplate)
	}
	if err != nil {
		return g, false, err
	}
	workAfter, bytesAfter := gr.work()
	if !gr.budget.take(len(elems), bytesAfter-bytes, workAfter-work) {
		return notExpanded(gm, gr.budget), true, nil
	}
	return expandedList(gm, git, elems), true, nil
}

// The git generators of a run are expanded within one budget (gitBudget):
// each ApplicationSet's generators are expanded on their own, so N
// ApplicationSets over a checkout of D directories made N×D parameter sets
// from N short generators (250 of them, 132 KB, over 2,000 directories:
// 500,000 sets, 1.3 GB; 500, 2.7 GB), a files generator's file was copied
// into every ApplicationSet that reads it, and a matrix of a list of L
// elements with a git child made L×D. The budget holds the parameter sets, the
// bytes they hold (a file's size for each set built from it) and the directory
// entries and paths matched against a pattern, over the whole run, in the
// order of the files. A generator that would pass it, and every one after it,
// is left as it is written, marked with notExpandedKey (the bound it passed),
// and read by the policies as a generator nobody can know; the
// oversized-applicationset warning names its ApplicationSet.
var (
	// maxGitParamSets is twice the parameter sets the policies build in all
	// (appsets.rego, max_total), so that they, not the order of the files,
	// still choose which ApplicationSets to build when there are more.
	maxGitParamSets = 20000
	// maxGitWork bounds the directory entries and paths matched (a path.Match
	// each): about a second.
	maxGitWork = 4000000
)

// notExpandedKey marks a git generator (or a matrix holding one) that the
// budget left as written: its value names the bound passed ({"bound":
// "parameter sets", "bytes" or "paths", "limit": n}).
// policies/lib/flipflop/appsets.rego reads it.
const notExpandedKey = "x-flipflop-not-expanded"

// gitBudget is what the git generators of one run may still expand into (the
// bytes: the smallest --max-file-size of the roots, what one file may hold);
// over names the first bound passed, after which nothing more is expanded.
type gitBudget struct {
	sets, work int
	bytes      int64
	limits     map[string]int64 // the bounds, by name
	over       string
}

func newGitBudget(bytes int64) gitBudget {
	return gitBudget{sets: maxGitParamSets, work: maxGitWork, bytes: bytes, limits: map[string]int64{
		"parameter sets": int64(maxGitParamSets), "bytes": bytes, "paths": int64(maxGitWork),
	}}
}

// take charges one expansion to the budget and reports whether it fits.
func (b *gitBudget) take(sets int, bytes int64, work int) bool {
	b.sets -= sets
	b.bytes -= bytes
	b.work -= work
	switch {
	case b.over != "":
	case b.sets < 0:
		b.over = "parameter sets"
	case b.bytes < 0:
		b.over = "bytes"
	case b.work < 0:
		b.over = "paths"
	}
	return b.over == ""
}

// notExpanded is generator gm as written, marked as left by budget b.
func notExpanded(gm map[string]any, b gitBudget) map[string]any {
	ng := make(map[string]any, len(gm)+1)
	for k, v := range gm {
		ng[k] = v
	}
	ng[notExpandedKey] = map[string]any{"bound": b.over, "limit": b.limits[b.over]}
	return ng
}

// isNotExpanded reports whether g was left by the budget.
func isNotExpanded(g any) bool {
	gm, _ := g.(map[string]any)
	_, ok := gm[notExpandedKey]
	return ok
}

// expandedList is the list generator that stands for generator gm, whose
// kind kind (a git generator, or a matrix expanded with its git child) gave
// elems: the kind's own template and the generator's selector are kept, and
// the generator is marked with the kind it is written as, so that the
// policies name the template's place in the file and the elements' origin.
func expandedList(gm, kind map[string]any, elems []any) map[string]any {
	list := map[string]any{"elements": elems}
	if t, ok := kind["template"]; ok {
		list["template"] = t
	}
	ng := map[string]any{"list": list, expandedFromKey: "git"}
	if gm["matrix"] != nil {
		ng[expandedFromKey] = "matrix"
	}
	if sel, ok := gm["selector"]; ok {
		ng["selector"] = sel
	}
	return ng
}

// expandedFromKey marks a generator expanded here with the kind it is written
// as (policies/lib/flipflop/appsets.rego reads it).
const expandedFromKey = "x-flipflop-expanded-from"

// directoryParams lists the directories of the checkout matching the
// generator's directories[] patterns (Go path.Match; exclude entries remove),
// as Argo CD's git directory generator does (hidden directories skipped). The
// checkout is walked once for all generators; a pattern without a character
// class or an escape (either can match a "/") is followed down the tree of
// directories segment by segment (a literal one by name), others are matched
// against every directory.
func directoryParams(c *checkout, git map[string]any, goTemplate bool) ([]any, error) {
	var include, exclude []string
	for _, d := range asSlice(git["directories"]) {
		dm, _ := d.(map[string]any)
		p, _ := dm["path"].(string)
		if ex, _ := dm["exclude"].(bool); ex {
			exclude = append(exclude, p)
		} else {
			include = append(include, p)
		}
	}
	tree, all, err := c.walk()
	if err != nil {
		return nil, err
	}
	var candidates []string // every directory include matches, and maybe others
	for _, p := range include {
		if strings.ContainsAny(p, `[\`) {
			candidates = slices.Clone(all) // sorted below: not the walk's own
			break
		}
		candidates = tree.match(strings.Split(p, "/"), candidates, &c.examined)
	}
	slices.Sort(candidates)
	candidates = slices.Compact(candidates)
	c.examined += len(candidates) * (len(include) + len(exclude))
	var dirs []string
	for _, rel := range candidates {
		if matchAny(include, rel) && !matchAny(exclude, rel) {
			dirs = append(dirs, rel)
		}
	}
	elems := make([]any, 0, len(dirs))
	for _, d := range dirs {
		elems = append(elems, pathParams(d, goTemplate, false))
		c.produced += pathBytes(d)
	}
	return elems, nil
}

// fileParams reads every file of the checkout matching files[].path
// (filepath.Glob) and turns its keys into parameters, plus the path
// parameters. The files read are confined to the checkout: a pattern that is
// absolute or climbs out with "..", and a match that is (or passes through) a
// symbolic link leading out of it, are errors; each file is read under the
// loader's rules (a regular file, at most the root's MaxFileSize bytes; FIFOs
// and devices are never opened) and decoded with its limits. Directories and
// files are read once for all generators.
func fileParams(c *checkout, git map[string]any, goTemplate bool) ([]any, error) {
	dir := c.Dir
	realDir, err := c.realDir()
	if err != nil {
		return nil, err
	}
	var elems []any
	for _, f := range asSlice(git["files"]) {
		fm, _ := f.(map[string]any)
		pattern, _ := fm["path"].(string)
		if escapes(pattern) {
			return nil, fmt.Errorf("git files generator: path %q leaves the repository root (absolute, or climbing out with \"..\"); nothing outside --repo-root is read", pattern)
		}
		matches, err := c.glob(filepath.Join(dir, filepath.FromSlash(pattern)))
		if err != nil {
			return nil, err
		}
		slices.Sort(matches)
		for _, m := range matches {
			rel, err := filepath.Rel(dir, m)
			if err != nil || escapes(filepath.ToSlash(rel)) {
				return nil, fmt.Errorf("git files generator: %s lies outside the repository root", m)
			}
			if !c.inside(m, realDir) {
				return nil, fmt.Errorf("git files generator: %s is a symbolic link (or lies under one) that leads out of the repository root; nothing outside --repo-root is read", filepath.ToSlash(rel))
			}
			content, err := c.params(m, filepath.ToSlash(rel))
			if err != nil {
				return nil, err
			}
			params := pathParams(filepath.ToSlash(rel), goTemplate, true)
			c.produced += pathBytes(rel)
			for k, v := range content {
				if goTemplate {
					params[k] = v
				} else {
					flattenInto(params, k, v)
				}
			}
			elems = append(elems, params)
		}
	}
	return elems, nil
}

// escapes reports whether a slash-separated path is absolute or climbs out
// of where it is joined with "..".
func escapes(p string) bool {
	if path.IsAbs(p) || filepath.IsAbs(filepath.FromSlash(p)) || filepath.VolumeName(filepath.FromSlash(p)) != "" {
		return true
	}
	for _, seg := range strings.Split(filepath.ToSlash(p), "/") {
		if seg == ".." {
			return true
		}
	}
	return false
}

// decodeParamsFile decodes a git files generator file (YAML or JSON, one
// mapping) with the loader's text rules and YAML limits, its aliases expanded
// within m.
func decodeParamsFile(shown string, data []byte, m *aliasMeter) (map[string]any, *evaluator.LoadError) {
	m.read(len(data))
	data, lerr := decodeText(shown, data)
	if lerr != nil {
		return nil, lerr
	}
	var node yaml.Node
	if err := yaml.Unmarshal(data, &node); err != nil {
		line, msg := yamlErrorLine(err.Error(), data)
		return nil, &evaluator.LoadError{Path: shown, Line: line, Message: msg}
	}
	if node.Kind == 0 || (node.Kind == yaml.DocumentNode && len(node.Content) == 0) {
		return map[string]any{}, nil
	}
	v, err := yamlToValue(&node, m)
	if err != nil {
		line, msg := 0, err.Error()
		var ye *yamlError
		if errors.As(err, &ye) {
			line, msg = ye.Line, ye.Message
		}
		return nil, &evaluator.LoadError{Path: shown, Line: line, Message: msg}
	}
	j, err := ast.JSON(v)
	if err != nil {
		return nil, &evaluator.LoadError{Path: shown, Message: err.Error()}
	}
	params, ok := j.(map[string]any)
	if !ok {
		return nil, &evaluator.LoadError{Path: shown, Message: "not a mapping of parameters"}
	}
	return params, nil
}

// pathBytes is what the path parameters of path p hold, at most: the path,
// its base name twice and its segments, and their keys.
func pathBytes(p string) int64 { return int64(4*len(p)) + 128 }

// pathParams builds the path parameters of Argo CD's git generators.
func pathParams(p string, goTemplate, file bool) map[string]any {
	d := p
	if file {
		d = path.Dir(p)
	}
	base := path.Base(d)
	norm := normalize(base)
	segs := strings.Split(d, "/")
	if goTemplate {
		pp := map[string]any{"path": d, "basename": base, "basenameNormalized": norm, "segments": toAny(segs)}
		if file {
			pp["filename"] = path.Base(p)
			pp["filenameNormalized"] = normalize(path.Base(p))
		}
		return map[string]any{"path": pp}
	}
	params := map[string]any{"path": d, "path.basename": base, "path.basenameNormalized": norm}
	for i, s := range segs {
		params[fmt.Sprintf("path[%d]", i)] = s
	}
	if file {
		params["path.filename"] = path.Base(p)
		params["path.filenameNormalized"] = normalize(path.Base(p))
	}
	return params
}

var nonDNS = regexp.MustCompile(`[^a-z0-9-.]`)

func normalize(s string) string { return nonDNS.ReplaceAllString(strings.ToLower(s), "-") }

func flattenInto(params map[string]any, prefix string, v any) {
	switch t := v.(type) {
	case map[string]any:
		for k, vv := range t {
			flattenInto(params, prefix+"."+k, vv)
		}
	default:
		params[prefix] = fmt.Sprint(t)
	}
}

func matchAny(patterns []string, p string) bool {
	for _, pat := range patterns {
		if ok, _ := path.Match(pat, p); ok {
			return true
		}
	}
	return false
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
