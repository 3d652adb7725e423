package cli

import (
	"html"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/internal/race"
)

// report follows check's exit codes, writes to standard output or --out, and
// draws every picture inline.
func TestReportCommand(t *testing.T) {
	race.Sequential(t)
	stdout, stderr, code := run(t, "", "report", "../../examples/contradiction")
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d: %s", code, ExitFindings, stderr)
	}
	for _, want := range []string{"<!DOCTYPE html>", `content="default-src 'none'; style-src 'unsafe-inline'; img-src data:"`, "<svg", "Promotion timeline", `<pre class="diff">`} {
		if !strings.Contains(html.UnescapeString(stdout), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(stdout, "<svg"); n != 3 { // the estate, the error, the warning
		t.Errorf("%d pictures, want 3", n)
	}

	out := filepath.Join(t.TempDir(), "report.html")
	stdout, _, code = run(t, "", "report", "--out", out, "--fail-on", "never", "../../examples/contradiction")
	if code != ExitOK || stdout != "" {
		t.Errorf("--out with --fail-on never: exit %d, stdout %q", code, stdout)
	}
	if b, err := os.ReadFile(out); err != nil || !strings.Contains(string(b), "<svg") {
		t.Errorf("--out wrote no page: %v", err)
	}
	if _, _, code := run(t, "", "report", "../../examples/fix-stage-branches"); code != ExitOK {
		t.Errorf("clean estate: exit %d", code)
	}
	for name, args := range map[string][]string{
		"missing path":     {"report", "does-not-exist"},
		"unwritable --out": {"report", "--out", filepath.Join(t.TempDir(), "no", "such", "dir.html"), "../../examples/contradiction"},
		"unknown fail-on":  {"report", "--fail-on", "sometimes", "../../examples/contradiction"},
		"no path":          {"report"},
		"unknown flag":     {"report", "--nope"},
	} {
		stdout, stderr, code := run(t, "", args...)
		if code != ExitIncomplete {
			t.Errorf("%s: exit %d, want %d: %s", name, code, ExitIncomplete, stderr)
		}
		if name == "missing path" && !strings.Contains(stdout, "Input errors") {
			t.Errorf("%s: the page does not list the input error", name)
		}
	}
}

// check -o markdown and --summary: the pictures, and fix commands that repeat
// the input flags fix takes (and no other).
func TestCheckMarkdownAndSummary(t *testing.T) {
	race.Sequential(t)
	stdout, _, code := run(t, "", "check", "-o", "markdown", "--fail-on", "error", "--default-branch", "main", "../../examples/contradiction")
	if code != ExitFindings {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"```mermaid\nflowchart LR\n", "flipflop fix --way stage-branches --default-branch=main -- ../../examples/contradiction\n", "| 🔴 error |"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("-o markdown lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, "--fail-on") || strings.Contains(stdout, "--output") {
		t.Errorf("a fix command repeats a flag fix does not take:\n%s", stdout)
	}

	summary := filepath.Join(t.TempDir(), "summary.md")
	if err := os.WriteFile(summary, []byte("# before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		stdout, _, code = run(t, "", "check", "--summary", summary, "--color", "never", "../../examples/contradiction")
		if code != ExitFindings || !strings.HasPrefix(stdout, "ERROR  shared-branch-contradiction") {
			t.Fatalf("check --summary: exit %d, stdout:\n%s", code, stdout)
		}
	}
	b, _ := os.ReadFile(summary)
	if !strings.HasPrefix(string(b), "# before\n## flipflop: 1 error") || strings.Count(string(b), "```mermaid") != 2 {
		t.Errorf("--summary did not append the Markdown twice:\n%s", b)
	}
	if _, _, code := run(t, "", "check", "--summary", filepath.Join(t.TempDir(), "no", "dir"), "../../examples/contradiction"); code != ExitIncomplete {
		t.Errorf("unwritable --summary: exit %d", code)
	}

	// Standard input: nothing for fix to patch, and the summary says so.
	stdin := readExample(t, "kargo.yaml") + "\n---\n" + readExample(t, "argocd.yaml")
	stdout, _, _ = run(t, stdin, "check", "-o", "markdown", "-")
	if strings.Contains(stdout, "flipflop fix --way") || !strings.Contains(stdout, "not to standard input") {
		t.Errorf("-o markdown on stdin:\n%s", stdout)
	}
}
