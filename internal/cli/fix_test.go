package cli

import (
	"strings"
	"testing"
)

func TestFixExitCodes(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"list", []string{"fix", "../../examples/contradiction"}, ExitOK},
		{"diff", []string{"fix", "--way", "stage-branches", "../../examples/contradiction"}, ExitOK},
		{"yaml", []string{"fix", "--way", "no-desired-revision", "-o", "yaml", "../../examples/contradiction"}, ExitOK},
		{"nothing to fix", []string{"fix", "../../examples/fix-stage-branches"}, ExitFindings},
		{"way applies to nothing", []string{"fix", "--way", "update-target-revision", "../../policies/rules/unreachable_desired_revision/samples/fires/literal-branch"}, ExitFindings},
		{"no paths", []string{"fix"}, ExitIncomplete},
		{"stdin", []string{"fix", "-"}, ExitIncomplete},
		{"cluster", []string{"fix", "--cluster"}, ExitIncomplete},
		{"unknown way", []string{"fix", "--way", "pray", "../../examples/contradiction"}, ExitIncomplete},
		{"unknown output", []string{"fix", "-o", "json", "../../examples/contradiction"}, ExitIncomplete},
		{"missing path", []string{"fix", "does-not-exist"}, ExitIncomplete},
		{"help", []string{"fix", "--help"}, ExitOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := run(t, "", tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.code, stderr)
			}
		})
	}
}

func TestFixListsWaysWithCommands(t *testing.T) {
	stdout, _, code := run(t, "", "fix", "--default-branch", "main", "../../examples/contradiction")
	if code != ExitOK {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{
		"shared-branch-contradiction",
		"stage-branches          recommended",
		"$ flipflop fix --way stage-branches --default-branch=main ../../examples/contradiction",
		"$ flipflop fix --way no-desired-revision --default-branch=main ../../examples/contradiction",
		"$ flipflop fix --way update-target-revision --default-branch=main ../../examples/contradiction",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the list lacks %q:\n%s", want, stdout)
		}
	}
	stdout, _, _ = run(t, "", "fix", "../../policies/rules/shared_application/samples/fires/two-stages-one-app")
	if !strings.Contains(stdout, "not offered: update-target-revision: the Stages would move one Application back and forth") {
		t.Errorf("the list does not say why update-target-revision is not offered:\n%s", stdout)
	}
}

func TestFixDiffIsAPatch(t *testing.T) {
	stdout, stderr, code := run(t, "", "fix", "--way", "stage-branches", "../../examples/contradiction")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	// Paths are relative to the work tree's root, as git apply reads them.
	for _, want := range []string{
		"diff --git a/examples/contradiction/argocd.yaml b/examples/contradiction/argocd.yaml\n--- a/examples/contradiction/argocd.yaml\n+++ b/examples/contradiction/argocd.yaml\n",
		"+    targetRevision: env/dev\n",
		"+          - branch: env/qa\n+            create: true\n+            path: ./out\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the diff lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "note:") || !strings.Contains(stderr, "note:") {
		t.Errorf("notes belong on stderr only; stdout:\n%s\nstderr:\n%s", stdout, stderr)
	}
}

func TestFixYAMLAndWarnings(t *testing.T) {
	stdout, _, code := run(t, "", "fix", "--way", "stage-branches", "-o", "yaml", "../../examples/contradiction")
	if code != ExitOK || !strings.Contains(stdout, "# examples/contradiction/kargo.yaml (document at line 18)\n") || !strings.Contains(stdout, "      - uses: kustomize-build\n") {
		t.Errorf("exit %d, yaml:\n%s", code, stdout)
	}
	_, stderr, code := run(t, "", "fix", "--way", "update-target-revision", "../../policies/rules/shared_branch_contradiction/samples/fires/list-applicationset")
	if code != ExitOK || !strings.Contains(stderr, "WARNING: ApplicationSet argocd/envs") || !strings.Contains(stderr, "ignoreApplicationDifferences") || !strings.Contains(stderr, "/spec/source/targetRevision") {
		t.Errorf("exit %d, the ApplicationSet warning is missing:\n%s", code, stderr)
	}
}
