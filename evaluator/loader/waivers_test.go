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

// A configuration file that does not decode is reported at the line of the
// value, in the file's words: no Go type name, and a key cut to 64 characters.
func TestConfigErrorsInTheFilesWords(t *testing.T) {
	for _, tc := range []struct {
		content string
		line    int
		want    string
	}{
		{"foo: 1\n", 1, `unknown key "foo" in the configuration file (keys: waivers, exclude, kargoVersion)`},
		{"waivers: foo\n", 1, "a string where a list of waivers belongs"},
		{"waivers: [1]\n", 1, "a number where a waiver belongs"},
		{"waivers:\n- rule: x\n  bogus: 1\n", 3, `unknown key "bogus" in a waiver (keys: rule, resources, reason, expires)`},
		{"waivers:\n- rule: x\n  resources: foo\n", 3, "a string where a list of strings belongs"},
		{"exclude: {a: 1}\n", 1, "a mapping where a list of strings belongs"},
		{"kargoVersion: [1]\n", 1, "a list where a string belongs"},
		{strings.Repeat("k", 1000) + ": 1\n", 1, `unknown key "` + strings.Repeat("k", 64) + `…" in the configuration file`},
	} {
		_, err := LoadConfig(writeConfig(t, tc.content))
		le, ok := err.(*evaluator.LoadError)
		if !ok || le.Line != tc.line || !strings.HasPrefix(le.Message, tc.want) || strings.Contains(le.Message, "evaluator.") || strings.Contains(le.Message, "loader.") {
			t.Errorf("%.40q: %v, want line %d: %s", tc.content, err, tc.line, tc.want)
		}
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
