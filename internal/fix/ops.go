package fix

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The operations below turn a change of the YAML tree into the smallest text
// edit that makes it, in the style of the surrounding YAML: block collections
// get whole lines at the indentation of their siblings, flow collections get
// ", key: value" or "item, " inside their brackets. Everything else in the file
// (comments, quoting, indentation, key order) is left as it is.

// styleOf is the scalar style new text should take inside collection n:
// double-quoted when n's keys are (JSON), plain otherwise.
func (e *edits) styleOf(n *yaml.Node) scalarStyle {
	for ; n != nil; n = e.src.parent[n] {
		if n.Kind == yaml.MappingNode && len(n.Content) > 0 {
			if n.Content[0].Style&yaml.DoubleQuotedStyle != 0 && n.Style&yaml.FlowStyle != 0 {
				return styleDouble
			}
			return stylePlain
		}
	}
	return stylePlain
}

// anchored refuses to edit n when n or a collection holding it carries an
// anchor: aliases elsewhere would change with it.
func (e *edits) anchored(n *yaml.Node) error {
	for x := n; x != nil; x = e.src.parent[x] {
		if x.Anchor != "" {
			return fmt.Errorf("%s:%d: the change falls inside the YAML anchor &%s, which aliases share: edit it by hand", e.src.path, n.Line, x.Anchor)
		}
	}
	return nil
}

// setScalar replaces the value of scalar node v, keeping its quoting.
func (e *edits) setScalar(v *yaml.Node, value any) error {
	if err := e.anchored(v); err != nil {
		return err
	}
	if v.Kind != yaml.ScalarNode {
		return fmt.Errorf("%s:%d: expected a single value", e.src.path, v.Line)
	}
	start, end, err := e.src.scalarSpan(v)
	if err != nil {
		return fmt.Errorf("%s:%s", e.src.path, err)
	}
	style := e.styleOf(e.src.parent[v])
	switch {
	case v.Style&yaml.DoubleQuotedStyle != 0:
		style = styleDouble
	case v.Style&yaml.SingleQuotedStyle != 0:
		style = styleSingle
	}
	text := scalar(value, style, e.src.inFlow(v))
	if start == end && start > 0 && e.src.text[start-1] == ':' {
		text = " " + text // an empty value right after its colon
	}
	e.add(start, end, text)
	return nil
}

// set gives key the scalar value in mapping m: the existing value is replaced,
// or a new entry is inserted after the entry of the first of after that m has
// (after its last entry when it has none of them).
func (e *edits) set(m *yaml.Node, k string, value any, after ...string) error {
	if _, v := entry(m, k); v != nil {
		return e.setScalar(v, value)
	}
	return e.insertEntry(m, k, value, after...)
}

// insertEntry adds the entry k: v to mapping m (see set for where).
func (e *edits) insertEntry(m *yaml.Node, k string, v any, after ...string) error {
	if err := e.anchored(m); err != nil {
		return err
	}
	if m.Kind != yaml.MappingNode {
		return fmt.Errorf("%s:%d: expected a mapping", e.src.path, m.Line)
	}
	src := e.src
	anchor := -1
	for _, a := range after {
		for i := 0; i+1 < len(m.Content); i += 2 {
			if m.Content[i].Value == a {
				anchor = i
				break
			}
		}
		if anchor >= 0 {
			break
		}
	}
	if anchor < 0 {
		anchor = len(m.Content) - 2
	}
	style := e.styleOf(m)
	if m.Style&yaml.FlowStyle != 0 {
		if anchor < 0 { // {}
			e.add(src.pos(m)+1, src.pos(m)+1, key(k, style)+": "+flowText(v, style))
			return nil
		}
		_, end, err := src.nodeSpan(m.Content[anchor+1])
		if err != nil {
			return fmt.Errorf("%s:%s", src.path, err)
		}
		if ak := m.Content[anchor]; src.startsLine(ak) {
			// One entry per line: a new line at the same indentation.
			ind := src.column(src.pos(ak))
			e.add(end, end, ","+src.eol+strings.Repeat(" ", ind)+key(k, style)+": "+e.flowLines(v, style, ind, m))
			return nil
		}
		e.add(end, end, ", "+key(k, style)+": "+flowText(v, style))
		return nil
	}
	if anchor < 0 {
		return fmt.Errorf("%s:%d: cannot add to an empty mapping", src.path, m.Line)
	}
	ak, av := m.Content[anchor], m.Content[anchor+1]
	indent := src.column(src.pos(ak))
	last := src.blockEnd(ak.Line, indent, isBlockSeq(av))
	var lines []string
	switch c := v.(type) {
	case obj, arr:
		lines = append(lines, strings.Repeat(" ", indent)+key(k, stylePlain)+":")
		in := indent + e.step(m)
		if _, ok := c.(arr); ok {
			in = indent
		}
		lines = append(lines, blockLines(c, in, e.step(m))...)
	default:
		lines = append(lines, strings.Repeat(" ", indent)+key(k, stylePlain)+": "+scalar(v, stylePlain, false))
	}
	e.insertLinesAfter(last, lines)
	return nil
}

// insertLinesAfter inserts whole lines after 1-based line l (0: at the top).
func (e *edits) insertLinesAfter(l int, lines []string) {
	src := e.src
	at := src.lineEnd(l)
	if l == 0 {
		at = 0
	}
	text := strings.Join(lines, src.eol) + src.eol
	if at == len(src.text) && at > 0 && src.text[at-1] != '\n' {
		text = src.eol + strings.TrimSuffix(text, src.eol) // the file lacks a final newline
	}
	e.add(at, at, text)
}

// step is the indentation unit used under mapping m: how far its nested
// block mappings are indented, 2 when it has none.
func (e *edits) step(m *yaml.Node) int {
	var walk func(n *yaml.Node) int
	walk = func(n *yaml.Node) int {
		if n.Kind != yaml.MappingNode || n.Style&yaml.FlowStyle != 0 {
			return 0
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if v.Kind == yaml.MappingNode && v.Style&yaml.FlowStyle == 0 && len(v.Content) > 0 {
				if d := e.src.column(e.src.pos(v.Content[0])) - e.src.column(e.src.pos(k)); d > 0 {
					return d
				}
			}
			if d := walk(v); d > 0 {
				return d
			}
		}
		return 0
	}
	for n := m; n != nil; n = e.src.parent[n] {
		if d := walk(n); d > 0 {
			return d
		}
	}
	return 2
}

func isBlockSeq(n *yaml.Node) bool {
	return n != nil && n.Kind == yaml.SequenceNode && n.Style&yaml.FlowStyle == 0
}

// deleteEntry removes key k and its value from mapping m, which must keep at
// least one other entry.
func (e *edits) deleteEntry(m *yaml.Node, k string) error {
	if err := e.anchored(m); err != nil {
		return err
	}
	src := e.src
	idx := -1
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == k {
			idx = i
		}
	}
	if idx < 0 {
		return nil
	}
	if len(m.Content) == 2 {
		return fmt.Errorf("%s:%d: removing %s would leave an empty mapping", src.path, m.Content[idx].Line, k)
	}
	kn, vn := m.Content[idx], m.Content[idx+1]
	if m.Style&yaml.FlowStyle != 0 {
		return e.deleteFlow(m.Content, idx, 2)
	}
	start := src.pos(kn)
	if strings.TrimSpace(string(src.text[src.lineStart(kn.Line):start])) != "" {
		// The key follows a "- " on its line: pull the next key up to it.
		if idx+2 >= len(m.Content) {
			return fmt.Errorf("%s:%d: cannot remove %s", src.path, kn.Line, k)
		}
		e.add(start, src.pos(m.Content[idx+2]), "")
		return nil
	}
	last := src.blockEnd(kn.Line, src.column(start), isBlockSeq(vn))
	e.add(src.lineStart(kn.Line), src.lineEnd(last), "")
	return nil
}

// deleteFlow removes entry idx of a flow collection whose content has width
// nodes per entry (2 for mappings, 1 for sequences), with one comma.
func (e *edits) deleteFlow(content []*yaml.Node, idx, width int) error {
	src := e.src
	start := src.pos(content[idx])
	_, end, err := src.nodeSpan(content[idx+width-1])
	if err != nil {
		return fmt.Errorf("%s:%s", src.path, err)
	}
	switch {
	case idx+width < len(content):
		e.add(start, src.pos(content[idx+width]), "")
	case idx > 0:
		_, pend, err := src.nodeSpan(content[idx-1])
		if err != nil {
			return fmt.Errorf("%s:%s", src.path, err)
		}
		e.add(pend, end, "")
	default:
		e.add(start, end, "")
	}
	return nil
}

// deleteItem removes item idx of sequence seq, which must keep another item.
func (e *edits) deleteItem(seq *yaml.Node, idx int) error {
	if err := e.anchored(seq); err != nil {
		return err
	}
	src := e.src
	if len(seq.Content) < 2 {
		return fmt.Errorf("%s:%d: removing the item would leave an empty list", src.path, seq.Line)
	}
	if seq.Style&yaml.FlowStyle != 0 {
		return e.deleteFlow(seq.Content, idx, 1)
	}
	dash, line, err := src.dashOf(seq.Content[idx])
	if err != nil {
		return fmt.Errorf("%s:%s", src.path, err)
	}
	if strings.TrimSpace(string(src.text[src.lineStart(line):dash])) != "" {
		return fmt.Errorf("%s:%d: cannot remove an item that shares its line", src.path, line)
	}
	last := src.blockEnd(line, src.column(dash), false)
	e.add(src.lineStart(line), src.lineEnd(last), "")
	return nil
}

// insertItems inserts values into sequence seq before item idx (at the end
// when idx is the length), in the style of the sequence's items.
func (e *edits) insertItems(seq *yaml.Node, idx int, values ...any) error {
	if err := e.anchored(seq); err != nil {
		return err
	}
	src := e.src
	n := len(seq.Content)
	if seq.Style&yaml.FlowStyle != 0 {
		style := e.styleOf(seq)
		if n > 0 && src.startsLine(seq.Content[min(idx, n-1)]) {
			// One item per line: new lines at the same indentation.
			ind := src.column(src.pos(seq.Content[min(idx, n-1)]))
			pad := strings.Repeat(" ", ind)
			parts := make([]string, len(values))
			for i, v := range values {
				parts[i] = e.flowLines(v, style, ind, seq)
			}
			if idx < n {
				at := src.lineStart(src.lineOf(src.pos(seq.Content[idx])))
				var b strings.Builder
				for _, p := range parts {
					b.WriteString(pad + p + "," + src.eol)
				}
				e.add(at, at, b.String())
				return nil
			}
			_, end, err := src.nodeSpan(seq.Content[n-1])
			if err != nil {
				return fmt.Errorf("%s:%s", src.path, err)
			}
			e.add(end, end, ","+src.eol+pad+strings.Join(parts, ","+src.eol+pad))
			return nil
		}
		parts := make([]string, len(values))
		for i, v := range values {
			parts[i] = flowText(v, style)
		}
		text := strings.Join(parts, ", ")
		switch {
		case idx < n:
			e.add(src.pos(seq.Content[idx]), src.pos(seq.Content[idx]), text+", ")
		case n > 0:
			_, end, err := src.nodeSpan(seq.Content[n-1])
			if err != nil {
				return fmt.Errorf("%s:%s", src.path, err)
			}
			e.add(end, end, ", "+text)
		default:
			e.add(src.pos(seq)+1, src.pos(seq)+1, text)
		}
		return nil
	}
	if n == 0 {
		return fmt.Errorf("%s:%d: cannot add to an empty list", src.path, seq.Line)
	}
	ref := seq.Content[min(idx, n-1)]
	dash, dashLine, err := src.dashOf(ref)
	if err != nil {
		return fmt.Errorf("%s:%s", src.path, err)
	}
	dcol := src.column(dash)
	ccol := dcol + 2
	if src.lineOf(src.pos(ref)) == dashLine {
		ccol = src.column(src.pos(ref))
	}
	step := 2
	if ref.Kind == yaml.MappingNode {
		step = e.step(ref)
	}
	var lines []string
	for _, v := range values {
		var item []string
		switch v.(type) {
		case obj, arr:
			item = blockLines(v, ccol, step)
		default:
			item = []string{strings.Repeat(" ", ccol) + scalar(v, stylePlain, false)}
		}
		item[0] = strings.Repeat(" ", dcol) + "-" + strings.Repeat(" ", ccol-dcol-1) + item[0][ccol:]
		lines = append(lines, item...)
	}
	var after int
	switch {
	case idx == 0:
		after = dashLine - 1
	default:
		_, pl, err := src.dashOf(seq.Content[idx-1])
		if err != nil {
			return fmt.Errorf("%s:%s", src.path, err)
		}
		after = src.blockEnd(pl, dcol, false)
	}
	e.insertLinesAfter(after, lines)
	return nil
}

// startsLine reports whether node n is the first thing on its line.
func (s *source) startsLine(n *yaml.Node) bool {
	at := s.pos(n)
	return strings.TrimSpace(string(s.text[s.lineStart(s.lineOf(at)):at])) == ""
}

// flowLines renders v for a flow collection written one entry per line (as
// JSON usually is): nested collections open on the current line, hold one
// entry per line indented by the collection's step, and close at indent.
func (e *edits) flowLines(v any, style scalarStyle, indent int, near *yaml.Node) string {
	step := e.flowStep(near)
	var render func(v any, indent int) string
	render = func(v any, indent int) string {
		inner := strings.Repeat(" ", indent+step)
		switch x := v.(type) {
		case obj:
			if len(x) == 0 {
				return "{}"
			}
			parts := make([]string, len(x))
			for i, kv := range x {
				parts[i] = inner + key(kv.k, style) + ": " + render(kv.v, indent+step)
			}
			return "{" + e.src.eol + strings.Join(parts, ","+e.src.eol) + e.src.eol + strings.Repeat(" ", indent) + "}"
		case arr:
			if len(x) == 0 {
				return "[]"
			}
			parts := make([]string, len(x))
			for i, it := range x {
				parts[i] = inner + render(it, indent+step)
			}
			return "[" + e.src.eol + strings.Join(parts, ","+e.src.eol) + e.src.eol + strings.Repeat(" ", indent) + "]"
		}
		return scalar(v, style, true)
	}
	return render(v, indent)
}

// flowStep is how far a multi-line flow collection near n indents its
// entries: the distance between a collection's line and its first entry's.
func (e *edits) flowStep(n *yaml.Node) int {
	for ; n != nil; n = e.src.parent[n] {
		if (n.Kind == yaml.MappingNode || n.Kind == yaml.SequenceNode) && n.Style&yaml.FlowStyle != 0 && len(n.Content) > 0 {
			first := n.Content[0]
			if first.Line > n.Line && e.src.startsLine(first) {
				if d := e.src.column(e.src.pos(first)) - e.src.indentOf(n.Line); d > 0 {
					return d
				}
			}
		}
	}
	return 2
}
