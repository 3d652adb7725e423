package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// Every opa of the matrix, oldest (the support floor) to newest, compiles what
// flipflop ships: the conftest policy folder, the OPA bundle, and the Rego of
// the Gatekeeper ConstraintTemplate (entry module and libs); and runs the
// policies' unit tests green, so the floor is held by behaviour as well as by
// `opa check --capabilities` in make lint.
func TestCompatOPA(t *testing.T) {
	t.Parallel()
	tmplDir := t.TempDir()
	writeTemplateRego(t, gkTemplate, filepath.Join(tmplDir, "flipflop"))
	ignore := []string{"--ignore", "*.yaml", "--ignore", "*.yml", "--ignore", "*.json"}
	for _, h := range hostsOf(t, "opa") {
		t.Run(h.String(), func(t *testing.T) {
			if _, stderr, code := runCmd(t, "..", h.Path, "check", "bundles/conftest"); code != 0 {
				t.Errorf("opa check bundles/conftest: %s", stderr)
			}
			if _, stderr, code := runCmd(t, "..", h.Path, "check", "--bundle", "bundles/flipflop.tar.gz"); code != 0 {
				t.Errorf("opa check --bundle bundles/flipflop.tar.gz: %s", stderr)
			}
			dirs, _ := filepath.Glob(filepath.Join(tmplDir, "*"))
			for _, d := range dirs {
				if _, stderr, code := runCmd(t, "..", h.Path, "check", d); code != 0 {
					t.Errorf("template %s: %s", filepath.Base(d), stderr)
				}
			}
			if regoTestedBy(t, h) {
				t.Logf("opa test policies: already run with this binary by make rego-test (FLIPFLOP_REGO_TESTED=%s)", os.Getenv("FLIPFLOP_REGO_TESTED"))
				return
			}
			// Each test gets five minutes, not opa test's 5 s: a guard against a
			// hang, not a speed check (speed is the benchmarks'). The oldest OPAs
			// are several times slower, and make compat runs every host at once:
			// OPA v1.7.1 replaying every order of a way out through the
			// Gatekeeper adapter took 28-41 s alone and passed 60 s in CI.
			out, stderr, code := runCmd(t, "..", h.Path, append(append([]string{"test", "--timeout=5m"}, ignore...), "policies")...)
			if code != 0 {
				t.Errorf("opa test policies: exit %d\n%s\n%s", code, tail(out, 40), stderr)
			}
		})
	}
}

// regoTestedBy reports whether FLIPFLOP_REGO_TESTED names h's binary: the opa
// whose `opa test policies` (make rego-test) already passed in
// this run. .ci/run sets it for make compat to make test's opa, the matrix's
// default: the same tests on the same binary need not run twice. The binary
// is compared by the file it resolves to, so any other opa of the matrix, and
// the default when FLIPFLOP_REGO_TESTED is unset (make compat alone), still
// runs them here.
func regoTestedBy(t *testing.T, h host) bool {
	t.Helper()
	tested := os.Getenv("FLIPFLOP_REGO_TESTED")
	if tested == "" {
		return false
	}
	a, err := filepath.EvalSymlinks(tested)
	if err != nil {
		t.Fatalf("FLIPFLOP_REGO_TESTED=%s: %v", tested, err)
	}
	b, err := filepath.EvalSymlinks(h.Path)
	if err != nil {
		t.Fatal(err)
	}
	return a == b
}

// writeTemplateRego writes a ConstraintTemplate's Rego (entry and libs) as
// files under dir.
func writeTemplateRego(t *testing.T, path, dir string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var tmpl struct {
		Spec struct {
			Targets []struct {
				Code []struct {
					Engine string `json:"engine"`
					Source struct {
						Version string   `json:"version"`
						Rego    string   `json:"rego"`
						Libs    []string `json:"libs"`
					} `json:"source"`
				} `json:"code"`
			} `json:"targets"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(b, &tmpl); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, target := range tmpl.Spec.Targets {
		for _, c := range target.Code {
			if c.Engine != "Rego" || c.Source.Version != "v1" {
				t.Fatalf("%s: code %s version %q, want Rego v1", path, c.Engine, c.Source.Version)
			}
			srcs := append([]string{c.Source.Rego}, c.Source.Libs...)
			for i, src := range srcs {
				if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%03d.rego", i)), []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
				n++
			}
		}
	}
	if n < 2 {
		t.Fatalf("%s: no Rego found", path)
	}
}

// tail returns the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
