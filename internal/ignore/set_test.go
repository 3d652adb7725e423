package ignore

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/internal/race"
)

// refSet decides as Set did before it kept per-directory state: every pattern
// of every ancestor's ignore file, then every pattern added, matched against
// the whole path relative to its base. It is the reference for Set.
type refSet struct {
	last []rule
	dirs map[string][]*Pattern
}

func (s *refSet) Decide(abs string, dir bool) (*Pattern, bool) {
	var m *Pattern
	try := func(base string, p *Pattern) {
		if rel, ok := refWithin(base, abs); ok && p.Match(rel, dir) {
			m = p
		}
	}
	for _, a := range refAncestors(abs) {
		for _, p := range s.dirs[a] {
			try(a, p)
		}
	}
	for _, r := range s.last {
		try(r.base, r.p)
	}
	return m, m != nil && !m.negate
}

func (s *refSet) Excluded(abs string, dir bool) (*Pattern, bool) {
	for _, a := range refAncestors(abs) {
		if p, ex := s.Decide(a, true); ex {
			return p, true
		}
	}
	return s.Decide(abs, dir)
}

func refWithin(base, abs string) (string, bool) {
	sep := string(filepath.Separator)
	prefix := base
	if !strings.HasSuffix(prefix, sep) {
		prefix += sep
	}
	rest, ok := strings.CutPrefix(abs, prefix)
	if !ok || rest == "" {
		return "", false
	}
	return strings.ReplaceAll(rest, sep, "/"), true
}

func refAncestors(abs string) []string {
	var out []string
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		out = append([]string{d}, out...)
		if filepath.Dir(d) == d {
			return out
		}
	}
}

// Set decides every path as the reference does, for random patterns (every
// kind of segment, anchored or not, directories only, negated) in ignore
// files at several depths and added with Add, for paths decided in random
// order, with ignore files added between decisions.
func TestSetAgreesWithReference(t *testing.T) {
	race.Sequential(t)
	rng := rand.New(rand.NewPCG(20, 6))
	segs := []string{"a", "b", "c", "ab", "x.yaml", "*", "?", "[ab]", "[!a]*", "a*", "*.yaml", "**", "**", "\\a", "?a", "a*b*", "x*.yaml", "*b", "a?", "[*]b", "*\\?"}
	names := []string{"a", "b", "c", "ab", "x.yaml", "bb", "aab", "xa.yaml", "*b", "b?"}
	root := filepath.FromSlash("/r")
	randomPattern := func() *Pattern {
		for {
			var b strings.Builder
			if rng.IntN(4) == 0 {
				b.WriteString("!")
			}
			if rng.IntN(4) == 0 {
				b.WriteString("/")
			}
			for i := range 1 + rng.IntN(4) {
				if i > 0 {
					b.WriteString("/")
				}
				b.WriteString(segs[rng.IntN(len(segs))])
			}
			if rng.IntN(3) == 0 {
				b.WriteString("/")
			}
			if p, err := Parse(b.String(), "random"); err == nil && p != nil {
				return p
			}
		}
	}
	randomDir := func(maxDepth int) string {
		d := root
		for range rng.IntN(maxDepth + 1) {
			d = filepath.Join(d, names[rng.IntN(len(names))])
		}
		return d
	}
	for round := range 300 {
		var s Set
		ref := refSet{dirs: map[string][]*Pattern{}}
		addDir := func() {
			d := randomDir(3)
			var ps []*Pattern
			for range 1 + rng.IntN(4) {
				ps = append(ps, randomPattern())
			}
			s.AddDir(d, ps...)
			ref.dirs[d] = append(ref.dirs[d], ps...)
		}
		add := func() {
			d := randomDir(2)
			p := randomPattern()
			s.Add(d, p)
			ref.last = append(ref.last, rule{d, p})
		}
		for range 1 + rng.IntN(4) {
			addDir()
		}
		for range rng.IntN(3) {
			add()
		}
		for range 200 {
			switch rng.IntN(40) {
			case 0:
				addDir()
			case 1:
				add()
			}
			p := randomDir(7)
			if p == root {
				continue
			}
			dir := rng.IntN(2) == 0
			gotP, got := s.Decide(p, dir)
			wantP, want := ref.Decide(p, dir)
			if gotP != wantP || got != want {
				t.Fatalf("round %d: Decide(%s, dir %v) = %v %v, want %v %v", round, p, dir, text(gotP), got, text(wantP), want)
			}
			gotP, got = s.Excluded(p, dir)
			wantP, want = ref.Excluded(p, dir)
			if gotP != wantP || got != want {
				t.Fatalf("round %d: Excluded(%s, dir %v) = %v %v, want %v %v", round, p, dir, text(gotP), got, text(wantP), want)
			}
		}
	}
}

func text(p *Pattern) string {
	if p == nil {
		return "<none>"
	}
	return fmt.Sprintf("%q from %s", p.Text, p.Source)
}

// Deciding every path of a walk costs segment tests linear in the number of
// paths, whatever the depth: doubling the depth of a chain of directories
// (with as many files per directory) at most doubles the work, and each path
// costs a few tests per pattern at most. Before, each path matched every
// pattern against its whole path from the pattern's base, so the work grew
// with the square of the depth (each path of a chain of 100 cost about 4 times
// what one of a chain of 50 did).
func TestDecideWorkLinearInDepth(t *testing.T) {
	const patterns = 600 // per ignore file, two files
	work := func(depth int) (tests, decided int) {
		tr := deepTree{root: filepath.FromSlash("/repo"), depth: depth, files: 5, patterns: patterns, padding: 3}
		s := tr.set(t)
		decided, excluded := tr.walk(s)
		if excluded == 0 {
			t.Fatal("the tree has no excluded path: the patterns no longer test matching")
		}
		return s.tests, decided
	}
	t60, n60 := work(60)
	t120, n120 := work(120)
	t.Logf("depth 60: %d tests for %d paths; depth 120: %d tests for %d paths", t60, n60, t120, n120)
	if n120 != 2*n60 {
		t.Fatalf("decided %d then %d paths", n60, n120)
	}
	if t120 > 2*t60+2*patterns {
		t.Errorf("doubling the depth took %d segment tests instead of %d: not linear", t120, t60)
	}
	if per := t120 / n120; per > 2*patterns {
		t.Errorf("%d segment tests per path for %d patterns", per, 2*patterns)
	}
}

// A Set records, for each directory between the root and the current one,
// only the patterns whose state changed on entering it: patterns in force
// everywhere that wait for a name the path never has cost no memory per
// directory, and so a deep walk under many of them holds about one record per
// pattern, not one per pattern per directory.
func TestSetRecordsChangesOnly(t *testing.T) {
	const patterns, depth = 500, 200
	var b strings.Builder
	for i := range patterns {
		fmt.Fprintf(&b, "**/*/q%d/x\n", i) // any name, then q<i>: after the first directory, nothing changes
	}
	ps, err := ParseLines(b.String(), "big")
	if err != nil {
		t.Fatal(err)
	}
	var s Set
	dir := filepath.FromSlash("/r")
	s.AddDir(dir, ps...)
	for d := range depth {
		dir = filepath.Join(dir, fmt.Sprintf("d%d", d))
		s.Decide(dir, true)
	}
	records := 0
	for _, f := range s.frames {
		records += len(f.undo)
	}
	if len(s.frames) != depth+1 || records > 2*patterns {
		t.Errorf("%d directories entered hold %d records for %d patterns", len(s.frames), records, patterns)
	}
}
