package evaluator_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/estate"
	"github.com/flipflop-dev/flipflop/internal/race"
)

func generated(tb testing.TB, n int) ([]evaluator.Object, estate.Stats) {
	tb.Helper()
	files, st := estate.Generate(estate.Options{Objects: n, Seed: 1})
	var objs []evaluator.Object
	for _, f := range files {
		o, errs := loader.LoadBytes(f.Path, f.Content)
		if len(errs) > 0 {
			tb.Fatalf("%v", errs)
		}
		objs = append(objs, o...)
	}
	return objs, st
}

// The generated estate yields exactly the contradictions it was built with.
func TestGeneratedEstateFindings(t *testing.T) {
	t.Parallel() // shares nothing mutable, times nothing: beside the package's other long tests
	race.Sequential(t)
	objs, st := generated(t, 2000)
	ev, err := evaluator.New(context.Background(), evaluator.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	report, err := ev.Evaluate(context.Background(), objs)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range report.Findings {
		if f.Rule == "shared-branch-contradiction" {
			n++
		}
	}
	if want := st.Contradictions + st.ApplicationSets; n != want {
		t.Errorf("%d shared-branch-contradiction findings, want %d (%+v)", n, want, st)
	}
	if report.Summary.Objects != st.Objects {
		t.Errorf("objects %d, want %d", report.Summary.Objects, st.Objects)
	}
}

// benchSizes are the estate sizes BenchmarkEvaluate runs at: 1k and 10k
// objects, or the comma-separated list in $FLIPFLOP_BENCH_SIZES (make bench-all
// adds 50000 this way, keeping the ordinary benchmark run short).
func benchSizes(tb testing.TB) []int {
	env := os.Getenv("FLIPFLOP_BENCH_SIZES")
	if env == "" {
		return []int{1000, 10000}
	}
	var sizes []int
	for _, s := range strings.Split(env, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			tb.Fatalf("FLIPFLOP_BENCH_SIZES=%q: bad size %q", env, s)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

// BenchmarkEvaluate measures evaluation alone (input converted once per run,
// query prepared once) on the generated estate (estate.Generate, seed 1: the
// same files make bench-all writes); cost must grow linearly.
func BenchmarkEvaluate(b *testing.B) {
	benchEstates(b, func(ev *evaluator.Evaluator, objs []evaluator.Object) error {
		_, err := ev.Evaluate(context.Background(), objs)
		return err
	})
}

// BenchmarkAnalyze measures findings and the model together (explain, graph,
// fix, diagnose), against BenchmarkEvaluate on the same estates: issue 21
// holds the ratio to at most 1.1.
func BenchmarkAnalyze(b *testing.B) {
	benchEstates(b, func(ev *evaluator.Evaluator, objs []evaluator.Object) error {
		_, _, err := ev.Analyze(context.Background(), objs)
		return err
	})
}

// benchEstates times run on the generated estate of every benchSizes size,
// and reports the time per object.
func benchEstates(b *testing.B, run func(*evaluator.Evaluator, []evaluator.Object) error) {
	ev, err := evaluator.New(context.Background(), evaluator.Settings{})
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range benchSizes(b) {
		objs, _ := generated(b, n)
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := run(ev, objs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(objs)), "ns/object")
		})
	}
}
