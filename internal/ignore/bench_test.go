package ignore

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// deepTree is a walk over a chain of depth directories d0/d1/..., each
// holding files files, below root; patterns patterns per ignore file, in the
// root and in d0, each padded to about padding bytes (2 × 1,000 patterns of
// 1 KB: the 2 MB of issue 20).
type deepTree struct {
	root     string
	depth    int
	files    int
	patterns int
	padding  int
}

// set builds the Set of the tree's two ignore files.
func (tr deepTree) set(t testing.TB) *Set {
	var s Set
	for k, dir := range []string{tr.root, filepath.Join(tr.root, "d0")} {
		var b strings.Builder
		pad := strings.Repeat("p", tr.padding)
		for i := range tr.patterns {
			switch i % 6 {
			case 0: // a name at any depth
				fmt.Fprintf(&b, "%s-%d-%d\n", pad, k, i)
			case 1: // a wildcard name at any depth
				fmt.Fprintf(&b, "*.%s%d\n", pad, i)
			case 2: // a directory name at any depth, directories only
				fmt.Fprintf(&b, "%s%d/\n", pad, i)
			case 3: // ** in the middle, matching a file in every other directory
				if i%12 == 3 {
					fmt.Fprintf(&b, "**/d%d/**/f%d.yaml\n", i%tr.depth, i%tr.files)
				} else {
					fmt.Fprintf(&b, "**/d%d/**/f%d-%s.yaml\n", i%tr.depth, i, pad)
				}
			case 4: // anchored
				fmt.Fprintf(&b, "/d1/*/%s/x%d\n", pad, i)
			case 5: // a re-inclusion
				if i%12 == 5 {
					fmt.Fprintf(&b, "!**/d%d/f%d.yaml\n", i%tr.depth, i%tr.files)
				} else {
					fmt.Fprintf(&b, "!%s/keep%d.yaml\n", pad, i)
				}
			}
		}
		ps, err := ParseLines(b.String(), filepath.Join(dir, ".flipflopignore"))
		if err != nil {
			t.Fatal(err)
		}
		s.AddDir(dir, ps...)
	}
	return &s
}

// walk decides every directory and file of the tree in the order of a
// directory walk and returns how many paths it decided and excluded.
func (tr deepTree) walk(s *Set) (decided, excluded int) {
	dir := tr.root
	for d := range tr.depth {
		dir = filepath.Join(dir, fmt.Sprintf("d%d", d))
		decided++
		if _, ex := s.Decide(dir, true); ex {
			excluded++
		}
		for f := range tr.files {
			decided++
			if _, ex := s.Decide(filepath.Join(dir, fmt.Sprintf("f%d.yaml", f)), false); ex {
				excluded++
			}
		}
	}
	return decided, excluded
}

// BenchmarkDecideDeepTree decides the 600 paths of a chain of 100
// directories (5 files each) under two ignore files of 1,000 patterns of
// about 1 KB.
func BenchmarkDecideDeepTree(b *testing.B) {
	tr := deepTree{root: filepath.FromSlash("/repo"), depth: 100, files: 5, patterns: 1000, padding: 1000}
	s := tr.set(b)
	b.ResetTimer()
	for b.Loop() {
		tr.walk(s)
	}
}
