// Package ignore matches paths against exclude patterns written in the syntax
// of .gitignore files:
//
//   - A blank line matches nothing; a line starting with # is a comment (\# for
//     a literal #). Trailing spaces are dropped unless escaped with \.
//   - !pattern re-includes what an earlier pattern excluded (a file whose
//     directory is excluded stays excluded: the directory is never read).
//   - A trailing / matches directories only.
//   - A pattern with a / at its start or in its middle is anchored: it matches
//     paths relative to the pattern's base directory. Any other pattern matches
//     a name at any depth ("templates/" excludes every directory named
//     templates).
//   - * matches anything but /, ? one character but /, [a-z] and [!a-z] a
//     character class, \ quotes the next character; ** as a whole segment
//     matches any number of directories: **/x, x/** (everything inside x) and
//     a/**/b.
//
// Pattern.Match costs O(pattern segments × path segments) (no backtracking),
// so a hostile pattern or a deep tree cannot make it blow up. A Set, which
// decides the paths of a directory walk, does better: each directory entered
// advances each pattern by one segment, so a path costs the same at any depth.
package ignore

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// Pattern is one parsed pattern.
type Pattern struct {
	// Text is the pattern as written.
	Text string
	// Source says where it was written, for reports: "--exclude",
	// ".flipflopignore:3".
	Source string

	negate   bool
	dirOnly  bool
	anchored bool
	segments []string    // "**" or a path.Match pattern of one segment
	filters  []segFilter // one per segment
	// stars has bit i set when segment i is **, afterStar bit i+1: the
	// position sets of Set's matcher, one bit per position 0..len(segments).
	stars, afterStar []uint64
}

// Parse parses one pattern. An empty pattern or a comment returns nil, nil.
func Parse(text, source string) (*Pattern, error) {
	p := &Pattern{Text: text, Source: source}
	s := trimTrailingSpaces(text)
	if s == "" || strings.HasPrefix(s, "#") {
		return nil, nil
	}
	if strings.HasPrefix(s, "!") {
		p.negate = true
		s = s[1:]
	} else if strings.HasPrefix(s, `\!`) || strings.HasPrefix(s, `\#`) {
		s = s[1:]
	}
	if strings.HasSuffix(s, "/") && !strings.HasSuffix(s, `\/`) {
		p.dirOnly = true
		s = strings.TrimRight(s, "/")
	}
	if s == "" {
		return nil, fmt.Errorf("%q matches nothing", text)
	}
	if strings.Contains(s, "/") {
		p.anchored = true
		s = strings.TrimPrefix(s, "/")
	}
	for _, seg := range strings.Split(s, "/") {
		switch {
		case seg == "":
			continue // a//b is a/b
		case seg == "**":
			if n := len(p.segments); n > 0 && p.segments[n-1] == "**" {
				continue // **/** is **
			}
		case strings.Contains(seg, "**"):
			seg = collapseStars(seg) // ** inside a segment is *
		}
		seg = bangClass(seg)
		if _, err := path.Match(seg, ""); errors.Is(err, path.ErrBadPattern) {
			return nil, fmt.Errorf("%q: malformed pattern (an unclosed [ or a trailing \\)", text)
		}
		p.segments = append(p.segments, seg)
	}
	if len(p.segments) == 0 {
		return nil, fmt.Errorf("%q matches nothing", text)
	}
	if !p.anchored && p.segments[0] != "**" {
		p.segments = append([]string{"**"}, p.segments...)
	}
	words := len(p.segments)/64 + 1
	p.stars, p.afterStar = make([]uint64, words), make([]uint64, words)
	for i, seg := range p.segments {
		p.filters = append(p.filters, newSegFilter(seg))
		if seg == "**" {
			p.stars[i/64] |= 1 << (i % 64)
			p.afterStar[(i+1)/64] |= 1 << ((i + 1) % 64)
		}
	}
	return p, nil
}

// segFilter is what a name needs to match one pattern segment, read once
// from the segment: the segment is a literal name, or the name starts with
// prefix (the text before the first wildcard) and ends with suffix (the text
// after the last *, when nothing after it is a wildcard) before path.Match,
// which reads the whole segment each time (also to reject it), is asked.
type segFilter struct {
	literal        bool
	prefix, suffix string
}

func newSegFilter(seg string) segFilter {
	i := strings.IndexAny(seg, `*?[\`)
	if i < 0 {
		return segFilter{literal: true}
	}
	f := segFilter{prefix: seg[:i]}
	if !strings.ContainsAny(seg, `[\`) { // every * is a star
		if j := strings.LastIndexByte(seg, '*'); j >= 0 && !strings.Contains(seg[j+1:], "?") {
			f.suffix = seg[j+1:]
		}
	}
	return f
}

// match matches name against seg, the segment f was read from.
func (f *segFilter) match(seg, name string) bool {
	if f.literal {
		return seg == name
	}
	if len(name) < len(f.prefix)+len(f.suffix) || !strings.HasPrefix(name, f.prefix) || !strings.HasSuffix(name, f.suffix) {
		return false
	}
	ok, _ := path.Match(seg, name)
	return ok
}

// Negate reports whether the pattern re-includes paths (written with !).
func (p *Pattern) Negate() bool { return p.negate }

// trimTrailingSpaces drops trailing spaces that are not escaped with \.
func trimTrailingSpaces(s string) string {
	s = strings.TrimRight(s, "\r")
	for strings.HasSuffix(s, " ") && !strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-1]
	}
	if strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-2] + " "
	}
	return s
}

// bangClass writes fnmatch's negated class [!a-z] as path.Match's [^a-z].
func bangClass(seg string) string {
	b := []byte(seg)
	for i := 0; i < len(b); i++ {
		switch {
		case b[i] == '\\':
			i++
		case b[i] == '[' && i+1 < len(b) && b[i+1] == '!':
			b[i+1] = '^'
		}
	}
	return string(b)
}

func collapseStars(seg string) string {
	for strings.Contains(seg, "**") {
		seg = strings.ReplaceAll(seg, "**", "*")
	}
	return seg
}

// Match reports whether the pattern matches rel, a slash-separated path
// relative to the pattern's base directory (no leading /, no . or ..
// segments); dir says rel is a directory. Only rel itself is matched, not its
// parent directories: see Set.Excluded.
func (p *Pattern) Match(rel string, dir bool) bool {
	if p.dirOnly && !dir {
		return false
	}
	return matchSegments(p.segments, strings.Split(rel, "/"), p.trailingInside())
}

// trailingInside: a pattern ending in /** matches what is inside a directory,
// not the directory itself.
func (p *Pattern) trailingInside() bool {
	n := len(p.segments)
	return n > 1 && p.segments[n-1] == "**"
}

// matchSegments matches path segments against pattern segments, where "**"
// matches zero or more segments (one or more when insideOnly and it ends the
// pattern: x/** is what is inside x, not x). Dynamic programming over
// (pattern, path) positions: O(len(pat) × len(segs)) segment matches.
func matchSegments(pat, segs []string, insideOnly bool) bool {
	ok := make([]bool, len(segs)+1) // ok[j]: the pattern so far matches segs[:j]
	ok[0] = true
	next := make([]bool, len(segs)+1)
	for i, p := range pat {
		if p == "**" {
			strict := insideOnly && i == len(pat)-1
			seen := false
			for j := range ok {
				if strict {
					next[j] = seen // some shorter prefix matched: at least one segment
					seen = seen || ok[j]
				} else {
					seen = seen || ok[j]
					next[j] = seen
				}
			}
		} else {
			next[0] = false
			for j := 1; j <= len(segs); j++ {
				next[j] = false
				if ok[j-1] {
					next[j], _ = path.Match(p, segs[j-1])
				}
			}
		}
		ok, next = next, ok
	}
	return ok[len(segs)]
}

// MaxPatterns is the most patterns one source (a file, or the command line)
// may hold: matching costs grow with patterns × paths, and both can come from
// a pull request.
const MaxPatterns = 1000

// ParseError is a pattern that could not be parsed, with where it was written.
type ParseError struct {
	Source string
	Line   int // 0 when the source has no lines (the command line)
	Err    error
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.Source, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Source, e.Err)
}

// ParseLines parses the lines of an ignore file; source names the file, and
// each pattern's Source is "source:line". Errors are *ParseError.
func ParseLines(text, source string) ([]*Pattern, error) {
	var out []*Pattern
	for i, line := range strings.Split(text, "\n") {
		p, err := Parse(line, fmt.Sprintf("%s:%d", source, i+1))
		if err != nil {
			return nil, &ParseError{Source: source, Line: i + 1, Err: err}
		}
		if p == nil {
			continue
		}
		if len(out) == MaxPatterns {
			return nil, &ParseError{Source: source, Line: i + 1, Err: fmt.Errorf("more than %d patterns", MaxPatterns)}
		}
		out = append(out, p)
	}
	return out, nil
}
