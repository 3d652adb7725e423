package loader

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// writeConfig writes a configuration file in a new directory.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), ".flipflop.yaml")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Every problem of a configuration file is reported at its line, naming the
// key, in the file's words (no Go type name), with the keys allowed and the
// nearest one; a key is cut to 64 characters; the rest of the file is read.
func TestConfigErrorsInTheFilesWords(t *testing.T) {
	for _, tc := range []struct {
		content string
		line    int
		want    string
	}{
		{"waiver: []\n", 1, `unknown key "waiver" in the configuration file; did you mean "waivers"? (keys: waivers, exclude, kargoVersion, rules, skipRules, severity, failOn,`},
		{"fail-on: warning\n", 1, `unknown key "fail-on" in the configuration file; did you mean "failOn"?`},
		{"waivers: foo\n", 1, "waivers: a string where a list of waivers belongs"},
		{"waivers: [1]\n", 1, "waiver 1: a number where a waiver belongs (a mapping with keys rule, resources, reason, expires)"},
		{"waivers:\n- rule: x\n  bogus: 1\n", 3, `unknown key "bogus" in a waiver (keys: rule, resources, reason, expires)`},
		{"waivers:\n- rule: x\n  resource: [a]\n", 3, `unknown key "resource" in a waiver; did you mean "resources"?`},
		{"waivers:\n- rule: x\n  resources: foo\n", 3, `waiver 1: resources: a string where a list of strings belongs (write waiver 1: resources: ["foo"])`},
		{"exclude: {a: 1}\n", 1, "exclude: a mapping where a list of strings belongs"},
		{"kargoVersion: [1]\n", 1, "kargoVersion: a list where a string belongs"},
		{"allowEmpty: yes please\n", 1, "allowEmpty: a string where true or false belongs"},
		{"maxFileSize: 1.5\n", 1, "maxFileSize: a number where a whole number belongs"},
		{"severity: [a]\n", 1, "severity: a list where a mapping belongs"},
		{"failOn: error\nfailOn: never\n", 2, `"failOn" is given twice in the configuration file (first on line 1)`},
		{strings.Repeat("k", 1000) + ": 1\n", 1, `unknown key "` + strings.Repeat("k", 64) + `…" in the configuration file`},
	} {
		c, err := LoadConfig(writeConfig(t, tc.content))
		if err != nil {
			t.Errorf("%.40q: %v, want the problem in Errors", tc.content, err)
			continue
		}
		if len(c.Errors) == 0 {
			t.Errorf("%.40q: no error, want line %d: %s", tc.content, tc.line, tc.want)
			continue
		}
		le := c.Errors[0]
		if le.Line != tc.line || !strings.HasPrefix(le.Message, tc.want) || strings.Contains(le.Message, "evaluator.") || strings.Contains(le.Message, "loader.") {
			t.Errorf("%.40q: %d: %s, want line %d: %s", tc.content, le.Line, le.Message, tc.line, tc.want)
		}
	}
}

// A file that is no mapping, or no YAML, is an error of the whole file.
func TestConfigNotAMapping(t *testing.T) {
	for _, content := range []string{"- a\n", "a: [\n", "just text\n"} {
		if _, err := LoadConfig(writeConfig(t, content)); err == nil {
			t.Errorf("%q: no error", content)
		}
	}
}

// Every problem at once: two bad keys and a bad waiver are three errors,
// and the good waiver, the exclude pattern and the settings are still read.
func TestConfigEveryProblemAtOnce(t *testing.T) {
	c, err := LoadConfig(writeConfig(t, `waiverz: []
failOn: warning
severity: {shared-write-branch: error, unused-waiver: info}
rules: [shared-branch-contradiction, shared-write-branch]
waivers:
- rule: a
  resources: ["*"]
  reason: r
- rule: b
  resources: "*"
  reason: r
exclude: [charts/]
argocdNamespace: [argocd, apps]
allowEmpty: true
maxFileSize: 0x100
colour: never
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range c.Errors {
		got = append(got, fmt.Sprintf("%d: %s", e.Line, e.Message))
	}
	want := []string{
		`1: unknown key "waiverz" in the configuration file; did you mean "waivers"? (keys: ` + strings.Join(configKeyNames(), ", ") + ")",
		`10: waiver 2: resources: a string where a list of strings belongs (write waiver 2: resources: ["*"])`,
		"9: waiver 2 is not read: it waives nothing",
		`16: unknown key "colour" in the configuration file; did you mean "color"? (keys: ` + strings.Join(configKeyNames(), ", ") + ")",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n got %q\nwant %q", got, want)
	}
	if len(c.Waivers) != 1 || c.Waivers[0].Rule != "a" || c.Waivers[0].Line != 6 || len(c.Exclude) != 1 {
		t.Errorf("the rest of the file is lost: %+v", c)
	}
	var settings []string
	for _, s := range c.Settings {
		settings = append(settings, fmt.Sprintf("%s@%d=%s%q%v", s.Key.Name, s.Line, s.Value, s.List, s.Map))
	}
	wantSettings := []string{
		`failOn@2=warning[][]`,
		`severity@3=[]` + fmt.Sprint([]MapEntry{{"shared-write-branch", "error", 3}, {"unused-waiver", "info", 3}}),
		`rules@4=["shared-branch-contradiction" "shared-write-branch"][]`,
		`argocdNamespace@13=["argocd" "apps"][]`,
		`allowEmpty@14=true[][]`,
		`maxFileSize@15=256[][]`,
	}
	if !reflect.DeepEqual(settings, wantSettings) {
		t.Errorf("settings:\n got %q\nwant %q", settings, wantSettings)
	}
}

// Aliases cannot make a small configuration file costly to read: 2,000
// aliases of a waiver whose resources are 2,000 globs would be 4,000,000
// values from 16 KB.
func TestConfigAliasBudget(t *testing.T) {
	content := "exclude: &r [" + strings.Repeat("x, ", 1999) + "x]\nw: &w {rule: a, resources: *r, reason: b}\nwaivers: [" + strings.Repeat("*w, ", 1999) + "*w]\n"
	_, err := LoadConfig(writeConfig(t, content))
	if err == nil || !strings.Contains(err.Error(), "YAML aliases") {
		t.Errorf("err = %v, want the alias bound", err)
	}
}

// A waiver's expiry that is no date that exists is an input error naming the
// file, the line and the key; the waiver is still returned (the policies
// find it invalid, so it waives nothing), and the rest of the file is used.
func TestConfigExpiryNotADate(t *testing.T) {
	c, err := LoadConfig(writeConfig(t, `waivers:
- rule: shared-write-branch
  resources: ["Stage/acme/*"]
  reason: one branch per monorepo
  expires: 2027-06-30
- rule: unknown-application
  resources: ["Stage/*/*"]
  reason: apps live elsewhere
  expires: 2027-13-01
- rule: shared-application
  resources: ["Stage/*/*"]
  reason: r
  expires: "2027-02-29"
exclude: [charts/]
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Waivers) != 3 || len(c.Exclude) != 1 {
		t.Fatalf("the rest of the file is lost: %+v", c)
	}
	var got []string
	for _, e := range c.Errors {
		got = append(got, fmt.Sprintf("%s:%d: %s", filepath.Base(e.Path), e.Line, e.Message))
	}
	want := []string{
		`.flipflop.yaml:9: waiver 2: expires: "2027-13-01" is not a date (YYYY-MM-DD): there is no month 13; the waiver waives nothing`,
		`.flipflop.yaml:13: waiver 3: expires: "2027-02-29" is not a date (YYYY-MM-DD): February 2027 has 28 days; the waiver waives nothing`,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n got %q\nwant %q", got, want)
	}
}

// The same for the flipflop.dev/ignore-expires annotation of an object read
// from a file, in a List too: the object is still read (its findings are
// reported), and the error is at the line of the annotation's key.
func TestAnnotationExpiryNotADate(t *testing.T) {
	data := []byte(`apiVersion: kargo.akuity.io/v1alpha1
kind: Stage
metadata:
  name: dev
  namespace: acme
  annotations:
    flipflop.dev/ignore: "shared-write-branch: monorepo"
    flipflop.dev/ignore-expires: "2027-13-01"
---
apiVersion: v1
kind: List
items:
- apiVersion: argoproj.io/v1alpha1
  kind: Application
  metadata:
    name: qa
    annotations: {flipflop.dev/ignore-expires: 2027-04-31, flipflop.dev/ignore: "x: y"}
- apiVersion: argoproj.io/v1alpha1
  kind: Application
  metadata:
    name: ok
    annotations:
      flipflop.dev/ignore-expires: "2028-02-29"
- apiVersion: argoproj.io/v1alpha1
  kind: Application
  metadata:
    name: long
    annotations:
      flipflop.dev/ignore-expires: "` + strings.Repeat("9", 1000) + `"
`)
	for _, filtered := range []bool{false, true} {
		var objs []evaluator.Object
		var errs []evaluator.LoadError
		if filtered {
			objs, errs, _ = LoadBytesFiltered("w.yaml", data)
		} else {
			objs, errs = LoadBytes("w.yaml", data)
		}
		if len(objs) != 4 {
			t.Errorf("filtered %v: %d objects, want 4 (a bad expiry loses no object)", filtered, len(objs))
		}
		var got []string
		for _, e := range errs {
			got = append(got, e.Error())
		}
		want := []string{
			`w.yaml:8: flipflop.dev/ignore-expires: "2027-13-01" is not a date (YYYY-MM-DD): there is no month 13; the waiver waives nothing`,
			`w.yaml:17: flipflop.dev/ignore-expires: "2027-04-31" is not a date (YYYY-MM-DD): April 2027 has 30 days; the waiver waives nothing`,
			`w.yaml:29: flipflop.dev/ignore-expires: "` + strings.Repeat("9", 64) + `…" is not a date (YYYY-MM-DD); the waiver waives nothing`,
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("filtered %v: errors:\n got %q\nwant %q", filtered, got, want)
		}
	}
}
