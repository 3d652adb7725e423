package graph

import (
	"encoding/xml"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// SVG renders g as a standalone SVG picture, laid out in columns (see lay):
// Stages in the promotion order Build gave them, then the Applications they
// pin, then the pointers; each edge label in a slot of its own beside its
// Stage, writes dashed, what an error finding is about in red. The picture
// scales to the width it is given (a viewBox, width 100%, never wider than its
// natural size), needs no script and no font download. Every label is escaped
// (safetext, then XML), cut to a readable length, and kept whole in the node's
// tooltip. idPrefix starts the IDs the picture defines (its arrowheads), so
// that several pictures can share one page; characters other than ASCII
// letters, digits and '-' are dropped from it.
func SVG(g *Graph, idPrefix string) string {
	prefix := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return -1
	}, idPrefix)
	if prefix == "" || prefix[0] >= '0' && prefix[0] <= '9' || prefix[0] == '-' {
		prefix = "g" + prefix
	}
	lo := lay(g)

	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 %s %s" width="100%%" style="max-width: %spx; height: auto" class="flipflop-graph" font-family="ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace" font-size="12">`+"\n",
		num(lo.width), num(lo.height), num(lo.width))
	fmt.Fprintf(&b, "<title>%s</title>\n", xmlText(svgTitle(g)))
	b.WriteString("<defs>\n")
	// Arrowheads in the picture's units, whatever the edge's width, so that
	// the arrows into one node stay apart at its ports.
	for _, m := range []struct{ id, color string }{{"arrow", "#57606a"}, {"arrow-error", errorColor}} {
		fmt.Fprintf(&b, `<marker id="%s-%s" viewBox="0 0 10 10" refX="10" refY="5" markerUnits="userSpaceOnUse" markerWidth="9" markerHeight="9" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="%s"/></marker>`+"\n", prefix, m.id, m.color)
	}
	b.WriteString("</defs>\n")
	for _, h := range lo.header {
		fmt.Fprintf(&b, `<text x="%s" y="%s" fill="#57606a" font-weight="bold">%s</text>`+"\n", num(h.x), num(svgPad+14), xmlText(h.title))
	}

	// Edges under the nodes; labels after every edge, so that none is hidden.
	for i, e := range g.Edges {
		r := lo.routes[i]
		if r.from < 0 {
			continue
		}
		color, marker, strokeWidth := "#57606a", "arrow", "1.5"
		if e.Error {
			color, marker, strokeWidth = errorColor, "arrow-error", "2.5"
		}
		dash := ""
		if e.Kind == EdgeWrite {
			dash = ` stroke-dasharray="6 4"`
		}
		from, to := lo.slots[r.from], lo.slots[r.to]
		x0 := lo.x[from.layer] + lo.w[from.layer]
		var d strings.Builder
		fmt.Fprintf(&d, "M%s,%s", num(x0), num(r.fromY))
		y0 := r.fromY
		curve := func(x1, y1 float64) {
			mid := (x0 + x1) / 2
			fmt.Fprintf(&d, " C%s,%s %s,%s %s,%s", num(mid), num(y0), num(mid), num(y1), num(x1), num(y1))
			x0, y0 = x1, y1
		}
		for _, v := range r.via {
			s := lo.slots[v]
			curve(lo.x[s.layer], s.y)
			x0 = lo.x[s.layer] + lo.w[s.layer]
			fmt.Fprintf(&d, " H%s", num(x0))
		}
		curve(lo.x[to.layer], r.toY)
		fmt.Fprintf(&b, `<path class="edge edge-%s" d="%s" fill="none" stroke="%s" stroke-width="%s"%s marker-end="url(#%s-%s)"/>`+"\n",
			e.Kind, d.String(), color, strokeWidth, dash, prefix, marker)
	}
	for i, e := range g.Edges {
		r := lo.routes[i]
		if r.label < 0 {
			continue
		}
		s := lo.slots[r.label]
		fill := "#24292f"
		if e.Error {
			fill = errorColor
		}
		// On its edge, over a white box that hides the line behind it.
		cx := lo.x[s.layer] + lo.w[s.layer]/2
		fmt.Fprintf(&b, `<rect class="edge-label-box" x="%s" y="%s" width="%s" height="%s" rx="3" fill="#ffffff"/>`,
			num(cx-s.w/2), num(s.y-s.h/2), num(s.w), num(s.h))
		fmt.Fprintf(&b, `<text class="edge-label" x="%s" y="%s" text-anchor="middle" dominant-baseline="central" font-size="11" fill="%s">%s</text>`+"\n",
			num(cx), num(s.y), fill, xmlText(s.label))
	}

	for i, n := range g.Nodes {
		s := lo.slots[i] // nodes are the first slots, in g.Nodes order
		stroke, strokeWidth, text, fill := "#57606a", "1.5", "#24292f", "#f6f8fa"
		if n.Error {
			stroke, strokeWidth, text, fill = errorColor, "3", errorColor, "#fff5f5"
		}
		fmt.Fprintf(&b, `<g class="node node-%s" id="%s-%s">`, n.Kind, prefix, n.ID)
		fmt.Fprintf(&b, "<title>%s</title>", xmlText(safetext.Text(n.Label)))
		x0, y0, wd, h := lo.x[s.layer], s.y-s.h/2, lo.w[s.layer], s.h
		switch n.Kind {
		case KindStage:
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" rx="16" fill="%s" stroke="%s" stroke-width="%s"/>`, num(x0), num(y0), num(wd), num(h), fill, stroke, strokeWidth)
		case KindPointer:
			// A cylinder: the body, then the rim of its top.
			const e = 5.0
			fmt.Fprintf(&b, `<path d="M%s,%s a%s,%s 0 0,0 %s,0 v%s a%s,%s 0 0,1 -%s,0 z" fill="%s" stroke="%s" stroke-width="%s"/>`,
				num(x0), num(y0+e), num(wd/2), num(e), num(wd), num(h-2*e), num(wd/2), num(e), num(wd), fill, stroke, strokeWidth)
			fmt.Fprintf(&b, `<path d="M%s,%s a%s,%s 0 0,1 %s,0" fill="none" stroke="%s" stroke-width="%s"/>`,
				num(x0), num(y0+e), num(wd/2), num(e), num(wd), stroke, strokeWidth)
		default:
			fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" rx="3" fill="%s" stroke="%s" stroke-width="%s"/>`, num(x0), num(y0), num(wd), num(h), fill, stroke, strokeWidth)
		}
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" dominant-baseline="central" fill="%s">%s</text>`, num(x0+wd/2), num(s.y+1), text, xmlText(s.label))
		b.WriteString("</g>\n")
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// svgTitle names the picture for assistive technology.
func svgTitle(g *Graph) string {
	count := map[string]int{}
	for _, n := range g.Nodes {
		count[n.Kind]++
	}
	return fmt.Sprintf("flipflop graph: %d Stages, %d Applications, %d branches or revisions", count[KindStage], count[KindApplication], count[KindPointer])
}

// clip cuts s to at most n runes, ending with an ellipsis when cut.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// xmlText escapes s for XML character data and attribute values.
func xmlText(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s)) // a strings.Builder does not fail
	return b.String()
}

// num prints a coordinate with at most one decimal.
func num(f float64) string {
	s := fmt.Sprintf("%.1f", f)
	return strings.TrimSuffix(s, ".0")
}
