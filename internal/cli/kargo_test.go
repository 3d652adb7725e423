package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/internal/race"
)

// The Kargo version comes from --kargo-version, else kargoVersion in
// .flipflop.yaml (not read with --no-waivers), else it is the newest release
// modelled, said to be assumed; the findings follow it, and a value that is
// no version is a usage error naming where it was written.
func TestKargoVersionSetting(t *testing.T) {
	race.Sequential(t)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	sample := filepath.Join(wd, "..", "..", "policies", "rules", "unsupported_field", "samples", "fires", "desired-commit-from-step")
	dir := t.TempDir()
	t.Chdir(dir)
	type report struct {
		Findings []struct {
			Rule string `json:"rule"`
		} `json:"findings"`
		Kargo struct {
			Version, Source, Named string
			Assumed                bool
		} `json:"kargo"`
	}
	check := func(args ...string) report {
		t.Helper()
		stdout, stderr, code := run(t, "", append(append([]string{"check", "-o", "json", "--fail-on", "never"}, args...), sample)...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d\n%s%s", args, code, stdout, stderr)
		}
		var r report
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	summary := func(r report) string {
		rules := make([]string, 0, len(r.Findings))
		for _, f := range r.Findings {
			rules = append(rules, f.Rule)
		}
		return strings.Join(append([]string{r.Kargo.Version, r.Kargo.Source, r.Kargo.Named}, rules...), "|")
	}
	for _, tc := range []struct {
		name, file string
		args       []string
		want       string
		assumed    bool
	}{
		{name: "default", want: "v1.11.2|||unsupported-field", assumed: true},
		{name: "flag", args: []string{"--kargo-version", "v1.2"}, want: "v1.2.0|--kargo-version|"},
		{name: "file", file: "# the version we run\nkargoVersion: 1.2.4\n", want: "v1.2.4|.flipflop.yaml:2|"},
		{name: "flag over file", file: "kargoVersion: v1.2.4\n", args: []string{"--kargo-version", "v1.3"}, want: "v1.3.0|--kargo-version||unsupported-field"},
		{name: "no-waivers reads no file", file: "kargoVersion: v1.2.4\n", args: []string{"--no-waivers"}, want: "v1.11.2|||unsupported-field", assumed: true},
		{name: "newer than modelled", args: []string{"--kargo-version", "v2.0.1"}, want: "v1.11.2|--kargo-version|v2.0.1|unsupported-field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(".flipflop.yaml")
			if tc.file != "" {
				writeFiles(t, dir, map[string]string{".flipflop.yaml": tc.file})
			}
			r := check(tc.args...)
			if got := summary(r); got != tc.want || r.Kargo.Assumed != tc.assumed {
				t.Errorf("got %s (assumed %v), want %s (assumed %v)", got, r.Kargo.Assumed, tc.want, tc.assumed)
			}
		})
	}
	os.Remove(".flipflop.yaml")

	stdout, _, _ := run(t, "", "check", sample)
	if !strings.Contains(stdout, "\nKargo v1.11.2 assumed, the newest release flipflop models (name yours with --kargo-version)\n") {
		t.Errorf("text output does not say which Kargo it assumed:\n%s", stdout)
	}
	if stdout, _, _ := run(t, "", "check", "--kargo-version", "v1.9", sample); !strings.Contains(stdout, "\nKargo v1.9.0 (from --kargo-version)\n") {
		t.Errorf("text output does not say which Kargo it followed:\n%s", stdout)
	}

	for _, tc := range []struct{ file, flag, want string }{
		{flag: "latest", want: `--kargo-version: invalid Kargo version "latest"`},
		{file: "waivers: []\nkargoVersion: v1\n", want: `.flipflop.yaml:2: invalid Kargo version "v1"`},
		{file: "kargoVersion: [v1.9]\n", want: ".flipflop.yaml:1"},
	} {
		os.Remove(".flipflop.yaml")
		if tc.file != "" {
			writeFiles(t, dir, map[string]string{".flipflop.yaml": tc.file})
		}
		args := []string{"check"}
		if tc.flag != "" {
			args = append(args, "--kargo-version", tc.flag)
		}
		// A value of the wrong type is an input error of the report; one
		// that is no version, a usage error.
		stdout, stderr, code := run(t, "", append(args, sample)...)
		if code != ExitIncomplete || !strings.Contains(stderr+stdout, tc.want) {
			t.Errorf("%q %q: exit %d, want 2 and %q:\n%s", tc.file, tc.flag, code, tc.want, stderr)
		}
	}
}

// A Kargo version that is no version is quoted in the error cut to its first
// 64 characters and escaped, wherever it was written: a 100 KB value in
// .flipflop.yaml, or one carrying a log command, is not echoed whole.
func TestKargoVersionErrorCutsTheValue(t *testing.T) {
	race.Sequential(t)
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	sample := filepath.Join(wd, "..", "..", "examples", "contradiction")
	dir := t.TempDir()
	t.Chdir(dir)
	long := "v1.x" + strings.Repeat("A", 100<<10)
	for _, tc := range []struct{ name, file, flag, want string }{
		{name: "file", file: "kargoVersion: " + long + "\n", want: `.flipflop.yaml:1: invalid Kargo version "v1.x` + strings.Repeat("A", 60) + `…"`},
		{name: "flag", flag: long, want: `--kargo-version: invalid Kargo version "v1.x` + strings.Repeat("A", 60) + `…"`},
		{name: "newer release with a long suffix", flag: "v9.0.0-" + strings.Repeat("b", 100<<10), want: `--kargo-version: invalid Kargo version "v9.0.0-` + strings.Repeat("b", 57) + `…"`},
		{name: "log command", flag: "::error::x\n##vso[task.complete]", want: `invalid Kargo version "\x3a:error::x\n##vso\x5btask.complete]"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			os.Remove(".flipflop.yaml")
			if tc.file != "" {
				writeFiles(t, dir, map[string]string{".flipflop.yaml": tc.file})
			}
			args := []string{"check"}
			if tc.flag != "" {
				args = append(args, "--kargo-version", tc.flag)
			}
			stdout, stderr, code := run(t, "", append(args, sample)...)
			if code != ExitIncomplete || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want 2 and %s in:\n%.300s", code, tc.want, stderr)
			}
			if n := len(stdout) + len(stderr); n > 1024 {
				t.Errorf("%d bytes of output for a bad version: the value is echoed", n)
			}
		})
	}
}
