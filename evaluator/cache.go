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
// as OPA does, but at most fnCacheLimit function results a frame, in two
// generations of half as many: when the newer is full, the older is dropped
// and the newer becomes the older, and a result found in the older is put in
// the newer again, so what is still being read stays. A call whose
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

// Most functions of the model are called once for each argument (a Stage's
// record, a step's env, a value's substitution): their results are put in
// the cache and never read, and keying them (hashing every argument, a hash
// map a level) was 7% of the CPU of a pass. So the cache counts, per
// function, the calls it is asked about and those it answers, probeCalls
// calls at a time: a function none of whose last probeCalls calls was
// answered is evaluated without the cache (neither looked up nor kept) for
// its next skipCalls calls, then probed again, so a function whose calls
// start repeating themselves is cached again. Which functions those are
// depends on the estate alone, so a run is as deterministic as before, and a
// call evaluated again gives the same result.
const (
	probeCalls = 512
	skipCalls  = 8 * probeCalls
)

// maxSites bounds how many call sites the cache remembers the function of.
const maxSites = 1 << 14

// boundedCache is a topdown.VirtualCache keeping every rule value and, per
// frame, at most limit function results. Not safe for concurrent use: one
// per evaluation.
type boundedCache struct {
	rules topdown.VirtualCache
	fns   []fnFrame
	limit int
	// sites maps a call's function term (one per call site of the compiled
	// policies) to its function's counts, byName each function to them.
	sites  map[*ast.Term]*fnCalls
	byName map[string]*fnCalls
}

// fnCalls counts a function's calls the cache was asked about and answered
// in the current probe, or, while the function is not cached (off), the
// calls skipped.
type fnCalls struct {
	asked, answered, skipped int
	off                      bool
}

// cached reports whether a call of the function is to be looked up and kept,
// counting it.
func (f *fnCalls) cached() bool {
	if !f.off {
		return true
	}
	if f.skipped++; f.skipped < skipCalls {
		return false
	}
	*f = fnCalls{}
	return true
}

// probed counts a call the cache was asked about, and whether it answered.
func (f *fnCalls) probed(answered bool) {
	f.asked++
	if answered {
		f.answered++
	}
	if f.asked < probeCalls {
		return
	}
	*f = fnCalls{off: f.answered == 0}
}

// fnFrame is one frame's function results: the newer generation, how many
// were put in it, and the older one (nil until the newer first fills).
type fnFrame struct {
	cache topdown.VirtualCache
	n     int
	older topdown.VirtualCache
}

// newBoundedCache returns a cache keeping at most limit function results a
// frame; limit < 0 keeps every result (OPA's own cache), 0 none.
func newBoundedCache(limit int) topdown.VirtualCache {
	if limit < 0 {
		return topdown.NewVirtualCache()
	}
	return &boundedCache{
		rules: topdown.NewVirtualCache(), fns: []fnFrame{{cache: topdown.NewVirtualCache()}}, limit: limit,
		sites: map[*ast.Term]*fnCalls{}, byName: map[string]*fnCalls{},
	}
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
	// A cache says (nil, true) of a call it knows to be undefined, (nil,
	// false) of one it does not know.
	calls := c.calls(ref)
	if !calls.cached() {
		return nil, false
	}
	top := &c.fns[len(c.fns)-1]
	v, undefined := top.cache.Get(ref)
	if v == nil && !undefined && top.older != nil {
		if v, undefined = top.older.Get(ref); v != nil || undefined {
			c.put(top, ref, v)
		}
	}
	calls.probed(v != nil || undefined)
	return v, undefined
}

// calls returns the counts of the function ref calls.
func (c *boundedCache) calls(ref ast.Ref) *fnCalls {
	site := ref[0]
	if f, ok := c.sites[site]; ok {
		return f
	}
	name := site.Value.String()
	f, ok := c.byName[name]
	if !ok {
		f = &fnCalls{}
		c.byName[name] = f
	}
	if len(c.sites) < maxSites {
		c.sites[site] = f
	}
	return f
}

func (c *boundedCache) Put(ref ast.Ref, value *ast.Term) {
	if !isCall(ref) {
		c.rules.Put(ref, value)
		return
	}
	if c.limit == 0 || c.calls(ref).off {
		return
	}
	c.put(&c.fns[len(c.fns)-1], ref, value)
}

// put puts a function result in frame f's newer generation, which becomes
// the older one first when it holds half the limit.
func (c *boundedCache) put(f *fnFrame, ref ast.Ref, value *ast.Term) {
	if f.n >= max(c.limit/2, 1) {
		f.older, f.cache, f.n = f.cache, topdown.NewVirtualCache(), 0
	}
	f.cache.Put(ref, value)
	f.n++
}

func (c *boundedCache) Keys() []ast.Ref {
	return append(c.rules.Keys(), c.fns[len(c.fns)-1].cache.Keys()...)
}

// evalCache is the option giving one evaluation a cache of its own.
func evalCache() rego.EvalOption {
	return rego.EvalVirtualCache(newBoundedCache(fnCacheLimit))
}
