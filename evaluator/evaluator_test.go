package evaluator_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/race"
	"github.com/open-policy-agent/opa/v1/ast"
)

// evaluators holds one strict Evaluator per settings: compiling the policies
// once per test binary, not once per case.
var evaluators sync.Map

// shared returns the strict Evaluator for settings s.
func shared(t testing.TB, s evaluator.Settings) *evaluator.Evaluator {
	t.Helper()
	key, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if ev, ok := evaluators.Load(string(key)); ok {
		return ev.(*evaluator.Evaluator)
	}
	ev, err := evaluator.New(context.Background(), s, evaluator.StrictBuiltinErrors())
	if err != nil {
		t.Fatal(err)
	}
	actual, _ := evaluators.LoadOrStore(string(key), ev)
	return actual.(*evaluator.Evaluator)
}

// check loads paths and evaluates them with settings.
func check(t testing.TB, s evaluator.Settings, paths ...string) *evaluator.Report {
	t.Helper()
	ev := shared(t, s)
	objs, errs := (&loader.Loader{}).Load(paths)
	if len(errs) > 0 {
		t.Fatalf("load errors: %v", errs)
	}
	report, err := ev.Evaluate(context.Background(), objs)
	if err != nil {
		t.Fatal(err)
	}
	return report
}

// names lists "Kind ns/name" of a finding's resources.
func names(f evaluator.Finding) []string {
	var out []string
	for _, r := range f.Resources {
		out = append(out, r.Kind+" "+r.Namespace+"/"+r.Name)
	}
	return out
}

func TestContradictionExample(t *testing.T) {
	report := check(t, evaluator.Settings{}, "../examples/contradiction")
	var rules []string
	for _, f := range report.Findings {
		rules = append(rules, f.Rule)
	}
	// The contradiction, and the warning that both Stages push to main.
	if !slices.Equal(rules, []string{"shared-branch-contradiction", "shared-write-branch"}) {
		t.Fatalf("findings %v", rules)
	}
	f := report.Findings[0]
	want := []string{"Stage acme/dev", "Stage acme/qa", "Application argocd/dev", "Application argocd/qa"}
	if f.Rule != "shared-branch-contradiction" || f.Severity != "error" || !slices.Equal(names(f), want) {
		t.Fatalf("got rule %s severity %s resources %v", f.Rule, f.Severity, names(f))
	}
	for _, r := range f.Resources {
		if r.File == "" || r.Line == 0 {
			t.Errorf("resource %s/%s has no file:line", r.Kind, r.Name)
		}
	}
	if f.Resources[0].File != "../examples/contradiction/kargo.yaml" || f.Resources[0].Line != 18 {
		t.Errorf("Stage dev located at %s:%d, want ../examples/contradiction/kargo.yaml:18", f.Resources[0].File, f.Resources[0].Line)
	}
	if !strings.Contains(f.Message, "github.com/acme/deploy @ main") || !strings.Contains(f.Message, "Auto-sync is on") {
		t.Errorf("message lacks pointer or auto-sync state: %s", f.Message)
	}
	for _, way := range []string{"Stage-specific branches (recommended)", "Stop setting desiredRevision", "updateTargetRevision: true", "Turning off auto-sync is not enough"} {
		if !strings.Contains(f.Remediation, way) {
			t.Errorf("remediation lacks %q", way)
		}
	}
	if report.Summary != (evaluator.Summary{Objects: 5, Error: 1, Warning: 1}) {
		t.Errorf("summary %+v", report.Summary)
	}
}

func TestFixExamplesAreClean(t *testing.T) {
	race.Sequential(t)
	dirs, _ := filepath.Glob("../examples/fix-*")
	if len(dirs) < 3 {
		t.Fatalf("want the three fix examples, found %v", dirs)
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			report := check(t, evaluator.Settings{}, dir)
			for _, f := range report.Findings {
				if f.Severity == evaluator.SeverityError {
					t.Errorf("unexpected error finding %s: %s", f.Rule, f.Message)
				}
			}
			if report.Summary.Objects == 0 {
				t.Error("no objects read")
			}
		})
	}
}

// TestRuleSamples checks every rule's samples: each folder under
// samples/fires must produce the rule, each under samples/clean must not.
func TestRuleSamples(t *testing.T) {
	race.Sequential(t)
	rules, _ := filepath.Glob("../policies/rules/*")
	ev := shared(t, evaluator.Settings{})
	ids := map[string]bool{}
	for _, r := range ev.Rules() {
		ids[r.ID] = true
	}
	for _, dir := range rules {
		id := strings.ReplaceAll(filepath.Base(dir), "_", "-")
		if !ids[id] {
			t.Errorf("rule folder %s has no rule with id %s", dir, id)
			continue
		}
		for _, kind := range []string{"fires", "clean"} {
			cases, _ := filepath.Glob(filepath.Join(dir, "samples", kind, "*"))
			if len(cases) == 0 {
				t.Errorf("%s has no samples/%s/ cases", dir, kind)
			}
			for _, c := range cases {
				t.Run(id+"/"+kind+"/"+filepath.Base(c), func(t *testing.T) {
					report := check(t, evaluator.Settings{}, c)
					fired := slices.ContainsFunc(report.Findings, func(f evaluator.Finding) bool { return f.Rule == id && f.Waived == nil })
					if fired != (kind == "fires") {
						t.Errorf("%s: rule %s fired=%v, want %v; findings: %+v", c, id, fired, kind == "fires", report.Findings)
					}
				})
			}
		}
	}
}

func TestRulesCarryMetadata(t *testing.T) {
	ev, err := evaluator.New(context.Background(), evaluator.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ev.Rules()) == 0 {
		t.Fatal("no rules")
	}
	for _, r := range ev.Rules() {
		if r.ID == "" || r.Title == "" || r.Description == "" || r.Remediation == "" {
			t.Errorf("rule %+v lacks metadata", r)
		}
		if evaluator.SeverityRank(r.Severity) == 0 {
			t.Errorf("rule %s has severity %q", r.ID, r.Severity)
		}
		// A severity for findings that rest on the assumed Kargo version is
		// a lower one: named, the version makes them surer, never less sure.
		if a := r.AssumedSeverity; a != "" && (evaluator.SeverityRank(a) == 0 || evaluator.SeverityRank(a) >= evaluator.SeverityRank(r.Severity)) {
			t.Errorf("rule %s has severity %q and severity_assumed %q", r.ID, r.Severity, a)
		}
		dir := filepath.Join("../policies/rules", strings.ReplaceAll(r.ID, "-", "_"))
		if _, err := os.Stat(dir); err != nil {
			t.Errorf("rule %s does not live in its own folder %s", r.ID, dir)
		}
	}
}

func TestSettingsReachThePolicies(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../examples/contradiction/argocd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// One Application tracks HEAD: the same pointer as main only while HEAD is taken to be main.
	patched := strings.Replace(string(src), "targetRevision: main", "targetRevision: HEAD", 1)
	if err := os.WriteFile(filepath.Join(dir, "argocd.yaml"), []byte(patched), 0o644); err != nil {
		t.Fatal(err)
	}
	kargo, _ := os.ReadFile("../examples/contradiction/kargo.yaml")
	if err := os.WriteFile(filepath.Join(dir, "kargo.yaml"), kargo, 0o644); err != nil {
		t.Fatal(err)
	}
	contradictions := func(r *evaluator.Report) int {
		n := 0
		for _, f := range r.Findings {
			if f.Rule == "shared-branch-contradiction" {
				n++
			}
		}
		return n
	}
	if got := contradictions(check(t, evaluator.Settings{}, dir)); got != 1 {
		t.Errorf("HEAD assumed main: %d contradictions, want 1", got)
	}
	if got := contradictions(check(t, evaluator.Settings{DefaultBranch: "trunk"}, dir)); got != 0 {
		t.Errorf("default branch trunk: %d contradictions, want 0", got)
	}
}

func TestModel(t *testing.T) {
	ev, err := evaluator.New(context.Background(), evaluator.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	objs, _ := (&loader.Loader{}).Load([]string{"../examples/contradiction"})
	s, err := ev.Model(context.Background(), objs)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Stages) != 2 || len(s.Applications) != 2 || len(s.Pins) != 2 || len(s.Writes) != 2 {
		t.Fatalf("summary %+v", s)
	}
	p := s.Pins[0]
	if p.Stage != "acme/dev" || p.Application != "argocd/dev" || p.Pointer.Key != "github.com/acme/deploy@main" || !p.Pointer.Floating || p.DesiredClass != "own" {
		t.Errorf("pin %+v", p)
	}
	if w := s.Writes[1]; w.Stage != "acme/qa" || w.Pointer.Text != "github.com/acme/deploy @ main" {
		t.Errorf("write %+v", w)
	}
	if a := s.Applications[0]; a.AutoSync != true || a.Sources[0].TargetRevision != "main" || a.Ref.Line != 2 {
		t.Errorf("application %+v", a)
	}
}

// An object without a value is an error, not a panic; NewObject refuses nil.
func TestObjectsWithoutValues(t *testing.T) {
	ev := shared(t, evaluator.Settings{})
	if _, err := ev.Evaluate(context.Background(), []evaluator.Object{{Path: "x.yaml", Line: 3, Kind: "Stage"}}); err == nil || !strings.Contains(err.Error(), "x.yaml:3") {
		t.Errorf("Evaluate: %v, want an error naming x.yaml:3", err)
	}
	if _, _, err := ev.Analyze(context.Background(), []evaluator.Object{{}}); err == nil {
		t.Error("Analyze: no error")
	}
	if _, err := ev.Model(context.Background(), []evaluator.Object{{}}); err == nil {
		t.Error("Model: no error")
	}
	if _, err := evaluator.NewObject("x.yaml", 1, nil); err == nil {
		t.Error("NewObject(nil): no error")
	}
	o, err := evaluator.NewObject("x.yaml", 1, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c", "namespace": "n"}})
	if err != nil || o.Kind != "ConfigMap" || o.Namespace != "n" || o.Name != "c" || o.Value == nil {
		t.Errorf("NewObject: %+v, %v", o, err)
	}
}

// The policies compile with every stage of OPA's compiler, strict: New skips
// the type and recursion checks, whose only work is finding the errors this
// test would.
func TestPoliciesCompileStrictly(t *testing.T) {
	if _, err := hostPolicies(); err != nil {
		t.Fatal(err)
	}
}

// hostPolicies is the embedded policies compiled as a host compiles them
// (every stage of OPA's compiler, strict, the conftest adapter included),
// once for the package's tests that query them directly.
var hostPolicies = sync.OnceValues(func() (*ast.Compiler, error) {
	mods, err := evaluator.Modules()
	if err != nil {
		return nil, err
	}
	c := ast.NewCompiler().WithStrict(true)
	if c.Compile(mods); c.Failed() {
		return nil, c.Errors
	}
	return c, nil
})

// compiledPolicies returns hostPolicies, failing t when they do not compile.
func compiledPolicies(t testing.TB) *ast.Compiler {
	t.Helper()
	c, err := hostPolicies()
	if err != nil {
		t.Fatal(err)
	}
	return c
}
