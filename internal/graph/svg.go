package graph

import (
	"cmp"
	"encoding/xml"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// SVG layout, in pixels. Labels are set in a monospace font, so that a
// label's width is known from its length without measuring text.
const (
	svgCharWidth  = 7.3 // 12px monospace advance, with a little slack
	svgMaxLabel   = 56  // runes of a label drawn; the whole label is the node's tooltip
	svgNodeHeight = 34
	svgRowGap     = 22
	svgColumnGap  = 150 // room for edge labels
	svgPad        = 16
	svgHeader     = 30
	svgMinWidth   = 90
	// heightPlaceholder stands for the height in the opening tag until the
	// edges' lanes are counted.
	heightPlaceholder = -1
)

// SVG renders g as a standalone SVG picture: one column per kind of node
// (Stages, Applications, pointers) in the order Build sorted them, the nodes
// of a column ordered by where their neighbours on the left are (so that edges
// cross less), edges as curves with their labels, writes dashed, what an error
// finding is about in red. It needs no script and no font download. Every
// label is escaped (safetext, then XML), cut to a readable length, and kept
// whole in the node's tooltip. idPrefix starts the IDs the picture defines
// (its arrowheads), so that several pictures can share one page; characters
// other than ASCII letters, digits and '-' are dropped from it.
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

	// Columns, left to right, of the kinds present.
	var cols [][]int // node indices
	colOf := map[string]int{}
	for _, grp := range groups {
		var col []int
		for i, n := range g.Nodes {
			if n.Kind == grp.kind {
				col = append(col, i)
			}
		}
		if len(col) > 0 {
			colOf[grp.kind] = len(cols)
			cols = append(cols, col)
		}
	}
	byID := make(map[string]int, len(g.Nodes))
	for i, n := range g.Nodes {
		byID[n.ID] = i
	}
	// Order each column after the first by the mean row of its neighbours in
	// the columns to its left (one barycentre pass: linear in the edges).
	row := make([]float64, len(g.Nodes))
	into := map[int][]int{} // node → its neighbours on the left
	for _, e := range g.Edges {
		from, okf := byID[e.From]
		to, okt := byID[e.To]
		if okf && okt {
			into[to] = append(into[to], from)
		}
	}
	for c, col := range cols {
		if c > 0 {
			key := make(map[int]float64, len(col))
			for pos, i := range col {
				sum, n := 0.0, 0
				for _, j := range into[i] {
					if colOf[g.Nodes[j].Kind] < c {
						sum += row[j]
						n++
					}
				}
				key[i] = float64(pos) + 1e6 // nodes without a neighbour on the left go last
				if n > 0 {
					key[i] = sum / float64(n)
				}
			}
			slices.SortStableFunc(col, func(a, b int) int { return cmp.Compare(key[a], key[b]) })
		}
		for pos, i := range col {
			row[i] = float64(pos)
		}
	}

	// Geometry: column widths from the longest label, rows top to bottom.
	labels := make([]string, len(g.Nodes))
	x := make([]float64, len(g.Nodes))
	y := make([]float64, len(g.Nodes))
	w := make([]float64, len(g.Nodes))
	left := float64(svgPad)
	rows := 0
	for _, col := range cols {
		width := float64(svgMinWidth)
		for _, i := range col {
			labels[i] = clip(safetext.Text(g.Nodes[i].Label), svgMaxLabel)
			width = max(width, float64(utf8.RuneCountInString(labels[i]))*svgCharWidth+28)
		}
		for pos, i := range col {
			x[i], w[i] = left, width
			y[i] = svgPad + svgHeader + float64(pos)*(svgNodeHeight+svgRowGap)
		}
		left += width + svgColumnGap
		rows = max(rows, len(col))
	}
	width := left - svgColumnGap + svgPad
	if len(cols) == 0 {
		width = 2*svgPad + svgMinWidth
	}
	height := svgPad*2 + svgHeader + float64(rows)*(svgNodeHeight+svgRowGap) - svgRowGap
	if rows == 0 {
		height = svgPad*2 + svgHeader
	}

	var b strings.Builder
	var head strings.Builder
	fmt.Fprintf(&head, `<svg xmlns="http://www.w3.org/2000/svg" role="img" viewBox="0 0 %s %s" width="%s" height="%s" class="flipflop-graph" font-family="ui-monospace, 'DejaVu Sans Mono', Menlo, Consolas, monospace" font-size="12">`+"\n",
		num(width), num(heightPlaceholder), num(width), num(heightPlaceholder))
	fmt.Fprintf(&b, "<title>%s</title>\n", xmlText(svgTitle(g)))
	b.WriteString("<defs>\n")
	for _, m := range []struct{ id, color string }{{"arrow", "#57606a"}, {"arrow-error", errorColor}} {
		fmt.Fprintf(&b, `<marker id="%s-%s" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="%s"/></marker>`+"\n", prefix, m.id, m.color)
	}
	b.WriteString("</defs>\n")
	for _, grp := range groups {
		c, ok := colOf[grp.kind]
		if !ok {
			continue
		}
		i := cols[c][0]
		fmt.Fprintf(&b, `<text x="%s" y="%s" fill="#57606a" font-weight="bold">%s</text>`+"\n", num(x[i]), num(svgPad+14), xmlText(grp.title))
	}

	// Edges under the nodes; labels after every edge, so that none is hidden.
	type labelAt struct {
		x, y  float64
		text  string
		error bool
	}
	var edgeLabels []labelAt
	// An edge that skips a column (a Stage's write to a pointer) runs below
	// the nodes, in a lane of its own, so that it crosses no node and no label.
	lanes := 0
	bottom := svgPad + svgHeader + float64(rows)*(svgNodeHeight+svgRowGap) - svgRowGap
	for _, e := range g.Edges {
		from, okf := byID[e.From]
		to, okt := byID[e.To]
		if !okf || !okt {
			continue
		}
		color, marker, strokeWidth := "#57606a", "arrow", "1.5"
		if e.Error {
			color, marker, strokeWidth = errorColor, "arrow-error", "3"
		}
		dash := ""
		if e.Kind == EdgeWrite {
			dash = ` stroke-dasharray="6 4"`
		}
		var d string
		var lx, ly float64
		if colOf[g.Nodes[to].Kind]-colOf[g.Nodes[from].Kind] > 1 {
			lanes++
			lane := bottom + 10 + float64(lanes)*14
			// Out of the Stage's right side, down in the gap after its
			// column, along the lane, up in the gap before the pointer's.
			x1, y1 := x[from]+w[from], y[from]+svgNodeHeight*0.75
			x2, y2 := x[to], y[to]+svgNodeHeight*0.75
			off := 12 + float64(lanes%6)*4
			d = fmt.Sprintf("M%s,%s C%s,%s %s,%s %s,%s L%s,%s C%s,%s %s,%s %s,%s",
				num(x1), num(y1), num(x1+off), num(y1), num(x1+off), num(lane), num(x1+2*off), num(lane),
				num(x2-2*off), num(lane), num(x2-off), num(lane), num(x2-off), num(y2), num(x2-2), num(y2))
			lx, ly = (x1+x2)/2, lane-4
		} else {
			x1, y1 := x[from]+w[from], y[from]+svgNodeHeight/2
			x2, y2 := x[to], y[to]+svgNodeHeight/2
			if x2 <= x1 { // not left to right (Build draws none): from the left side
				x1, x2 = x[from], x[to]+w[to]
			}
			mid := (x1 + x2) / 2
			d = fmt.Sprintf("M%s,%s C%s,%s %s,%s %s,%s", num(x1), num(y1), num(mid), num(y1), num(mid), num(y2), num(x2-2), num(y2))
			// The curve's midpoint (t = 1/2 of this cubic).
			lx, ly = mid, (y1+y2)/2-5
		}
		fmt.Fprintf(&b, `<path class="edge edge-%s" d="%s" fill="none" stroke="%s" stroke-width="%s"%s marker-end="url(#%s-%s)"/>`+"\n",
			e.Kind, d, color, strokeWidth, dash, prefix, marker)
		if e.Label != "" {
			edgeLabels = append(edgeLabels, labelAt{lx, ly, clip(safetext.Text(e.Label), svgMaxLabel/2), e.Error})
		}
	}
	height += float64(lanes) * 14
	if lanes > 0 {
		height += 10
	}
	for _, l := range edgeLabels {
		fill := "#24292f"
		if l.error {
			fill = errorColor
		}
		fmt.Fprintf(&b, `<text class="edge-label" x="%s" y="%s" text-anchor="middle" font-size="11" fill="%s" stroke="#ffffff" stroke-width="4" paint-order="stroke">%s</text>`+"\n",
			num(l.x), num(l.y), fill, xmlText(l.text))
	}

	for _, col := range cols {
		for _, i := range col {
			n := g.Nodes[i]
			stroke, strokeWidth, text, fill := "#57606a", "1.5", "#24292f", "#f6f8fa"
			if n.Error {
				stroke, strokeWidth, text, fill = errorColor, "3", errorColor, "#fff5f5"
			}
			fmt.Fprintf(&b, `<g class="node node-%s" id="%s-%s">`, n.Kind, prefix, n.ID)
			fmt.Fprintf(&b, "<title>%s</title>", xmlText(safetext.Text(n.Label)))
			x0, y0, wd, h := x[i], y[i], w[i], float64(svgNodeHeight)
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
			fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" dominant-baseline="central" fill="%s">%s</text>`, num(x0+wd/2), num(y0+h/2+1), text, xmlText(labels[i]))
			b.WriteString("</g>\n")
		}
	}
	b.WriteString("</svg>\n")
	return strings.ReplaceAll(head.String(), num(heightPlaceholder), num(height)) + b.String()
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
