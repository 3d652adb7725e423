package fix

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// source is one input file parsed for patching: its text, where its lines
// start, and its YAML documents as nodes whose positions point into the text.
type source struct {
	path  string // as the objects name it
	bom   bool   // the file starts with a UTF-8 byte order mark (kept out of text)
	text  []byte // the content without the byte order mark
	lines []int  // byte offset of the start of each line; lines[0] is line 1
	eol   string // the line ending the file uses: "\n" or "\r\n"
	docs  []*document
	// parent maps every node to the collection that holds it.
	parent map[*yaml.Node]*yaml.Node
}

// document is one YAML document of a source.
type document struct {
	start, end int        // byte range of the document in text (its "---" line included)
	line       int        // 1-based line of the document's first line
	root       *yaml.Node // the document's content, nil when it has none
}

var bomBytes = []byte("\xef\xbb\xbf")

// parseSource parses the content of one file.
func parseSource(path string, data []byte) (*source, error) {
	s := &source{path: path, eol: "\n", parent: map[*yaml.Node]*yaml.Node{}}
	if rest, ok := bytes.CutPrefix(data, bomBytes); ok {
		s.bom, data = true, rest
	}
	if what := otherLineBreak(data); what != "" {
		// The loader counts lines as go-yaml does, at each of these too;
		// the patch's lines are LF lines: they would not meet.
		return nil, fmt.Errorf("%s: a line break that is not LF or CR LF (%s): fix does not patch such a file; convert its line breaks to LF", path, what)
	}
	s.text = data
	s.lines = []int{0}
	for i, c := range data {
		if c == '\n' && i+1 <= len(data) {
			s.lines = append(s.lines, i+1)
		}
	}
	if len(data) > 0 && data[len(data)-1] == '\n' {
		s.lines = s.lines[:len(s.lines)-1] // no line after the final newline
	}
	if i := bytes.IndexByte(data, '\n'); i > 0 && data[i-1] == '\r' {
		s.eol = "\r\n"
	}
	s.docs = splitDocuments(data, s.lines)
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: cannot parse for patching: %v", path, err)
		}
		if n.Kind != yaml.DocumentNode || len(n.Content) == 0 {
			continue
		}
		root := n.Content[0]
		if root.Kind == yaml.ScalarNode && root.Tag == "!!null" && root.Value == "" {
			// A document of comments only: go-yaml places its empty value
			// at the next "---", the line of the document that follows,
			// which it must not take.
			continue
		}
		s.index(root)
		if d := s.docAt(root.Line); d != nil && d.root == nil {
			d.root = root
		}
	}
	return s, nil
}

// index records the parent of every node under n.
func (s *source) index(n *yaml.Node) {
	for _, c := range n.Content {
		s.parent[c] = n
		s.index(c)
	}
}

// splitDocuments splits text on document markers the way the loader does:
// a "---" line starts a document, a "..." line ends one, and comment or blank
// lines before a "---" belong to the document it starts.
func splitDocuments(text []byte, lines []int) []*document {
	var docs []*document
	start, startLine, content := 0, 1, false
	for i, off := range lines {
		end := len(text)
		if i+1 < len(lines) {
			end = lines[i+1]
		}
		t := strings.TrimRight(string(text[off:end]), "\r\n")
		switch {
		case isMarker(t, "---"):
			if content {
				docs = append(docs, &document{start: start, end: off, line: startLine})
				start, startLine = off, i+1
			}
			content = true
		case isMarker(t, "..."):
			if content {
				docs = append(docs, &document{start: start, end: end, line: startLine})
			}
			start, startLine, content = end, i+2, false
		case !content:
			tt := strings.TrimLeft(t, " \t")
			content = tt != "" && tt[0] != '#' && t[0] != '%'
		}
	}
	if content {
		docs = append(docs, &document{start: start, end: len(text), line: startLine})
	}
	return docs
}

func isMarker(line, m string) bool {
	rest, ok := strings.CutPrefix(line, m)
	return ok && (rest == "" || rest[0] == ' ' || rest[0] == '\t')
}

// docAt returns the document holding line.
func (s *source) docAt(line int) *document {
	off := s.lineStart(line)
	for _, d := range s.docs {
		if off >= d.start && off < d.end {
			return d
		}
	}
	return nil
}

// docOf returns the document holding byte offset off.
func (s *source) docOf(off int) *document {
	for _, d := range s.docs {
		if off >= d.start && (off < d.end || (off == d.end && d.end == len(s.text))) {
			return d
		}
	}
	return nil
}

// objectNode returns the mapping of the object whose first key is on line:
// a document's root, or an item of a List document.
func (s *source) objectNode(line int) *yaml.Node {
	for _, d := range s.docs {
		r := d.root
		if r == nil || r.Kind != yaml.MappingNode {
			continue
		}
		if firstKeyLine(r) == line {
			return r
		}
		if items := lookup(r, "items"); items != nil && items.Kind == yaml.SequenceNode {
			for _, it := range items.Content {
				if it.Kind == yaml.MappingNode && firstKeyLine(it) == line {
					return it
				}
			}
		}
	}
	return nil
}

func firstKeyLine(n *yaml.Node) int {
	if n.Kind == yaml.MappingNode && len(n.Content) > 0 {
		return n.Content[0].Line
	}
	return n.Line
}

// lineCount is the number of lines of the text.
func (s *source) lineCount() int { return len(s.lines) }

// lineStart is the byte offset where 1-based line l starts (len(text) past the end).
func (s *source) lineStart(l int) int {
	if l-1 < len(s.lines) {
		return s.lines[l-1]
	}
	return len(s.text)
}

// lineEnd is the byte offset just past line l, its line ending included.
func (s *source) lineEnd(l int) int { return s.lineStart(l + 1) }

// lineText is line l without its line ending.
func (s *source) lineText(l int) string {
	return strings.TrimRight(string(s.text[s.lineStart(l):s.lineEnd(l)]), "\r\n")
}

// lineOf returns the 1-based line holding byte offset off.
func (s *source) lineOf(off int) int {
	return sort.Search(len(s.lines), func(i int) bool { return s.lines[i] > off })
}

// offset converts a yaml.v3 position (1-based line, 1-based column counted in
// characters) to a byte offset.
func (s *source) offset(line, col int) int {
	off := s.lineStart(line)
	for i := 1; i < col && off < len(s.text); i++ {
		_, w := utf8.DecodeRune(s.text[off:])
		off += w
	}
	return off
}

// pos is the byte offset where node n starts.
func (s *source) pos(n *yaml.Node) int { return s.offset(n.Line, n.Column) }

// indentOf is the number of spaces that start line l.
func (s *source) indentOf(l int) int {
	t := s.lineText(l)
	return len(t) - len(strings.TrimLeft(t, " "))
}

// inFlow reports whether n is, or is inside, a flow collection.
func (s *source) inFlow(n *yaml.Node) bool {
	for ; n != nil; n = s.parent[n] {
		if n.Style&yaml.FlowStyle != 0 && (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) {
			return true
		}
	}
	return false
}

// blockEnd returns the last line of a block entry that starts on line first
// and whose content is indented more than indent; with seqAtIndent, "- " lines
// at exactly indent belong to it too (a sequence written at its key's
// indentation). Blank and comment lines after the last content line are not
// part of it.
func (s *source) blockEnd(first, indent int, seqAtIndent bool) int {
	last := first
	for l := first + 1; l <= s.lineCount(); l++ {
		t := s.lineText(l)
		tt := strings.TrimLeft(t, " ")
		if tt == "" || tt[0] == '#' {
			continue
		}
		if isMarker(t, "---") || isMarker(t, "...") {
			break
		}
		ind := len(t) - len(tt)
		if ind > indent || (seqAtIndent && ind == indent && (tt == "-" || strings.HasPrefix(tt, "- "))) {
			last = l
			continue
		}
		break
	}
	return last
}

// scalarSpan returns the byte range of scalar n's text. Plain scalars must be
// on one line; block scalars and tagged scalars are refused.
func (s *source) scalarSpan(n *yaml.Node) (int, int, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, 0, fmt.Errorf("line %d: not a scalar", n.Line)
	}
	start := s.pos(n)
	t := s.text
	switch {
	case n.Style&yaml.DoubleQuotedStyle != 0:
		for i := start + 1; i < len(t); i++ {
			switch t[i] {
			case '\\':
				i++
			case '"':
				return start, i + 1, nil
			}
		}
	case n.Style&yaml.SingleQuotedStyle != 0:
		for i := start + 1; i < len(t); i++ {
			if t[i] == '\'' {
				if i+1 < len(t) && t[i+1] == '\'' {
					i++
					continue
				}
				return start, i + 1, nil
			}
		}
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle|yaml.TaggedStyle) != 0:
		return 0, 0, fmt.Errorf("line %d: the value is a block or tagged scalar", n.Line)
	default:
		if n.Tag == "!!null" && n.Value == "" {
			return start, start, nil // an empty value: nothing to span
		}
		flow := s.inFlow(n)
		end := start
		for end < len(t) && t[end] != '\n' && t[end] != '\r' {
			c := t[end]
			if flow && (c == ',' || c == ']' || c == '}') {
				break
			}
			if c == '#' && end > start && (t[end-1] == ' ' || t[end-1] == '\t') {
				break
			}
			end++
		}
		for end > start && (t[end-1] == ' ' || t[end-1] == '\t') {
			end--
		}
		if string(t[start:end]) != n.Value {
			return 0, 0, fmt.Errorf("line %d: the value %q spans several lines", n.Line, n.Value)
		}
		return start, end, nil
	}
	return 0, 0, fmt.Errorf("line %d: unterminated quoted scalar", n.Line)
}

// flowEnd returns the offset just past the flow collection that starts at
// start (its '{' or '[').
func (s *source) flowEnd(start int) (int, error) {
	t := s.text
	depth := 0
	prev := byte('{') // the last significant character: quotes open scalars only after one of {[,:
	for i := start; i < len(t); i++ {
		c := t[i]
		switch {
		case (c == '"' || c == '\'') && strings.IndexByte("{[,:", prev) >= 0:
			j := i + 1
			for ; j < len(t); j++ {
				if c == '"' && t[j] == '\\' {
					j++
					continue
				}
				if t[j] == c {
					if c == '\'' && j+1 < len(t) && t[j+1] == '\'' {
						j++
						continue
					}
					break
				}
			}
			i = j
		case c == '#' && i > start && (t[i-1] == ' ' || t[i-1] == '\t' || t[i-1] == '\n'):
			for i < len(t) && t[i] != '\n' {
				i++
			}
			continue
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		}
		if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			prev = c
		}
	}
	return 0, fmt.Errorf("unterminated flow collection at line %d", s.lineOf(start))
}

// nodeSpan returns the byte range of a node written in flow context or as a
// scalar: a scalar's text or a flow collection's brackets and content.
func (s *source) nodeSpan(n *yaml.Node) (int, int, error) {
	switch {
	case n.Kind == yaml.ScalarNode:
		return s.scalarSpan(n)
	case (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && n.Style&yaml.FlowStyle != 0:
		start := s.pos(n)
		end, err := s.flowEnd(start)
		return start, end, err
	}
	return 0, 0, fmt.Errorf("line %d: a block collection has no span", n.Line)
}

// dashOf finds the "-" that introduces block sequence item n: its byte
// offset and 1-based line.
func (s *source) dashOf(n *yaml.Node) (int, int, error) {
	i := s.pos(n) - 1
	for i >= 0 && (s.text[i] == ' ' || s.text[i] == '\t' || s.text[i] == '\n' || s.text[i] == '\r') {
		i--
	}
	if i < 0 || s.text[i] != '-' {
		return 0, 0, fmt.Errorf("line %d: cannot find the item's dash", n.Line)
	}
	return i, s.lineOf(i), nil
}

// column is the 0-based column (in bytes, which equals characters for the
// indentation spaces that precede it) of byte offset off on its line.
func (s *source) column(off int) int { return off - s.lineStart(s.lineOf(off)) }

// lookup returns the value of key in mapping m, or nil.
func lookup(m *yaml.Node, key string) *yaml.Node {
	_, v := entry(m, key)
	return v
}

// entry returns the key and value nodes of key in mapping m.
func entry(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if k := m.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key {
			return k, m.Content[i+1]
		}
	}
	return nil, nil
}

// pathOf follows keys from m.
func pathOf(m *yaml.Node, keys ...string) *yaml.Node {
	for _, k := range keys {
		m = lookup(m, k)
		if m == nil {
			return nil
		}
	}
	return m
}

// str returns the value of key in m when it is a scalar string.
func str(m *yaml.Node, key string) string {
	if v := lookup(m, key); v != nil && v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
		return v.Value
	}
	return ""
}

// keys lists the keys of mapping m.
func keys(m *yaml.Node) []string {
	var ks []string
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		ks = append(ks, m.Content[i].Value)
	}
	return ks
}

// otherLineBreak names the first line break of data that go-yaml reads and
// an LF-based patch does not (a CR alone, NEL, LS, PS), or "".
func otherLineBreak(data []byte) string {
	for i := 0; i < len(data); i++ {
		switch {
		case data[i] == '\r' && (i+1 == len(data) || data[i+1] != '\n'):
			return "CR"
		case data[i] == 0xc2 && i+1 < len(data) && data[i+1] == 0x85:
			return "NEL"
		case data[i] == 0xe2 && i+2 < len(data) && data[i+1] == 0x80 && data[i+2] == 0xa8:
			return "LS"
		case data[i] == 0xe2 && i+2 < len(data) && data[i+1] == 0x80 && data[i+2] == 0xa9:
			return "PS"
		}
	}
	return ""
}
