package fix

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/internal/race"
)

func TestGitQuote(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"a/examples/kargo.yaml", "a/examples/kargo.yaml"},
		{"a/sp ace/x.yaml", "a/sp ace/x.yaml"},
		{"a/evil\ndir/x.yaml", `"a/evil\ndir/x.yaml"`},
		{"a/q\"t\\b/x", `"a/q\"t\\b/x"`},
		{"a/tab\there\x1b", `"a/tab\there\033"`},
		{"a/ünï", `"a/\303\274n\303\257"`},
	} {
		if got := gitQuote(c.in); got != c.want {
			t.Errorf("gitQuote(%q) = %s, want %s", c.in, got, c.want)
		}
	}
}

// A directory whose name holds a line break (and one with a header of its own
// in it) beside examples/contradiction: the diff quotes the paths as git does,
// so git apply and patch -p1 change exactly the files the plan changes and
// nothing else (the old unquoted headers let such a name point patch at
// another file).
func TestHostilePathsInDiffHeaders(t *testing.T) {
	race.Sequential(t)
	for _, tool := range []string{"git", "patch"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	for _, dirName := range []string{"evil\ndir", "x\n+++ b/victim.yaml\n", "sp ace", `q"uo\te`, "ünï\u202e"} {
		for _, tool := range []string{"git", "patch"} {
			t.Run(tool+"/"+dirName, func(t *testing.T) {
				dst := copyTree(t, filepath.Join(repoRoot, "examples/contradiction"), "")
				sub := filepath.Join(dst, dirName)
				if err := os.MkdirAll(sub, 0o755); err != nil {
					t.Skipf("this file system refuses %q: %v", dirName, err)
				}
				for _, f := range []string{"kargo.yaml", "argocd.yaml"} {
					if err := os.Rename(filepath.Join(dst, f), filepath.Join(sub, f)); err != nil {
						t.Fatal(err)
					}
				}
				victim := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: victim}\n"
				if err := os.WriteFile(filepath.Join(dst, "victim.yaml"), []byte(victim), 0o644); err != nil {
					t.Fatal(err)
				}
				plan, _ := planFor(t, dst, sub)
				patch, err := plan.Patch(StageBranches)
				if err != nil {
					t.Fatal(err)
				}
				diff := patch.Diff()
				headers := 0
				for _, line := range strings.Split(diff, "\n") {
					if strings.HasPrefix(line, "diff --git ") || strings.HasPrefix(line, "--- ") || strings.HasPrefix(line, "+++ ") {
						headers++
					}
				}
				if headers != 3*len(patch.Files) {
					t.Fatalf("%d header lines for %d files:\n%s", headers, len(patch.Files), diff)
				}
				if tool == "git" {
					git(t, dst, diff, "apply", "-")
				} else {
					cmd := exec.Command("patch", "-p1", "--batch", "--silent")
					cmd.Dir, cmd.Stdin = dst, strings.NewReader(diff)
					if out, err := cmd.CombinedOutput(); err != nil {
						t.Fatalf("patch -p1: %v\n%s\n%s", err, out, diff)
					}
				}
				for _, f := range patch.Files {
					got, err := os.ReadFile(filepath.Join(dst, f.Name))
					if err != nil {
						t.Fatal(err)
					}
					if string(got) != string(f.New) {
						t.Errorf("%q after %s differs from the patched text", f.Name, tool)
					}
				}
				if got, _ := os.ReadFile(filepath.Join(dst, "victim.yaml")); string(got) != victim {
					t.Errorf("%s changed victim.yaml:\n%s", tool, got)
				}
				top, _, _ := strings.Cut(dirName, "/")
				entries, _ := os.ReadDir(dst)
				for _, e := range entries {
					if e.Name() != ".git" && e.Name() != "victim.yaml" && e.Name() != top {
						t.Errorf("%s created %q", tool, e.Name())
					}
				}
			})
		}
	}
}
