package evaluator

import (
	"context"
	"fmt"

	"github.com/open-policy-agent/opa/v1/profiler"
	"github.com/open-policy-agent/opa/v1/rego"
)

// EvaluationBudget is the most policy expression evaluations per object the
// bundle may spend on the benchmark estate (internal/estate, Objects 2000,
// Seed 1): the cost every host pays (conftest, Gatekeeper and this package run
// the same policies). TestEvaluationBudget holds it, and `make bench` prints
// the figure for every estate it times. It is lowered as the policies get
// cheaper; a rule that needs more raises it in a commit of its own, saying why.
//
// History (measured, per object):
//   - 881.1 when the budget was set at 900: the provenance model, the finding
//     envelope and the CRD-schema types of invalid-object (44% of it) had
//     nearly doubled it from 475, unnoticed (issue 21).
//   - 904.2, raised to 920: duplicate-object groups every document by its
//     identity, and annotation waivers are keyed by document (issue 20 item
//     7); ApplicationSets are counted before they are built (item 6).
//   - 776.7, lowered to 790: invalid-object clears a well-typed object with
//     a first pass of bulk type tests (fast.rego: the values of one type,
//     taken together, have their smallest and largest of that type) and walks
//     field by field only the objects it cannot clear; 388 → 249 per object.
//   - 697.7, lowered to 720: invalid-object's first pass reads the fields
//     without a wildcard, and those below each array element, as one
//     json.filter whose nodes are walked against the [path, type] pairs they
//     may form (fast.rego; 249 -> 186 per object); duplicate-object and
//     confusable-branch group only when something can be grouped.
//   - 679.8, lowered to 700: invalid-object's first pass matches each
//     filtered object, marshalled, against one regular expression built from
//     its table, instead of walking its nodes (fast.rego; 186 -> 164).
//   - 705.0, raised to 720: argocd-update read as Kargo v1.11.2 reads it
//     (issue 22 item 9): each source's first exactly matching sources[] entry
//     decides its pin, updateTargetRevision rewrites are followed (and their
//     ApplicationSet reverts), and the authorized-stage annotation is parsed
//     entry by entry with Kargo's errors (+25 per object: 19 of it the parse,
//     which every targeted Application pays).
//   - 714.8 (from 707.4), budget kept: the Kargo version setting (issue 22
//     item 5): the argocd-update fields a version lacks are looked up in each
//     entry (one object.filter per entry), and the authorized-stage annotation
//     is split and checked as the version reads it; the v0.9-v1.0 inference
//     costs nothing on later versions.
//   - 744.8, raised to 760: invalid-step-config (issue 22 item 8) reads every
//     promotion step as written, 5,300 on this estate, and clears each with a
//     regular expression over its config's marshalled keys (and over each
//     nested object's or list's): about 11 evaluations a step, 29 an object.
//     A key-by-key reading cost 83 an object.
//   - 752.0, budget kept: a step's if: condition is read (issue 22 item 9):
//     one lookup a read step when there is none.
//   - 732.2, lowered to 740: invalid-object's first pass reads containers as
//     a tree, skipping those its parent's filtered JSON shows absent, and a
//     step is inflated by one chain of tests instead of three definitions
//     each tried on every step (748.3 -> 738.6 -> 732.2).
//   - 712.0, lowered to 720: invalid-object's tables are generated literals
//     (tables.rego), no longer built on every query: 40,000 evaluations a
//     query, whatever its size (20 per object here, 4 at 10k objects).
//   - 710.3, budget kept: the step-config tables are a partial rule read by
//     key, so a query builds those of the step kinds its estate uses (about
//     2,300 evaluations a query: 1 per object here, a third of a small one).
//   - 711.0 (from 710.3), budget kept: an ApplicationSet is counted by the
//     bytes its templates would render to, as well as by its parameter sets
//     (its templates marshalled, its elements' values measured), before any is
//     built.
//   - 711.2, budget kept: the generators of each ApplicationSet are read for
//     the loader's mark of a git generator its --repo-root budget left.
//   - 714.7, budget kept: a push's git-open-pr steps are looked up by the
//     alias they read, and a push that none names is paired with them after
//     the Stage's pairs are counted (oversized-stage); a var is looked up by
//     name. Linear where they were quadratic, for 4.4 evaluations an object.
const EvaluationBudget = 720

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
// History (measured, per object):
//   - 162,000 when the budget was set at 170,000 (issue 43): the schema
//     validation, one json.match_schema call a kind (or a step's kind).
//     The same estate written to files and read back: 163,700 here, 183,700
//     on main before it (4462cfa, with the fast pass), 119,200 at b9fe444:
//     the 1.23x CPU issue 43 measured from b9fe444 to main shows here
//     (1.54x), where the evaluations fell (894 to 715).
//   - 174,200 after main's issue 40 and 41 work was merged (every fault of a
//     Stage at once, the bounded function cache): main itself allocates
//     191,800 on this estate (0.91x); the budget rose to 180,000.
//   - 155,700 (from 173,700; budget lowered to 165,000) when the Go host
//     stopped evaluating under a `with` (OPA built each called function's
//     name as a string) and stopped caching the results of functions whose
//     calls the cache never answers; side by side on the 10k estate, CPU
//     0.77x main (docs/performance.md, issue 43).
const AllocationBudget = 165_000

// Evaluations evaluates every rule over objs, as Evaluate does, with OPA's
// profiler and returns the number of expression evaluations: an exact count,
// the same on every machine, for budgets and benchmarks (a time would not be).
func (e *Evaluator) Evaluations(ctx context.Context, objs []Object) (int, error) {
	stats, err := e.Profile(ctx, objs)
	if err != nil {
		return 0, err
	}
	total := 0
	for _, s := range stats {
		total += s.NumEval
	}
	return total, nil
}

// Profile evaluates every rule over objs, as Evaluate does, with OPA's
// profiler and returns its statistics per policy expression, most evaluated
// first: where the evaluations Evaluations counts are spent.
func (e *Evaluator) Profile(ctx context.Context, objs []Object) ([]profiler.ExprStats, error) {
	in, err := input(objs)
	if err != nil {
		return nil, err
	}
	prof := profiler.New()
	if _, err := e.query.Eval(ctx, rego.EvalParsedInput(in), rego.EvalQueryTracer(prof)); err != nil {
		return nil, fmt.Errorf("evaluating policies: %w", err)
	}
	return prof.ReportTopNResults(-1, []string{"num_eval"}), nil
}
