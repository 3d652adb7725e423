package loader

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// budgetAppSets is n ApplicationSets whose git generator is gen.
func budgetAppSets(t *testing.T, n int, gen string) []evaluator.Object {
	t.Helper()
	var src strings.Builder
	for i := range n {
		fmt.Fprintf(&src, `---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: set-%03d, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - %s
  template:
    metadata: {name: 'app-%03d-{{.path.basename}}'}
    spec:
      source: {repoURL: 'https://github.com/acme/deploy.git', targetRevision: main, path: '{{.path.path}}'}
`, i, gen, i)
	}
	objs, errs := LoadBytes("appsets.yaml", []byte(src.String()))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	return objs
}

// expansion reads back, for each ApplicationSet, how many parameter sets its
// first generator was expanded into (-1: left as written) and the bound its
// mark names ("" when it has none).
func expansion(t *testing.T, objs []evaluator.Object) (sets []int, bounds []string) {
	t.Helper()
	for _, o := range objs {
		doc, err := ast.JSON(o.Value)
		if err != nil {
			t.Fatal(err)
		}
		g := doc.(map[string]any)["spec"].(map[string]any)["generators"].([]any)[0].(map[string]any)
		n := -1
		if l, ok := g["list"].(map[string]any); ok {
			n = len(l["elements"].([]any))
		}
		if g["matrix"] != nil && g["list"] == nil {
			n = -1
		}
		mark, _ := g[notExpandedKey].(map[string]any)
		bound, _ := mark["bound"].(string)
		sets, bounds = append(sets, n), append(bounds, bound)
	}
	return sets, bounds
}

// withGitLimits lowers the budget's limits for one test.
func withGitLimits(t *testing.T, sets, work int) {
	t.Helper()
	oldSets, oldWork := maxGitParamSets, maxGitWork
	maxGitParamSets, maxGitWork = sets, work
	t.Cleanup(func() { maxGitParamSets, maxGitWork = oldSets, oldWork })
}

// Each bound of the budget stops the expansion where it is passed, in file
// order: the ApplicationSets before are expanded, the one that passes it and
// every one after are left as written and marked with the bound and its
// limit, and what was built stays within it.
func TestGitExpansionBudget(t *testing.T) {
	root := t.TempDir()
	for i := range 20 {
		dir := filepath.Join(root, "envs", fmt.Sprintf("e%02d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte("values: {"+strings.Repeat("k", 900)+": v}\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dirs := "git: {repoURL: 'https://github.com/acme/deploy.git', revision: HEAD, directories: [{path: 'envs/*'}]}"
	files := "git: {repoURL: 'https://github.com/acme/deploy.git', revision: HEAD, files: [{path: 'envs/*/config.yaml'}]}"
	// the second child renders with each set of the first (20 of them): 20 x 20
	matrix := "matrix: {generators: [{git: {repoURL: 'https://github.com/acme/deploy.git', revision: HEAD, directories: [{path: 'envs/*'}]}}, " +
		"{git: {repoURL: 'https://github.com/acme/deploy.git', revision: HEAD, directories: [{path: 'envs/*{{.path.basename}}'}]}}]}"
	for _, tc := range []struct {
		name        string
		gen         string
		sets, work  int
		maxFileSize int64
		want        []int
		bound       string
		limit       int64
	}{
		// 20 sets each: 3 fit in 70
		{"parameter sets", dirs, 70, 1 << 30, 0, []int{20, 20, 20, -1, -1}, "parameter sets", 70},
		// each file's 900 bytes again for every set: 20 sets fit in 30 KB
		{"bytes", files, 1 << 30, 1 << 30, 30000, []int{20, -1, -1, -1, -1}, "bytes", 30000},
		// 20 entries listed and 20 candidates matched each: 2 fit in 100
		{"paths", dirs, 1 << 30, 100, 0, []int{20, 20, -1, -1, -1}, "paths", 100},
		// a matrix rendered per set of its first child: 20 + 20 x 1 sets
		{"matrix", matrix, 50, 1 << 30, 0, []int{20, -1, -1, -1, -1}, "parameter sets", 50},
	} {
		t.Run(tc.name, func(t *testing.T) {
			withGitLimits(t, tc.sets, tc.work)
			out, errs := ExpandGitGenerators(budgetAppSets(t, 5, tc.gen), []RepoRoot{{Dir: root, MaxFileSize: tc.maxFileSize}})
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			sets, bounds := expansion(t, out)
			if fmt.Sprint(sets) != fmt.Sprint(tc.want) {
				t.Errorf("expanded into %v parameter sets, want %v", sets, tc.want)
			}
			for i, b := range bounds {
				if want := map[bool]string{true: tc.bound, false: ""}[tc.want[i] < 0]; b != want {
					t.Errorf("ApplicationSet %d marked %q, want %q", i, b, want)
				}
			}
			doc, _ := ast.JSON(out[len(out)-1].Value)
			g := doc.(map[string]any)["spec"].(map[string]any)["generators"].([]any)[0].(map[string]any)
			if limit := g[notExpandedKey].(map[string]any)["limit"]; fmt.Sprint(limit) != fmt.Sprint(tc.limit) {
				t.Errorf("the mark names the limit %v, want %d", limit, tc.limit)
			}
		})
	}
}
