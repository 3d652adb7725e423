package loader

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/flipflop-dev/flipflop/internal/race"
)

// A source that needs more than its own bytes bring waits for the sources
// before it, and draws on what they left; a source after it that finished
// first gives back its share only in its turn, so what each one may spend
// does not depend on which finished first.
func TestAliasBudgetSpentInOrder(t *testing.T) {
	b := NewAliasBudget()
	first := b.sources(3)
	m0, m1, m2 := b.source(first), b.source(first+1), b.source(first+2)
	m2.read(100)
	m2.finish() // before the others: not yet in the pool
	m1.read(10)
	got := make(chan int64)
	go func() {
		n := int64(0)
		for m1.spend() {
			n++
		}
		m1.finish()
		got <- n
	}()
	select {
	case n := <-got:
		t.Fatalf("the second source spent %d values before the first finished", n)
	case <-time.After(50 * time.Millisecond):
	}
	m0.read(5)
	for range 3 {
		m0.spend()
	}
	m0.finish()
	// Its own 10, then the pool: AliasValuesBase and what the first left (2);
	// the third source's 100 come after it.
	if n := <-got; n != 10+AliasValuesBase+2 {
		t.Errorf("the second source spent %d values, want %d", n, 10+AliasValuesBase+2)
	}
	if s := b.Spent(); s != 3+10+AliasValuesBase+2 {
		t.Errorf("spent %d in all", s)
	}
	// What is left: the third source's 100.
	m3 := b.newSource()
	n := 0
	for m3.spend() {
		n++
	}
	m3.finish()
	if n != 100 {
		t.Errorf("the last source spent %d, want the 100 left", n)
	}
}

// The run's budget is the same however many files are read side by side:
// the same files are read and the same ones are errors, with the same
// messages, on one thread or four (run under -race too: the files wait for
// one another).
func TestAliasBudgetDeterministic(t *testing.T) {
	dir, _ := laughFiles(t, 12)
	// Files of different sizes, some without aliases, between them.
	for i := range 12 {
		s := strings.Repeat(fmt.Sprintf("---\nkind: Plain\nmetadata: {name: p%d}\n", i), i*50)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("laugh-%03d-plain.yaml", i)), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var runs []Loaded
	for _, procs := range []int{1, 4, 2} {
		old := runtime.GOMAXPROCS(procs)
		runs = append(runs, (&Loader{AllKinds: true}).LoadAll([]string{dir}))
		runtime.GOMAXPROCS(old)
	}
	if len(runs[0].Errors) == 0 {
		t.Fatal("no file over the budget")
	}
	for _, r := range runs[1:] {
		if !reflect.DeepEqual(r.Errors, runs[0].Errors) || len(r.Objects) != len(runs[0].Objects) {
			t.Fatalf("errors %v and %v, %d and %d objects", runs[0].Errors, r.Errors, len(runs[0].Objects), len(r.Objects))
		}
	}
}

// One budget for a run's files and the files its git generators read: what
// LoadAll left is what ExpandGitGeneratorsWithin has, and the values spent
// stay within AliasValuesBase and one per byte read.
func TestAliasBudgetSharedWithGitGenerators(t *testing.T) {
	race.Sequential(t)
	dir, size := laughFiles(t, 7) // 7 x 135,740 of the 1,000,000 and the bytes' share
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "params"), 0o755); err != nil {
		t.Fatal(err)
	}
	params := billionLaughs(5)
	if err := os.WriteFile(filepath.Join(root, "params", "p.yaml"), []byte(params), 0o644); err != nil {
		t.Fatal(err)
	}
	appSet, errs := LoadBytes("appset.yaml", []byte(paramsAppSet))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	roots := []RepoRoot{{Dir: root}}

	// Alone, the parameters file is read.
	if _, errs := ExpandGitGeneratorsWithin(appSet, roots, NewAliasBudget()); len(errs) > 0 {
		t.Fatalf("a parameters file alone: %v", errs)
	}
	// After the files, it is over the budget.
	b := NewAliasBudget()
	r := (&Loader{Aliases: b}).LoadAll([]string{dir})
	if len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	_, errs = ExpandGitGeneratorsWithin(appSet, roots, b)
	if len(errs) != 1 || !strings.Contains(errs[0].Message, "params/p.yaml:") || !strings.Contains(errs[0].Message, "left of the run's budget") {
		t.Errorf("errors %v: want the parameters file over the run's budget", errs)
	}
	if max := int64(AliasValuesBase + (size+len(params))*AliasValuesPerByte); b.Spent() > max {
		t.Errorf("spent %d values, over %d", b.Spent(), max)
	}
}
