package evaluator

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
	"sigs.k8s.io/yaml"

	"github.com/flipflop-dev/flipflop/internal/estate"
	"github.com/flipflop-dev/flipflop/internal/evalcount"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// callKey is the cache key of a call of data.lib.f with one argument.
func callKey(arg string) ast.Ref {
	return ast.Ref{ast.RefTerm(ast.VarTerm("data"), ast.StringTerm("lib"), ast.StringTerm("f")), ast.StringTerm(arg)}
}

// A bounded cache keeps every rule value, at most its limit of function
// results in a frame (in two generations of half the limit: the older is
// dropped together, never a wrong result returned; one read again moves to
// the newer), and a frame's entries are gone with it.
func TestBoundedCache(t *testing.T) {
	rule := ast.MustParseRef("data.lib.x")
	c := newBoundedCache(4)
	c.Put(rule, ast.StringTerm("rule"))
	for _, a := range []string{"a", "b", "c", "d"} {
		c.Put(callKey(a), ast.StringTerm("f("+a+")"))
	}
	for _, a := range []string{"c", "d", "a"} {
		if v, _ := c.Get(callKey(a)); v == nil || v.Value.Compare(ast.String("f("+a+")")) != 0 {
			t.Errorf("f(%s) = %v, want it kept (4 results, the limit)", a, v)
		}
	}
	// Reading f(a) again put it in the newer generation, which was full:
	// f(a) and f(b)'s generation went, f(c) and f(d)'s became the older.
	// Two more results, and f(b) and f(c) are gone; f(a), read since, and
	// f(d), put again, are kept.
	c.Put(callKey("d2"), ast.StringTerm("f(d2)"))
	c.Put(callKey("d"), ast.StringTerm("f(d)"))
	for _, a := range []string{"b", "c"} {
		if v, _ := c.Get(callKey(a)); v != nil {
			t.Errorf("f(%s) = %v after more results than the limit, want it dropped", a, v)
		}
	}
	for _, a := range []string{"a", "d"} {
		if v, _ := c.Get(callKey(a)); v == nil {
			t.Errorf("f(%s) dropped, want it kept (read or put since)", a)
		}
	}
	c.Put(callKey("e"), nil) // undefined
	if v, undefined := c.Get(callKey("e")); v != nil || !undefined {
		t.Errorf("f(e) = %v, %v, want undefined", v, undefined)
	}

	c.Push()
	if v, _ := c.Get(callKey("d")); v != nil {
		t.Errorf("f(d) = %v in a new frame, want nothing", v)
	}
	if v, _ := c.Get(rule); v != nil {
		t.Errorf("data.lib.x = %v in a new frame, want nothing", v)
	}
	c.Put(callKey("d"), ast.StringTerm("other"))
	c.Pop()
	if v, _ := c.Get(callKey("d")); v == nil || v.Value.Compare(ast.String("f(d)")) != 0 {
		t.Errorf("f(d) = %v after the frame, want f(d)", v)
	}
	for range 10 {
		c.Put(callKey("z"), ast.StringTerm("z"))
	}
	if v, _ := c.Get(rule); v == nil || v.Value.Compare(ast.String("rule")) != 0 {
		t.Errorf("data.lib.x = %v, want the rule's value kept whatever the function results", v)
	}
	if got := len(c.Keys()); got != 2 {
		t.Errorf("%d keys, want 2 (the rule, f(z))", got)
	}

	none := newBoundedCache(0)
	none.Put(callKey("a"), ast.StringTerm("f(a)"))
	none.Put(rule, ast.StringTerm("rule"))
	if v, _ := none.Get(callKey("a")); v != nil {
		t.Errorf("limit 0: f(a) = %v, want nothing kept", v)
	}
	if v, _ := none.Get(rule); v == nil {
		t.Error("limit 0: the rule's value was dropped")
	}
	if _, ok := newBoundedCache(-1).(*boundedCache); ok {
		t.Error("limit -1: want OPA's own cache")
	}
}

// shapeObjects decodes an estate shape's documents as a program holding
// objects in memory would (package loader imports this one).
func shapeObjects(t *testing.T, files []estate.File) []Object {
	t.Helper()
	var objs []Object
	for _, f := range files {
		for doc := range strings.SplitSeq(string(f.Content), "---\n") {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatalf("%s: %v", f.Path, err)
			}
			if m == nil {
				continue
			}
			o, err := NewObject(f.Path, 0, m)
			if err != nil {
				t.Fatal(err)
			}
			objs = append(objs, o)
		}
	}
	return objs
}

// The bounded cache costs evaluations (a dropped result is computed again),
// but few, and linearly: on every estate shape, at two sizes, it finds the
// same findings as OPA's own cache with at most a fifth more evaluations,
// and doubling the estate at most doubles them (TestPolicyWorkGrowsLinearly
// holds the same of OPA's cache). The smallest estates never fill a cache of
// fnCacheLimit results, so each is also evaluated with a cache of 64: a
// function called again and again with the same arguments far apart (say,
// one that scans every object, per object) would make its evaluations grow
// faster than the estate there. Measured when the cache was bounded: 0-10%
// more evaluations at these sizes, 8% on the benchmark estate of 2,000
// objects; a cache of no function results took 13-64% more. The count is
// evalcount's (what OPA's profiler counts), not a time.
func TestBoundedCacheEvaluations(t *testing.T) {
	race.Sequential(t)
	if testing.Short() {
		t.Skip("evaluates each shape six times")
	}
	ctx := context.Background()
	ev, err := New(ctx, Settings{})
	if err != nil {
		t.Fatal(err)
	}
	count := func(objs []Object, c topdown.VirtualCache) (int, int) {
		t.Helper()
		in, err := input(objs)
		if err != nil {
			t.Fatal(err)
		}
		counter := &evalcount.Counter{}
		rs, err := ev.query.Eval(ctx, rego.EvalParsedInput(in), rego.EvalQueryTracer(counter), rego.EvalVirtualCache(c))
		if err != nil {
			t.Fatal(err)
		}
		total := counter.Count()
		var findings []any
		if len(rs) > 0 && len(rs[0].Expressions) > 0 {
			findings, _ = rs[0].Expressions[0].Value.([]any)
		}
		return total, len(findings)
	}
	sizes := map[string]int{"selector": 60, "pattern": 100, "merge": 60, "branch": 100, "monorepo": 200, "matrix": 100, "pull-requests": 100, "vars": 500, "step-vars": 200}
	const small = 64
	for _, shape := range estate.Shapes {
		t.Run(shape, func(t *testing.T) {
			var bounded, tiny [2]int
			for i, n := range []int{sizes[shape], 2 * sizes[shape]} {
				files, err := estate.Shape(shape, n)
				if err != nil {
					t.Fatal(err)
				}
				objs := shapeObjects(t, files)
				opa, want := count(objs, topdown.NewVirtualCache())
				got, found := count(objs, newBoundedCache(fnCacheLimit))
				least, foundSmall := count(objs, newBoundedCache(small))
				bounded[i], tiny[i] = got, least
				t.Logf("%s %d: %d evaluations with OPA's cache, %d bounded (×%.2f), %d with %d results (×%.2f)",
					shape, n, opa, got, float64(got)/float64(opa), least, small, float64(least)/float64(opa))
				if found != want || foundSmall != want {
					t.Errorf("%s %d: %d findings with the bounded cache, %d with one of %d results, %d with OPA's", shape, n, found, foundSmall, small, want)
				}
				if float64(got) > 1.2*float64(opa) {
					t.Errorf("%s %d: the bounded cache takes %d evaluations, more than a fifth over OPA's cache (%d)", shape, n, got, opa)
				}
			}
			for _, c := range []struct {
				what  string
				count [2]int
			}{{"the bounded cache", bounded}, {fmt.Sprintf("a cache of %d results", small), tiny}} {
				if ratio := float64(c.count[1]) / float64(c.count[0]); ratio > 2.1 {
					t.Errorf("%s: doubling the estate multiplies the evaluations by %.2f with %s (%d → %d), more than 2.1", shape, ratio, c.what, c.count[0], c.count[1])
				}
			}
		})
	}
}

// A function none of whose probeCalls calls the cache answered is evaluated
// without it (never looked up, never kept) for skipCalls calls, then probed
// again; a function whose calls are answered stays cached.
func TestBoundedCacheSkipsUnansweredFunctions(t *testing.T) {
	c := newBoundedCache(fnCacheLimit).(*boundedCache)
	f := ast.RefTerm(ast.VarTerm("data"), ast.StringTerm("lib"), ast.StringTerm("f"))
	g := ast.RefTerm(ast.VarTerm("data"), ast.StringTerm("lib"), ast.StringTerm("g"))
	call := func(fn *ast.Term, arg int) ast.Ref { return ast.Ref{fn, ast.IntNumberTerm(arg)} }
	for i := range probeCalls {
		if v, _ := c.Get(call(f, i)); v != nil {
			t.Fatalf("f(%d) answered before it was put", i)
		}
		c.Put(call(f, i), ast.IntNumberTerm(i))
		c.Get(call(g, 0))
		c.Put(call(g, 0), ast.IntNumberTerm(0))
	}
	// f(0) was kept, but f is no longer looked up.
	if v, _ := c.Get(call(f, 0)); v != nil {
		t.Errorf("f(0) = %v after %d calls none of which was answered, want f evaluated without the cache", v, probeCalls)
	}
	c.Put(call(f, -1), ast.IntNumberTerm(-1))
	if v, _ := c.fns[0].cache.Get(call(f, -1)); v != nil {
		t.Errorf("f(-1) kept while f is not cached")
	}
	if v, _ := c.Get(call(g, 0)); v == nil || v.Value.Compare(ast.Number("0")) != 0 {
		t.Errorf("g(0) = %v, want 0: g's calls are answered", v)
	}
	// After skipCalls calls f is probed again: a call found is answered.
	for range skipCalls - 2 {
		c.Get(call(f, 0))
	}
	if v, _ := c.Get(call(f, 0)); v == nil || v.Value.Compare(ast.Number("0")) != 0 {
		t.Errorf("f(0) = %v after %d skipped calls, want f probed again and f(0) found", v, skipCalls)
	}
}
