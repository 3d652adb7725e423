package output

import (
	"encoding/json"
	"encoding/xml"
	"regexp"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// evil carries a control sequence and the log commands of every CI system
// safetext knows: GitHub Actions (a line break then ::error, the legacy ##[),
// Azure Pipelines (##vso[, anywhere), TeamCity (##teamcity[, anywhere),
// GitLab CI (section_start: with its CR ESC[0K), Buildkite (---, +++, ~~~
// and ^^^ +++ at the start of a line), OSC 52 and a bidi override.
const evil = "x\n::error::forged ##[group]g ##vso[task.setvariable variable=x]y ##teamcity[message text='m'] " +
	"section_start:1:s\r\x1b[0Kh\n--- a\n+++ b\n~~~ c\n^^^ +++\n\x1b]52;c;aGk=\x07\u202e"

// hostileReport is a report whose every value that can come from input (or
// from a cluster) is evil, some starting with a Buildkite marker, where a
// renderer could put it at the start of a line.
func hostileReport() *evaluator.Report {
	res := func(kind, name string) evaluator.Resource {
		return evaluator.Resource{
			APIVersion: "kargo.akuity.io/v1alpha1", Kind: kind, Namespace: "--- " + evil, Name: "+++ " + evil,
			File: "##vso[task.uploadfile]" + evil + ".yaml", Line: 3,
			GeneratedBy: "ApplicationSet ~~~ " + evil, RenderedBy: "kustomize --- " + evil,
		}
	}
	finding := func(severity string, waived *evaluator.Waived) evaluator.Finding {
		return evaluator.Finding{
			Rule: "shared-branch-contradiction", Severity: severity, Title: "Several Stages pin one floating pointer",
			Message:     "--- " + evil + " pins " + evil,
			Remediation: "Give each Stage a pointer only it moves.\n",
			Resources:   []evaluator.Resource{res("Stage", "a"), res("Application", "b")},
			Key:         "~~~ " + evil, Pointer: evil, PointerText: "+++ " + evil,
			Details: map[string]any{"autoSync": map[string]any{("--- " + evil) + "/" + ("+++ " + evil): true}},
			Waived:  waived,
		}
	}
	return &evaluator.Report{
		Findings: []evaluator.Finding{
			finding("error", nil),
			finding("warning", &evaluator.Waived{Reason: "--- " + evil, By: "annotation " + evil, Expires: "^^^ +++"}),
		},
		Errors: []evaluator.LoadError{
			{Path: "--- " + evil, Line: 4, Message: "+++ " + evil},
			{Path: "section_end:2:s", Message: evil},
		},
		Rendered: []evaluator.RenderedRoot{
			{Path: "--- " + evil, Mode: evaluator.ModeHelm, Objects: 2, Chart: "+++ " + evil, Values: []string{"~~~ " + evil}},
			{Path: "+++ " + evil, Mode: evaluator.ModeKustomize, BaseOf: "--- " + evil},
			{Path: "^^^ +++", Mode: evaluator.ModeKustomize, Objects: 1, NotListed: []string{"--- " + evil, "+++ b"}},
		},
		Summary: evaluator.Summary{Objects: 4, Error: 1, Waived: 1},
	}
}

// assertSafeLines fails when a line of out holds anything safetext escapes.
func assertSafeLines(t *testing.T, what, out string) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		if off, bad, ok := safetext.Unsafe(line); ok {
			t.Errorf("%s line %d holds %s at %d: %q", what, i+1, bad, off, line)
		}
	}
}

// Every human-facing format prints every value from input escaped: no
// terminal control, no log command of any CI system, wherever the value
// lands in a line.
func TestHostileValuesEveryFormat(t *testing.T) {
	opts := fixtureOptions()

	// Text, without colour and with it (its own sequences taken out).
	opts.Color = ColorNever
	assertSafeLines(t, "text", string(render(t, "text", hostileReport(), opts)))
	opts.Color = ColorAlways
	colored := string(render(t, "text", hostileReport(), opts))
	assertSafeLines(t, "coloured text", ansi.ReplaceAllString(colored, ""))
	if !strings.Contains(colored, `rendered by kustomize \x2d-- x\n\x3a:error::forged ##\x5bgroup]g ##vso\x5btask.setvariable`) {
		t.Errorf("the renderer of a resource is not shown escaped:\n%s", colored)
	}

	// GitHub: each line is one command of ours (its "::" is ours), or the
	// summary; the properties and the data are checked apart.
	command := regexp.MustCompile(`^::(error|warning|notice)( [^:]*)?::(.*)$`)
	out := string(render(t, "github", hostileReport(), opts))
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		m := command.FindStringSubmatch(line)
		if m == nil {
			if !strings.HasPrefix(line, "flipflop: ") {
				t.Errorf("-o github line is neither a command nor the summary: %q", line)
			}
			continue
		}
		assertSafeLines(t, "github properties", m[2])
		// The runner turns %0A back into line breaks of the annotation.
		assertSafeLines(t, "github data", strings.ReplaceAll(m[3], "%0A", "\n"))
	}

	// The policy reports: every line, and every string as kubectl shows it
	// once the YAML is decoded.
	for _, format := range []string{"policyreport", "openreports"} {
		out := render(t, format, hostileReport(), opts)
		// "---" alone on a line is the YAML stream's own separator.
		assertSafeLines(t, format, strings.ReplaceAll("\n"+string(out), "\n---\n", "\n"))
		for _, doc := range strings.Split(string(out), "---\n")[1:] {
			var v any
			if err := yaml.Unmarshal([]byte(doc), &v); err != nil {
				t.Fatalf("%s: %v\n%s", format, err, doc)
			}
			sarifStrings(v, "", func(key, s string) { assertSafeLines(t, format+" "+key, s) })
		}
	}

	out = string(render(t, "junit", hostileReport(), opts))
	if err := xml.Unmarshal([]byte(out), new(any)); err != nil {
		t.Errorf("junit does not parse: %v", err)
	}
	assertSafeLines(t, "junit", out)

	var doc struct {
		Runs []map[string]json.RawMessage `json:"runs"`
	}
	if err := json.Unmarshal(render(t, "sarif", hostileReport(), opts), &doc); err != nil {
		t.Fatal(err)
	}
	for _, run := range doc.Runs {
		for k, raw := range run {
			if k == "tool" {
				continue // the bundle's own rule text
			}
			var v any
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatal(err)
			}
			sarifStrings(v, "", func(key, s string) {
				if key == "uri" {
					// Percent-encoded: no control character, white space,
					// '#' or '[' is left; GitLab's marker does nothing
					// without the CR ESC[0K that became %0D%1B.
					s = strings.NewReplacer("section_start:", "", "section_end:", "").Replace(s)
				}
				assertSafeLines(t, "SARIF "+k+" "+key, s)
			})
		}
	}
}

// sarifStrings calls f with every string of a decoded JSON value and the name
// of the member it is in ("" for an object key).
func sarifStrings(v any, key string, f func(key, s string)) {
	switch x := v.(type) {
	case string:
		f(key, x)
	case []any:
		for _, e := range x {
			sarifStrings(e, key, f)
		}
	case map[string]any:
		for k, e := range x {
			f("", k)
			sarifStrings(e, k, f)
		}
	}
}
