package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// run executes the CLI in-process and returns stdout, stderr and the exit code.
func run(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := Run(context.Background(), args, IO{In: strings.NewReader(stdin), Out: &out, Err: &errOut})
	code := ExitCode(err, &errOut)
	return out.String(), errOut.String(), code
}

func TestExitCodes(t *testing.T) {
	race.Sequential(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"contradiction", []string{"check", "../../examples/contradiction"}, ExitFindings},
		{"fix stage branches", []string{"check", "../../examples/fix-stage-branches"}, ExitOK},
		{"fix no desiredRevision", []string{"check", "../../examples/fix-no-desired-revision"}, ExitOK},
		{"fix updateTargetRevision", []string{"check", "../../examples/fix-update-target-revision"}, ExitOK},
		{"fail-on never", []string{"check", "--fail-on", "never", "../../examples/contradiction"}, ExitOK},
		{"no paths", []string{"check"}, ExitIncomplete},
		{"unknown flag", []string{"check", "--nope", "x"}, ExitIncomplete},
		{"unknown format", []string{"check", "-o", "xml", "x"}, ExitIncomplete},
		{"unknown fail-on", []string{"check", "--fail-on", "sometimes", "x"}, ExitIncomplete},
		{"missing path", []string{"check", "does-not-exist"}, ExitIncomplete},
		{"unknown command", []string{"frobnicate"}, ExitIncomplete},
		{"help", []string{"help"}, ExitOK},
		{"check help", []string{"check", "--help"}, ExitOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := run(t, "", tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr: %s", code, tc.code, stderr)
			}
		})
	}
}

func TestJSONContract(t *testing.T) {
	stdout, _, code := run(t, "", "check", "-o", "json", "../../examples/contradiction")
	if code != ExitFindings {
		t.Fatalf("exit %d", code)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"findings", "errors", "summary"} {
		if _, ok := doc[key]; !ok {
			t.Errorf("JSON lacks %q", key)
		}
	}
	if string(doc["errors"]) != "[]" {
		t.Errorf("errors = %s, want []", doc["errors"])
	}
	var report evaluator.Report
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatal(err)
	}
	f := report.Findings[0]
	if f.Rule != "shared-branch-contradiction" || f.Title == "" || f.Message == "" || f.Remediation == "" {
		t.Errorf("finding lacks fields: %+v", f)
	}
	r := f.Resources[0]
	want := evaluator.Resource{APIVersion: "kargo.akuity.io/v1alpha1", Kind: "Stage", Namespace: "acme", Name: "dev", File: "../../examples/contradiction/kargo.yaml", Line: 18}
	if r != want {
		t.Errorf("first resource %+v, want %+v", r, want)
	}
	if report.Summary != (evaluator.Summary{Objects: 5, Skipped: 1, Error: 1, Warning: 1}) {
		t.Errorf("summary %+v", report.Summary)
	}
	// Field names of the contract, spelled exactly.
	for _, key := range []string{`"rule"`, `"severity"`, `"title"`, `"message"`, `"remediation"`, `"resources"`, `"apiVersion"`, `"kind"`, `"namespace"`, `"name"`, `"file"`, `"line"`, `"objects"`, `"skipped"`, `"error"`, `"warning"`, `"info"`} {
		if !strings.Contains(stdout, key) {
			t.Errorf("JSON lacks key %s", key)
		}
	}
}

// A broken file is reported with file:line and exit 2, and the finding from the
// files that loaded is still reported.
func TestBrokenFileKeepsOtherFindings(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"argocd.yaml", "kargo.yaml"} {
		b, err := os.ReadFile(filepath.Join("../../examples/contradiction", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	broken := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata: {a: [1, 2}\n"
	if err := os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, _, code := run(t, "", "check", "-o", "json", dir)
	if code != ExitIncomplete {
		t.Fatalf("exit %d, want %d", code, ExitIncomplete)
	}
	var report evaluator.Report
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatal(err)
	}
	if len(report.Findings) == 0 || report.Findings[0].Rule != "shared-branch-contradiction" {
		t.Errorf("findings from the valid files were lost: %+v", report.Findings)
	}
	if len(report.Errors) != 1 {
		t.Fatalf("errors %+v, want one", report.Errors)
	}
	e := report.Errors[0]
	if e.Path != filepath.ToSlash(filepath.Join(dir, "broken.yaml")) || e.Line != 5 || e.Message == "" {
		t.Errorf("error %+v, want broken.yaml line 5", e)
	}
	text, _, code := run(t, "", "check", dir)
	if code != ExitIncomplete || !strings.Contains(text, "broken.yaml:5:") || !strings.Contains(text, "shared-branch-contradiction") {
		t.Errorf("text output (exit %d) lacks the error location or the finding:\n%s", code, text)
	}
}

func TestStdin(t *testing.T) {
	b, err := os.ReadFile("../../examples/contradiction/argocd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	stdout, _, code := run(t, string(b), "check", "-o", "json", "-", "../../examples/contradiction/kargo.yaml")
	if code != ExitFindings {
		t.Fatalf("exit %d, want 1:\n%s", code, stdout)
	}
	if !strings.Contains(stdout, `"file": "<stdin>"`) {
		t.Errorf("stdin objects not named <stdin>:\n%s", stdout)
	}
}

func TestTextNamesEverything(t *testing.T) {
	stdout, _, _ := run(t, "", "check", "../../examples/contradiction")
	for _, want := range []string{
		"ERROR  shared-branch-contradiction",
		"pointer  github.com/acme/deploy @ main",
		"acme/dev", "acme/qa", "argocd/dev", "argocd/qa",
		"../../examples/contradiction/kargo.yaml:18",
		"auto-sync on",
		"Stage-specific branches (recommended)",
		"5 objects checked (1 more skipped: no rule reads their kind): 1 error, 1 warning, 0 info",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("text output lacks %q:\n%s", want, stdout)
		}
	}
}

func TestRulesCommand(t *testing.T) {
	stdout, _, code := run(t, "", "rules")
	if code != 0 || !strings.Contains(stdout, "shared-branch-contradiction") {
		t.Errorf("rules (exit %d):\n%s", code, stdout)
	}
}

func TestWaivers(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"argocd.yaml", "kargo.yaml"} {
		b, _ := os.ReadFile(filepath.Join("../../examples/contradiction", name))
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	waivers := filepath.Join(dir, "waivers.yaml")
	os.WriteFile(waivers, []byte(`waivers:
- rule: shared-branch-contradiction
  resources: ["Stage/acme/*"]
  reason: migrating to env branches this sprint
- rule: shared-write-branch
  resources: ["Stage/acme/dev"]
  reason: one branch by design
  expires: 2020-01-01
- rule: unknown-application
  resources: ["Stage/*/*"]
`), 0o644)
	stdout, stderr, code := run(t, "", "check", "-o", "json", "--waivers", waivers, filepath.Join(dir, "argocd.yaml"), filepath.Join(dir, "kargo.yaml"))
	var report evaluator.Report
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatalf("%v: %s %s", err, stdout, stderr)
	}
	got := map[string]string{}
	for _, f := range report.Findings {
		state := f.Severity
		if f.Waived != nil {
			state = "waived: " + f.Waived.Reason
		}
		got[f.Rule] = state
	}
	want := map[string]string{
		"shared-branch-contradiction": "waived: migrating to env branches this sprint",
		"shared-write-branch":         "warning", // its waiver expired
		"waiver-expired":              "warning",
		"invalid-waiver":              "error", // the third entry has no reason
	}
	for rule, state := range want {
		if got[rule] != state {
			t.Errorf("%s: %q, want %q (all: %v)", rule, got[rule], state, got)
		}
	}
	if report.Summary.Waived != 1 || report.Summary.Error != 1 {
		t.Errorf("summary %+v", report.Summary)
	}
	if code != ExitFindings {
		t.Errorf("exit %d, want 1 (the invalid waiver)", code)
	}
	for _, f := range report.Findings {
		if f.Rule == "invalid-waiver" && (len(f.Resources) != 1 || f.Resources[0].File != waivers || f.Resources[0].Line != 9) {
			t.Errorf("invalid-waiver does not point at the entry: %+v", f.Resources)
		}
	}

	// An annotation waives too; only the waived finding remains and nothing fails.
	kargo, _ := os.ReadFile(filepath.Join(dir, "kargo.yaml"))
	annotated := strings.Replace(string(kargo), "  name: dev\n  namespace: acme\n", "  name: dev\n  namespace: acme\n  annotations:\n    flipflop.dev/ignore: \"shared-branch-contradiction, shared-write-branch: migrating\"\n", 1)
	os.WriteFile(filepath.Join(dir, "kargo.yaml"), []byte(annotated), 0o644)
	stdout, _, code = run(t, "", "check", "-o", "json", filepath.Join(dir, "argocd.yaml"), filepath.Join(dir, "kargo.yaml"))
	report = evaluator.Report{}
	json.Unmarshal([]byte(stdout), &report)
	if code != ExitOK || report.Summary.Waived != 2 || report.Summary.Error != 0 {
		t.Errorf("annotation waiver: exit %d, summary %+v", code, report.Summary)
	}
	if _, _, code := run(t, "", "check", "--waivers", filepath.Join(dir, "missing.yaml"), dir); code != ExitIncomplete {
		t.Errorf("missing waivers file: exit %d, want 2", code)
	}
}

// The JUnit report fails a test exactly when the run fails on findings: at
// every --fail-on level, its failure count is the number of findings that
// make check exit 1 (a warning on a run that exits 0 is no failed test in
// GitLab's merge-request widget).
func TestJUnitFailuresAgreeWithExitCode(t *testing.T) {
	race.Sequential(t)
	for _, level := range []string{"error", "warning", "info", "never"} {
		stdout, stderr, code := run(t, "", "check", "-o", "junit", "--fail-on", level, "../../examples/contradiction")
		var doc struct {
			Failures int `xml:"failures,attr"`
			Skipped  int `xml:"skipped,attr"`
		}
		if err := xml.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatalf("--fail-on %s: %v\n%s", level, err, stdout)
		}
		js, _, _ := run(t, "", "check", "-o", "json", "../../examples/contradiction")
		var report evaluator.Report
		if err := json.Unmarshal([]byte(js), &report); err != nil {
			t.Fatal(err)
		}
		want := report.Count(level)
		if level == "never" {
			want = 0
		}
		if doc.Failures != want || (code == ExitFindings) != (want > 0) || (code == ExitOK) != (want == 0) {
			t.Errorf("--fail-on %s: exit %d with %d JUnit failures, want %d failures; stderr: %s", level, code, doc.Failures, want, stderr)
		}
		if doc.Failures+doc.Skipped != len(report.Findings) {
			t.Errorf("--fail-on %s: %d failed and %d skipped for %d findings", level, doc.Failures, doc.Skipped, len(report.Findings))
		}
	}
}

// -o gitlab writes a Code Quality report (a JSON array of issues at the
// files and lines of the findings) and exits as every other format does.
func TestGitLabCodeQuality(t *testing.T) {
	race.Sequential(t)
	stdout, stderr, code := run(t, "", "check", "-o", "gitlab", "../../examples/contradiction")
	if code != ExitFindings {
		t.Fatalf("exit %d, want %d; stderr: %s", code, ExitFindings, stderr)
	}
	var issues []struct {
		CheckName string `json:"check_name"`
		Severity  string `json:"severity"`
		Location  struct {
			Path  string `json:"path"`
			Lines struct {
				Begin int `json:"begin"`
			} `json:"lines"`
		} `json:"location"`
	}
	if err := json.Unmarshal([]byte(stdout), &issues); err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	if len(issues) != 2 || issues[0].CheckName != "shared-branch-contradiction" || issues[0].Severity != "critical" ||
		issues[0].Location.Path != "../../examples/contradiction/kargo.yaml" || issues[0].Location.Lines.Begin != 18 ||
		issues[1].Severity != "minor" {
		t.Errorf("issues %+v", issues)
	}
	if _, _, code := run(t, "", "check", "-o", "gitlab", "--fail-on", "never", "../../examples/contradiction"); code != ExitOK {
		t.Errorf("--fail-on never: exit %d", code)
	}
}
