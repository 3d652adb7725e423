package loader

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// refDirectoryParams and refFileParams are directoryParams and fileParams as
// they were before the checkout was read once per run (each generator walked
// and globbed the checkout itself): the reference the checkout must agree
// with, byte for byte.
func refDirectoryParams(dir string, git map[string]any, goTemplate bool) ([]any, error) {
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
	var dirs []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() || p == dir {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if matchAny(include, rel) && !matchAny(exclude, rel) {
			dirs = append(dirs, rel)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.Sort(dirs)
	elems := make([]any, 0, len(dirs))
	for _, d := range dirs {
		elems = append(elems, pathParams(d, goTemplate, false))
	}
	return elems, nil
}
func refFileParams(dir string, git map[string]any, goTemplate bool, maxSize int64) ([]any, error) {
	realDir, err := filepath.EvalSymlinks(dir)
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
		matches, err := filepath.Glob(filepath.Join(dir, filepath.FromSlash(pattern)))
		if err != nil {
			return nil, err
		}
		slices.Sort(matches)
		for _, m := range matches {
			rel, err := filepath.Rel(dir, m)
			if err != nil || escapes(filepath.ToSlash(rel)) {
				return nil, fmt.Errorf("git files generator: %s lies outside the repository root", m)
			}
			if !insideRoot(m, realDir, nil) {
				return nil, fmt.Errorf("git files generator: %s is a symbolic link (or lies under one) that leads out of the repository root; nothing outside --repo-root is read", filepath.ToSlash(rel))
			}
			b, lerr := readFileLimited(m, filepath.ToSlash(rel), maxSize)
			if lerr != nil {
				return nil, fmt.Errorf("git files generator: %s: %s", lerr.Path, lerr.Message)
			}
			content, lerr := decodeParamsFile(filepath.ToSlash(rel), b, NewAliasBudget().newSource())
			if lerr != nil {
				return nil, fmt.Errorf("git files generator: %v", lerr)
			}
			params := pathParams(filepath.ToSlash(rel), goTemplate, true)
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

// gitFixture is a checkout with what the git generators can meet: hidden
// directories, symbolic links to files and directories inside and outside,
// a dangling link, a FIFO, an oversized file, malformed YAML, a directory
// with a parameters-file name, names with wildcard characters.
func gitFixture(t *testing.T) (root, outside string) {
	t.Helper()
	base := t.TempDir()
	root, outside = filepath.Join(base, "checkout"), filepath.Join(base, "outside")
	writeTree(t, root, map[string]string{
		"envs/dev/sub/deeper/k.yaml": "k: 1\n",
		"envs/qa/.keep":              "",
		"envs/skip/x.yaml":           "skip: {a: 1, b: [1, 2]}\n",
		"envs/.hidden/x/y.yaml":      "h: 1\n",
		"apps/a/b/c/d/app.yaml":      "app: {name: d, branch: main}\n",
		"apps/e/app.yaml":            "app: {name: e}\n",
		"we[ir]d/*star/q.yaml":       "q: 1\n",
		"sp ace/f.yaml":              "s: 1\n",
		".git/config":                "[core]\n",
		".github/workflows/ci.yaml":  "on: push\n",
		"config/a.yaml":              "service: {name: alpha, branch: main}\n",
		"config/b.json":              `{"service": {"name": "beta"}}`,
		"config/.hidden.yaml":        "service: {name: hidden}\n",
		"config/sub/c.yaml":          "service: {name: gamma}\n",
		"config/empty.yaml":          "",
		"odd/dir.yaml/inner.yaml":    "i: 1\n",
		"big/huge.yaml":              "token: " + strings.Repeat("x", 4096) + "\n",
		"bad/x.yaml":                 "a: [\n",
		"bad/list.yaml":              "- 1\n- 2\n",
		"env/dev/web/release.yaml":   "branch: dev\n",
		"env/qa/web/release.yaml":    "branch: qa\n",
		"env/qa/api/release.yaml":    "branch: qa-api\n",
		"list/envs.yaml":             "name: dev\n",
		"list/more.yaml":             "name: qa\n",
	})
	writeTree(t, outside, map[string]string{"creds.yaml": "token: hunter2\n"})
	links := map[string]string{
		"config/link.yaml":   filepath.Join(outside, "creds.yaml"),
		"linkdir":            outside,
		"inlink":             filepath.Join(root, "envs"),
		"config/inlink.yaml": filepath.Join(root, "config", "a.yaml"),
		"dangling.yaml":      filepath.Join(root, "nowhere"),
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Skip(err)
		}
	}
	os.MkdirAll(filepath.Join(root, "pipes"), 0o755)
	if exec.Command("mkfifo", filepath.Join(root, "pipes", "p.yaml")).Run() != nil {
		os.WriteFile(filepath.Join(root, "pipes", "p.yaml"), []byte("p: 1\n"), 0o644)
	}
	return root, outside
}

var (
	fixtureDirPatterns = [][]string{
		{"envs/*"}, {"*"}, {"*/*"}, {"*/*/*"}, {"*/*/*/*/*"}, {"envs/[dq]*"}, {"envs[/]dev"}, {"envs[^x]dev"}, {"[!.]*[^x]*[^x]*"}, {"env?/dev"},
		{"apps/**"}, {"inlink/*"}, {`\e*`}, {"we[[]ir]d/*"}, {"envs/*", "!envs/skip"}, {"*", "*/*", "-envs"},
		{"[bad"}, {""}, {"envs/dev/sub/deeper"}, {"sp ace"},
	}
	fixtureFilePatterns = []string{
		"config/*.yaml", "config/*", "*/*.yaml", "config/a.yaml", "config/link.yaml", "linkdir/*.yaml",
		"linkdir/creds.yaml", "inlink/*/x.yaml", "inlink/*/*/*/*.yaml", "pipes/*", "big/*", "bad/x.yaml",
		"bad/list.yaml", "odd/*", "odd/*/inner.yaml", "dangling.yaml", "config/../config/a.yaml", "/etc/*",
		"[bad", "*/", "", ".", `config/\*`, "**/*.yaml", ".git/*", "*/*/*/*/*/*.yaml", "config/empty.yaml",
		"we[[]ir]d/*/q.yaml", `we\[ir\]d/\*star/*`, "sp ace/*", "nothing/*", "config/a.yaml/*",
		"env/*/*/release.yaml", "list/*.yaml",
	}
)

// directoryGit is a git directories generator: a pattern starting with "-"
// is an exclude entry.
func directoryGit(patterns []string) map[string]any {
	var dirs []any
	for _, p := range patterns {
		if rest, ok := strings.CutPrefix(p, "-"); ok {
			dirs = append(dirs, map[string]any{"path": rest, "exclude": true})
		} else {
			dirs = append(dirs, map[string]any{"path": p})
		}
	}
	return map[string]any{"directories": dirs}
}

func fileGit(patterns ...string) map[string]any {
	var files []any
	for _, p := range patterns {
		files = append(files, map[string]any{"path": p})
	}
	return map[string]any{"files": files}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// The checkout read once per run gives every generator exactly what its own
// walk and glob gave: the same parameter sets in the same order, the same
// errors, whatever the generators read before it, for a root given as it is,
// with a trailing separator, and through a symbolic link.
func TestCheckoutAgreesWithWalkAndGlob(t *testing.T) {
	root, _ := gitFixture(t)
	link := root + "-link"
	if err := os.Symlink(root, link); err != nil {
		t.Skip(err)
	}
	for _, dir := range []string{root, root + string(filepath.Separator), link, link + string(filepath.Separator), filepath.Join(root, "missing")} {
		r := RepoRoot{Dir: dir, MaxFileSize: 1024}
		shared := newGitReader([]RepoRoot{r}, nil) // read by every generator in turn
		for _, goTemplate := range []bool{false, true} {
			for _, patterns := range fixtureDirPatterns {
				git := directoryGit(patterns)
				want, wantErr := refDirectoryParams(dir, git, goTemplate)
				for name, gr := range map[string]*gitReader{"fresh": newGitReader([]RepoRoot{r}, nil), "shared": shared} {
					c, _ := gr.rootFor("")
					got, err := directoryParams(c, git, goTemplate)
					if errText(err) != errText(wantErr) || !reflect.DeepEqual(got, want) {
						t.Errorf("%s (%s checkout) directories %q: got %v, %v\nwant %v, %v", dir, name, patterns, got, err, want, wantErr)
					}
				}
			}
			for _, pattern := range fixtureFilePatterns {
				for _, git := range []map[string]any{fileGit(pattern), fileGit(pattern, "config/a.yaml")} {
					want, wantErr := refFileParams(dir, git, goTemplate, r.maxFileSize())
					for name, gr := range map[string]*gitReader{"fresh": newGitReader([]RepoRoot{r}, nil), "shared": shared} {
						c, _ := gr.rootFor("")
						got, err := fileParams(c, git, goTemplate)
						if errText(err) != errText(wantErr) || !reflect.DeepEqual(got, want) {
							t.Errorf("%s (%s checkout) files %q: got %v, %v\nwant %v, %v", dir, name, git["files"], got, err, want, wantErr)
						}
					}
				}
			}
		}
	}
}

// countReads counts the directories and parameters files the git generators
// read, by path, until the test ends.
func countReads(t *testing.T) (dirs, files map[string]int) {
	dirs, files = map[string]int{}, map[string]int{}
	oldDir, oldFile := readDir, readParamsFile
	readDir = func(name string) ([]fs.DirEntry, error) {
		dirs[name]++
		return oldDir(name)
	}
	readParamsFile = func(path, shown string, limit int64) ([]byte, *evaluator.LoadError) {
		files[path]++
		return oldFile(path, shown, limit)
	}
	t.Cleanup(func() { readDir, readParamsFile = oldDir, oldFile })
	return dirs, files
}

// Many ApplicationSets whose git generators read the same checkout (the
// directories generators, the files generators, and a matrix whose git child
// is rendered once per parameter set of its sibling) read each directory and
// each parameters file of it once in all: one walk per root per run, where
// each generator used to walk the checkout again.
func TestGitGeneratorsReadTheCheckoutOnce(t *testing.T) {
	root, _ := gitFixture(t)
	var src strings.Builder
	const appSets = 60
	for i := range appSets {
		fmt.Fprintf(&src, `---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: set-%d, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - git:
      repoURL: https://github.com/acme/deploy.git
      revision: HEAD
      directories: [{path: '%s'}]
  - git:
      repoURL: https://github.com/acme/deploy.git
      revision: HEAD
      files: [{path: '%s'}]
  - matrix:
      generators:
      - git:
          repoURL: https://github.com/acme/deploy.git
          revision: HEAD
          files: [{path: 'list/*.yaml'}]
      - git:
          repoURL: https://github.com/acme/deploy.git
          revision: HEAD
          files: [{path: 'env/{{.name}}/*/release.yaml'}]
  template:
    metadata: {name: 'app-%d-{{.path.basename}}'}
    spec:
      source: {repoURL: https://github.com/acme/deploy.git, targetRevision: main, path: '{{.path.path}}'}
`, i, []string{"envs/*", "*", "apps/*/*", "*/*/*/*"}[i%4], []string{"config/[ab]*", "apps/*/app.yaml", "env/*/*/release.yaml", "*/a*.yaml"}[i%4], i)
	}
	objs, errs := LoadBytes("appsets.yaml", []byte(src.String()))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	dirs, files := countReads(t)
	out, errs := ExpandGitGenerators(objs, []RepoRoot{{Dir: root}})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if s := out[appSets-1].Value.String(); !strings.Contains(s, `"qa-api"`) || !strings.Contains(s, `"alpha"`) || !strings.Contains(s, `"deeper"`) {
		t.Fatalf("the generators were not expanded: %s", s)
	}
	// The walk of the directories generators reads every directory but the
	// hidden ones and the links; the glob */a*.yaml also lists those at the
	// top.
	want := map[string]bool{}
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if d.IsDir() {
			if p != root && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			want[p] = true
		}
		return nil
	})
	walked := len(want)
	for _, name := range []string{".git", ".github", "inlink", "linkdir"} {
		want[filepath.Join(root, name)] = true
	}
	total := 0
	for p, n := range dirs {
		total += n
		if n != 1 || !want[p] {
			t.Errorf("%s read %d times", p, n)
		}
	}
	if len(dirs) != len(want) {
		t.Errorf("%d directories read, want %d", len(dirs), len(want))
	}
	for p, n := range files {
		if n != 1 {
			t.Errorf("parameters file %s read %d times", p, n)
		}
	}
	if len(files) == 0 {
		t.Error("no parameters file read")
	}
	t.Logf("%d ApplicationSets: %d directory reads (%d directories walked), %d parameters files read", appSets, total, walked, len(files))
}

// A directory the walk cannot read stops it with the error, as
// filepath.WalkDir did, for every directories generator that asks, not only
// the first.
func TestCheckoutWalkErrorForEveryGenerator(t *testing.T) {
	root, _ := gitFixture(t)
	broken := filepath.Join(root, "envs", "dev")
	old := readDir
	readDir = func(name string) ([]fs.DirEntry, error) {
		if name == broken {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
		}
		return old(name)
	}
	t.Cleanup(func() { readDir = old })
	c, _ := newGitReader([]RepoRoot{{Dir: root}}, nil).rootFor("")
	for range 2 {
		if _, err := directoryParams(c, directoryGit([]string{"config"}), false); errText(err) != "open "+broken+": permission denied" {
			t.Errorf("error %v", err)
		}
	}
}
