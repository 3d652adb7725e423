package fix

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// textEdit replaces the bytes [start, end) of a source's text with text.
type textEdit struct {
	start, end int
	text       string
	seq        int // creation order: inserts at one offset keep it
}

// edits collects the text edits of one source. Identical edits are kept once
// (two findings, or two Stages sharing a PromotionTask, ask for the same change).
type edits struct {
	src  *source
	list []textEdit
}

func (e *edits) add(start, end int, text string) {
	for _, x := range e.list {
		if x.start == start && x.end == end && x.text == text {
			return
		}
	}
	e.list = append(e.list, textEdit{start: start, end: end, text: text, seq: len(e.list)})
}

// sorted returns the edits in text order, or an error when two of them
// overlap (they would not apply one after the other).
func (e *edits) sorted() ([]textEdit, error) {
	l := slices.Clone(e.list)
	slices.SortStableFunc(l, func(a, b textEdit) int {
		return cmp.Or(cmp.Compare(a.start, b.start), cmp.Compare(a.end, b.end), cmp.Compare(a.seq, b.seq))
	})
	for i := 1; i < len(l); i++ {
		p, c := l[i-1], l[i]
		if c.start < p.end || (c.start == p.start && c.end > c.start && p.end > p.start) {
			return nil, fmt.Errorf("%s: two changes overlap at line %d", e.src.path, e.src.lineOf(c.start))
		}
	}
	return l, nil
}

// apply returns the text with every edit made.
func apply(text []byte, l []textEdit) []byte {
	var b strings.Builder
	at := 0
	for _, x := range l {
		b.Write(text[at:x.start])
		b.WriteString(x.text)
		at = x.end
	}
	b.Write(text[at:])
	return []byte(b.String())
}
