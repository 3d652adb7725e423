package evaluator_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/estate"
	"github.com/flipflop-dev/flipflop/internal/evalcount"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// evaluations counts the expression evaluations of every rule over the
// estate shape at size n: evalcount, so the count is exact and the same on
// any machine (a time would not be).
func evaluations(t *testing.T, shape string, n int) int {
	t.Helper()
	files, err := estate.Shape(shape, n)
	if err != nil {
		t.Fatal(err)
	}
	return evaluationsOf(t, files)
}

// evaluationsOf counts the expression evaluations of every rule over files,
// through the conftest adapter's query (a host's, with its `with`).
func evaluationsOf(t *testing.T, files []estate.File) int {
	t.Helper()
	var items []*ast.Term
	for _, f := range files {
		objs, errs := loader.LoadBytes(f.Path, f.Content)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		for _, o := range objs {
			items = append(items, ast.ObjectTerm(
				ast.Item(ast.StringTerm("path"), ast.StringTerm(o.Path)),
				ast.Item(ast.StringTerm("line"), ast.IntNumberTerm(o.Line)),
				ast.Item(ast.StringTerm("contents"), ast.NewTerm(o.Value)),
			))
		}
	}
	counter := &evalcount.Counter{}
	opts := []func(*rego.Rego){
		rego.Compiler(compiledPolicies(t)),
		rego.Query(evaluator.Query),
		rego.ParsedInput(ast.NewArray(items...)),
		rego.QueryTracer(counter),
	}
	if _, err := rego.New(opts...).Eval(context.Background()); err != nil {
		t.Fatal(err)
	}
	return counter.Count()
}

// Doubling an estate at most doubles the policies' work, for every shape
// built around one join (issue 15): label selectors, git-generator name
// patterns, merge generators, many Stages on one branch, one repository for
// every Application; and a matrix of two lists of n elements (issue 20: n²
// Applications, counted but not built past the bound, so the work follows the
// lists, not their product); a Stage of n pushes and n git-open-pr steps, and n
// Stage, template and PromotionTask vars (each read of the pull requests or of
// the vars scanned them all: ×3.86 and ×3.95 at these sizes before they were
// looked up by alias and by name); a Stage of n vars and n steps with a var
// each (step-vars: ×3.70 before a step's vars were layered over the Stage's
// instead of merged with a copy of them). A join that scans instead of looking up by
// key makes the ratio grow with n: before the joins were indexed it was 2.27,
// 2.18 and 2.41 for the first three at these sizes (and grows further with n);
// now every shape is under 2 (ratios below 2 come from the fixed cost of the
// policies).
// The bound is on the count of evaluations, not on time: the test cannot flake
// on a busy machine; the benchmarks (make bench, row 7) report the times.
func TestPolicyWorkGrowsLinearly(t *testing.T) {
	race.Sequential(t)
	if testing.Short() {
		t.Skip("evaluates each shape twice")
	}
	sizes := map[string]int{"selector": 60, "pattern": 100, "merge": 60, "branch": 100, "monorepo": 200, "matrix": 100, "pull-requests": 100, "vars": 500, "step-vars": 200, "one-path": 50, "work-trees": 100}
	for _, shape := range estate.Shapes {
		t.Run(shape, func(t *testing.T) {
			n := sizes[shape]
			small, large := evaluations(t, shape, n), evaluations(t, shape, 2*n)
			ratio := float64(large) / float64(small)
			t.Logf("%s: %d → %d evaluations (n %d → %d): ×%.2f", shape, small, large, n, 2*n, ratio)
			if ratio > 2.1 {
				t.Errorf("%s: doubling the estate multiplies the policies' evaluations by %.2f (%d → %d), more than 2.1: a join scans", shape, ratio, small, large)
			}
		})
	}
}

// mergeEstate is one ApplicationSet whose merge generator joins two list
// generators of n elements each: on one merge-key value shared by every
// element (oneKey), or on one of n merge keys, each element holding its own
// (manyKeys). Argo CD rejects the first (two sets of a generator under one
// key) and keys every set by all n merge keys in the second.
func mergeEstate(n int, manyKeys bool) []estate.File {
	var base, over, keys []string
	for i := range n {
		if manyKeys {
			keys = append(keys, fmt.Sprintf("k%05d", i))
			base = append(base, fmt.Sprintf("{k%05d: v, i: b%05d}", i, i))
			over = append(over, fmt.Sprintf("{k%05d: v, j: o%05d}", i, i))
		} else {
			base = append(base, fmt.Sprintf("{env: dev, i: b%05d}", i))
			over = append(over, fmt.Sprintf("{env: dev, j: o%05d}", i))
		}
	}
	if !manyKeys {
		keys = []string{"env"}
	}
	doc := fmt.Sprintf(`apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata: {name: merged, namespace: argocd}
spec:
  goTemplate: true
  generators:
  - merge:
      mergeKeys: [%s]
      generators:
      - list: {elements: [%s]}
      - list: {elements: [%s]}
  template:
    metadata: {name: 'web-{{.i}}'}
    spec:
      project: default
      source: {repoURL: https://git.example.com/web/deploy.git, targetRevision: 'env/{{.j}}', path: '{{.i}}'}
      destination: {server: https://kubernetes.default.svc, namespace: web}
`, strings.Join(keys, ", "), strings.Join(base, ", "), strings.Join(over, ", "))
	return []estate.File{{Path: "merge/appset.yaml", Content: []byte(doc)}}
}

// A merge generator's work grows with its lists, however its elements share
// merge-key values or however many merge keys it names: each set is keyed by
// the merge keys it holds (not by every merge key named) and meets at most one
// set of each other generator. Before, one shared value joined every base set
// with every overlay (n² overlays: 2,500-element lists took 36-53 s and 2 GB),
// and each set was keyed by every merge key (n² lookups): doubling n
// multiplied the evaluations by 3.05 and 2.95 at these sizes. The count is
// evalcount's (what OPA's profiler counts), not a time.
func TestMergeGeneratorWorkGrowsLinearly(t *testing.T) {
	race.Sequential(t)
	if testing.Short() {
		t.Skip("evaluates each shape twice")
	}
	for _, tc := range []struct {
		name     string
		manyKeys bool
	}{{"one-key", false}, {"many-keys", true}} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 150
			small, large := evaluationsOf(t, mergeEstate(n, tc.manyKeys)), evaluationsOf(t, mergeEstate(2*n, tc.manyKeys))
			ratio := float64(large) / float64(small)
			t.Logf("%s: %d → %d evaluations (n %d → %d): ×%.2f", tc.name, small, large, n, 2*n, ratio)
			if ratio > 2.1 {
				t.Errorf("%s: doubling the merged lists multiplies the policies' evaluations by %.2f (%d → %d), more than 2.1", tc.name, ratio, small, large)
			}
		})
	}
}
