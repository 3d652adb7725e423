package cli

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/flipflop-dev/flipflop/internal/fifotest"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// A checkout may hold a symbolic link where flipflop is told to write (the
// action's flipflop.sarif, a summary, a report, an export): every file
// flipflop writes is refused, exit 2 with the path named, rather than
// written through the link, and the link's target is left as it was.
func TestWritesRefuseSymbolicLinks(t *testing.T) {
	race.Sequential(t)
	example, err := filepath.Abs("../../examples/contradiction")
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim.sh")
	const original = "#!/bin/sh\necho hello\n"
	if err := os.WriteFile(victim, []byte(original), 0o755); err != nil {
		t.Fatal(err)
	}
	checkout := t.TempDir()
	chdir(t, checkout)
	for _, link := range []string{"summary.md", "report.html", "flipflop.sarif", "bundle.tar.gz"} {
		if err := os.Symlink(victim, link); err != nil {
			t.Skip("symbolic links unsupported:", err)
		}
	}
	if err := os.Symlink(outside, "policy"); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("exported", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, "exported/rules"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		path string
	}{
		{"check --summary", []string{"check", "--summary", "summary.md", example}, "summary.md"},
		{"check --summary in a linked directory", []string{"check", "--summary", "policy/victim.sh", example}, "policy/victim.sh"},
		{"check --out", []string{"check", "-o", "sarif", "--out", "flipflop.sarif", example}, "flipflop.sarif"},
		{"report --out", []string{"report", "--out", "report.html", example}, "report.html"},
		{"export bundle", []string{"export", "bundle", "bundle.tar.gz"}, "bundle.tar.gz"},
		{"export into a linked directory", []string{"export", "conftest", "policy"}, "policy"},
		{"export through a linked subdirectory", []string{"export", "conftest", "exported"}, "exported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stdout, stderr, code := run(t, "", tc.args...)
			if code != ExitIncomplete || !strings.Contains(stderr, "refusing to write "+tc.path) || !strings.Contains(stderr, "symbolic link") {
				t.Errorf("exit %d, want 2 and a refusal naming %s:\n%s", code, tc.path, stderr)
			}
			if strings.Contains(stderr, "*safefile") || strings.Contains(stderr, "RefusedError") {
				t.Errorf("the message names a Go type:\n%s", stderr)
			}
			_ = stdout
			if b, _ := os.ReadFile(victim); string(b) != original {
				t.Fatalf("the link's target was written:\n%.200s", b)
			}
			if entries, _ := os.ReadDir(outside); len(entries) != 1 {
				t.Fatalf("files were created through the link: %v", entries)
			}
			if entries, _ := os.ReadDir("exported"); len(entries) != 1 {
				t.Fatalf("an export that was refused wrote files: %v", entries)
			}
		})
	}
}

// --summary FIFO: refused at once (a FIFO would block the open forever, and
// a device is no summary), exit 2.
func TestSummaryRefusesNonRegularFiles(t *testing.T) {
	race.Sequential(t)
	if runtime.GOOS == "windows" {
		t.Skip("no named pipes in the file system")
	}
	fifo := filepath.Join(t.TempDir(), "step_summary")
	fifotest.Make(t, fifo)
	type result struct {
		stderr string
		code   int
	}
	for _, target := range []string{fifo, os.DevNull} {
		done := make(chan result, 1)
		go func() {
			_, stderr, code := run(t, "", "check", "--summary", target, "../../examples/contradiction")
			done <- result{stderr, code}
		}()
		select {
		case r := <-done:
			if r.code != ExitIncomplete || !strings.Contains(r.stderr, "--summary: refusing to write "+target) || !strings.Contains(r.stderr, "not a regular file") {
				t.Errorf("--summary %s: exit %d:\n%s", target, r.code, r.stderr)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("--summary %s blocked", target)
		}
	}
}

// fix --apply writes no file through a symbolic link, even to a file inside
// the paths given: it names the link, and nothing is written.
func TestFixApplyRefusesLinks(t *testing.T) {
	race.Sequential(t)
	dir := t.TempDir()
	kargo, argocd := readExample(t, "kargo.yaml"), readExample(t, "argocd.yaml")
	writeFiles(t, dir, map[string]string{"argocd.yaml": argocd, "real/kargo.yaml": kargo})
	if err := os.Symlink(filepath.Join("real", "kargo.yaml"), filepath.Join(dir, "kargo.yaml")); err != nil {
		t.Skip("symbolic links unsupported:", err)
	}
	if err := os.Symlink("real", filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	chdir(t, dir)
	for _, path := range []string{"kargo.yaml", "linked/kargo.yaml"} {
		_, stderr, code := run(t, "", "fix", "--way", "no-desired-revision", "--apply", "argocd.yaml", path)
		if code != ExitIncomplete || !strings.Contains(stderr, "refusing to write "+path) || !strings.Contains(stderr, "symbolic link") {
			t.Errorf("fix --apply %s: exit %d:\n%s", path, code, stderr)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "real", "kargo.yaml")); string(b) != kargo {
			t.Fatalf("fix --apply wrote through the link %s", path)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, "argocd.yaml")); string(b) != argocd {
			t.Fatalf("fix --apply wrote argocd.yaml although it refused %s", path)
		}
	}
}
