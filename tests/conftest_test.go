package tests

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// conftestVerdicts runs the real conftest with flipflop's policies on dir.
func conftestVerdicts(t *testing.T, bin string, policyArgs []string, dir string) []string {
	t.Helper()
	args := append([]string{"test", "--combine", "--namespace", "flipflop", "--no-fail", "-o", "json"}, policyArgs...)
	stdout, stderr, code := runCmd(t, "..", bin, append(args, dir)...)
	if code != 0 {
		t.Fatalf("conftest %s: exit %d: %s", dir, code, stderr)
	}
	var results []struct {
		Failures []struct {
			Metadata struct {
				Rule      string     `json:"rule"`
				Resources []resource `json:"resources"`
			} `json:"metadata"`
		} `json:"failures"`
		Warnings []struct {
			Metadata struct {
				Rule      string     `json:"rule"`
				Resources []resource `json:"resources"`
			} `json:"metadata"`
		} `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(stdout), &results); err != nil {
		t.Fatalf("conftest JSON: %v\n%s", err, stdout)
	}
	var vs []verdict
	for _, r := range results {
		for _, f := range r.Failures {
			vs = append(vs, verdictOf(f.Metadata.Rule, f.Metadata.Resources))
		}
		for _, f := range r.Warnings {
			vs = append(vs, verdictOf(f.Metadata.Rule, f.Metadata.Resources))
		}
	}
	return sortVerdicts(vs)
}

// flipflopOnly reports a verdict of a rule that reads what only flipflop's own
// loader knows (a repeated key: conftest parses YAML itself, keeping the last
// value as flipflop does, but cannot say a key was repeated).
func flipflopOnly(v string) bool { return strings.HasPrefix(v, "duplicate-key ") }

// For every example and sample estate, the real conftest running the generated
// policy folder (bundles/conftest) reports the same (rule, resources) set as
// flipflop check, and so does opa eval on the generated OPA bundle.
func TestConftestAgreesWithFlipflop(t *testing.T) {
	bin := tool(t, "FLIPFLOP_BIN")
	conftest := tool(t, "CONFTEST_BIN")
	opa := tool(t, "OPA_BIN")
	policy := []string{"-p", "bundles/conftest"}
	for _, dir := range estates(t) {
		t.Run(dir, func(t *testing.T) {
			want := slices.DeleteFunc(flipflopVerdicts(t, bin, dir), flipflopOnly)
			got := conftestVerdicts(t, conftest, policy, dir)
			if !slices.Equal(got, want) {
				t.Errorf("conftest %v\nflipflop %v", got, want)
			}
			if b := bundleVerdicts(t, opa, conftest, dir); !slices.Equal(b, want) {
				t.Errorf("opa eval -b %v\nflipflop %v", b, want)
			}
		})
	}
}

// bundleVerdicts evaluates the generated OPA bundle with opa eval on the
// combined input conftest builds for dir.
func bundleVerdicts(t *testing.T, opa, conftest, dir string) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", dir, "*.yaml"))
	var rel []string
	for _, f := range files {
		rel = append(rel, strings.TrimPrefix(f, "../"))
	}
	input, stderr, code := runCmd(t, "..", conftest, append([]string{"parse", "--combine"}, rel...)...)
	if code != 0 {
		t.Fatalf("conftest parse: %s", stderr)
	}
	in := filepath.Join(t.TempDir(), "input.json")
	if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := runCmd(t, "..", opa, "eval", "-b", "bundles/flipflop.tar.gz", "-i", in, "--format", "raw", "data.flipflop.findings")
	if code != 0 {
		t.Fatalf("opa eval: %s", stderr)
	}
	var findings []struct {
		Rule      string     `json:"rule"`
		Resources []resource `json:"resources"`
		Waived    any        `json:"waived"`
	}
	if err := json.Unmarshal([]byte(out), &findings); err != nil {
		t.Fatalf("opa eval output: %v\n%s", err, out)
	}
	var vs []verdict
	for _, f := range findings {
		if f.Waived == nil {
			vs = append(vs, verdictOf(f.Rule, f.Resources))
		}
	}
	return sortVerdicts(vs)
}
