package loader_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// The Go RepoID and the policies' repo.id must agree on every spelling.
func TestRepoIDMatchesPolicy(t *testing.T) {
	race.Sequential(t)
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
		if got := loader.RepoID(u); got != ids[i] {
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

	r, err := loader.NewRepoRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	if r.Origin != "github.com/acme/deploy" {
		t.Fatalf("origin %q", r.Origin)
	}
	objs, m := expandedModel(t, gitAppSet, []loader.RepoRoot{r})
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
	other := loader.RepoRoot{Dir: root, Origin: "github.com/acme/other"}
	same, _ := loader.ExpandGitGenerators(objs, []loader.RepoRoot{other})
	if same[0].Value.Compare(objs[0].Value) != 0 {
		t.Error("generator of another repository was expanded")
	}
}

// confinedAppSet is an ApplicationSet whose git files generator reads pattern.
func confinedAppSet(pattern string) string {
	return `apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: leak, namespace: argocd}
spec:
  generators:
  - git:
      repoURL: https://github.com/acme/deploy.git
      revision: HEAD
      files:
      - path: "` + pattern + `"
  template:
    metadata: {name: 'leak-{{token}}'}
    spec:
      source: {repoURL: https://github.com/acme/deploy.git, targetRevision: main, path: x}
`
}

// The git files generator reads nothing outside --repo-root: a pattern that
// climbs out, a symbolic link (to a file or a directory) that leads out, a
// FIFO and an oversized file are input errors naming the path, the secret
// outside never becomes a parameter, and the generators that stay inside are
// still expanded beside examples/contradiction, whose finding is still
// reported.
func TestGitFilesConfinedToRepoRoot(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "checkout")
	outside := filepath.Join(base, "outside")
	for _, d := range []string{filepath.Join(root, "config"), filepath.Join(root, "big"), filepath.Join(root, "pipes"), outside} {
		os.MkdirAll(d, 0o755)
	}
	os.WriteFile(filepath.Join(outside, "creds.yaml"), []byte("token: hunter2\n"), 0o644)
	os.WriteFile(filepath.Join(root, "config", "ok.yaml"), []byte("token: fine\n"), 0o644)
	os.WriteFile(filepath.Join(root, "big", "huge.yaml"), []byte("token: "+strings.Repeat("x", 4096)+"\n"), 0o644)
	if err := os.Symlink(filepath.Join(outside, "creds.yaml"), filepath.Join(root, "config", "link.yaml")); err != nil {
		t.Skip(err)
	}
	os.Symlink(outside, filepath.Join(root, "linkdir"))
	fifo := filepath.Join(root, "pipes", "p.yaml")
	hasFIFO := exec.Command("mkfifo", fifo).Run() == nil

	r := loader.RepoRoot{Dir: root, MaxFileSize: 1024}
	cases := map[string]string{
		"../outside/*.yaml":              `path "../outside/*.yaml" leaves the repository root`,
		"config/../../outside/*":         `leaves the repository root`,
		filepath.Join(outside, "*.yaml"): `leaves the repository root`,
		"config/link.yaml":               `config/link.yaml is a symbolic link (or lies under one) that leads out of the repository root`,
		"linkdir/*.yaml":                 `linkdir/creds.yaml is a symbolic link (or lies under one) that leads out`,
		"big/*.yaml":                     `big/huge.yaml: file is too large`,
	}
	if hasFIFO {
		cases["pipes/*.yaml"] = `pipes/p.yaml: not a regular file (named pipe)`
	}
	for pattern, want := range cases {
		objs, errs := loader.LoadBytes("appset.yaml", []byte(confinedAppSet(pattern)))
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		out, errs := loader.ExpandGitGenerators(objs, []loader.RepoRoot{r})
		if len(errs) != 1 || !strings.Contains(errs[0].Message, want) || errs[0].Path != "appset.yaml" {
			t.Errorf("%s: errors %v, want one saying %q", pattern, errs, want)
		}
		if s := out[0].Value.String(); strings.Contains(s, "hunter2") {
			t.Errorf("%s: the secret outside the root became a parameter: %s", pattern, s)
		}
	}

	// Inside the root, with the contradiction beside it.
	objs, errs := (&loader.Loader{}).Load([]string{"../../examples/contradiction"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	set, _ := loader.LoadBytes("appset.yaml", []byte(confinedAppSet("config/ok.yaml")))
	out, errs := loader.ExpandGitGenerators(append(objs, set...), []loader.RepoRoot{r})
	if len(errs) != 0 || !strings.Contains(out[len(out)-1].Value.String(), "fine") {
		t.Errorf("inside the root: errors %v, %v", errs, out[len(out)-1].Value)
	}
	ev, err := evaluator.New(context.Background(), evaluator.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	report, err := ev.Evaluate(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if len(report.Findings) == 0 || report.Findings[0].Rule != "shared-branch-contradiction" || !slices.Contains(names(report.Findings[0]), "Stage acme/qa") {
		t.Errorf("findings %v", report.Findings)
	}
}

// names lists "Kind ns/name" of a finding's resources.
func names(f evaluator.Finding) []string {
	var out []string
	for _, r := range f.Resources {
		out = append(out, r.Kind+" "+r.Namespace+"/"+r.Name)
	}
	return out
}

// A git generator's own template (git.template) and its selector survive the
// expansion, and the model names the template's place in the file and the
// elements' origin; the same for a matrix whose git child reads its sibling's
// parameters (matrix.template; the children's templates are ignored, as Argo
// CD ignores them).
func TestExpandedGeneratorKeepsTemplateAndSelector(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"envs/dev", "envs/qa", "env/dev/web", "env/qa/web"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"env/dev/web/release.yaml", "env/qa/web/release.yaml"} {
		os.WriteFile(filepath.Join(root, f), []byte("branch: main\n"), 0o644)
	}
	git := strings.Replace(gitAppSet, `      - path: envs/skip
        exclude: true
`, `      - path: envs/skip
        exclude: true
      template:
        spec:
          source: {repoURL: https://github.com/acme/deploy.git, targetRevision: env/own, path: '{{.path.path}}'}
    selector:
      matchLabels: {path.basename: qa}
`, 1)
	matrix := strings.Replace(matrixEstate, `          - path: 'env/{{.name}}/*/release.yaml'
`, `          - path: 'env/{{.name}}/*/release.yaml'
          template:
            spec:
              source: {targetRevision: env/child}
      template:
        spec:
          source: {repoURL: https://github.com/acme/deploy.git, targetRevision: env/matrix, path: '{{.path.path}}'}
`, 1)
	for name, tc := range map[string]struct {
		src  string
		want []string
	}{
		"git":    {git, []string{"argocd/web-qa@env/own /spec/generators/0/git/template [git]"}},
		"matrix": {matrix, []string{"argocd/dev-web@env/matrix /spec/generators/0/matrix/template [git]", "argocd/qa-web@env/matrix /spec/generators/0/matrix/template [git]"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, m := expandedModel(t, tc.src, []loader.RepoRoot{{Dir: root}})
			var got []string
			for _, a := range m.Applications {
				if a.Generator == nil || a.Generator.AppSet.Name == "files" {
					continue
				}
				var from []string
				for _, e := range a.Generator.Elements {
					from = append(from, e.Generator)
				}
				from = slices.Compact(from)
				got = append(got, fmt.Sprintf("%s@%v %s %v", a.Key, a.Sources[0].TargetRevision, a.Generator.TemplatePath, from))
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("generated\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// expandedModel loads src as appsets.yaml, expands its git generators from
// roots and returns the loaded objects and the model of the expanded ones.
func expandedModel(t *testing.T, src string, roots []loader.RepoRoot) ([]evaluator.Object, *evaluator.Model) {
	t.Helper()
	objs, errs := loader.LoadBytes("appsets.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	expanded, errs := loader.ExpandGitGenerators(objs, roots)
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
	return objs, m
}

// N ApplicationSets over a checkout of D directories, each expanded on its
// own, made N x D parameter sets from N short generators (250 of them, 132
// KB of YAML, over 2,000 directories: 500,000 sets, 1.3 GB). The git
// generators of a run are now expanded within one budget: 30 ApplicationSets
// over 1,000 directories (30,000 sets) are expanded into at most 20,000, and
// the rest are left as written and marked.
func TestGitExpansionIsBounded(t *testing.T) {
	root := t.TempDir()
	for i := range 1000 {
		if err := os.MkdirAll(filepath.Join(root, "envs", fmt.Sprintf("e%04d", i)), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var src strings.Builder
	for i := range 30 {
		fmt.Fprintf(&src, `---
apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: set-%d, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - git: {repoURL: 'https://github.com/acme/deploy.git', revision: HEAD, directories: [{path: 'envs/*'}]}
  template:
    metadata: {name: 'app-%d-{{.path.basename}}'}
    spec:
      source: {repoURL: 'https://github.com/acme/deploy.git', targetRevision: main, path: '{{.path.path}}'}
`, i, i)
	}
	objs, errs := loader.LoadBytes("appsets.yaml", []byte(src.String()))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	out, errs := loader.ExpandGitGenerators(objs, []loader.RepoRoot{{Dir: root}})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	sets, marked := 0, 0
	for _, o := range out {
		doc, err := ast.JSON(o.Value)
		if err != nil {
			t.Fatal(err)
		}
		g := doc.(map[string]any)["spec"].(map[string]any)["generators"].([]any)[0].(map[string]any)
		if l, ok := g["list"].(map[string]any); ok {
			sets += len(l["elements"].([]any))
		}
		if g["x-flipflop-not-expanded"] != nil {
			marked++
		}
	}
	t.Logf("%d parameter sets built, %d ApplicationSets left as written", sets, marked)
	if sets > 20000 {
		t.Errorf("the git generators were expanded into %d parameter sets, more than 20,000", sets)
	}
	if sets+1000*marked != 30000 {
		t.Errorf("%d sets built and %d ApplicationSets marked: each of the 30 should be one or the other", sets, marked)
	}
}
