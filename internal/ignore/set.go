package ignore

import (
	"math/bits"
	"path/filepath"
	"strings"
)

// Set holds patterns with the directories they are relative to, and decides
// which paths are excluded: the last pattern that matches a path wins, in the
// order of precedence from lowest to highest: those of per-directory ignore
// files (shallower directories first), then those added with Add (the command
// line and the configuration file), in the order added.
//
// Deciding a path costs time linear in its depth plus the patterns that could
// still match it, whatever the depth of the tree. A Set follows the directory
// of the last path decided: for each pattern of several segments it keeps
// which of its prefixes match the path from its base to that directory, and
// for each directory down to it only what changed on entering it (so a
// directory walk steps each pattern once per directory entered, and goes back
// up by undoing the changes); a pattern whose last segment is a literal name
// is looked up by that name. Its memory is what the patterns hold plus the
// changes recorded for the directories above the current one. A Set is not
// safe for concurrent use: Decide and Excluded move it.
type Set struct {
	last   []rule
	dirs   map[string][]*Pattern // ignore files' patterns by absolute directory
	lastAt map[string][]int      // indexes into last, by base directory

	// frames are the directories from a root down to the current one.
	frames []*frame
	// live are the patterns of several segments in force in the current
	// directory that may still match below it; ready those of them that
	// match an entry of it whose name matches their last segment.
	live  []*active
	ready index
	// scratch holds the positions being computed by step.
	scratch []uint64
	// tests counts segment tests (a pattern segment against a name), the
	// unit of matching work; tests check it.
	tests int
}

type rule struct {
	base string // absolute, cleaned
	p    *Pattern
}

// Add adds patterns relative to directory base (absolute) with the highest
// precedence.
func (s *Set) Add(base string, ps ...*Pattern) {
	base = filepath.Clean(base)
	if s.lastAt == nil {
		s.lastAt = map[string][]int{}
	}
	for _, p := range ps {
		s.lastAt[base] = append(s.lastAt[base], len(s.last))
		s.last = append(s.last, rule{base, p})
	}
	s.forget(base)
}

// AddDir adds the patterns of the ignore file of directory dir (absolute).
func (s *Set) AddDir(dir string, ps ...*Pattern) {
	dir = filepath.Clean(dir)
	if s.dirs == nil {
		s.dirs = map[string][]*Pattern{}
	}
	s.dirs[dir] = append(s.dirs[dir], ps...)
	s.forget(dir)
}

// forget leaves dir and the directories under it, whose state new patterns
// relative to dir change.
func (s *Set) forget(dir string) {
	for k, f := range s.frames {
		if f.path == dir {
			for len(s.frames) > k {
				s.pop()
			}
			return
		}
	}
}

// Empty reports whether the set holds no pattern.
func (s *Set) Empty() bool { return s == nil || len(s.last)+len(s.dirs) == 0 }

// Decide returns the pattern that decides path abs (absolute, cleaned; dir:
// a directory) and whether it excludes it. Parent directories are not
// considered: a walk that does not descend into excluded directories needs
// only this.
func (s *Set) Decide(abs string, dir bool) (*Pattern, bool) {
	if s.Empty() {
		return nil, false
	}
	parent, name, ok := splitPath(abs)
	if !ok {
		return nil, false
	}
	s.enter(parent)
	return decision(s.decide(name, dir))
}

// Excluded is Decide for a path whose parent directories were not decided
// yet (a path given by the user): a path inside an excluded directory is
// excluded by that directory's pattern.
func (s *Set) Excluded(abs string, dir bool) (*Pattern, bool) {
	if s.Empty() {
		return nil, false
	}
	parent, name, ok := splitPath(abs)
	if !ok {
		return nil, false
	}
	s.enter(parent)
	for _, f := range s.frames[1:] {
		if p, ex := decision(f.self); ex {
			return p, true
		}
	}
	return decision(s.decide(name, dir))
}

func decision(a *active) (*Pattern, bool) {
	if a == nil {
		return nil, false
	}
	return a.p, !a.p.negate
}

// active is a pattern in force in the current directory.
type active struct {
	p *Pattern
	// tier is 0 for an ignore file's pattern, 1 for one added with Add;
	// level is the depth of the ignore file's directory, index the pattern's
	// place in its file, or among those added with Add.
	tier, level, index int
	// pos has bit i set when the pattern's first i segments match the path
	// from its base to the current directory (patterns of several segments).
	pos []uint64
	// liveAt and readyAt are its indexes in Set.live and in its list of
	// Set.ready; -1 when it is not there.
	liveAt, readyAt int
}

// above reports whether a takes precedence over b (nil: none).
func (a *active) above(b *active) bool {
	switch {
	case b == nil:
		return true
	case a.tier != b.tier:
		return a.tier > b.tier
	case a.level != b.level:
		return a.level > b.level
	}
	return a.index > b.index
}

func (a *active) has(i int) bool { return a.pos[i/64]&(1<<(i%64)) != 0 }

func (a *active) isLive() bool {
	for _, w := range a.pos {
		if w != 0 {
			return true
		}
	}
	return false
}

// isReady reports whether the pattern matches an entry of the current
// directory whose name matches its last segment: the segments before it match
// the directory. A trailing ** takes any name once the whole pattern matches
// the directory (its ** matching nothing): x/** matches what is inside x, and
// x itself is decided in x's parent, where x/** is not that far.
func (a *active) isReady() bool {
	n := len(a.p.segments)
	if a.p.segments[n-1] == "**" {
		return a.has(n)
	}
	return a.has(n - 1)
}

func (a *active) lastSegment() string { return a.p.segments[len(a.p.segments)-1] }

// index finds the patterns that could match a name: by their last segment
// when it is a literal name, else among the wildcards; any matches every name.
type index struct {
	byName map[string][]*active
	wild   []*active
	any    []*active
}

// get returns the list of ix that holds a (or would).
func (ix *index) get(a *active) []*active {
	switch seg := a.lastSegment(); {
	case seg == "**":
		return ix.any
	case a.p.filters[len(a.p.filters)-1].literal:
		return ix.byName[seg]
	}
	return ix.wild
}

// set stores l as the list of ix that holds a.
func (ix *index) set(a *active, l []*active) {
	switch seg := a.lastSegment(); {
	case seg == "**":
		ix.any = l
	case a.p.filters[len(a.p.filters)-1].literal:
		if ix.byName == nil {
			ix.byName = map[string][]*active{}
		}
		if len(l) == 0 {
			delete(ix.byName, seg)
		} else {
			ix.byName[seg] = l
		}
	default:
		ix.wild = l
	}
}

func (ix *index) add(a *active) {
	l := ix.get(a)
	a.readyAt = len(l)
	ix.set(a, append(l, a))
}

func (ix *index) remove(a *active) {
	l := ix.get(a)
	last := l[len(l)-1]
	l[a.readyAt], last.readyAt = last, a.readyAt
	a.readyAt = -1
	ix.set(a, l[:len(l)-1])
}

// floatLink lists the indexes of the single-name patterns ("**/name", as
// "name" is parsed) in force in a directory, one per directory they are
// relative to: such a pattern matches a name at any depth, so it needs no
// state.
type floatLink struct {
	ix   *index
	next *floatLink
}

// frame is a directory from a root down to the current one.
type frame struct {
	path  string // absolute, cleaned
	name  string // its last segment
	level int    // its depth: 0 for a root
	// floats are the single-name patterns in force here.
	floats *floatLink
	// self is the pattern that decides the directory in its parent.
	self *active
	// undo are the changes made entering the directory, in order.
	undo []change
}

// change flips bits of a pattern's positions: those at flips, or those set in
// xor (whichever is smaller).
type change struct {
	a     *active
	flips []int32
	xor   []uint64
}

// enter makes dir (absolute, cleaned) the current directory: it leaves the
// directories not above dir and enters those down to it.
func (s *Set) enter(dir string) {
	root := rootOf(dir)
	if len(s.frames) > 0 && s.frames[0].path != root {
		for len(s.frames) > 0 {
			s.pop()
		}
	}
	if len(s.frames) == 0 {
		s.push(root, "")
	}
	for len(s.frames) > 1 && !holds(s.frames[len(s.frames)-1].path, dir) {
		s.pop()
	}
	for top := s.frames[len(s.frames)-1].path; top != dir; top = s.frames[len(s.frames)-1].path {
		start := len(top)
		if start > 0 && top[start-1] != filepath.Separator {
			start++ // the separator after top
		}
		end := strings.IndexByte(dir[start:], filepath.Separator)
		if end < 0 {
			end = len(dir)
		} else {
			end += start
		}
		s.push(dir[:end], dir[start:end])
	}
}

// holds reports whether directory d is dir or lies under it.
func holds(dir, d string) bool {
	if !strings.HasPrefix(d, dir) {
		return false
	}
	return len(d) == len(dir) || dir == "" || dir[len(dir)-1] == filepath.Separator || d[len(dir)] == filepath.Separator
}

// push enters directory dirPath, named name, from the current directory (its
// parent; none for a root).
func (s *Set) push(dirPath, name string) {
	f := &frame{path: dirPath, name: name}
	if n := len(s.frames); n > 0 {
		parent := s.frames[n-1]
		f.level, f.floats = parent.level+1, parent.floats
		f.self = s.decide(name, true)
		for i := 0; i < len(s.live); {
			a := s.live[i]
			if c, changed := s.step(a, name); changed {
				f.undo = append(f.undo, c)
				s.apply(c)
				if a.liveAt != i {
					continue // s.live[i] is now another pattern
				}
			}
			i++
		}
	}
	var own *index
	activate := func(a *active) {
		segs := a.p.segments
		if len(segs) == 2 && segs[0] == "**" && segs[1] != "**" {
			if own == nil {
				own = &index{}
			}
			own.add(a)
			return
		}
		a.pos, a.liveAt, a.readyAt = make([]uint64, len(a.p.stars)), -1, -1
		flips := []int32{0}
		if segs[0] == "**" {
			flips = append(flips, 1) // ** matches no segment
		}
		c := change{a: a, flips: flips}
		f.undo = append(f.undo, c)
		s.apply(c)
	}
	for i, p := range s.dirs[dirPath] {
		activate(&active{p: p, level: f.level, index: i})
	}
	for _, i := range s.lastAt[dirPath] {
		activate(&active{p: s.last[i].p, tier: 1, index: i})
	}
	if own != nil {
		f.floats = &floatLink{own, f.floats}
	}
	s.frames = append(s.frames, f)
}

// pop leaves the current directory for its parent.
func (s *Set) pop() {
	f := s.frames[len(s.frames)-1]
	for k := len(f.undo) - 1; k >= 0; k-- {
		s.apply(f.undo[k]) // a flip undoes itself
	}
	s.frames = s.frames[:len(s.frames)-1]
}

// apply flips the bits of a change and files its pattern in live and ready
// accordingly.
func (s *Set) apply(c change) {
	a := c.a
	wasLive, wasReady := a.liveAt >= 0, a.readyAt >= 0
	if c.xor != nil {
		for i, w := range c.xor {
			a.pos[i] ^= w
		}
	} else {
		for _, q := range c.flips {
			a.pos[q/64] ^= 1 << (q % 64)
		}
	}
	if isLive := a.isLive(); isLive != wasLive {
		if isLive {
			a.liveAt = len(s.live)
			s.live = append(s.live, a)
		} else {
			last := s.live[len(s.live)-1]
			s.live[a.liveAt], last.liveAt = last, a.liveAt
			s.live, a.liveAt = s.live[:len(s.live)-1], -1
		}
	}
	if isReady := a.isLive() && a.isReady(); isReady != wasReady {
		if isReady {
			s.ready.add(a)
		} else {
			s.ready.remove(a)
		}
	}
}

// step computes how the positions of pattern a change when name is appended
// to the path: a position after a ** stays (the ** takes name too), a ** at a
// position takes name, a segment that matches name advances, and a ** at a
// position reached matches no segment more.
func (s *Set) step(a *active, name string) (change, bool) {
	p, cur := a.p, a.pos
	n := len(cur)
	if cap(s.scratch) < n {
		s.scratch = make([]uint64, n)
	}
	next := s.scratch[:n]
	var carry uint64
	for w := range n {
		st := cur[w] & p.stars[w]
		next[w] = st<<1 | carry | cur[w]&p.afterStar[w]
		carry = st >> 63
	}
	for w := range n {
		for m := cur[w] &^ p.stars[w]; m != 0; m &= m - 1 {
			if i := w*64 + bits.TrailingZeros64(m); i < len(p.segments) && s.matchSegment(p, i, name) {
				next[(i+1)/64] |= 1 << ((i + 1) % 64)
			}
		}
	}
	carry = 0
	flipped := 0
	for w := range n {
		st := next[w] & p.stars[w]
		next[w] |= st<<1 | carry
		carry = st >> 63
		next[w] ^= cur[w] // from here on, the bits that flip
		flipped += bits.OnesCount64(next[w])
	}
	if flipped == 0 {
		return change{}, false
	}
	c := change{a: a}
	if flipped*4 < n*8 {
		c.flips = make([]int32, 0, flipped)
		for w := range n {
			for m := next[w]; m != 0; m &= m - 1 {
				c.flips = append(c.flips, int32(w*64+bits.TrailingZeros64(m)))
			}
		}
	} else {
		c.xor = append([]uint64(nil), next...)
	}
	return c, true
}

// decide returns the pattern of highest precedence that matches the entry
// name of the current directory, or nil.
func (s *Set) decide(name string, dir bool) *active {
	var best *active
	try := func(ix *index) {
		for _, a := range ix.byName[name] {
			s.tests++
			if (dir || !a.p.dirOnly) && a.above(best) {
				best = a
			}
		}
		for _, a := range ix.any {
			s.tests++
			if (dir || !a.p.dirOnly) && a.above(best) {
				best = a
			}
		}
		for _, a := range ix.wild {
			if (dir || !a.p.dirOnly) && a.above(best) && s.matchSegment(a.p, len(a.p.segments)-1, name) {
				best = a
			}
		}
	}
	for f := s.frames[len(s.frames)-1].floats; f != nil; f = f.next {
		try(f.ix)
	}
	try(&s.ready)
	return best
}

// matchSegment matches segment i of p against one path segment, name.
func (s *Set) matchSegment(p *Pattern, i int, name string) bool {
	s.tests++
	return p.filters[i].match(p.segments[i], name)
}

// splitPath splits a cleaned path into its parent directory and its last
// segment; ok is false for a root.
func splitPath(p string) (parent, name string, ok bool) {
	root := rootOf(p)
	rest := p[len(root):]
	if rest == "" {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, filepath.Separator)
	if i < 0 {
		return root, rest, true
	}
	return p[:len(root)+i], rest[i+1:], true
}

// rootOf is the root of path p: its volume and leading separator ("/",
// `C:\`), or "" for a relative path.
func rootOf(p string) string {
	vol := filepath.VolumeName(p)
	if len(p) > len(vol) && p[len(vol)] == filepath.Separator {
		return p[:len(vol)+1]
	}
	return vol
}
