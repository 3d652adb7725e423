package tests

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
)

// corpus is the shared folder of real manifests from public repositories; it is
// read in place, never copied into this repository.
const corpus = "../../shared/corpus/real"

func corpusReport(t *testing.T, paths ...string) *evaluator.Report {
	t.Helper()
	if _, err := os.Stat(corpus); err != nil {
		t.Skipf("corpus %s not present", corpus)
	}
	var full []string
	for _, p := range paths {
		full = append(full, filepath.Join(corpus, p))
	}
	objs, errs := (&loader.Loader{}).Load(full)
	if len(errs) > 0 {
		t.Fatalf("load errors: %v", errs)
	}
	ev, err := evaluator.New(context.Background(), evaluator.Settings{}, evaluator.StrictBuiltinErrors())
	if err != nil {
		t.Fatal(err)
	}
	report, err := ev.Evaluate(context.Background(), objs)
	if err != nil {
		t.Fatal(err)
	}
	return report
}

func errorRules(r *evaluator.Report) []string {
	var out []string
	for _, f := range r.Findings {
		if f.Severity == evaluator.SeverityError {
			out = append(out, f.Rule)
		}
	}
	return out
}

const homelabApps = "homelab/at-023c60d/k8s/talos/infra/argocd/apps.yaml"

// The real broken homelab configuration: an ApplicationSet (git generator) puts
// portfolio on HEAD; Stage prod pins desiredRevision; Stage stage pushes main.
func TestCorpusHomelabBroken(t *testing.T) {
	r := corpusReport(t, homelabApps,
		"homelab/at-61e0d48/k8s/talos/infra/kargo-portfolio/stage-prod.yaml",
		"homelab/at-759454d/k8s/talos/infra/kargo-portfolio/stage-stage.yaml")
	i := slices.IndexFunc(r.Findings, func(f evaluator.Finding) bool { return f.Rule == "foreign-branch-writer" })
	if i < 0 {
		t.Fatalf("no foreign-branch-writer; findings: %+v", r.Findings)
	}
	f := r.Findings[i]
	var got []string
	for _, res := range f.Resources {
		got = append(got, res.Kind+" "+res.Namespace+"/"+res.Name)
	}
	want := []string{"Stage portfolio-cd/prod", "Stage portfolio-cd/stage", "Application argocd/portfolio"}
	if !slices.Equal(got, want) {
		t.Errorf("resources %v, want %v", got, want)
	}
	if f.Resources[2].GeneratedBy != "ApplicationSet argocd/apps" {
		t.Errorf("Application not traced to its ApplicationSet: %+v", f.Resources[2])
	}
}

// The same estate after the user's fix (prod without desiredRevision).
func TestCorpusHomelabFixed(t *testing.T) {
	r := corpusReport(t, homelabApps,
		"homelab/at-8a650c0/k8s/talos/infra/kargo-portfolio/stage-prod.yaml",
		"homelab/at-759454d/k8s/talos/infra/kargo-portfolio/stage-stage.yaml")
	if errs := errorRules(r); len(errs) > 0 {
		t.Errorf("errors on the fixed state: %v", errs)
	}
}

// Maintainers' and workshop configurations give no error finding.
func TestCorpusCleanEstates(t *testing.T) {
	for name, paths := range map[string][]string{
		"kargo-advanced":            {"kargo-advanced"},
		"kargo-quickstart-template": {"kargo-quickstart-template"},
		"kargo-examples monorepo":   {"kargo-examples/02-git-driven/03-kustomize-driven/01-image-only/02-monorepo"},
		// at-916e03a is an older commit of the same repository: its Stages are
		// the current ones as they were (duplicate-object when read together).
		"kargo-examples all":        {"kargo-examples/01-argocd-driven", "kargo-examples/02-git-driven"},
		"kargo-examples at-916e03a": {"kargo-examples/at-916e03a"},
		"workshop step 2":           {"kargo-workshop-kcd-nyc-2026/argocd", "kargo-workshop-kcd-nyc-2026/steps/2-building-a-pipeline"},
		"workshop step 3":           {"kargo-workshop-kcd-nyc-2026/argocd", "kargo-workshop-kcd-nyc-2026/steps/3-multi-region-prod"},
		"kargo e2e":                 {"kargo"},
		"kargo-simple":              {"kargo-simple/kargo"},
	} {
		t.Run(name, func(t *testing.T) {
			r := corpusReport(t, paths...)
			if r.Summary.Objects == 0 {
				t.Fatal("no objects read")
			}
			if errs := errorRules(r); len(errs) > 0 {
				t.Errorf("error findings: %v", errs)
			}
		})
	}
}

// With a checkout of the repository the git generator reads, the homelab
// ApplicationSet is expanded exactly and the finding names the real Application.
func TestCorpusHomelabWithRepoRoot(t *testing.T) {
	if _, err := os.Stat(corpus); err != nil {
		t.Skip("corpus not present")
	}
	root := t.TempDir()
	for _, d := range []string{"portfolio", "portfolio-stage", "grafana"} {
		os.MkdirAll(filepath.Join(root, "k8s/talos/apps", d), 0o755)
	}
	objs, errs := (&loader.Loader{}).Load([]string{
		filepath.Join(corpus, homelabApps),
		filepath.Join(corpus, "homelab/at-61e0d48/k8s/talos/infra/kargo-portfolio/stage-prod.yaml"),
		filepath.Join(corpus, "homelab/at-759454d/k8s/talos/infra/kargo-portfolio/stage-stage.yaml"),
	})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	objs, errs = loader.ExpandGitGenerators(objs, []loader.RepoRoot{{Dir: root}})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	ev, _ := evaluator.New(context.Background(), evaluator.Settings{})
	r, err := ev.Evaluate(context.Background(), objs)
	if err != nil {
		t.Fatal(err)
	}
	rules := map[string]bool{}
	for _, f := range r.Findings {
		rules[f.Rule] = true
	}
	if !rules["foreign-branch-writer"] || rules["unknown-application"] {
		t.Errorf("findings %+v", r.Findings)
	}
}
