package evaluator_test

import (
	"context"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/profiler"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/estate"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// evaluations counts the expression evaluations of every rule over the
// estate shape at size n: OPA's profiler, so the count is exact and the same
// on any machine (a time would not be).
func evaluations(t *testing.T, mods map[string]*ast.Module, shape string, n int) int {
	t.Helper()
	files, err := estate.Shape(shape, n)
	if err != nil {
		t.Fatal(err)
	}
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
	prof := profiler.New()
	opts := []func(*rego.Rego){
		rego.Query(evaluator.Query),
		rego.ParsedInput(ast.NewArray(items...)),
		rego.QueryTracer(prof),
	}
	for _, m := range mods {
		opts = append(opts, rego.ParsedModule(m))
	}
	if _, err := rego.New(opts...).Eval(context.Background()); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, s := range prof.ReportTopNResults(-1, []string{"num_eval"}) {
		total += s.NumEval
	}
	return total
}

// Doubling an estate at most doubles the policies' work, for every shape
// built around one join (issue 15): label selectors, git-generator name
// patterns, merge generators, many Stages on one branch, one repository for
// every Application; and a matrix of two lists of n elements (issue 20: n²
// Applications, counted but not built past the bound, so the work follows the
// lists, not their product); a Stage of n pushes and n git-open-pr steps, and n
// Stage, template and PromotionTask vars (each read of the pull requests or of
// the vars scanned them all: ×3.86 and ×3.95 at these sizes before they were
// looked up by alias and by name). A join that scans instead of looking up by
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
	mods, err := evaluator.Modules()
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[string]int{"selector": 60, "pattern": 100, "merge": 60, "branch": 100, "monorepo": 200, "matrix": 100, "pull-requests": 100, "vars": 500}
	for _, shape := range estate.Shapes {
		t.Run(shape, func(t *testing.T) {
			n := sizes[shape]
			small, large := evaluations(t, mods, shape, n), evaluations(t, mods, shape, 2*n)
			ratio := float64(large) / float64(small)
			t.Logf("%s: %d → %d evaluations (n %d → %d): ×%.2f", shape, small, large, n, 2*n, ratio)
			if ratio > 2.1 {
				t.Errorf("%s: doubling the estate multiplies the policies' evaluations by %.2f (%d → %d), more than 2.1: a join scans", shape, ratio, small, large)
			}
		})
	}
}
