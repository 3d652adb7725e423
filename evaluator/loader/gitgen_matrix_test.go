package loader_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
)

// A matrix whose git files generator reads a parameter of its sibling list
// generator: with the checkout, it expands as Argo CD does (one release file
// per environment), and the contradiction between the two Stages that pin
// main is found; the Stages' Applications are all known.
var matrixEstate = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: releases, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - matrix:
      generators:
      - list:
          elements:
          - name: dev
          - name: qa
      - git:
          repoURL: https://github.com/acme/deploy.git
          revision: HEAD
          files:
          - path: 'env/{{.name}}/*/release.yaml'
  template:
    metadata:
      name: '{{.name}}-{{.path.basename}}'
      annotations: {kargo.akuity.io/authorized-stage: 'acme:{{.name}}'}
    spec:
      project: default
      destination: {server: https://kubernetes.default.svc, namespace: '{{.name}}'}
      source: {repoURL: https://github.com/acme/deploy.git, targetRevision: '{{.branch}}', path: '{{.path.path}}'}
---
` + stagePinning("dev", "dev-web") + "---\n" + stagePinning("qa", "qa-web")

func stagePinning(stage, app string) string {
	return strings.NewReplacer("STAGE", stage, "APP", app).Replace(`apiVersion: kargo.akuity.io/v1alpha1
kind: Stage
metadata: {name: STAGE, namespace: acme}
spec:
  requestedFreight: [{origin: {kind: Warehouse, name: acme}, sources: {direct: true}}]
  promotionTemplate:
    spec:
      steps:
      - uses: git-clone
        config: {repoURL: https://github.com/acme/deploy.git, checkout: [{branch: main, path: ./repo}]}
      - uses: git-push
        as: push
        config: {path: ./repo}
      - uses: argocd-update
        config:
          apps:
          - name: APP
            sources: [{repoURL: https://github.com/acme/deploy.git, desiredRevision: '${{ outputs.push.commit }}'}]
`)
}

// fasttemplateEstate is matrixEstate in fasttemplate syntax ({{name}}).
var fasttemplateEstate = strings.NewReplacer(
	"  goTemplate: true\n", "",
	"{{.name}}", "{{name}}", "{{.path.basename}}", "{{path.basename}}", "{{.branch}}", "{{branch}}", "{{.path.path}}", "{{path}}",
).Replace(matrixEstate)

func matrixFindings(t *testing.T, roots []loader.RepoRoot) []string {
	t.Helper()
	return estateFindings(t, matrixEstate, roots)
}

func estateFindings(t *testing.T, src string, roots []loader.RepoRoot) []string {
	t.Helper()
	objs, errs := loader.LoadBytes("estate.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	objs, errs = loader.ExpandGitGenerators(objs, roots)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	ev, err := evaluator.New(context.Background(), evaluator.Settings{}, evaluator.StrictBuiltinErrors())
	if err != nil {
		t.Fatal(err)
	}
	r, err := ev.Evaluate(context.Background(), objs)
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, f := range r.Findings {
		rules = append(rules, f.Rule)
	}
	slices.Sort(rules)
	return rules
}

func TestMatrixGitGeneratorUsesSiblingParameters(t *testing.T) {
	root := t.TempDir()
	for _, f := range []string{"env/dev/web/release.yaml", "env/qa/web/release.yaml", "env/prod/web/release.yaml"} {
		p := filepath.Join(root, filepath.FromSlash(f))
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("branch: main\n"), 0o644)
	}
	got := matrixFindings(t, []loader.RepoRoot{{Dir: root}})
	want := []string{"shared-branch-contradiction", "shared-write-branch"}
	if !slices.Equal(got, want) {
		t.Errorf("with the checkout: %v, want %v", got, want)
	}
	if got := estateFindings(t, fasttemplateEstate, []loader.RepoRoot{{Dir: root}}); !slices.Equal(got, want) {
		t.Errorf("fasttemplate, with the checkout: %v, want %v", got, want)
	}
	// Without it, the generator's parameters are unknown: no error, and no
	// "no Applications" (the names match the pattern, so no unknown-application).
	if got := matrixFindings(t, nil); !slices.Equal(got, []string{"shared-write-branch"}) {
		t.Errorf("without the checkout: %v", got)
	}
}

// When the expansion cannot be done exactly, the generator stays unknown.
func TestMatrixGitGeneratorUnknownParameters(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "env", "dev", "web", "release.yaml")
	os.MkdirAll(filepath.Dir(p), 0o755)
	os.WriteFile(p, []byte("branch: main\n"), 0o644)
	for name, src := range map[string]string{
		"a function in the path": strings.Replace(matrixEstate, "env/{{.name}}/*", "env/{{.name | lower}}/*", 1),
		"a cluster generator":    strings.Replace(matrixEstate, "- list:\n          elements:\n          - name: dev\n          - name: qa", "- clusters: {}", 1),
		"a missing parameter":    strings.Replace(matrixEstate, "env/{{.name}}/*", "env/{{.nope}}/*", 1),
	} {
		t.Run(name, func(t *testing.T) {
			objs, errs := loader.LoadBytes("estate.yaml", []byte(src))
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			expanded, errs := loader.ExpandGitGenerators(objs, []loader.RepoRoot{{Dir: root}})
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if expanded[0].Value.Compare(objs[0].Value) != 0 {
				t.Errorf("expanded although the parameters are not known exactly: %v", expanded[0].Value)
			}
		})
	}
}
