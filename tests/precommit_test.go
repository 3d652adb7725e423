package tests

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

type preCommitHook struct {
	ID            string   `json:"id"`
	Name          string   `json:"name"`
	Description   string   `json:"description"`
	Entry         string   `json:"entry"`
	Args          []string `json:"args"`
	Language      string   `json:"language"`
	PassFilenames *bool    `json:"pass_filenames"`
	RequireSerial bool     `json:"require_serial"`
	Files         string   `json:"files"`
}

func preCommitHooks(t *testing.T) []preCommitHook {
	t.Helper()
	b, err := os.ReadFile("../.pre-commit-hooks.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var hooks []preCommitHook
	if err := yaml.UnmarshalStrict(b, &hooks); err != nil {
		t.Fatalf(".pre-commit-hooks.yaml: %v", err)
	}
	if len(hooks) == 0 {
		t.Fatal(".pre-commit-hooks.yaml defines no hook")
	}
	return hooks
}

// gitEstate copies example estates into a new Git repository (what
// pre-commit runs in) and commits them.
func gitEstate(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "estate"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	return dir
}

func repoFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", path))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The hooks are well formed for pre-commit, run on the whole estate (not the
// staged files: a contradiction spans files) when a manifest or an ignore file
// changes, and their command exits as check does: 1 on a contradiction, 0 on a
// clean estate whose Helm chart an ignore file leaves out.
func TestPreCommitHooks(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	bin := tool(t, "FLIPFLOP_BIN")
	hooks := preCommitHooks(t)
	contradiction := gitEstate(t, map[string]string{
		"gitops/argocd.yaml": repoFile(t, "examples/contradiction/argocd.yaml"),
		"gitops/kargo.yaml":  repoFile(t, "examples/contradiction/kargo.yaml"),
	})
	clean := gitEstate(t, map[string]string{
		"gitops/argocd.yaml":          repoFile(t, "examples/fix-stage-branches/argocd.yaml"),
		"gitops/kargo.yaml":           repoFile(t, "examples/fix-stage-branches/kargo.yaml"),
		"charts/web/templates/x.yaml": "metadata:\n  name: {{ .Values.name }}\n",
		".flipflopignore":             "templates/\n",
	})
	for _, h := range hooks {
		t.Run(h.ID, func(t *testing.T) {
			if h.ID == "" || h.Name == "" || h.Entry == "" {
				t.Fatalf("hook lacks id, name or entry: %+v", h)
			}
			if h.Language != "golang" && h.Language != "system" {
				t.Errorf("language %q", h.Language)
			}
			if h.PassFilenames == nil || *h.PassFilenames || !h.RequireSerial {
				t.Errorf("the hook must check the estate as a whole, once: pass_filenames %v, require_serial %v", h.PassFilenames, h.RequireSerial)
			}
			files := regexp.MustCompile(h.Files) // pre-commit's re.search; this pattern means the same in RE2
			for name, want := range map[string]bool{
				"gitops/app.yaml": true, "x.yml": true, "apps/a.json": true, ".flipflopignore": true, "sub/.flipflopignore": true,
				"README.md": false, "main.go": false, "x.yaml.bak": false, "not.flipflopignore.txt": false,
			} {
				if files.MatchString(name) != want {
					t.Errorf("files %q matches %s: %v, want %v", h.Files, name, !want, want)
				}
			}
			fields := strings.Fields(h.Entry)
			if fields[0] != "flipflop" {
				t.Fatalf("entry %q does not run flipflop", h.Entry)
			}
			args := append(fields[1:], h.Args...)
			for dir, want := range map[string]int{contradiction: 1, clean: 0} {
				out, errOut, code := runCmd(t, dir, bin, args...)
				if code != want {
					t.Errorf("%s in %s: exit %d, want %d\n%s%s", h.Entry, filepath.Base(dir), code, want, out, errOut)
				}
			}
		})
	}
}

// With pre-commit installed, the flipflop-system hook runs through pre-commit
// itself (try-repo on this repository) and fails on the contradiction.
func TestPreCommitTryRepo(t *testing.T) {
	pc, err := exec.LookPath("pre-commit")
	if err != nil {
		t.Skip("pre-commit is not installed")
	}
	if out, err := exec.Command("git", "-C", "..", "rev-parse", "HEAD").Output(); err != nil || len(out) == 0 {
		t.Skip("not a Git checkout: pre-commit try-repo needs one")
	}
	bin := tool(t, "FLIPFLOP_BIN")
	pathDir := t.TempDir()
	if err := os.Symlink(bin, filepath.Join(pathDir, "flipflop")); err != nil {
		t.Skip("symbolic links unsupported:", err)
	}
	repo := must(filepath.Abs(".."))
	dir := gitEstate(t, map[string]string{
		"gitops/argocd.yaml": repoFile(t, "examples/contradiction/argocd.yaml"),
		"gitops/kargo.yaml":  repoFile(t, "examples/contradiction/kargo.yaml"),
	})
	cmd := exec.Command(pc, "try-repo", repo, "flipflop-system", "--all-files")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+pathDir+string(os.PathListSeparator)+os.Getenv("PATH"), "PRE_COMMIT_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "shared-branch-contradiction") || !strings.Contains(string(out), "Failed") {
		t.Errorf("pre-commit try-repo: %v\n%s", err, out)
	}
}
