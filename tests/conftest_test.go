package tests

import (
	"encoding/json"
	"slices"
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

// For every example and sample estate, the real conftest running the same
// policies reports the same (rule, resources) set as flipflop check.
func TestConftestAgreesWithFlipflop(t *testing.T) {
	bin := tool(t, "FLIPFLOP_BIN")
	conftest := tool(t, "CONFTEST_BIN")
	policy := []string{"-p", "policies/lib", "-p", "policies/rules", "-p", "policies/hosts/conftest"}
	for _, dir := range estates(t) {
		t.Run(dir, func(t *testing.T) {
			want := flipflopVerdicts(t, bin, dir)
			got := conftestVerdicts(t, conftest, policy, dir)
			if !slices.Equal(got, want) {
				t.Errorf("conftest %v\nflipflop %v", got, want)
			}
		})
	}
}
