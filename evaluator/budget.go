package evaluator

import (
	"context"
	"fmt"

	"github.com/open-policy-agent/opa/v1/profiler"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/flipflop-dev/flipflop/internal/evalcount"
)

// EvaluationBudget is the most policy expression evaluations per object the
// bundle may spend on the benchmark estate (internal/estate, Objects 2000,
// Seed 1): the cost every host pays (conftest, Gatekeeper and this package run
// the same policies). TestEvaluationBudget holds it, and `make bench` prints
// the figure for every estate it times. It is lowered as the policies get
// cheaper; a rule that needs more raises it in a commit of its own, saying why.
//
// docs/performance.md ("The budgets' history") lists each value it had and why.
const EvaluationBudget = 690

// AllocationBudget is the most bytes the Go heap may allocate per object
// while the policies evaluate the benchmark estate of EvaluationBudget.
// Evaluations alone do not follow time: a cut that moves work into fewer,
// dearer builtin calls lowers them while the CPU rises (issue 43: from
// b9fe444 to 4462cfa evaluations fell from 894 to 715 per object and the CPU
// rose 1.23x). What a builtin call costs is mostly what it allocates, and
// the collector's share of the CPU (a quarter to a third on the 10k estate)
// follows the bytes allocated, so the two budgets together track the CPU;
// docs/performance.md compares them with side-by-side CPU. TestAllocationBudget
// holds it (Go's own count, the same run to run within about 0.1%).
//
// docs/performance.md ("The budgets' history") lists each value it had and why.
const AllocationBudget = 165_000

// Evaluations evaluates every rule over objs, as Evaluate does, and returns
// the number of expression evaluations (the sum of the num_eval of OPA's
// profiler, which Profile reports by line): an exact count, the same on every
// machine, for budgets and benchmarks (a time would not be).
func (e *Evaluator) Evaluations(ctx context.Context, objs []Object) (int, error) {
	c := &evalcount.Counter{}
	if err := e.traced(ctx, objs, c); err != nil {
		return 0, err
	}
	return c.Count(), nil
}

// Profile evaluates every rule over objs, as Evaluate does, with OPA's
// profiler and returns its statistics per policy expression, most evaluated
// first: where the evaluations Evaluations counts are spent.
func (e *Evaluator) Profile(ctx context.Context, objs []Object) ([]profiler.ExprStats, error) {
	prof := profiler.New()
	if err := e.traced(ctx, objs, prof); err != nil {
		return nil, err
	}
	return prof.ReportTopNResults(-1, []string{"num_eval"}), nil
}

// traced evaluates every rule over objs, as Evaluate does, under tracer.
func (e *Evaluator) traced(ctx context.Context, objs []Object, tracer topdown.QueryTracer) error {
	in, err := input(objs)
	if err != nil {
		return err
	}
	if _, err := e.query.Eval(ctx, rego.EvalParsedInput(in), rego.EvalQueryTracer(tracer)); err != nil {
		return fmt.Errorf("evaluating policies: %w", err)
	}
	return nil
}
