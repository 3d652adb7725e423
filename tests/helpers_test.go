// Package tests holds end-to-end tests that run the real flipflop binary and the
// real tools (conftest, opa, gator) it must agree with.
package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// tool returns the path of a binary named by env (set by `make test`), or skips
// the test when it is absent outside CI. In CI a missing tool is a failure, so
// CI cannot go green without running these tests.
func tool(t *testing.T, env string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		p = filepath.Join("..", ".bin", strings.ToLower(strings.TrimSuffix(env, "_BIN")))
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s: %s not found (run make tools build)", env, p)
		}
		t.Skipf("%s not found at %s; run 'make tools build'", env, p)
	}
	abs, _ := filepath.Abs(p)
	return abs
}

// runCmd runs a command and returns stdout and the exit code.
func runCmd(t *testing.T, dir, name string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("running %s: %v", name, err)
	}
	return out.String(), errb.String(), code
}

// runProcess runs a command and returns stdout, stderr and the exit code, or
// the error that kept it from running: runCmd for goroutines other than the
// test's own (which must not call t.Fatal).
func runProcess(dir, name string, args ...string) (string, string, int, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return out.String(), errb.String(), exit.ExitCode(), nil
	}
	return out.String(), errb.String(), 0, err
}

// estates lists every example and rule-sample estate, relative to the repository root.
func estates(t *testing.T) []string {
	t.Helper()
	var dirs []string
	ex, _ := filepath.Glob("../examples/*")
	samples, _ := filepath.Glob("../policies/rules/*/samples/*/*")
	for _, d := range append(ex, samples...) {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			dirs = append(dirs, strings.TrimPrefix(d, "../"))
		}
	}
	if len(dirs) == 0 {
		t.Fatal("no estates found")
	}
	return dirs
}

// verdict is one finding reduced to what every host must agree on.
type verdict struct {
	Rule      string
	Resources []string
}

func (v verdict) String() string { return v.Rule + " " + strings.Join(v.Resources, ",") }

type resource struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

func verdictOf(rule string, rs []resource) verdict {
	v := verdict{Rule: rule}
	for _, r := range rs {
		v.Resources = append(v.Resources, fmt.Sprintf("%s %s/%s", r.Kind, r.Namespace, r.Name))
	}
	slices.Sort(v.Resources)
	v.Resources = slices.Compact(v.Resources)
	return v
}

func sortVerdicts(vs []verdict) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.String())
	}
	sort.Strings(out)
	return out
}

// flipflopVerdicts runs `flipflop check -o json` on dir (relative to the repo root).
func flipflopVerdicts(t *testing.T, bin, dir string, flags ...string) []string {
	t.Helper()
	// --allow-empty: a rule's sample may hold only what the rule reads (a
	// PromotionTask with a repeated key, say), no Stage or Application.
	args := append([]string{"check", "-o", "json", "--fail-on", "never", "--allow-empty"}, flags...)
	stdout, stderr, code := runCmd(t, "..", bin, append(args, dir)...)
	if code != 0 {
		t.Fatalf("flipflop check %s: exit %d: %s", dir, code, stderr)
	}
	var report struct {
		Findings []struct {
			Rule      string     `json:"rule"`
			Resources []resource `json:"resources"`
			Waived    any        `json:"waived"`
		} `json:"findings"`
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatalf("flipflop JSON: %v\n%s", err, stdout)
	}
	var vs []verdict
	for _, f := range report.Findings {
		if f.Waived == nil { // conftest and Gatekeeper report only unwaived findings
			vs = append(vs, verdictOf(f.Rule, f.Resources))
		}
	}
	return sortVerdicts(vs)
}
