package evaluator

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// The policies compute some facts from one object alone. Those the Go host
// evaluates in parallel, over chunks of the objects (one prepared query, one
// worker per CPU), and hands to the query that joins everything with `with`:
// the same Rego, orchestrated, so conftest and Gatekeeper, which evaluate it
// in one query, reach the same findings.
//
// perObject names each such fact: a partial set rule of the policies whose
// members depend on one input entry each, so that the union of its values
// over any split of the input is its value over the whole input.
var perObject = []string{
	// invalid-object's problems: about a quarter of the bundle's evaluations
	// (docs/performance.md).
	"data.lib.flipflop.rules.invalid_object.problems",
}

// minChunk is the fewest objects worth a worker: below it the query's fixed
// cost outweighs the split.
const minChunk = 250

// Parallelism sets how many workers evaluate the per-object facts (default:
// runtime.GOMAXPROCS(0)); 1 evaluates everything in one query, as conftest
// and Gatekeeper do.
func Parallelism(n int) Option { return func(o *options) { o.workers = n } }

// workers is the number of chunks objs is split into.
func (e *Evaluator) workers(n int) int {
	w := e.parallel
	if w <= 0 {
		w = runtime.GOMAXPROCS(0)
	}
	if most := n / minChunk; w > most {
		w = most
	}
	return w
}

// splitQuery is q evaluated over input.objects with the per-object facts
// taken from input.facts instead of computed.
func splitQuery(q string) string {
	s := q + " with input as input.objects"
	for i, rule := range perObject {
		s += fmt.Sprintf(" with %s as input.facts[%d]", rule, i)
	}
	return s
}

// factsQuery evaluates every per-object fact, under the settings.
func factsQuery() string {
	s := "facts = ["
	for i, rule := range perObject {
		if i > 0 {
			s += ", "
		}
		s += rule
	}
	return s + "] with data.lib.flipflop.config.settings as data.flipflop_settings"
}

// eval evaluates the query q (prepared as pq when the input is not split)
// over objs: in one query, or, when objs is large enough and more than one
// worker is allowed, with the per-object facts evaluated in parallel first.
func (e *Evaluator) eval(ctx context.Context, pq rego.PreparedEvalQuery, q string, objs []Object) (rego.ResultSet, error) {
	terms, err := inputTerms(objs)
	if err != nil {
		return nil, err
	}
	w := e.workers(len(terms))
	if w <= 1 {
		return pq.Eval(ctx, rego.EvalParsedInput(ast.NewArray(terms...)), evalCache())
	}
	facts, err := e.facts(ctx, terms, w)
	if err != nil {
		return nil, err
	}
	split, err := e.prepare(ctx, splitQuery(q))
	if err != nil {
		return nil, err
	}
	in := ast.NewObject(
		ast.Item(ast.StringTerm("objects"), ast.ArrayTerm(terms...)),
		ast.Item(ast.StringTerm("facts"), ast.ArrayTerm(facts...)),
	)
	return split.Eval(ctx, rego.EvalParsedInput(in), evalCache())
}

// facts evaluates the per-object facts over w chunks of terms, in parallel,
// and returns each fact's union over the chunks, as a set.
func (e *Evaluator) facts(ctx context.Context, terms []*ast.Term, w int) ([]*ast.Term, error) {
	fq, err := e.prepare(ctx, factsQuery())
	if err != nil {
		return nil, err
	}
	sets := make([][]*ast.Term, w)
	errs := make([]error, w)
	var wg sync.WaitGroup
	for i := range w {
		lo, hi := i*len(terms)/w, (i+1)*len(terms)/w
		wg.Add(1)
		go func() {
			defer wg.Done()
			sets[i], errs[i] = chunkFacts(ctx, fq, terms[lo:hi])
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	out := make([]*ast.Term, len(perObject))
	for k := range perObject {
		s := ast.NewSet()
		for i := range w {
			for _, t := range sets[i][k].Value.(ast.Set).Slice() {
				s.Add(t)
			}
		}
		out[k] = ast.NewTerm(s)
	}
	return out, nil
}

// chunkFacts evaluates the per-object facts over one chunk of the input.
func chunkFacts(ctx context.Context, fq rego.PreparedEvalQuery, terms []*ast.Term) ([]*ast.Term, error) {
	rs, err := fq.Eval(ctx, rego.EvalParsedInput(ast.NewArray(terms...)), evalCache())
	if err != nil {
		return nil, fmt.Errorf("evaluating policies: %w", err)
	}
	vals, ok := binding(rs, "facts").([]any)
	if !ok || len(vals) != len(perObject) {
		return nil, fmt.Errorf("evaluating policies: the per-object facts are undefined")
	}
	out := make([]*ast.Term, len(vals))
	for i, v := range vals {
		members, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("evaluating policies: %s is not a set", perObject[i])
		}
		s := ast.NewSet()
		for _, m := range members {
			x, err := ast.InterfaceToValue(m)
			if err != nil {
				return nil, fmt.Errorf("evaluating policies: %s: %w", perObject[i], err)
			}
			s.Add(ast.NewTerm(x))
		}
		out[i] = ast.NewTerm(s)
	}
	return out, nil
}
