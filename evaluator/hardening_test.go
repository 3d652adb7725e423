package evaluator_test

import (
	"context"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// Malformed objects never make the evaluation fail, even with built-in errors
// turned into failures, and they are reported as invalid-object warnings (a
// step's config as invalid-step-config ones; a null the API server drops,
// such as steps: null, is no problem).
func TestMalformedObjectsNeverFailEvaluation(t *testing.T) {
	race.Sequential(t)
	malformed, err := os.ReadFile("testdata/malformed.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, errs := loader.LoadBytes("malformed.yaml", malformed)
	if len(errs) > 0 {
		t.Fatalf("load: %v", errs)
	}
	ev, err := evaluator.New(context.Background(), evaluator.Settings{}, evaluator.StrictBuiltinErrors())
	if err != nil {
		t.Fatal(err)
	}
	report, err := ev.Evaluate(context.Background(), objs)
	if err != nil {
		t.Fatalf("evaluation failed on malformed objects: %v", err)
	}
	if _, err := ev.Model(context.Background(), objs); err != nil {
		t.Fatalf("model failed on malformed objects: %v", err)
	}
	var fields []string
	for _, f := range report.Findings {
		if f.Severity == evaluator.SeverityError && f.Rule != "invalid-waiver" { // a malformed waiver annotation is an error by design
			t.Errorf("error finding from malformed input: %s %s", f.Rule, f.Message)
		}
		if f.Rule == "invalid-object" {
			fields = append(fields, f.Resources[0].Name+" "+f.Details["field"].(string))
		}
		if f.Rule == "invalid-step-config" && f.Details["kind"] == "schema" {
			fields = append(fields, f.Resources[0].Name+" "+f.Details["path"].(string))
		}
	}
	for _, want := range []string{
		"no-spec spec",
		"number-source spec.source",
		"wrong-steps spec.promotionTemplate.spec.steps[0]",
		"wrong-steps /spec/promotionTemplate/spec/steps/2",
	} {
		if !slices.Contains(fields, want) {
			t.Errorf("no invalid-object for %q; got %v", want, fields)
		}
	}
}

// The evaluator is safe for concurrent use (run under -race by make test), and
// concurrent evaluations return identical reports.
func TestConcurrentEvaluate(t *testing.T) {
	ev, err := evaluator.New(context.Background(), evaluator.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	objs, _ := (&loader.Loader{}).Load([]string{"../examples"})
	var wg sync.WaitGroup
	out := make([][]byte, 8)
	for i := range out {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r, err := ev.Evaluate(context.Background(), objs)
			if err != nil {
				t.Error(err)
				return
			}
			out[i], _ = json.Marshal(r)
		}()
	}
	wg.Wait()
	for i := range out {
		if string(out[i]) != string(out[0]) {
			t.Fatalf("evaluation %d differs", i)
		}
	}
}

// Evaluators share the compiled policies but not their settings: built and
// used at once, with different default branches, each sees its own (run under
// -race, this also covers the compiler they share). One Application of the
// contradiction tracks HEAD: it meets the other on main only while HEAD is
// taken to be main.
func TestEvaluatorsShareOnlyThePolicies(t *testing.T) {
	src, err := os.ReadFile("../examples/contradiction/argocd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	kargo, err := os.ReadFile("../examples/contradiction/kargo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	apps, _ := loader.LoadBytes("argocd.yaml", []byte(strings.Replace(string(src), "targetRevision: main", "targetRevision: HEAD", 1)))
	stages, _ := loader.LoadBytes("kargo.yaml", kargo)
	objs := append(apps, stages...)
	branches := map[string]int{"": 1, "trunk": 0, "main": 1, "develop": 0}
	names := []string{"", "trunk", "main", "develop"}
	var wg sync.WaitGroup
	got := make([]int, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ev, err := evaluator.New(context.Background(), evaluator.Settings{DefaultBranch: names[i%len(names)]})
			if err != nil {
				t.Error(err)
				return
			}
			r, err := ev.Evaluate(context.Background(), objs)
			if err != nil {
				t.Error(err)
				return
			}
			for _, f := range r.Findings {
				if f.Rule == "shared-branch-contradiction" {
					got[i]++
				}
			}
		}()
	}
	wg.Wait()
	for i, n := range got {
		if b := names[i%len(names)]; n != branches[b] {
			t.Errorf("evaluator %d (default branch %q): %d contradictions, want %d", i, b, n, branches[b])
		}
	}
}
