package tests

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// conftestArgs are the arguments every conftest of the matrix needs: the
// combined input, flipflop's namespace, and Rego v1 (the default from conftest
// v0.6x on; older releases default to v0 and must be told).
var conftestArgs = []string{"test", "--combine", "--namespace", "flipflop", "--rego-version", "v1"}

// conftestResult is one file's results in conftest's JSON output.
type conftestResult struct {
	Filename  string            `json:"filename"`
	Namespace string            `json:"namespace"`
	Failures  []conftestFinding `json:"failures"`
	Warnings  []conftestFinding `json:"warnings"`
}

type conftestFinding struct {
	Msg      string `json:"msg"`
	Metadata struct {
		Rule      string     `json:"rule"`
		Resources []resource `json:"resources"`
		// Loc is where conftest releases that do not read _loc (v0.59) leave it.
		Loc *conftestLoc `json:"_loc"`
	} `json:"metadata"`
	Loc *conftestLoc `json:"loc"`
}

type conftestLoc struct {
	File string      `json:"file"`
	Line json.Number `json:"line"`
}

// conftestRun runs conftest h with flipflop's policies on dir (relative to the
// repository root), extra arguments first, and returns its JSON results and exit code.
func conftestRun(t *testing.T, h host, extra []string, dir string) ([]conftestResult, int) {
	t.Helper()
	args := append(slices.Clone(extra), "-o", "json", dir)
	stdout, stderr, code := runCmd(t, "..", h.Path, args...)
	if code > 1 {
		t.Fatalf("%s %s: exit %d: %s", h, strings.Join(args, " "), code, stderr)
	}
	var results []conftestResult
	if err := json.Unmarshal([]byte(stdout), &results); err != nil {
		t.Fatalf("%s JSON: %v\n%s\n%s", h, err, stdout, stderr)
	}
	return results, code
}

// conftestVerdicts runs conftest h with flipflop's policies on dir.
func conftestVerdicts(t *testing.T, h host, policyArgs []string, dir string) []string {
	t.Helper()
	results, _ := conftestRun(t, h, append(append(slices.Clone(conftestArgs), "--no-fail"), policyArgs...), dir)
	var vs []verdict
	for _, r := range results {
		for _, f := range append(r.Failures, r.Warnings...) {
			vs = append(vs, verdictOf(f.Metadata.Rule, f.Metadata.Resources))
		}
	}
	return sortVerdicts(vs)
}

// flipflopOnly reports a verdict of a rule that reads what only flipflop's own
// loader knows (a repeated key: conftest parses YAML itself, keeping the last
// value as flipflop does, but cannot say a key was repeated).
func flipflopOnly(v string) bool { return strings.HasPrefix(v, "duplicate-key ") }

// For every example and sample estate, every conftest of the matrix running the
// generated policy folder (bundles/conftest) reports the same (rule, resources)
// set as flipflop check, and so does every opa of the matrix evaluating the
// generated OPA bundle (opa eval -b).
//
// Each opa evaluates the bundle on every estate's combined input in one run
// (bundleVerdictsOf: one compilation of the bundle per opa, not one per
// estate, which was most of this test's time); each estate is still its own
// input document.
func TestCompatConftestAndOPAAgreeWithFlipflop(t *testing.T) {
	t.Parallel()
	bin := tool(t, "FLIPFLOP_BIN")
	conftests := hostsOf(t, "conftest")
	opas := hostsOf(t, "opa")
	policy := []string{"-p", "bundles/conftest"}
	dirs := estates(t)
	var mu sync.Mutex
	wants := map[string][]string{}
	inputs := map[string]json.RawMessage{}
	// The group returns when every estate's parallel subtest has.
	t.Run("conftest", func(t *testing.T) {
		for _, dir := range dirs {
			t.Run(dir, func(t *testing.T) {
				t.Parallel() // processes only: one per CPU at a time (go test -parallel)
				want := slices.DeleteFunc(flipflopVerdicts(t, bin, dir), flipflopOnly)
				for _, c := range conftests {
					if got := conftestVerdicts(t, c, policy, dir); !slices.Equal(got, want) {
						t.Errorf("%s %v\nflipflop %v", c, got, want)
					}
				}
				input := combinedInput(t, conftests[len(conftests)-1], dir)
				b, err := os.ReadFile(input)
				if err != nil {
					t.Fatal(err)
				}
				mu.Lock()
				defer mu.Unlock()
				wants[dir], inputs[dir] = want, b
			})
		}
	})
	if len(inputs) != len(dirs) {
		t.Fatalf("combined inputs for %d of %d estates", len(inputs), len(dirs))
	}
	all, err := json.Marshal(inputs)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "inputs.json")
	if err := os.WriteFile(in, all, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, o := range opas {
		t.Run(o.String(), func(t *testing.T) {
			t.Parallel()
			got := bundleVerdictsOf(t, o, in)
			if len(got) != len(dirs) {
				t.Errorf("%s eval -b: findings for %d estates, want %d", o, len(got), len(dirs))
			}
			for _, dir := range dirs {
				if _, ok := got[dir]; !ok {
					t.Errorf("%s: %s eval -b: no findings (undefined)", dir, o)
				} else if !slices.Equal(got[dir], wants[dir]) {
					t.Errorf("%s: %s eval -b %v\nflipflop %v", dir, o, got[dir], wants[dir])
				}
			}
		})
	}
}

// The promise, on every conftest of the matrix: the policies `flipflop export
// conftest` writes find the seed contradiction, the fix examples have no
// failure, each failure points at a file of the estate, and without --combine
// the run says that it cannot check anything instead of passing silently.
func TestCompatConftestSeedContradiction(t *testing.T) {
	t.Parallel()
	bin := tool(t, "FLIPFLOP_BIN")
	exported := filepath.Join(t.TempDir(), "policy")
	if _, stderr, code := runCmd(t, "..", bin, "export", "conftest", exported); code != 0 {
		t.Fatalf("flipflop export conftest: exit %d: %s", code, stderr)
	}
	policy := []string{"-p", exported}
	fixes, _ := filepath.Glob("../examples/fix-*")
	if len(fixes) < 3 {
		t.Fatalf("want the fix examples, found %v", fixes)
	}
	for _, c := range hostsOf(t, "conftest") {
		t.Run(c.String(), func(t *testing.T) {
			results, code := conftestRun(t, c, append(slices.Clone(conftestArgs), policy...), "examples/contradiction")
			if code != 1 {
				t.Errorf("contradiction: exit %d, want 1 (failures)", code)
			}
			var rules []string
			for _, r := range results {
				for _, f := range r.Failures {
					rules = append(rules, f.Metadata.Rule)
					loc := f.Loc
					if loc == nil {
						loc = f.Metadata.Loc
					}
					if loc == nil || !strings.HasPrefix(loc.File, "examples/contradiction/") || loc.Line.String() == "" {
						t.Errorf("failure without a location in the estate: %+v", loc)
					}
					if strings.Count(f.Msg, "["+f.Metadata.Rule+"]") != 1 {
						t.Errorf("message should name its rule once: %q", f.Msg)
					}
				}
			}
			if !slices.Contains(rules, "shared-branch-contradiction") {
				t.Errorf("contradiction: failures %v lack shared-branch-contradiction", rules)
			}
			for _, dir := range fixes {
				dir = strings.TrimPrefix(dir, "../")
				results, code := conftestRun(t, c, append(slices.Clone(conftestArgs), policy...), dir)
				for _, r := range results {
					for _, f := range r.Failures {
						t.Errorf("%s: failure %s", dir, f.Msg)
					}
				}
				if code != 0 {
					t.Errorf("%s: exit %d, want 0", dir, code)
				}
			}
			// Without --combine: every document is checked alone; say so.
			plain := []string{"test", "--namespace", "flipflop", "--rego-version", "v1"}
			results, code = conftestRun(t, c, append(plain, policy...), "examples/contradiction")
			assertNotCombined(t, "not combined", results, code)
		})
	}
}

// conftestRegoV1 is what conftest h needs to read flipflop's Rego v1: nothing
// from v0.65 on (their default), --rego-version v1 before.
func conftestRegoV1(h host) []string {
	var major, minor int
	if _, err := fmt.Sscanf(h.Version, "v%d.%d", &major, &minor); err == nil && major == 0 && minor < 65 {
		return []string{"--rego-version", "v1"}
	}
	return nil
}

// conftestByNamespace runs conftest h on dir and returns the verdicts of its
// failures and warnings by the namespace that reported them, the rules of its
// failures, and the exit code.
func conftestByNamespace(t *testing.T, h host, args []string, dir string) (map[string][]string, []string, int) {
	t.Helper()
	results, code := conftestRun(t, h, args, dir)
	byNS := map[string][]string{}
	var failed []string
	for _, r := range results {
		var vs []verdict
		for _, f := range r.Failures {
			failed = append(failed, f.Metadata.Rule)
			vs = append(vs, verdictOf(f.Metadata.Rule, f.Metadata.Resources))
		}
		for _, f := range r.Warnings {
			vs = append(vs, verdictOf(f.Metadata.Rule, f.Metadata.Resources))
		}
		if len(vs) > 0 {
			byNS[r.Namespace] = append(byNS[r.Namespace], sortVerdicts(vs)...)
		}
	}
	return byNS, failed, code
}

// The command a first-time user types, without --namespace, on every conftest
// of the matrix: conftest's default namespace is main, and the policy folder
// answers there with what --namespace flipflop reports (each finding once),
// instead of "0 tests" and exit 0. Without --combine the default namespace
// warns as flipflop's does. (A policy folder without package main gives this
// command "0 tests" and exit 0, whatever the estate holds.)
func TestCompatConftestDefaultNamespace(t *testing.T) {
	t.Parallel()
	const dir = "examples/contradiction"
	for _, c := range hostsOf(t, "conftest") {
		t.Run(c.String(), func(t *testing.T) {
			base := append(append([]string{"test"}, conftestRegoV1(c)...), "-p", "bundles/conftest")
			combined := append(slices.Clone(base), "--combine")
			byNS, failed, code := conftestByNamespace(t, c, combined, dir)
			if code != 1 || !slices.Contains(failed, "shared-branch-contradiction") {
				t.Errorf("no --namespace: exit %d, failures %v; want exit 1 and shared-branch-contradiction", code, failed)
			}
			want := byNS["main"]
			if len(byNS) != 1 || len(want) == 0 {
				t.Fatalf("no --namespace: findings by namespace %v, want them in main only", byNS)
			}
			if got := slices.Compact(slices.Clone(want)); !slices.Equal(got, want) {
				t.Errorf("no --namespace: a finding reported twice: %v", want)
			}
			byNS, _, code = conftestByNamespace(t, c, append(slices.Clone(combined), "--namespace", "flipflop"), dir)
			if code != 1 || len(byNS) != 1 || !slices.Equal(byNS["flipflop"], want) {
				t.Errorf("--namespace flipflop: exit %d, findings by namespace %v; want exit 1 and %v in flipflop", code, byNS, want)
			}
			// --all-namespaces queries both packages, main and flipflop, and
			// conftest lists what each reports (a policy cannot tell which
			// namespaces a run queries): each gives the findings once, and no
			// other package (the model's, the rules') reports anything.
			byNS, _, code = conftestByNamespace(t, c, append(slices.Clone(combined), "--all-namespaces"), dir)
			if code != 1 || len(byNS) != 2 || !slices.Equal(byNS["main"], want) || !slices.Equal(byNS["flipflop"], want) {
				t.Errorf("--all-namespaces: exit %d, findings by namespace %v; want exit 1 and %v in main and in flipflop", code, byNS, want)
			}
			// Without --combine: each document alone, a not-combined warning each.
			results, code := conftestRun(t, c, base, dir)
			assertNotCombined(t, "not combined, no --namespace", results, code)
		})
	}
}

// combinedInput is conftest's combined input for dir, as a file: what the
// bundle is evaluated on.
func combinedInput(t *testing.T, conftest host, dir string) string {
	t.Helper()
	// Every YAML file under dir, as conftest test DIR reads a directory.
	var rel []string
	_ = filepath.WalkDir(filepath.Join("..", dir), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")) {
			rel = append(rel, strings.TrimPrefix(p, "../"))
		}
		return nil
	})
	input, stderr, code := runCmd(t, "..", conftest.Path, append([]string{"parse", "--combine"}, rel...)...)
	if code != 0 {
		t.Fatalf("conftest parse: %s", stderr)
	}
	in := filepath.Join(t.TempDir(), "input.json")
	if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
		t.Fatal(err)
	}
	return in
}

// bundleVerdictsOf evaluates the generated OPA bundle with opa h, in one run,
// on each estate's input: inputs is a file holding one JSON object of the
// combined inputs by estate, and each is the whole input document of its
// evaluation (with input as), as -i would make it.
func bundleVerdictsOf(t *testing.T, h host, inputs string) map[string][]string {
	t.Helper()
	query := "{estate: findings | some estate, estate_input in input; findings := data.flipflop.findings with input as estate_input}"
	out, stderr, code := runCmd(t, "..", h.Path, "eval", "-b", "bundles/flipflop.tar.gz", "-i", inputs, "--format", "raw", query)
	if code != 0 {
		t.Fatalf("%s eval: %s", h, stderr)
	}
	var byEstate map[string][]struct {
		Rule      string     `json:"rule"`
		Resources []resource `json:"resources"`
		Waived    any        `json:"waived"`
	}
	if err := json.Unmarshal([]byte(out), &byEstate); err != nil {
		t.Fatalf("%s eval output: %v\n%s", h, err, tail(out, 20))
	}
	got := map[string][]string{}
	for estate, findings := range byEstate {
		var vs []verdict
		for _, f := range findings {
			if f.Waived == nil {
				vs = append(vs, verdictOf(f.Rule, f.Resources))
			}
		}
		got[estate] = sortVerdicts(vs)
	}
	return got
}

// assertNotCombined checks a conftest run without --combine: no failure, a
// not-combined warning naming --combine, exit 0.
func assertNotCombined(t *testing.T, what string, results []conftestResult, code int) {
	t.Helper()
	warned := 0
	for _, r := range results {
		if len(r.Failures) > 0 {
			t.Errorf("%s: failures %v", what, r.Failures)
		}
		for _, w := range r.Warnings {
			if w.Metadata.Rule == "not-combined" && strings.Contains(w.Msg, "--combine") {
				warned++
			}
		}
	}
	if warned == 0 || code != 0 {
		t.Errorf("%s: %d not-combined warnings, exit %d; want warnings and exit 0", what, warned, code)
	}
}
