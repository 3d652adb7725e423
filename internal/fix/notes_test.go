package fix

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An ApplicationSet that also generates an Application no Stage of the
// finding pins is not patched: the Stage side is, and a note says what is left.
func TestStageBranchesPartialApplicationSet(t *testing.T) {
	plan, _ := planFor(t, repoRoot, "testdata/appset-partial")
	if len(plan.Proposals) != 1 {
		t.Fatalf("%d proposals", len(plan.Proposals))
	}
	o := plan.Proposals[0].Option(StageBranches)
	if !o.Applicable || !o.Partial {
		t.Fatalf("applicable %v partial %v (%s)", o.Applicable, o.Partial, o.Reason)
	}
	note := strings.Join(o.Notes, "\n")
	for _, want := range []string{"NOT PATCHED: ApplicationSet argocd/envs", "also generates argocd/shop-prod", "argocd/shop-dev gets targetRevision: env/dev and path: \".\""} {
		if !strings.Contains(note, want) {
			t.Errorf("notes lack %q:\n%s", want, note)
		}
	}
	patch, err := plan.Patch(StageBranches)
	if err != nil {
		t.Fatal(err)
	}
	d := patch.Diff()
	if strings.Contains(d, "targetRevision") || !strings.Contains(d, "+          checkout: [{branch: main, path: ./repo}, {branch: env/qa, create: true, path: ./out}]") {
		t.Errorf("the patch should change the Stages only:\n%s", d)
	}
}

// updateTargetRevision warns when a parent Application (app of apps) syncs
// the pinned Application's file.
func TestUpdateTargetRevisionParentAppWarning(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(filepath.Join(repoRoot, "examples/contradiction/kargo.yaml"))
	must(err)
	must(os.WriteFile(filepath.Join(dir, "kargo.yaml"), data, 0o644))
	data, err = os.ReadFile(filepath.Join(repoRoot, "examples/contradiction/argocd.yaml"))
	must(err)
	must(os.MkdirAll(filepath.Join(dir, "gitops", "apps"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "gitops", "apps", "envs.yaml"), data, 0o644))
	must(os.WriteFile(filepath.Join(dir, "root.yaml"), []byte(`apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: root, namespace: argocd}
spec:
  source: {repoURL: https://github.com/acme/gitops.git, targetRevision: main, path: gitops/apps}
  destination: {server: https://kubernetes.default.svc, namespace: argocd}
`), 0o644))
	plan, _ := planFor(t, dir, dir)
	o := plan.Proposals[0].Option(UpdateTargetRevision)
	note := strings.Join(o.Notes, "\n")
	if !o.Applicable || !strings.Contains(note, "parent Application argocd/root") || !strings.Contains(note, "RespectIgnoreDifferences=true") {
		t.Errorf("no parent-app warning:\n%s", note)
	}
}
