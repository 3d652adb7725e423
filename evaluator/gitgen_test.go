package evaluator_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// The Go RepoID and the policies' repo.id must agree on every spelling.
func TestRepoIDMatchesPolicy(t *testing.T) {
	urls := []string{
		"https://github.com/Acme/Deploy.git", "git@github.com:acme/deploy.git", "ssh://git@github.com:22/acme/deploy",
		"https://user:tok@git.example.com/a/b/", "http://git.example.com:8080/a/b.git", "ghcr.io/acme/charts",
		"oci://ghcr.io/acme/charts", "git@gitlab.com:group/sub/repo", "https://github.com/acme/deploy.git/",
	}
	mods, err := evaluator.Modules()
	if err != nil {
		t.Fatal(err)
	}
	opts := []func(*rego.Rego){rego.Query(`ids := [data.lib.flipflop.repo.id(u) | some u in input]`)}
	for _, m := range mods {
		opts = append(opts, rego.ParsedModule(m))
	}
	in, _ := ast.InterfaceToValue(urls)
	rs, err := rego.New(append(opts, rego.ParsedInput(in))...).Eval(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ids := rs[0].Bindings["ids"].([]any)
	for i, u := range urls {
		if got := evaluator.RepoID(u); got != ids[i] {
			t.Errorf("RepoID(%q) = %q, policy says %q", u, got, ids[i])
		}
	}
}

const gitAppSet = `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: envs, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - git:
      repoURL: https://github.com/acme/deploy.git
      revision: HEAD
      directories:
      - path: envs/*
      - path: envs/skip
        exclude: true
  template:
    metadata:
      name: 'web-{{.path.basename}}'
      annotations: {kargo.akuity.io/authorized-stage: 'web:{{.path.basename}}'}
    spec:
      source: {repoURL: https://github.com/acme/deploy.git, targetRevision: 'env/{{.path.basename}}', path: '{{.path.path}}'}
---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: files, namespace: argocd}
spec:
  generators:
  - git:
      repoURL: git@github.com:acme/deploy
      revision: HEAD
      files:
      - path: config/*.yaml
  template:
    metadata:
      name: 'svc-{{service.name}}'
    spec:
      source: {repoURL: https://github.com/acme/deploy.git, targetRevision: '{{service.branch}}', path: '{{path}}'}
`

func TestExpandGitGenerators(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"envs/dev", "envs/qa", "envs/skip", "envs/.hidden", "other/x", "config"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "config", "a.yaml"), []byte("service: {name: alpha, branch: main}\n"), 0o644)
	os.WriteFile(filepath.Join(root, "config", "b.yaml"), []byte("service: {name: beta, branch: main}\n"), 0o644)
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	os.WriteFile(filepath.Join(root, ".git", "config"), []byte("[core]\n\tbare = false\n[remote \"origin\"]\n\turl = git@github.com:Acme/deploy.git\n"), 0o644)

	r, err := evaluator.NewRepoRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	if r.Origin != "github.com/acme/deploy" {
		t.Fatalf("origin %q", r.Origin)
	}
	objs, errs := evaluator.LoadBytes("appsets.yaml", []byte(gitAppSet))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	expanded, errs := evaluator.ExpandGitGenerators(objs, []evaluator.RepoRoot{r})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	ev, err := evaluator.New(context.Background(), evaluator.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := ev.Model(context.Background(), expanded)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, a := range m.Applications {
		got = append(got, fmt.Sprintf("%s@%v", a.Key, a.Sources[0].TargetRevision))
	}
	slices.Sort(got)
	want := []string{"argocd/svc-alpha@main", "argocd/svc-beta@main", "argocd/web-dev@env/dev", "argocd/web-qa@env/qa"}
	if !slices.Equal(got, want) {
		t.Errorf("generated %v, want %v", got, want)
	}

	// A checkout of another repository leaves the generators alone.
	other := evaluator.RepoRoot{Dir: root, Origin: "github.com/acme/other"}
	same, _ := evaluator.ExpandGitGenerators(objs, []evaluator.RepoRoot{other})
	if same[0].Value.Compare(objs[0].Value) != 0 {
		t.Error("generator of another repository was expanded")
	}
}
