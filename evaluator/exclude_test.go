package evaluator

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeTree(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func loadedPaths(objs []Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.Path)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// stage is an object the loader keeps (a kind some rule reads).
const stage = "apiVersion: kargo.akuity.io/v1alpha1\nkind: Stage\nmetadata:\n  name: x\n"

func TestLoaderExclude(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"a.yaml":                    stage,
		"charts/c/templates/t.yaml": "{{ broken",
		"charts/c/values.yaml":      stage,
		"apps/.flipflopignore":      "*.json\n!keep.json\n",
		"apps/x.json":               "{",
		"apps/keep.json":            `{"kind": "Stage", "apiVersion": "kargo.akuity.io/v1alpha1", "metadata": {"name": "k"}}`,
		"apps/deep/y.json":          "{",
		".hidden/z.yaml":            "{{",
	})
	l := &Loader{IgnoreFile: DefaultIgnoreFile, Exclude: []Exclude{{Pattern: "templates/", Dir: dir, Source: "--exclude"}}}
	r := l.LoadAll([]string{dir})
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %v", r.Errors)
	}
	slash := filepath.ToSlash(dir)
	want := []string{slash + "/a.yaml", slash + "/apps/keep.json", slash + "/charts/c/values.yaml"}
	if got := loadedPaths(r.Objects); !slices.Equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
	wantEx := []Exclusion{
		{Path: slash + "/apps/deep/y.json", Pattern: "*.json", Source: slash + "/apps/.flipflopignore:1"},
		{Path: slash + "/apps/x.json", Pattern: "*.json", Source: slash + "/apps/.flipflopignore:1"},
		{Path: slash + "/charts/c/templates/", Pattern: "templates/", Source: "--exclude"},
	}
	if !slices.Equal(r.Excluded, wantEx) {
		t.Errorf("excluded %+v\nwant %+v", r.Excluded, wantEx)
	}
	// Without the ignore file, its patterns do not apply.
	r = (&Loader{}).LoadAll([]string{filepath.Join(dir, "apps")})
	if len(r.Errors) != 2 || len(r.Excluded) != 0 {
		t.Errorf("without IgnoreFile: errors %v, excluded %v", r.Errors, r.Excluded)
	}
}

// An ignore file that is a symbolic link is not read: its lines would reach
// reports, and it could point anywhere.
func TestLoaderIgnoreFileLink(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	writeTree(t, outside, map[string]string{"secret": "*.yaml\n"})
	writeTree(t, dir, map[string]string{"a.yaml": stage})
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, DefaultIgnoreFile)); err != nil {
		t.Skip("symbolic links unsupported:", err)
	}
	r := (&Loader{IgnoreFile: DefaultIgnoreFile}).LoadAll([]string{dir})
	if len(r.Objects) != 1 || len(r.Errors) != 1 || !strings.Contains(r.Errors[0].Message, "not a regular file") || len(r.Excluded) != 0 {
		t.Errorf("objects %d, errors %v, excluded %v", len(r.Objects), r.Errors, r.Excluded)
	}
}

// Patterns relative to the working directory apply, for a path given outside
// it, relative to that path; ignore files between the working directory and a
// path given are read.
func TestLoaderExcludeBases(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		"work/.flipflopignore":     "/sub/skip.yaml\n",
		"work/sub/skip.yaml":       "{{",
		"work/sub/keep.yaml":       stage,
		"elsewhere/gen/skip.yaml":  "{{",
		"elsewhere/keep.yaml":      stage,
		"elsewhere/deep/gen/x.yml": "{{",
	})
	wd, _ := os.Getwd()
	t.Cleanup(func() { os.Chdir(wd) })
	if err := os.Chdir(filepath.Join(root, "work")); err != nil {
		t.Fatal(err)
	}
	l := &Loader{IgnoreFile: DefaultIgnoreFile, Exclude: []Exclude{{Pattern: "/gen", Source: "--exclude"}, {Pattern: "deep/gen/", Source: "--exclude"}}}
	r := l.LoadAll([]string{"sub", "../elsewhere"})
	if len(r.Errors) > 0 {
		t.Fatalf("errors: %v", r.Errors)
	}
	if got, want := loadedPaths(r.Objects), []string{"../elsewhere/keep.yaml", "sub/keep.yaml"}; !slices.Equal(got, want) {
		t.Errorf("read %v, want %v", got, want)
	}
	var ex []string
	for _, e := range r.Excluded {
		ex = append(ex, e.Path+" "+e.Source)
	}
	want := []string{"sub/skip.yaml .flipflopignore:1", "../elsewhere/deep/gen/ --exclude", "../elsewhere/gen/ --exclude"}
	if !slices.Equal(ex, want) {
		t.Errorf("excluded %q, want %q", ex, want)
	}
}
