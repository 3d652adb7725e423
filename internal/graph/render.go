package graph

import (
	"fmt"
	"io"
	"strings"

	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// Write renders g as format: mermaid, dot or svg.
func Write(w io.Writer, format string, g *Graph) error {
	var s string
	switch format {
	case "mermaid":
		s = Mermaid(g)
	case "dot":
		s = DOT(g)
	case "svg":
		s = SVG(g, "flipflop")
	default:
		return fmt.Errorf("unknown graph format %q (want mermaid, dot or svg)", format)
	}
	_, err := io.WriteString(w, s)
	return err
}

// errorColor is how contradictions are drawn.
const errorColor = "#d1242f"

var groups = []struct{ kind, id, title string }{
	{KindStage, "stages", "Kargo Stages"},
	{KindApplication, "applications", "Argo CD Applications"},
	{KindPointer, "pointers", "Git: repository @ revision"},
}

// Mermaid renders g as a Mermaid flowchart (left to right), as GitHub renders
// it in a ```mermaid block: labels quoted, with quotes, angle brackets and #
// written as Mermaid entity codes. Nodes are declared in g's order (Stages in
// promotion order) and in no subgraph: Mermaid's layout keeps the order of
// declaration where crossings allow, but reorders the nodes of a subgraph
// (seen on six Stages: qa, dev, prod-us, ...). The shapes tell the kinds
// apart: a Stage is rounded, an Application a box, a pointer a cylinder.
func Mermaid(g *Graph) string {
	var b strings.Builder
	b.WriteString("flowchart LR\n")
	for _, n := range g.Nodes {
		open, close := "[", "]"
		switch n.Kind {
		case KindStage:
			open, close = "(", ")"
		case KindPointer:
			open, close = "[(", ")]"
		}
		fmt.Fprintf(&b, "  %s%s\"%s\"%s\n", n.ID, open, mermaidText(n.Label), close)
	}
	var red []string
	for i, e := range g.Edges {
		arrow := "-->"
		if e.Kind == EdgeWrite {
			arrow = "-.->"
		}
		if e.Label != "" {
			fmt.Fprintf(&b, "  %s %s|\"%s\"| %s\n", e.From, arrow, mermaidText(e.Label), e.To)
		} else {
			fmt.Fprintf(&b, "  %s %s %s\n", e.From, arrow, e.To)
		}
		if e.Error {
			red = append(red, fmt.Sprint(i))
		}
	}
	var errNodes []string
	for _, n := range g.Nodes {
		if n.Error {
			errNodes = append(errNodes, n.ID)
		}
	}
	if len(errNodes) > 0 {
		fmt.Fprintf(&b, "  classDef contradiction stroke:%s,stroke-width:3px,color:%s\n", errorColor, errorColor)
		fmt.Fprintf(&b, "  class %s contradiction\n", strings.Join(errNodes, ","))
	}
	if len(red) > 0 {
		fmt.Fprintf(&b, "  linkStyle %s stroke:%s,stroke-width:3px,color:%s\n", strings.Join(red, ","), errorColor, errorColor)
	}
	return b.String()
}

// mermaidText makes s safe inside a quoted Mermaid label: control and format
// characters escaped (safetext), so no label holds a line break that could
// start a statement (a click callback, a style); then, as Mermaid entity codes,
// the characters Mermaid gives a meaning: the quote that would close the label,
// # (entity codes), \ (Mermaid breaks a label at "\n", which is how safetext
// shows a line break), < > & (HTML in labels), ` (a Markdown label), % (a
// %%{init}%% directive, which Mermaid reads anywhere in the text and which
// could change its security level), and the two markers Mermaid writes its
// entity codes with internally (ﬂ, ¶).
func mermaidText(s string) string {
	return mermaidEscaper.Replace(safetext.Text(s))
}

var mermaidEscaper = strings.NewReplacer(
	"#", "#35;",
	`\`, "#92;",
	`"`, "#quot;",
	"<", "#lt;",
	">", "#gt;",
	"&", "#38;",
	"`", "#96;",
	"%", "#37;",
	"\ufb02", "#64258;",
	"\u00b6", "#182;",
)

// DOT renders g for Graphviz (dot -Tsvg).
func DOT(g *Graph) string {
	var b strings.Builder
	b.WriteString("digraph flipflop {\n")
	b.WriteString("  rankdir=LR;\n")
	b.WriteString("  graph [fontname=\"Helvetica\", fontsize=12];\n")
	b.WriteString("  node [fontname=\"Helvetica\", fontsize=11];\n")
	b.WriteString("  edge [fontname=\"Helvetica\", fontsize=9];\n")
	for _, grp := range groups {
		var lines []string
		for _, n := range g.Nodes {
			if n.Kind != grp.kind {
				continue
			}
			attrs := []string{"label=" + dotString(n.Label)}
			switch n.Kind {
			case KindStage:
				attrs = append(attrs, "shape=box", "style=rounded")
			case KindApplication:
				attrs = append(attrs, "shape=box")
			case KindPointer:
				attrs = append(attrs, "shape=cylinder")
			}
			if n.Error {
				attrs = append(attrs, "color="+dotString(errorColor), "fontcolor="+dotString(errorColor), "penwidth=2")
			}
			lines = append(lines, fmt.Sprintf("    %s [%s];\n", n.ID, strings.Join(attrs, ", ")))
		}
		if len(lines) == 0 {
			continue
		}
		fmt.Fprintf(&b, "  subgraph cluster_%s {\n    label=%s;\n    color=\"#999999\";\n", grp.id, dotString(grp.title))
		for _, l := range lines {
			b.WriteString(l)
		}
		b.WriteString("  }\n")
	}
	for _, e := range g.Edges {
		var attrs []string
		if e.Label != "" {
			attrs = append(attrs, "label="+dotString(e.Label))
		}
		if e.Kind == EdgeWrite {
			attrs = append(attrs, "style=dashed")
		}
		if e.Error {
			attrs = append(attrs, "color="+dotString(errorColor), "fontcolor="+dotString(errorColor), "penwidth=2")
		}
		if len(attrs) > 0 {
			fmt.Fprintf(&b, "  %s -> %s [%s];\n", e.From, e.To, strings.Join(attrs, ", "))
		} else {
			fmt.Fprintf(&b, "  %s -> %s;\n", e.From, e.To)
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// dotString quotes s as a DOT string: control and format characters escaped
// (safetext), then backslashes and quotes, so that Graphviz shows the escapes
// as written.
func dotString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(safetext.Text(s)) + `"`
}
