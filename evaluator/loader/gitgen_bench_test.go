package loader_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator/loader"
)

// BenchmarkExpandGitGenerators expands 400 ApplicationSets whose git
// generators (200 directories, 200 files) read one checkout of 4,000
// directories and 4,000 parameters files.
func BenchmarkExpandGitGenerators(b *testing.B) {
	root := b.TempDir()
	for i := range 20 {
		for j := range 20 {
			for k := range 10 {
				dir := filepath.Join(root, "apps", fmt.Sprintf("team%d", i), fmt.Sprintf("svc%d", j), fmt.Sprintf("env%d", k))
				if err := os.MkdirAll(dir, 0o755); err != nil {
					b.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(fmt.Sprintf("env: {name: e%d, branch: main}\n", k)), 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	var src strings.Builder
	for i := range 400 {
		gen := fmt.Sprintf("directories: [{path: 'apps/team%d/*/*'}]", i%20)
		if i%2 == 1 {
			gen = fmt.Sprintf("files: [{path: 'apps/team%d/*/*/config.yaml'}]", i%20)
		}
		fmt.Fprintf(&src, `---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: set-%d, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - git: {repoURL: 'https://github.com/acme/deploy.git', revision: HEAD, %s}
  template:
    metadata: {name: 'app-%d-{{.path.basename}}'}
    spec:
      source: {repoURL: 'https://github.com/acme/deploy.git', targetRevision: main, path: '{{.path.path}}'}
`, i, gen, i)
	}
	objs, errs := loader.LoadBytes("appsets.yaml", []byte(src.String()))
	if len(errs) > 0 {
		b.Fatal(errs)
	}
	roots := []loader.RepoRoot{{Dir: root}}
	b.ResetTimer()
	for b.Loop() {
		if _, errs := loader.ExpandGitGenerators(objs, roots); len(errs) > 0 {
			b.Fatal(errs)
		}
	}
}
