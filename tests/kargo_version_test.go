package tests

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The Kargo version is a setting of every host, and each reads the estate as
// that version does: an authorized-stage annotation that lists two Stages
// authorizes both on Kargo v1.11 (the default, the newest modelled) and
// neither on v1.10, which reads the value as one "project:stage"; a
// desiredCommitFromStep fails every promotion from v1.3 on. flipflop
// (--kargo-version), every conftest of the matrix (flipflop_settings in
// --data) and every gator (the constraint's kargoVersion parameter) agree.
func TestCompatKargoVersionInEveryHost(t *testing.T) {
	t.Parallel()
	bin := tool(t, "FLIPFLOP_BIN")
	list := "policies/rules/missing_authorized_stage/samples/clean/list"
	removed := "policies/rules/unsupported_field/samples/fires/desired-commit-from-step"
	data := filepath.Join(t.TempDir(), "settings.yaml")
	if err := os.WriteFile(data, []byte("flipflop_settings:\n  kargo_version: v1.10.9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rules := func(vs []string) string {
		var rs []string
		for _, v := range vs {
			r, _, _ := strings.Cut(v, " ")
			rs = append(rs, r)
		}
		return strings.Join(slices.Compact(rs), ",")
	}

	newest := flipflopVerdicts(t, bin, list)
	older := flipflopVerdicts(t, bin, list, "--kargo-version", "v1.10.9")
	if rules(newest) != "" || rules(older) != "missing-authorized-stage" {
		t.Fatalf("flipflop: newest %v, v1.10.9 %v", newest, older)
	}
	if got := rules(flipflopVerdicts(t, bin, removed)); got != "unsupported-field" {
		t.Errorf("flipflop, desiredCommitFromStep on the newest Kargo: %s", got)
	}
	if got := rules(flipflopVerdicts(t, bin, removed, "--kargo-version", "1.2.4")); got != "" {
		t.Errorf("flipflop, desiredCommitFromStep on v1.2.4: %s", got)
	}

	policy := []string{"-p", "bundles/conftest"}
	for _, c := range hostsOf(t, "conftest") {
		if got := conftestVerdicts(t, c, policy, list); !slices.Equal(got, newest) {
			t.Errorf("%s, newest: %v, flipflop %v", c, got, newest)
		}
		if got := conftestVerdicts(t, c, append(slices.Clone(policy), "--data", data), list); !slices.Equal(got, older) {
			t.Errorf("%s, kargo_version v1.10.9: %v, flipflop %v", c, got, older)
		}
	}

	// The shipped template, through a constraint that reports
	// missing-authorized-stage alone, without and with kargoVersion.
	dir, older1 := t.TempDir(), t.TempDir()
	newestC := selecting(t, dir, nil, "missing-authorized-stage")
	olderC := selecting(t, older1, map[string]any{"kargoVersion": "v1.10.9"}, "missing-authorized-stage")
	sample := filepath.Join("..", list)
	for _, g := range hostsOf(t, "gator") {
		if got := gatorResults(t, g, []string{"test", "-o", "json", "-f", gkTemplate, "-f", newestC, "-f", sample}); len(got) != 0 {
			t.Errorf("%s, newest: %v", g, got)
		}
		got := gatorResults(t, g, []string{"test", "-o", "json", "-f", gkTemplate, "-f", olderC, "-f", sample})
		if len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), "[missing-authorized-stage]") {
			t.Errorf("%s, kargoVersion v1.10.9: %v", g, got)
		}
	}
}
