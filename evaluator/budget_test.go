package evaluator_test

import (
	"context"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/estate"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// budgetEstate is the estate EvaluationBudget is measured on: the benchmark's
// shape (make bench) at a size a test can afford.
func budgetEstate(t testing.TB) []evaluator.Object {
	t.Helper()
	files, _ := estate.Generate(estate.Options{Objects: 2000, Seed: 1})
	var objs []evaluator.Object
	for _, f := range files {
		o, errs := loader.LoadBytes(f.Path, f.Content)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		objs = append(objs, o...)
	}
	return objs
}

// budgetEvaluator is the evaluator the budget is measured with.
func budgetEvaluator(t testing.TB) *evaluator.Evaluator {
	t.Helper()
	e, err := evaluator.New(context.Background(), evaluator.Settings{Today: "2026-01-01"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// The policies' work per object on the benchmark estate stays within
// evaluator.EvaluationBudget. The count is OPA's profiler's (exact, the same
// on any machine): this test cannot flake, and a change that makes every
// object cost more fails here instead of slipping into every host.
func TestEvaluationBudget(t *testing.T) {
	race.Sequential(t)
	if testing.Short() {
		t.Skip("profiles a 2,000-object evaluation")
	}
	e, objs := budgetEvaluator(t), budgetEstate(t)
	n, err := e.Evaluations(context.Background(), objs)
	if err != nil {
		t.Fatal(err)
	}
	per := float64(n) / float64(len(objs))
	t.Logf("%d evaluations over %d objects: %.1f per object (budget %d)", n, len(objs), per, evaluator.EvaluationBudget)
	if per > evaluator.EvaluationBudget {
		t.Errorf("%.1f policy evaluations per object, over the budget of %d (evaluator.EvaluationBudget): make the new work cheaper, or raise the budget in a commit of its own that says why", per, evaluator.EvaluationBudget)
	}
	// A budget far above the cost hides the next regression: lower it.
	if per < 0.8*evaluator.EvaluationBudget {
		t.Errorf("%.1f evaluations per object, far under the budget of %d: lower evaluator.EvaluationBudget to hold what was gained", per, evaluator.EvaluationBudget)
	}
}

// allocatedPerObject is the bytes the Go heap allocates while objs are
// evaluated once (runtime.MemStats.TotalAlloc, after a first evaluation that
// fills what OPA keeps between queries, such as its compiled regular
// expressions), per object.
func allocatedPerObject(t *testing.T, e *evaluator.Evaluator, objs []evaluator.Object) float64 {
	t.Helper()
	ctx := context.Background()
	if _, err := e.Evaluate(ctx, objs); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := e.Evaluate(ctx, objs); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return float64(after.TotalAlloc-before.TotalAlloc) / float64(len(objs))
}

// The bytes the policies allocate per object on the benchmark estate stay
// within evaluator.AllocationBudget. Evaluations alone missed work moved into
// fewer, dearer builtin calls (a json.marshal and a regular expression each):
// what a builtin costs is mostly what it allocates, and the collector's share
// of the CPU follows the bytes allocated. The figure is the Go runtime's
// count, not a time: the same run to run within about 0.1% (the test's
// tolerance is the 2% above the budget the budget leaves), the same on every
// machine of one Go version.
func TestAllocationBudget(t *testing.T) {
	race.Sequential(t)
	if testing.Short() {
		t.Skip("evaluates a 2,000-object estate twice")
	}
	if race.Enabled {
		t.Skip("the race detector changes what is allocated")
	}
	e, objs := budgetEvaluator(t), budgetEstate(t)
	per := allocatedPerObject(t, e, objs)
	budget := float64(evaluator.AllocationBudget)
	t.Logf("%.0f bytes allocated per object over %d objects (budget %d)", per, len(objs), evaluator.AllocationBudget)
	if per > budget {
		t.Errorf("%.0f bytes allocated per object, over the budget of %d (evaluator.AllocationBudget): make the new work cheaper, or raise the budget in a commit of its own that says why", per, evaluator.AllocationBudget)
	}
	if per < 0.8*budget {
		t.Errorf("%.0f bytes allocated per object, far under the budget of %d: lower evaluator.AllocationBudget to hold what was gained", per, evaluator.AllocationBudget)
	}
}

// TestEvaluationProfile prints where the budget goes, by policy file and by
// line, when FLIPFLOP_PROFILE is set (go test -run EvaluationProfile -v).
func TestEvaluationProfile(t *testing.T) {
	if os.Getenv("FLIPFLOP_PROFILE") == "" {
		t.Skip("set FLIPFLOP_PROFILE=1 to print the profile")
	}
	e, objs := budgetEvaluator(t), budgetEstate(t)
	if kinds := os.Getenv("FLIPFLOP_PROFILE_KINDS"); kinds != "" {
		// Only the objects of these kinds (comma-separated): what each kind costs.
		keep := strings.Split(kinds, ",")
		objs = slices.DeleteFunc(objs, func(o evaluator.Object) bool { return !slices.Contains(keep, o.Kind) })
	}
	stats, err := e.Profile(context.Background(), objs)
	if err != nil {
		t.Fatal(err)
	}
	n := float64(len(objs))
	byFile := map[string]int{}
	total := 0
	for _, s := range stats {
		byFile[s.Location.File] += s.NumEval
		total += s.NumEval
	}
	files := make([]string, 0, len(byFile))
	for f := range byFile {
		files = append(files, f)
	}
	sort.Slice(files, func(i, j int) bool { return byFile[files[i]] > byFile[files[j]] })
	t.Logf("total %.1f per object", float64(total)/n)
	for _, f := range files {
		t.Logf("%8.1f  %s", float64(byFile[f])/n, f)
	}
	for i, s := range stats {
		if i == 400 {
			break
		}
		t.Logf("%8.1f  %s:%d", float64(s.NumEval)/n, s.Location.File, s.Location.Row)
	}
}
