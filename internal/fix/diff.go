package fix

import (
	"fmt"
	"sort"
	"strings"
)

// diffContext is the number of unchanged lines around each change.
const diffContext = 3

// splitLines splits text into lines that keep their line endings; the last
// line lacks one when the text does not end with a newline.
func splitLines(text string) []string {
	var out []string
	for text != "" {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			out = append(out, text)
			break
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

// change replaces old lines [a, b) (0-based) with new lines.
type change struct {
	a, b int
	new  []string
}

// lineChanges turns byte edits of old (sorted, not overlapping) into changes
// of whole lines, merging edits that touch the same or adjacent lines.
func lineChanges(old string, l []textEdit) []change {
	lines := splitLines(old)
	starts := make([]int, len(lines)+1)
	for i, ln := range lines {
		starts[i+1] = starts[i] + len(ln)
	}
	// lineIdx: the 0-based line holding byte offset off (len(lines) at the end).
	lineIdx := func(off int) int {
		return sort.Search(len(lines), func(i int) bool { return starts[i+1] > off })
	}
	atLineStart := func(off int) bool { i := lineIdx(off); return i == len(lines) || starts[i] == off }
	rangeOf := func(x textEdit) (int, int) {
		a := lineIdx(x.start)
		if atLineStart(x.start) && atLineStart(x.end) && (x.text == "" || strings.HasSuffix(x.text, "\n")) {
			return a, lineIdx(x.end)
		}
		if x.end > x.start && atLineStart(x.end) {
			return a, lineIdx(x.end-1) + 1
		}
		return a, min(lineIdx(x.end)+1, len(lines))
	}
	var out []change
	for i := 0; i < len(l); {
		a, b := rangeOf(l[i])
		j := i + 1
		for {
			for j < len(l) {
				na, nb := rangeOf(l[j])
				if na > b {
					break
				}
				b = max(b, nb)
				j++
			}
			seg := old[starts[a]:starts[b]]
			var local []textEdit
			for _, x := range l[i:j] {
				local = append(local, textEdit{start: x.start - starts[a], end: x.end - starts[a], text: x.text})
			}
			nt := string(apply([]byte(seg), local))
			if nt != "" && !strings.HasSuffix(nt, "\n") && b < len(lines) {
				b++ // the change ends inside a line: take the whole line in
				continue
			}
			out = append(out, change{a: a, b: b, new: splitLines(nt)})
			break
		}
		i = j
	}
	return out
}

// unifiedDiff renders the edits of one file as a git-style unified diff of
// old, naming the file name in the a/ and b/ paths. It returns "" when the
// edits change nothing.
func unifiedDiff(name, old string, l []textEdit) string {
	lines := splitLines(old)
	changes := lineChanges(old, l)
	// Drop changes that change nothing.
	var real []change
	for _, c := range changes {
		if strings.Join(lines[c.a:c.b], "") != strings.Join(c.new, "") {
			real = append(real, c)
		}
	}
	if len(real) == 0 {
		return ""
	}
	var b strings.Builder
	from, to := gitQuote("a/"+name), gitQuote("b/"+name)
	tab := ""
	if strings.Contains(name, " ") {
		tab = "\t" // as git does, so that patch does not read the rest as a date
	}
	fmt.Fprintf(&b, "diff --git %s %s\n--- %s%s\n+++ %s%s\n", from, to, from, tab, to, tab)
	delta := 0 // new line number minus old line number before the current hunk
	for i := 0; i < len(real); {
		j := i + 1
		for j < len(real) && real[j].a-real[j-1].b <= 2*diffContext {
			j++
		}
		from := max(0, real[i].a-diffContext)
		to := min(len(lines), real[j-1].b+diffContext)
		var body []string
		oldCount, newCount := 0, 0
		at := from
		hunkDelta := 0
		for _, c := range real[i:j] {
			for ; at < c.a; at++ {
				body = append(body, " "+lines[at])
				oldCount++
				newCount++
			}
			for _, ln := range lines[c.a:c.b] {
				body = append(body, "-"+ln)
				oldCount++
			}
			for _, ln := range c.new {
				body = append(body, "+"+ln)
				newCount++
			}
			hunkDelta += len(c.new) - (c.b - c.a)
			at = c.b
		}
		for ; at < to; at++ {
			body = append(body, " "+lines[at])
			oldCount++
			newCount++
		}
		oldStart, newStart := from+1, from+1+delta
		if oldCount == 0 {
			oldStart--
		}
		if newCount == 0 {
			newStart--
		}
		fmt.Fprintf(&b, "@@ -%d,%d +%d,%d @@\n", oldStart, oldCount, newStart, newCount)
		for _, ln := range body {
			b.WriteString(ln)
			if !strings.HasSuffix(ln, "\n") {
				b.WriteString("\n\\ No newline at end of file\n")
			}
		}
		delta += hunkDelta
		i = j
	}
	return b.String()
}

// gitQuote quotes a path for a diff header as git does (quote_c_style, with
// core.quotePath on): a path holding a double quote, a backslash, a control
// character or a byte of 0x80 and above is written in double quotes with C
// escapes (\n, \t, \", \\, and \ooo in octal for the rest), so that a file
// name with a line break cannot add a header line of its own. git apply and
// GNU patch read this form back; other paths are written as they are.
func gitQuote(p string) string {
	needs := false
	for i := 0; i < len(p); i++ {
		if c := p[i]; c == '"' || c == '\\' || c < 0x20 || c >= 0x7f {
			needs = true
			break
		}
	}
	if !needs {
		return p
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(p); i++ {
		c := p[i]
		switch c {
		case '\a':
			b.WriteString(`\a`)
		case '\b':
			b.WriteString(`\b`)
		case '\t':
			b.WriteString(`\t`)
		case '\n':
			b.WriteString(`\n`)
		case '\v':
			b.WriteString(`\v`)
		case '\f':
			b.WriteString(`\f`)
		case '\r':
			b.WriteString(`\r`)
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		default:
			if c < 0x20 || c >= 0x7f {
				fmt.Fprintf(&b, `\%03o`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}
