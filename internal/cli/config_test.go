package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// selectionRun runs check -o json in a new working directory holding
// .flipflop.yaml (when config is not empty) on examples/contradiction, and
// returns the rule and severity of each finding, the input errors and the
// exit code.
func selectionRun(t *testing.T, config string, args ...string) (found []string, errs []string, code int, stderr string) {
	t.Helper()
	dir := t.TempDir()
	if config != "" {
		writeFiles(t, dir, map[string]string{".flipflop.yaml": config})
	}
	t.Chdir(dir)
	example := filepath.Join(repoRootDir, "examples/contradiction")
	stdout, stderr, code := run(t, "", append(append([]string{"check", "-o", "json"}, args...), example)...)
	var r evaluator.Report
	if err := json.Unmarshal([]byte(stdout), &r); err != nil {
		if code != ExitIncomplete {
			t.Fatalf("exit %d: %v\n%s\n%s", code, err, stdout, stderr)
		}
		return nil, nil, code, stderr
	}
	for _, f := range r.Findings {
		s := f.Rule + "=" + f.Severity
		if f.RuleSeverity != "" {
			s += "(" + f.RuleSeverity + ")"
		}
		if f.Waived != nil {
			s += " waived"
		}
		found = append(found, s)
	}
	for _, e := range r.Errors {
		errs = append(errs, e.Error())
	}
	return found, errs, code, stderr
}

// --rule, --skip-rule and --severity choose what is reported and at which
// severity, which --fail-on follows; the same keys in .flipflop.yaml do the
// same, and the command line wins over the file.
func TestRuleSelection(t *testing.T) {
	const both = "shared-branch-contradiction=error"
	for _, tc := range []struct {
		name, config string
		args         []string
		want         []string
		code         int
	}{
		{name: "default", want: []string{both, "shared-write-branch=warning"}, code: ExitFindings},
		{name: "--rule", args: []string{"--rule", "shared-write-branch"}, want: []string{"shared-write-branch=warning"}, code: ExitOK},
		{name: "--skip-rule", args: []string{"--skip-rule", "shared-branch-contradiction"}, want: []string{"shared-write-branch=warning"}, code: ExitOK},
		{name: "comma-separated", args: []string{"--skip-rule", "shared-branch-contradiction,shared-write-branch"}, code: ExitOK},
		{name: "--severity raises", args: []string{"--skip-rule", "shared-branch-contradiction", "--severity", "shared-write-branch=error"}, want: []string{"shared-write-branch=error(warning)"}, code: ExitFindings},
		{name: "--severity lowers", args: []string{"--severity", "shared-branch-contradiction=warning"}, want: []string{"shared-branch-contradiction=warning(error)", "shared-write-branch=warning"}, code: ExitOK},
		{name: "file", config: "skipRules: [shared-branch-contradiction]\nseverity: {shared-write-branch: error}\n", want: []string{"shared-write-branch=error(warning)"}, code: ExitFindings},
		{name: "flag over file", config: "rules: [shared-branch-contradiction]\n", args: []string{"--rule", "shared-write-branch"}, want: []string{"shared-write-branch=warning"}, code: ExitOK},
		{name: "failOn from the file", config: "failOn: warning\nskipRules: [shared-branch-contradiction]\n", want: []string{"shared-write-branch=warning"}, code: ExitFindings},
		{name: "--fail-on over the file", config: "failOn: warning\nskipRules: [shared-branch-contradiction]\n", args: []string{"--fail-on", "error"}, want: []string{"shared-write-branch=warning"}, code: ExitOK},
		{name: "--no-waivers reads no file", config: "skipRules: [shared-branch-contradiction]\n", args: []string{"--no-waivers"}, want: []string{both, "shared-write-branch=warning"}, code: ExitFindings},
	} {
		t.Run(tc.name, func(t *testing.T) {
			found, errs, code, stderr := selectionRun(t, tc.config, tc.args...)
			if !slices.Equal(found, tc.want) || code != tc.code || len(errs) > 0 {
				t.Errorf("got %q, exit %d, errors %q, want %q, exit %d\n%s", found, code, errs, tc.want, tc.code, stderr)
			}
		})
	}
}

// A rule id or level that does not exist is a usage error with the nearest
// ids, never a run that silently selects nothing.
func TestRuleSelectionTypos(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--rule", "shared-branch"}, `--rule: unknown rule "shared-branch"; did you mean "shared-branch-contradiction" or "shared-write-branch"?`},
		{[]string{"--skip-rule", "unused-waivers"}, `--skip-rule: unknown rule "unused-waivers"; did you mean "unused-waiver"?`},
		{[]string{"--severity", "shared-write-branch"}, `--severity: "shared-write-branch" is not RULE=LEVEL`},
		{[]string{"--severity", "shared-write-branch=warn"}, `--severity: unknown level "warn" for shared-write-branch (want error, warning or info); did you mean "warning"?`},
	} {
		_, _, code, stderr := selectionRun(t, "", tc.args...)
		if code != ExitIncomplete || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: exit %d, want 2 and %s:\n%s", tc.args, code, tc.want, stderr)
		}
	}
}

// Every problem of .flipflop.yaml is an input error naming the file, the line
// and the key, with the nearest key or value; the problems do not hide the
// findings, and the keys that are fine are used.
func TestConfigProblemsInTheUsersWords(t *testing.T) {
	found, errs, code, _ := selectionRun(t, `waiver:
- rule: shared-write-branch
failOn: warn
severity: {shared-write-branch: eror, shared-branch: info}
skipRules: [shared-branch-contradiction]
values: [../../etc/values.yaml]
renderTimeout: soon
`)
	want := []string{
		`.flipflop.yaml:1: unknown key "waiver" in the configuration file; did you mean "waivers"? (keys: waivers, exclude, kargoVersion, rules, skipRules, severity, failOn, defaultBranch, argocdNamespace, read, values, set, setString, releaseName, releaseNamespace, renderTimeout, maxFileSize, allowEmpty, color, progress)`,
		`.flipflop.yaml:3: failOn is not used: "warn" is not one of error, warning, info or never; did you mean "warning"?`,
		`.flipflop.yaml:4: severity is not used: shared-write-branch: "eror" is not one of error, warning or info; did you mean "error"?`,
		`.flipflop.yaml:4: severity is not used: unknown rule "shared-branch"; did you mean "shared-branch-contradiction" or "shared-write-branch"? ('flipflop rules' lists them)`,
		`.flipflop.yaml:6: values is not used: "../../etc/values.yaml" is not a path inside .flipflop.yaml's directory`,
		`.flipflop.yaml:7: renderTimeout is not used: "soon" is not a positive duration such as 90s or 2m`,
	}
	if code != ExitIncomplete || !slices.Equal(errs, want) {
		t.Errorf("exit %d, errors:\n%s\nwant:\n%s", code, strings.Join(errs, "\n"), strings.Join(want, "\n"))
	}
	if !slices.Equal(found, []string{"shared-write-branch=warning"}) {
		t.Errorf("findings %q, want the skipRules of the file applied", found)
	}
}

// A waivers file's resources may be "*" (every resource), a kind, or a kind
// and a namespace; a waiver that matches no finding is an unused-waiver
// warning naming its line.
func TestWaiverGlobsAndUnusedWaivers(t *testing.T) {
	for _, resources := range []string{`"*"`, `"Stage"`, `"Stage/acme"`, `"*/*/*"`} {
		found, errs, _, _ := selectionRun(t, "waivers:\n- rule: shared-write-branch\n  resources: ["+resources+"]\n  reason: monorepo\n")
		if !slices.Contains(found, "shared-write-branch=warning waived") || len(errs) > 0 {
			t.Errorf("resources: [%s]: %q %q, want shared-write-branch waived", resources, found, errs)
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "w.yaml"), []byte("waivers:\n- rule: shared-write-branch\n  resources: [Stage/shop/*]\n  reason: monorepo\n"), 0o644)
	found, _, _, _ := selectionRun(t, "", "--waivers", filepath.Join(dir, "w.yaml"))
	if !slices.Contains(found, "unused-waiver=warning") || !slices.Contains(found, "shared-write-branch=warning") {
		t.Errorf("a waiver matching nothing: %q, want unused-waiver", found)
	}
}
