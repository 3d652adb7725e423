package evalcount_test

import (
	"context"
	"testing"

	"github.com/open-policy-agent/opa/v1/profiler"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/flipflop-dev/flipflop/internal/evalcount"
)

// The count is the sum of the num_eval of OPA's profiler over the same
// evaluation: every expression evaluated, functions, comprehensions,
// negations, else chains and iterations with redos included.
func TestCountIsTheProfilersNumEval(t *testing.T) {
	const module = `package p

xs := [x | some x in numbers.range(1, 50); x % 3 != 0]

f(x) := "odd" if x % 2 == 1
else := "even"

kinds := {k: count([x | some x in xs; f(x) == k]) | some k in {"odd", "even"}}

none if not kinds.odd
`
	ctx := context.Background()
	opts := []func(*rego.Rego){rego.Query("data.p"), rego.Module("p.rego", module)}
	pq, err := rego.New(opts...).PrepareForEval(ctx)
	if err != nil {
		t.Fatal(err)
	}
	prof := profiler.New()
	if _, err := pq.Eval(ctx, rego.EvalQueryTracer(prof)); err != nil {
		t.Fatal(err)
	}
	want := 0
	for _, s := range prof.ReportTopNResults(-1, []string{"num_eval"}) {
		want += s.NumEval
	}
	c := &evalcount.Counter{}
	if _, err := pq.Eval(ctx, rego.EvalQueryTracer(c)); err != nil {
		t.Fatal(err)
	}
	if c.Count() != want || want < 100 {
		t.Errorf("counted %d evaluations, the profiler %d", c.Count(), want)
	}
}
