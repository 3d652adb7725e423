package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The real binary on the bundled examples: the contradiction exits 1 and names
// both Stages and both Applications; every fix exits 0.
func TestBinaryOnExamples(t *testing.T) {
	bin := tool(t, "FLIPFLOP_BIN")
	stdout, _, code := runCmd(t, "..", bin, "check", "examples/contradiction")
	if code != 1 {
		t.Errorf("contradiction: exit %d, want 1", code)
	}
	for _, want := range []string{"acme/dev", "acme/qa", "argocd/dev", "argocd/qa", "shared-branch-contradiction"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	fixes, _ := filepath.Glob("../examples/fix-*")
	for _, dir := range fixes {
		rel := strings.TrimPrefix(dir, "../")
		if out, _, code := runCmd(t, "..", bin, "check", rel); code != 0 {
			t.Errorf("%s: exit %d, want 0:\n%s", rel, code, out)
		}
	}
}

func TestBinaryBrokenInput(t *testing.T) {
	bin := tool(t, "FLIPFLOP_BIN")
	dir := t.TempDir()
	for _, name := range []string{"argocd.yaml", "kargo.yaml"} {
		b, _ := os.ReadFile(filepath.Join("../examples/contradiction", name))
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	os.WriteFile(filepath.Join(dir, "zz-broken.yaml"), []byte("kind: Stage\nmetadata:\n  name: [oops\n"), 0o644)
	stdout, _, code := runCmd(t, ".", bin, "check", "-o", "json", dir)
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	var report struct {
		Findings []struct {
			Rule string `json:"rule"`
		} `json:"findings"`
		Errors []struct {
			File string `json:"file"`
			Line int    `json:"line"`
		} `json:"errors"`
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatal(err)
	}
	if len(report.Findings) == 0 || report.Findings[0].Rule != "shared-branch-contradiction" || len(report.Errors) != 1 || !strings.HasSuffix(report.Errors[0].File, "zz-broken.yaml") || report.Errors[0].Line == 0 {
		t.Errorf("got %+v", report)
	}
}
