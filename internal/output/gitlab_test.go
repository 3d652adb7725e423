package output

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// gitlabSchemaFile is the GitLab Code Quality report format as a JSON
// schema, written from GitLab's documentation of it.
const gitlabSchemaFile = "testdata/gitlab-code-quality.schema.json"

// The issues the tests read back, declared apart from the writer's types.
type glIssue struct {
	Description string `json:"description"`
	CheckName   string `json:"check_name"`
	Fingerprint string `json:"fingerprint"`
	Severity    string `json:"severity"`
	Location    struct {
		Path  string `json:"path"`
		Lines struct {
			Begin int `json:"begin"`
		} `json:"lines"`
	} `json:"location"`
}

// gitlabValidator compiles the schema in testdata (the compiler's default
// loader reads local files only: nothing is fetched).
func gitlabValidator(t *testing.T) *jsonschema.Schema {
	t.Helper()
	sch, err := jsonschema.NewCompiler().Compile(gitlabSchemaFile)
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func validateGitLab(t *testing.T, sch *jsonschema.Schema, out []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("the GitLab report does not validate against %s: %v\n%s", gitlabSchemaFile, err, out)
	}
}

func readGitLab(t *testing.T, out []byte) []glIssue {
	t.Helper()
	var issues []glIssue
	if err := json.Unmarshal(out, &issues); err != nil {
		t.Fatalf("not a JSON array of issues: %v\n%s", err, out)
	}
	return issues
}

// Every report, the clean one, the fixture, one without rules, an evaluated
// one and a hostile one, is a Code Quality report as GitLab documents it;
// and the schema is strict enough to catch what GitLab would drop.
func TestGitLabSchema(t *testing.T) {
	sch := gitlabValidator(t)
	for name, build := range goldenReports {
		t.Run(name, func(t *testing.T) {
			validateGitLab(t, sch, render(t, "gitlab", build(), fixtureOptions()))
		})
	}
	t.Run("no rules", func(t *testing.T) {
		validateGitLab(t, sch, render(t, "gitlab", fixtureReport(), Options{}))
	})
	t.Run("evaluated", func(t *testing.T) {
		report, rules := evaluatedReport(t)
		validateGitLab(t, sch, render(t, "gitlab", report, Options{Rules: rules}))
	})
	t.Run("hostile", func(t *testing.T) {
		validateGitLab(t, sch, render(t, "gitlab", hostileReport(), fixtureOptions()))
	})
	t.Run("invalid is caught", func(t *testing.T) {
		for name, breakIt := range map[string]func(issue map[string]any){
			"unknown severity": func(issue map[string]any) { issue["severity"] = "error" },
			"no check name":    func(issue map[string]any) { delete(issue, "check_name") },
			"no fingerprint":   func(issue map[string]any) { delete(issue, "fingerprint") },
			"line 0":           func(issue map[string]any) { issue["location"].(map[string]any)["lines"].(map[string]any)["begin"] = 0 },
			"no line":          func(issue map[string]any) { delete(issue["location"].(map[string]any), "lines") },
			"no path":          func(issue map[string]any) { delete(issue["location"].(map[string]any), "path") },
		} {
			var doc []any
			if err := json.Unmarshal(render(t, "gitlab", fixtureReport(), fixtureOptions()), &doc); err != nil {
				t.Fatal(err)
			}
			breakIt(doc[0].(map[string]any))
			if sch.Validate(doc) == nil {
				t.Errorf("%s: validated", name)
			}
		}
	})
}

// A finding is an issue at its first object with a file, its rule the check
// name, its severity mapped, and the SARIF fingerprint (stable across edits
// and moves); waived findings are left out; an input error is a blocker at
// its file; a path left out is an info issue; a finding about no file is at
// the repository's root, line 1.
func TestGitLab(t *testing.T) {
	report := fixtureReport()
	report.Excluded = []evaluator.Exclusion{{Path: "charts/", Pattern: "charts/", Source: ".flipflopignore:1"}}
	issues := readGitLab(t, render(t, "gitlab", report, fixtureOptions()))
	type want struct {
		check, severity, path string
		line                  int
		description           string
	}
	wants := []want{
		{"shared-branch-contradiction", "critical", "gitops/kargo.yaml", 18, report.Findings[0].Message},
		{"shared-write-branch", "minor", "odd dir/a,b: 100%.yaml", 3, report.Findings[1].Message},
		// Findings[2] is waived.
		{"legacy-mechanism", "info", ".", 1, report.Findings[3].Message},
		{"input-error", "blocker", "charts/broken.yaml", 4, "input error, not checked: " + report.Errors[0].Message},
		{"input-error", "blocker", "missing.yaml", 1, "input error, not checked: " + report.Errors[1].Message},
		{"not-checked", "info", "charts", 1, `not checked: excluded by "charts/" (.flipflopignore:1)`},
	}
	if len(issues) != len(wants) {
		t.Fatalf("%d issues, want %d: %+v", len(issues), len(wants), issues)
	}
	seen := map[string]bool{}
	for i, w := range wants {
		got := issues[i]
		if got.CheckName != w.check || got.Severity != w.severity || got.Location.Path != w.path || got.Location.Lines.Begin != w.line || got.Description != w.description {
			t.Errorf("issue %d = %+v, want %+v", i, got, w)
		}
		if len(got.Fingerprint) != 64 || seen[got.Fingerprint] {
			t.Errorf("issue %d: fingerprint %q missing or repeated", i, got.Fingerprint)
		}
		seen[got.Fingerprint] = true
	}
	for i, f := range []int{0, 1, 3} {
		if issues[i].Fingerprint != fingerprint(&report.Findings[f]) {
			t.Errorf("issue %d: fingerprint %s is not the SARIF one", i, issues[i].Fingerprint)
		}
	}

	// Moving and editing the manifest keeps the fingerprint; "./" is not
	// part of the path GitLab matches.
	moved := fixtureReport()
	for i := range moved.Findings[0].Resources {
		moved.Findings[0].Resources[i].File = "./elsewhere/" + moved.Findings[0].Resources[i].File
		moved.Findings[0].Resources[i].Line += 7
	}
	again := readGitLab(t, render(t, "gitlab", moved, fixtureOptions()))
	if again[0].Fingerprint != issues[0].Fingerprint || again[0].Location.Path != "elsewhere/gitops/kargo.yaml" || again[0].Location.Lines.Begin != 25 {
		t.Errorf("moved finding: %+v, fingerprint was %s", again[0], issues[0].Fingerprint)
	}

	// A clean run is an empty array (GitLab reads no issue), not null.
	if out := strings.TrimSpace(string(render(t, "gitlab", cleanReport(), fixtureOptions()))); out != "[]" {
		t.Errorf("clean report: %s", out)
	}
}

// Values from the input are data: JSON-escaped, never escaped for a terminal
// (GitLab shows them as text), so a description is the message as it is, and
// the report holds no raw control character.
func TestGitLabValuesAreData(t *testing.T) {
	report := hostileReport()
	out := render(t, "gitlab", report, fixtureOptions())
	for i, c := range out {
		if c < 0x20 && c != '\n' {
			t.Fatalf("raw control byte %#x at %d", c, i)
		}
	}
	issues := readGitLab(t, out)
	if issues[0].Description != report.Findings[0].Message {
		t.Errorf("description %q, want the message as it is, %q", issues[0].Description, report.Findings[0].Message)
	}
	if issues[0].Location.Path != report.Findings[0].Resources[0].File {
		t.Errorf("path %q, want %q", issues[0].Location.Path, report.Findings[0].Resources[0].File)
	}
	for _, is := range issues {
		if strings.Contains(is.Description, `\x1b`) || strings.Contains(is.Location.Path, `\x5b`) {
			t.Errorf("a value escaped for terminals: %+v", is)
		}
	}
}
