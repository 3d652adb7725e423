package evaluator

import (
	"context"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/internal/estate"
	"github.com/flipflop-dev/flipflop/internal/evalcount"
	"github.com/flipflop-dev/flipflop/internal/race"
	"github.com/open-policy-agent/opa/v1/rego"
	"sigs.k8s.io/yaml"
)

// evaluations counts the expression evaluations of query q over objs
// (evalcount: exact, the same on every machine).
func evaluations(t *testing.T, e *Evaluator, q string, objs []Object) int {
	t.Helper()
	pq, err := e.prepare(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	in, err := input(objs)
	if err != nil {
		t.Fatal(err)
	}
	counter := &evalcount.Counter{}
	if _, err := pq.Eval(context.Background(), rego.EvalParsedInput(in), rego.EvalQueryTracer(counter)); err != nil {
		t.Fatal(err)
	}
	return counter.Count()
}

// Analyze (explain, graph, fix, diagnose) costs the findings and the model
// view's own rendering, not the model twice: at most 10% more evaluations
// than Evaluate on the benchmark estate. A query naming the findings and the
// view side by side under one `with` cost 56% more (issue 21: explain and
// graph took 1.6 times as long as check).
func TestAnalyzeEvaluatesTheModelOnce(t *testing.T) {
	t.Parallel() // shares nothing mutable, times nothing: beside the package's other long tests
	if testing.Short() {
		t.Skip("profiles a 600-object evaluation three times")
	}
	race.Sequential(t)
	files, _ := estate.Generate(estate.Options{Objects: 600, Seed: 1})
	var objs []Object
	for _, f := range files {
		for _, doc := range strings.Split(string(f.Content), "\n---\n") {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatal(err)
			}
			if m == nil {
				continue
			}
			o, err := NewObject(f.Path, 1, m)
			if err != nil {
				t.Fatal(err)
			}
			objs = append(objs, o)
		}
	}
	e, err := New(context.Background(), Settings{Today: "2026-01-01"})
	if err != nil {
		t.Fatal(err)
	}
	check := evaluations(t, e, Query, objs)
	for _, o := range []modelOptions{{}, {detailed: true}} {
		n := evaluations(t, e, analyzeQuery(o), objs)
		ratio := float64(n) / float64(check)
		t.Logf("%s: %d evaluations, %.3f times check's %d", analyzeQuery(o), n, ratio, check)
		if ratio > 1.1 && !o.detailed {
			t.Errorf("Analyze costs %.2f times Evaluate (at most 1.1)", ratio)
		}
		if ratio > 1.5 {
			t.Errorf("Analyze with the detailed view costs %.2f times Evaluate (at most 1.5)", ratio)
		}
	}
}
