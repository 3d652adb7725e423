package cli

import (
	"os"
	"os/exec"
	"path/filepath"
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
		{"nothing to fix", []string{"fix", "../../examples/fix-stage-branches"}, ExitOK},
		{"nothing to fix, errors remain", []string{"fix", "../../policies/rules/duplicate_object/samples/fires/same-file-no-namespace"}, ExitFindings},
		{"nothing to fix, errors remain, fail-on never", []string{"fix", "--fail-on", "never", "../../policies/rules/duplicate_object/samples/fires/same-file-no-namespace"}, ExitOK},
		{"unknown fail-on", []string{"fix", "--fail-on", "sometimes", "../../examples/contradiction"}, ExitIncomplete},
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
		"$ flipflop fix --way stage-branches --default-branch=main -- ../../examples/contradiction",
		"$ flipflop fix --way no-desired-revision --default-branch=main -- ../../examples/contradiction",
		"$ flipflop fix --way update-target-revision --default-branch=main -- ../../examples/contradiction",
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
	// An ApplicationSet that writes its template back would undo the rewrite
	// at its next reconcile: the way is refused, with what would make it last.
	_, stderr, code := run(t, "", "fix", "--way", "update-target-revision", "../../policies/rules/shared_branch_contradiction/samples/fires/list-applicationset")
	if code != ExitFindings || !strings.Contains(stderr, "updateTargetRevision would not last: ApplicationSet argocd/envs") || !strings.Contains(stderr, "ignoreApplicationDifferences") || !strings.Contains(stderr, "/spec/source/targetRevision") || !strings.Contains(stderr, "nothing to fix with --way update-target-revision") {
		t.Errorf("exit %d, the ApplicationSet refusal is missing:\n%s", code, stderr)
	}
}

// gitRepo makes a Git work tree holding the contradiction example under
// gitops/apps and gitops/kargo, committed.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"gitops/apps/argocd.yaml": readExample(t, "argocd.yaml"),
		"gitops/kargo/kargo.yaml": readExample(t, "kargo.yaml"),
	})
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "estate"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

// From a subdirectory, the diff says where git apply must run (run there it
// would skip the files outside it, as git does, and exit 0), and --apply writes
// every file itself, then checks again: the estate is clean afterwards.
func TestFixApplyFromSubdirectory(t *testing.T) {
	dir := gitRepo(t)
	chdir(t, filepath.Join(dir, "gitops", "kargo"))
	diff, stderr, code := run(t, "", "fix", "--way", "stage-branches", "..")
	if code != ExitOK || !strings.Contains(stderr, `git -C "$(git rev-parse --show-toplevel)" apply`) || !strings.Contains(stderr, "../apps/argocd.yaml lies outside this directory") {
		t.Fatalf("exit %d; the diff does not say where to apply it:\n%s", code, stderr)
	}
	// The diff applies at the top of the work tree, with the command the note gives.
	check := exec.Command("git", "-C", dir, "apply", "--check", "-")
	check.Stdin = strings.NewReader(diff)
	if out, err := check.CombinedOutput(); err != nil {
		t.Fatalf("git -C top apply --check: %v\n%s", err, out)
	}

	stdout, stderr, code := run(t, "", "fix", "--way", "stage-branches", "--apply", "..")
	if code != ExitOK {
		t.Fatalf("--apply: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if !strings.HasPrefix(stdout, diff) || !strings.Contains(stdout, "flipflop check after the change:\n\n5 objects checked (1 more skipped: no rule reads their kind): 0 errors, 0 warnings, 0 info\n") {
		t.Errorf("--apply does not print the diff and the clean check after it:\n%s", stdout)
	}
	if !strings.Contains(stderr, "wrote 2 files: ../apps/argocd.yaml, ../kargo/kargo.yaml") {
		t.Errorf("--apply does not say what it wrote:\n%s", stderr)
	}
	// What --apply wrote is what git apply makes of the diff.
	status := exec.Command("git", "-C", dir, "diff", "--stat")
	out, _ := status.CombinedOutput()
	if !strings.Contains(string(out), "2 files changed") {
		t.Errorf("git sees %s", out)
	}
	undo := exec.Command("git", "-C", dir, "checkout", "-q", ".")
	if b, err := undo.CombinedOutput(); err != nil {
		t.Fatal(err, string(b))
	}
	apply := exec.Command("git", "-C", dir, "apply", "-")
	apply.Stdin = strings.NewReader(diff)
	if b, err := apply.CombinedOutput(); err != nil {
		t.Fatal(err, string(b))
	}
	again, _, code := run(t, "", "fix", "..")
	if code != ExitOK || !strings.HasPrefix(again, "nothing to fix: no finding of ") {
		t.Errorf("after git apply at the top, fix still finds something (exit %d):\n%s", code, again)
	}
}

// --apply writes only files under the paths given: a file read through a
// symbolic link to elsewhere is refused, and nothing is written.
func TestFixApplyRefusesOutside(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	writeFiles(t, dir, map[string]string{"argocd.yaml": readExample(t, "argocd.yaml")})
	writeFiles(t, outside, map[string]string{"kargo.yaml": readExample(t, "kargo.yaml")})
	if err := os.Symlink(filepath.Join(outside, "kargo.yaml"), filepath.Join(dir, "kargo.yaml")); err != nil {
		t.Skip("symbolic links unsupported:", err)
	}
	_, stderr, code := run(t, "", "fix", "--way", "no-desired-revision", "--apply", "--follow-symlinks", dir)
	if code != ExitIncomplete || !strings.Contains(stderr, "outside the paths given: nothing was written") {
		t.Errorf("exit %d:\n%s", code, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "kargo.yaml")); string(b) != readExample(t, "kargo.yaml") {
		t.Error("the file outside was written")
	}
	for _, args := range [][]string{
		{"fix", "--apply", dir},
		{"fix", "--way", "no-desired-revision", "--apply", "-o", "yaml", dir},
	} {
		if _, _, code := run(t, "", args...); code != ExitIncomplete {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
}
