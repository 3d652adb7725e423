package loader

import (
	"sync"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// Alias expansion is bounded over a whole run, not per document or per file:
// every file a run reads (the inputs, standard input, the documents renders
// hand back, the files git generators read) draws on one budget of
// AliasValuesBase values plus AliasValuesPerByte for every byte read, so that
// no number of small files, each expanding to what a per-file limit allows,
// can make a run's cost grow faster than its input.
const (
	// AliasValuesBase is the number of values aliases may expand to in a run
	// whatever its size.
	AliasValuesBase = 1_000_000
	// AliasValuesPerByte is what every byte a run reads adds to its alias
	// budget (about what writing the values out takes: plain YAML holds at
	// most one value per two bytes).
	AliasValuesPerByte = 1
)

// AliasBudget is the alias-expansion budget of one run, shared by every file
// the run reads (see AliasValuesBase). Files are read side by side, and yet
// the budget is spent in one order, the order the run reads its inputs in, so
// that which file exceeds it is the same on every run: a file spends first
// what its own bytes bring, and only when that is not enough waits for the
// files before it to finish and draws on what they left. The zero value is not
// usable; NewAliasBudget makes one. A budget must not be used by two runs
// (two LoadAll calls) at the same time.
type AliasBudget struct {
	mu   sync.Mutex
	cond *sync.Cond
	// next is the position of the next source to be given; folded the
	// number of sources, in order, whose finish has been accounted for.
	next, folded int
	// pool is what the sources folded so far left: AliasValuesBase plus
	// their bytes' share, less what they expanded.
	pool int64
	// bytes is the bytes read by the folded sources.
	bytes int64
	// pending holds finished sources not yet folded, by position.
	pending map[int]aliasLeft
	// spent counts every value expanded through this budget.
	spent int64
}

type aliasLeft struct{ left, bytes, spent int64 }

// NewAliasBudget returns the budget of a new run.
func NewAliasBudget() *AliasBudget {
	b := &AliasBudget{pool: AliasValuesBase, pending: map[int]aliasLeft{}}
	b.cond = sync.NewCond(&b.mu)
	return b
}

// Spent is the number of values aliases have expanded to through the budget
// (in the sources finished so far).
func (b *AliasBudget) Spent() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.spent
}

// sources reserves n positions in the budget's order, the first returned.
func (b *AliasBudget) sources(n int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	first := b.next
	b.next += n
	return first
}

// source returns the meter of the source at position seq (from sources).
func (b *AliasBudget) source(seq int) *aliasMeter {
	return &aliasMeter{budget: b, seq: seq}
}

// newSource reserves the next position and returns its meter: for sources
// read one after the other (on a nil budget, a source of a new one).
func (b *AliasBudget) newSource() *aliasMeter {
	if b == nil {
		b = NewAliasBudget()
	}
	return b.source(b.sources(1))
}

// aliasMeter is what one source (a file, standard input, a render, a git
// generator file) spends of the run's budget. It is used by one goroutine.
type aliasMeter struct {
	budget *AliasBudget
	seq    int
	// bytes is what the source read; allowed what it may expand (its bytes'
	// share, and once joined what it drew from the pool); spent what it
	// expanded.
	bytes, allowed, spent int64
	// joined: the sources before it are folded and the pool is this
	// source's until it finishes.
	joined   bool
	finished bool
}

// read adds n bytes read by the source.
func (m *aliasMeter) read(n int) {
	m.bytes += int64(n)
	m.allowed += int64(n) * AliasValuesPerByte
}

// spend accounts for one value expanded; false when the run's budget is spent.
func (m *aliasMeter) spend() bool {
	if m.spent < m.allowed {
		m.spent++
		return true
	}
	if !m.joined {
		m.join()
		if m.spent < m.allowed {
			m.spent++
			return true
		}
	}
	return false
}

// join waits for every source before this one to finish and takes what they
// left of the budget.
func (m *aliasMeter) join() {
	b := m.budget
	b.mu.Lock()
	for b.folded < m.seq {
		b.cond.Wait()
	}
	m.allowed += b.pool
	b.pool = 0
	m.joined = true
	b.mu.Unlock()
}

// total is the run's budget up to and including this source, for messages
// (deterministic once joined).
func (m *aliasMeter) total() int64 {
	b := m.budget
	b.mu.Lock()
	defer b.mu.Unlock()
	return AliasValuesBase + (b.bytes+m.bytes)*AliasValuesPerByte
}

// finish gives back what the source did not spend. Every source reserved
// must finish (those that read nothing too), or the sources after it that
// need the pool wait forever.
func (m *aliasMeter) finish() {
	if m == nil || m.finished {
		return
	}
	m.finished = true
	b := m.budget
	b.mu.Lock()
	defer b.mu.Unlock()
	b.pending[m.seq] = aliasLeft{left: m.allowed - m.spent, bytes: m.bytes, spent: m.spent}
	for {
		l, ok := b.pending[b.folded]
		if !ok {
			break
		}
		delete(b.pending, b.folded)
		if m.joined && b.folded == m.seq {
			b.pool = l.left // the pool was drawn into allowed
		} else {
			b.pool += l.left
		}
		b.bytes += l.bytes
		b.spent += l.spent
		b.folded++
	}
	b.cond.Broadcast()
}

// exceeded is the error of a document whose aliases the budget cannot pay for.
func (m *aliasMeter) exceeded(c *yamlConverter) *yamlError {
	return c.errorf(c.aliasLine, "aliases expand to more values than are left of the run's budget for them (%d values so far, for all files together: %d, and %d more for each byte read)",
		m.total(), AliasValuesBase, AliasValuesPerByte)
}

// decodeSource decodes one file's content as a source of the run's alias
// budget b (a source of its own when b is nil).
func decodeSource(b *AliasBudget, path string, data []byte, filter bool) ([]evaluator.Object, []evaluator.LoadError, int) {
	if b == nil {
		b = NewAliasBudget()
	}
	m := b.newSource()
	defer m.finish()
	return decodeFile(path, data, filter, m)
}

// DecodeFunc decodes the content of one file as LoadBytes does (dropping, when
// filter is set, the objects of kinds no rule reads, as LoadBytesFiltered),
// within the alias budget of the run it belongs to.
type DecodeFunc func(path string, data []byte, filter bool) ([]evaluator.Object, []evaluator.LoadError, int)

// Decoder returns a DecodeFunc whose every call is a source of its own in the
// budget, read after every source before it: for files decoded one after the
// other (a render worker's documents).
func (b *AliasBudget) Decoder() DecodeFunc {
	return func(path string, data []byte, filter bool) ([]evaluator.Object, []evaluator.LoadError, int) {
		return decodeSource(b, path, data, filter)
	}
}
