package evaluator_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// reportJSON evaluates objs with an evaluator of the given parallelism and
// returns the findings as JSON.
func reportJSON(t *testing.T, workers int, objs []evaluator.Object) string {
	t.Helper()
	e, err := evaluator.New(context.Background(), evaluator.Settings{Today: "2026-01-01"}, evaluator.Parallelism(workers))
	if err != nil {
		t.Fatal(err)
	}
	return report(t, e, objs)
}

// Evaluating invalid-object's problems in parallel chunks and the rest in one
// query gives the report of one query, byte for byte: on the benchmark estate
// with wrong types planted in its first, middle and last objects (so each
// lands in a different chunk), and on the real-world corpus (under the race
// detector: a 600-object estate, two chunks, no corpus).
func TestParallelEvaluationMatchesOneQuery(t *testing.T) {
	t.Parallel() // shares nothing mutable, times nothing: beside the package's other long tests
	if testing.Short() {
		t.Skip("evaluates the 2,000-object estate four times")
	}
	objs := budgetEstate(t)
	if race.Enabled {
		// The race detector makes each evaluation four times slower; 600
		// objects still split into two chunks, and the corpus is skipped.
		objs, _ = generated(t, 600)
	}
	for _, i := range []int{0, len(objs) / 2, len(objs) - 1} {
		bad, err := evaluator.NewObject(objs[i].Path, objs[i].Line, map[string]any{
			"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
			"metadata": map[string]any{"name": "planted-" + string(rune('a'+i%26)), "namespace": "argocd"},
			"spec":     map[string]any{"source": map[string]any{"repoURL": 5.0, "targetRevision": true}},
		})
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs[:i:i], append([]evaluator.Object{bad}, objs[i:]...)...)
	}
	one := reportJSON(t, 1, objs)
	for _, w := range []int{2, 3, 8} {
		if got := reportJSON(t, w, objs); got != one {
			t.Errorf("%d workers: the report differs from one query's", w)
		}
	}
	var r evaluator.Report
	if err := json.Unmarshal([]byte(one), &r); err != nil {
		t.Fatal(err)
	}
	planted := 0
	for _, f := range r.Findings {
		if f.Rule == "invalid-object" {
			planted++
		}
	}
	if planted != 6 {
		t.Errorf("%d invalid-object findings, want 6 (two fields in each of three planted objects)", planted)
	}

	if race.Enabled {
		return
	}
	root := filepath.Join("..", "..", "shared", "corpus", "real-world")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("corpus not here: %v", err)
	}
	corpus, errs := (&loader.Loader{}).Load([]string{root})
	_ = errs // the corpus has files that are not manifests; what loads is enough here
	if len(corpus) < 2*250 {
		t.Fatalf("%d corpus objects: too few to split", len(corpus))
	}
	if one, two := reportJSON(t, 1, corpus), reportJSON(t, 2, corpus); one != two {
		t.Error("corpus: two workers' report differs from one query's")
	}
}
