package evaluator

import (
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// OPA's evaluator keeps, for the whole of a query, the value of every rule it
// evaluated and the result of every function call, keyed by the function and
// its arguments (its virtual cache). The rules are the model, and read many
// times; but most function calls are made once per object (a Stage's record,
// an argocd-update entry's targets) and never again, and their results, with
// a tree of hash maps keyed by each argument, were most of the memory of a
// pass: at 10,000 Applications more than half a peak of 1.4 GB of live heap
// (docs/hosts.md, "Auditor").
//
// So the Go host evaluates with a virtual cache that keeps every rule's value
// as OPA does, but at most fnCacheLimit function results a frame: when a
// frame's function cache is full it is emptied and fills again. A call whose
// result was dropped is evaluated again, to the same result (a function's
// result depends on its arguments and the frame's data and input alone, and
// a frame is never shared: `with` pushes a new one), so the findings are the
// same; what it costs is evaluations, which stay linear in the estate
// (TestBoundedCacheEvaluations). conftest, Gatekeeper and opa eval keep OPA's
// own cache.

// fnCacheLimit is how many function results a frame of the cache keeps.
// The calls that are made again with the same arguments mostly follow each
// other closely (a lookup in the same object by several rules of one
// expression).
const fnCacheLimit = 4096

// boundedCache is a topdown.VirtualCache keeping every rule value and, per
// frame, at most limit function results. Not safe for concurrent use: one
// per evaluation.
type boundedCache struct {
	rules topdown.VirtualCache
	fns   []fnFrame
	limit int
}

// fnFrame is one frame's function results and how many were put since it was
// last emptied.
type fnFrame struct {
	cache topdown.VirtualCache
	n     int
}

// newBoundedCache returns a cache keeping at most limit function results a
// frame; limit < 0 keeps every result (OPA's own cache), 0 none.
func newBoundedCache(limit int) topdown.VirtualCache {
	if limit < 0 {
		return topdown.NewVirtualCache()
	}
	return &boundedCache{rules: topdown.NewVirtualCache(), fns: []fnFrame{{cache: topdown.NewVirtualCache()}}, limit: limit}
}

// isCall reports whether a cache key is a function call's (the function's
// reference, then its arguments) rather than a rule's reference (data. …).
func isCall(ref ast.Ref) bool {
	if len(ref) == 0 {
		return false
	}
	_, ok := ref[0].Value.(ast.Ref)
	return ok
}

func (c *boundedCache) Push() {
	c.rules.Push()
	c.fns = append(c.fns, fnFrame{cache: topdown.NewVirtualCache()})
}

func (c *boundedCache) Pop() {
	c.rules.Pop()
	if len(c.fns) > 1 {
		c.fns[len(c.fns)-1] = fnFrame{}
		c.fns = c.fns[:len(c.fns)-1]
	}
}

func (c *boundedCache) Get(ref ast.Ref) (*ast.Term, bool) {
	if !isCall(ref) {
		return c.rules.Get(ref)
	}
	if c.limit == 0 {
		return nil, false
	}
	return c.fns[len(c.fns)-1].cache.Get(ref)
}

func (c *boundedCache) Put(ref ast.Ref, value *ast.Term) {
	if !isCall(ref) {
		c.rules.Put(ref, value)
		return
	}
	if c.limit == 0 {
		return
	}
	top := &c.fns[len(c.fns)-1]
	if top.n >= c.limit {
		top.cache, top.n = topdown.NewVirtualCache(), 0
	}
	top.cache.Put(ref, value)
	top.n++
}

func (c *boundedCache) Keys() []ast.Ref {
	return append(c.rules.Keys(), c.fns[len(c.fns)-1].cache.Keys()...)
}

// evalCache is the option giving one evaluation a cache of its own.
func evalCache() rego.EvalOption {
	return rego.EvalVirtualCache(newBoundedCache(fnCacheLimit))
}
