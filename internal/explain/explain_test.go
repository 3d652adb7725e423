package explain

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/race"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// sharedEvaluator compiles the policies once for all tests.
var sharedEvaluator = sync.OnceValues(func() (*evaluator.Evaluator, error) {
	return evaluator.New(context.Background(), evaluator.Settings{})
})

// rules are the bundle's rules.
func rules(t *testing.T) []evaluator.Rule {
	t.Helper()
	ev, err := sharedEvaluator()
	if err != nil {
		t.Fatal(err)
	}
	return ev.Rules()
}

func load(t *testing.T, path string) (*evaluator.Model, *evaluator.Report, []evaluator.Object) {
	t.Helper()
	ctx := context.Background()
	ev, err := sharedEvaluator()
	if err != nil {
		t.Fatal(err)
	}
	objs, errs := (&loader.Loader{}).Load([]string{path})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r, m, err := ev.Analyze(ctx, objs)
	if err != nil {
		t.Fatal(err)
	}
	return m, r, objs
}

// TestGolden compares the explain output of estates with testdata/<name>/explain.golden
// (go test ./internal/explain -update rewrites them).
func TestGolden(t *testing.T) {
	race.Sequential(t)
	for name, estate := range map[string]string{
		"pipeline":      "testdata/pipeline",
		"mixed":         "testdata/mixed",
		"contradiction": "../../examples/contradiction",
		"foreign":       "../../policies/rules/foreign_branch_writer/samples/fires/head-pinned-main-pushed",
		"clean":         "../../examples/fix-stage-branches",
	} {
		t.Run(name, func(t *testing.T) {
			m, r, _ := load(t, estate)
			var out bytes.Buffer
			if err := Write(&out, m, r, rules(t)); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", name+".txt")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test ./internal/explain -update)", err)
			}
			if out.String() != string(want) {
				t.Errorf("explain %s differs from %s (go test ./internal/explain -update rewrites it):\n%s", estate, golden, out.String())
			}
		})
	}
}

func TestPipelineOrderAndFlipFlop(t *testing.T) {
	m, r, _ := load(t, "testdata/pipeline")
	ts := Build(m, r, rules(t))
	if len(ts) != 1 {
		t.Fatalf("%d timelines, want 1", len(ts))
	}
	tl := ts[0]
	var order []string
	for _, s := range tl.Steps {
		order = append(order, s.Stage)
	}
	// Pipeline order (test → stage → prod), not alphabetical, then the first again.
	if want := []string{"shop/test", "shop/stage", "shop/prod", "shop/test"}; !slices.Equal(order, want) {
		t.Errorf("steps %v, want %v", order, want)
	}
	// After every step exactly one Stage is Healthy: the one just promoted.
	for i, s := range tl.Steps {
		for stage, h := range s.Health {
			want := NotPromoted
			switch {
			case stage == s.Stage:
				want = Healthy
			case slices.ContainsFunc(tl.Steps[:i], func(p Step) bool { return p.Stage == stage }):
				want = Unhealthy
			}
			if h != want {
				t.Errorf("step %d (%s): %s is %s, want %s", i+1, s.Stage, stage, h, want)
			}
		}
		if want := letters(i + 1); s.Commit != want || s.Head != want {
			t.Errorf("step %d pushes %q, head %q; want %q", i+1, s.Commit, s.Head, want)
		}
	}
	if !strings.Contains(tl.Issue, `Not all sources of Application "shop-test" in namespace "argocd" are synced to the desired revisions. Issues: Source 0 with RepoURL https://git.example.com/shop/deploy.git of Application "shop-test" in namespace "argocd" does not match the desired revision "<SHA of A>".`) {
		t.Errorf("issue %q", tl.Issue)
	}
}

func TestNoContradiction(t *testing.T) {
	m, r, _ := load(t, "../../examples/fix-no-desired-revision")
	if ts := Build(m, r, rules(t)); len(ts) != 0 {
		t.Errorf("timelines on a clean estate: %+v", ts)
	}
}

// pointer builds a floating branch pointer for synthetic models.
func pointer(branch string) evaluator.Pointer {
	return evaluator.Pointer{Key: "git.example.com/x@" + branch, Known: true, Floating: true, Repo: "git.example.com/x",
		Kind: "branch", Name: branch, Text: "git.example.com/x @ " + branch}
}

func pin(stage, app, class string, p evaluator.Pointer) evaluator.Pin {
	ns, name, _ := strings.Cut(app, "/")
	return evaluator.Pin{Stage: stage, Application: app, ApplicationRef: evaluator.Resource{Kind: "Application", Namespace: ns, Name: name},
		RepoURL: "https://git.example.com/x.git", Pointer: p, DesiredClass: class, DesiredRevision: "${{ x }}"}
}

// finding reports a contradiction on pointer key about every pin and write of
// m on it, as the rule would; it numbers m's pins and writes.
func finding(m *evaluator.Model, key string) *evaluator.Report {
	f := evaluator.Finding{Rule: "shared-branch-contradiction", Severity: "error", Key: key, Pointer: key}
	for i := range m.Pins {
		m.Pins[i].ID = fmt.Sprintf("pin-%d", i)
		if m.Pins[i].Pointer.Key == key {
			f.Pins = append(f.Pins, m.Pins[i].ID)
		}
	}
	for i := range m.Writes {
		m.Writes[i].ID = fmt.Sprintf("write-%d", i)
		if m.Writes[i].Pointer.Key == key {
			f.Writes = append(f.Writes, m.Writes[i].ID)
		}
	}
	return &evaluator.Report{Findings: []evaluator.Finding{f}}
}

// timelineRules are rules for synthetic reports.
var timelineRules = []evaluator.Rule{{ID: "shared-branch-contradiction", Timeline: true}}

func TestExpressionPinIsUnknown(t *testing.T) {
	main := pointer("main")
	m := &evaluator.Model{
		Pins:   []evaluator.Pin{pin("p/a", "argocd/a", "own", main), pin("p/b", "argocd/b", "expression", main)},
		Writes: []evaluator.Write{{Stage: "p/a", Pointer: main}, {Stage: "p/b", Pointer: main}},
	}
	ts := Build(m, finding(m, main.Key), timelineRules)
	if len(ts) != 1 {
		t.Fatal("no timeline")
	}
	last := ts[0].Steps[len(ts[0].Steps)-1]
	if last.Health["p/b"] != Unknown || last.Health["p/a"] != Healthy {
		t.Errorf("health %v", last.Health)
	}
}

func TestOwnCommitElsewhere(t *testing.T) {
	main, own := pointer("main"), pointer("env/b")
	m := &evaluator.Model{
		Pins:   []evaluator.Pin{pin("p/a", "argocd/a", "own", main), pin("p/b", "argocd/b", "own", main)},
		Writes: []evaluator.Write{{Stage: "p/a", Pointer: main}, {Stage: "p/b", Pointer: own}},
	}
	ts := Build(m, finding(m, main.Key), timelineRules)
	var out strings.Builder
	ts[0].write(&out)
	if !strings.Contains(out.String(), "b pushes its own commit B to git.example.com/x @ env/b, never to main") {
		t.Errorf("output:\n%s", out.String())
	}
	for _, s := range ts[0].Steps {
		if s.Health["p/b"] == Healthy {
			t.Errorf("b Healthy at step %+v", s)
		}
	}
}

func TestManyStagesAreCapped(t *testing.T) {
	main := pointer("main")
	m := &evaluator.Model{}
	for i := range MaxStages + 3 {
		s := fmt.Sprintf("p/s%02d", i)
		m.Pins = append(m.Pins, pin(s, fmt.Sprintf("argocd/a%02d", i), "own", main))
		m.Writes = append(m.Writes, evaluator.Write{Stage: s, Pointer: main})
	}
	ts := Build(m, finding(m, main.Key), timelineRules)
	if len(ts[0].Steps) != MaxStages+1 || len(ts[0].Omitted) != 3 || len(ts[0].Pinners) != MaxStages || len(ts[0].Writers) != MaxStages {
		t.Errorf("%d steps, %d omitted, %d pinners, %d writers", len(ts[0].Steps), len(ts[0].Omitted), len(ts[0].Pinners), len(ts[0].Writers))
	}
	var out strings.Builder
	ts[0].write(&out)
	if !strings.Contains(out.String(), "Left out of the replay below: s08, s09 and s10.") {
		t.Errorf("omitted Stages not named:\n%s", out.String())
	}
}

func TestLetters(t *testing.T) {
	for n, want := range map[int]string{1: "A", 2: "B", 26: "Z", 27: "AA", 28: "AB", 52: "AZ", 53: "BA", 702: "ZZ", 703: "AAA"} {
		if got := letters(n); got != want {
			t.Errorf("letters(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestStageDepthsSurviveCycles(t *testing.T) {
	dir := t.TempDir()
	yaml := `apiVersion: kargo.akuity.io/v1alpha1
kind: Stage
metadata: {name: a, namespace: p}
spec: {requestedFreight: [{origin: {kind: Warehouse, name: w}, sources: {stages: [b]}}]}
---
apiVersion: kargo.akuity.io/v1alpha1
kind: Stage
metadata: {name: b, namespace: p}
spec: {requestedFreight: [{origin: {kind: Warehouse, name: w}, sources: {stages: [a, missing]}}]}
---
apiVersion: kargo.akuity.io/v1alpha1
kind: Stage
metadata: {name: c, namespace: p}
spec: {requestedFreight: [{origin: {kind: Warehouse, name: w}, sources: {direct: true}}]}
`
	if err := os.WriteFile(filepath.Join(dir, "s.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	m, _, _ := load(t, dir)
	d := stageDepths(m)
	if len(d) != 3 || d["p/c"] != 0 {
		t.Errorf("depths %v", d)
	}
}
