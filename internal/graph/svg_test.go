package graph

import (
	"cmp"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/flipflop-dev/flipflop/internal/race"
	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// hostileLabels are names a pull request could give a Stage, an Application
// or a branch, aimed at Mermaid, Markdown, HTML and SVG.
var hostileLabels = []string{
	`a"]-->X;click A "javascript:alert(1)"`,
	`<img src=x onerror=alert(1)>`,
	`</text><script>alert(1)</script>`,
	"x\ny\r\n  click s1 call alert(1)",
	"%%{init: {'securityLevel':'loose'}}%%",
	"`**md**`", `|`, `](http://evil)`, `#quot;#lt;`, "&amp;<!--", "\ufb02\u00b0\u00b035\u00b6\u00df",
	strings.Repeat("long-name-", 60),
}

func hostileGraph() *Graph {
	g := &Graph{}
	for i, l := range hostileLabels {
		kind := []string{KindStage, KindApplication, KindPointer}[i%3]
		g.Nodes = append(g.Nodes, Node{ID: fmt.Sprintf("%s%d", kind[:1], i+1), Kind: kind, Key: l, Label: l, Error: i%2 == 0})
	}
	for i := 0; i+1 < len(g.Nodes); i++ {
		kind := EdgePin
		if g.Nodes[i].Kind == KindApplication {
			kind = EdgeTrack
		}
		if g.Nodes[i].Kind == KindStage && g.Nodes[i+1].Kind == KindApplication {
			g.Edges = append(g.Edges, Edge{From: g.Nodes[i].ID, To: g.Nodes[i+1].ID, Kind: kind, Label: hostileLabels[len(hostileLabels)-1-i], Error: i%2 == 1})
		}
	}
	return g
}

// svgElements parses an SVG document and returns its element names, every
// attribute name, and the text of each <text> element and of each <title>.
func svgElements(t *testing.T, src string) (elements, attrs, texts []string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(src))
	var in []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v\n%s", err, src)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			elements = append(elements, x.Name.Local)
			for _, a := range x.Attr {
				attrs = append(attrs, a.Name.Local)
			}
			in = append(in, x.Name.Local)
		case xml.EndElement:
			in = in[:len(in)-1]
		case xml.CharData:
			if n := len(in); n > 0 && (in[n-1] == "text" || in[n-1] == "title") {
				texts = append(texts, string(x))
			}
		}
	}
	return elements, attrs, texts
}

// Every label is shown as text (escaped for display, cut with its whole
// value in the tooltip): no element, attribute, link or script comes from a
// label, whatever it holds.
func TestSVGHostileLabels(t *testing.T) {
	src := SVG(hostileGraph(), `"><script>x`)
	elements, attrs, texts := svgElements(t, src)
	allowed := []string{"svg", "title", "defs", "marker", "path", "text", "g", "rect"}
	for _, e := range elements {
		if !slices.Contains(allowed, e) {
			t.Errorf("element <%s> in the SVG", e)
		}
	}
	for _, a := range attrs {
		if strings.HasPrefix(strings.ToLower(a), "on") || strings.Contains(strings.ToLower(a), "href") {
			t.Errorf("attribute %s in the SVG", a)
		}
	}
	for _, l := range hostileLabels {
		want := safetext.Text(l)
		if !slices.Contains(texts, want) {
			t.Errorf("no tooltip holds %q escaped (%q)", l, want)
		}
		if short := clip(want, svgMaxLabel); !slices.Contains(texts, short) {
			t.Errorf("no label shows %q", short)
		}
	}
	if !strings.Contains(src, `id="scriptx-arrow"`) {
		t.Errorf("the ID prefix is not reduced to letters and digits")
	}
	for _, l := range texts {
		if strings.ContainsAny(l, "\n\r") && !strings.HasPrefix(l, "\n") {
			t.Errorf("a label holds a line break: %q", l)
		}
	}
}

// Each node is drawn once, in the column of its kind; edges point from left
// to right; what an error is about is red.
func TestSVGLayout(t *testing.T) {
	g := build(t, estates["contradiction"])
	src := SVG(g, "c")
	if got := strings.Count(src, `<g class="node `); got != len(g.Nodes) {
		t.Errorf("%d nodes drawn, want %d", got, len(g.Nodes))
	}
	if got := strings.Count(src, `<path class="edge `); got != len(g.Edges) {
		t.Errorf("%d edges drawn, want %d", got, len(g.Edges))
	}
	if got := strings.Count(src, `stroke-dasharray`); got != 2 {
		t.Errorf("%d dashed edges, want the 2 writes", got)
	}
	if !strings.Contains(src, `stroke="`+errorColor+`" stroke-width="3"`) {
		t.Error("the contradiction is not red")
	}
	_, _, texts := svgElements(t, src)
	for _, want := range []string{"acme/dev", "acme/qa", "argocd/dev", "argocd/qa", "github.com/acme/deploy @ main", "pins its own commit", "dev pushes", "qa pushes"} {
		if !slices.Contains(texts, want) {
			t.Errorf("no label %q in %q", want, texts)
		}
	}
	empty := SVG(&Graph{}, "e")
	if _, _, texts := svgElements(t, empty); len(texts) != 1 {
		t.Errorf("an empty graph draws %q", texts)
	}
}

// Mermaid labels hold no character that ends a label, starts a statement, a
// directive or a Markdown label, or is read as HTML.
func TestMermaidHostileLabels(t *testing.T) {
	src := Mermaid(hostileGraph())
	checkMermaid(t, src)
	for _, l := range strings.Split(src, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "click") {
			t.Errorf("a line starts a click callback: %q", l)
		}
	}
	labels := regexp.MustCompile(`"[^"]*"`).FindAllString(src, -1)
	if len(labels) < len(hostileLabels) {
		t.Fatalf("%d labels for %d names:\n%s", len(labels), len(hostileLabels), src)
	}
	for _, l := range labels {
		for _, bad := range []string{"%", "`", "<", ">", "&", `\`, "\n", "\r", "\ufb02", "\u00b6"} {
			if strings.Contains(l, bad) {
				t.Errorf("label holds %q: %s", bad, l)
			}
		}
	}
	if !strings.Contains(src, `#37;#37;{init: {'securityLevel':'loose'}}#37;#37;`) {
		t.Errorf("the directive is not escaped:\n%s", src)
	}
}

// box is a rectangle of an SVG picture.
type box struct{ x0, y0, x1, y1 float64 }

func (a box) overlaps(b box) bool {
	return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1
}

func (a box) contains(x, y float64) bool {
	return x > a.x0 && x < a.x1 && y > a.y0 && y < a.y1
}

// geometry is what an SVG of SVG draws, read back from its markup: each node's
// box (by ID), each edge label's box and text, and each edge's points
// (sampled along its curves) with its end.
type geometry struct {
	viewBox    string
	rootAttrs  map[string]string
	nodes      map[string]box
	nodeOrder  []string
	labels     []box
	labelTexts []string
	edges      [][][2]float64
}

func readGeometry(t *testing.T, src string) geometry {
	t.Helper()
	g := geometry{rootAttrs: map[string]string{}, nodes: map[string]box{}}
	d := xml.NewDecoder(strings.NewReader(src))
	node := ""
	inLabel := false
	attr := func(x xml.StartElement, name string) float64 {
		for _, a := range x.Attr {
			if a.Name.Local == name {
				f, err := strconv.ParseFloat(a.Value, 64)
				if err != nil {
					t.Fatalf("%s=%q", name, a.Value)
				}
				return f
			}
		}
		return 0
	}
	get := func(x xml.StartElement, name string) string {
		for _, a := range x.Attr {
			if a.Name.Local == name {
				return a.Value
			}
		}
		return ""
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		switch x := tok.(type) {
		case xml.StartElement:
			class := get(x, "class")
			switch {
			case x.Name.Local == "svg":
				for _, a := range x.Attr {
					g.rootAttrs[a.Name.Local] = a.Value
				}
			case x.Name.Local == "g" && strings.HasPrefix(class, "node "):
				node = get(x, "id")
				g.nodeOrder = append(g.nodeOrder, node)
			case x.Name.Local == "text" && class == "edge-label":
				// Its box, from its place and length (11px monospace,
				// 6.6px a character): centred on x; on y when the
				// baseline is central, above it otherwise.
				inLabel = true
				lx, ly := attr(x, "x"), attr(x, "y")
				top, bottom := ly-10, ly+3
				if get(x, "dominant-baseline") == "central" {
					top, bottom = ly-7, ly+7
				}
				g.labels = append(g.labels, box{lx, top, lx, bottom}) // widened at its text
			case x.Name.Local == "rect" && node != "":
				g.nodes[node] = box{attr(x, "x"), attr(x, "y"), attr(x, "x") + attr(x, "width"), attr(x, "y") + attr(x, "height")}
			case x.Name.Local == "path" && node != "":
				if _, ok := g.nodes[node]; !ok { // a cylinder: its outline's extent
					pts := pathPoints(t, get(x, "d"))
					b := box{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
					for _, p := range pts {
						b = box{min(b.x0, p[0]), min(b.y0, p[1]), max(b.x1, p[0]), max(b.y1, p[1])}
					}
					g.nodes[node] = b
				}
			case x.Name.Local == "path" && strings.HasPrefix(class, "edge "):
				g.edges = append(g.edges, pathPoints(t, get(x, "d")))
			}
		case xml.CharData:
			if inLabel {
				g.labelTexts = append(g.labelTexts, string(x))
				b := &g.labels[len(g.labels)-1]
				half := float64(utf8.RuneCountInString(string(x))) * 6.6 / 2
				b.x0, b.x1 = b.x0-half, b.x1+half
			}
		case xml.EndElement:
			if x.Name.Local == "g" {
				node = ""
			}
			if x.Name.Local == "text" {
				inLabel = false
			}
		}
	}
	return g
}

// pathPoints samples a path of M, C, H, L, v and a commands (the ones SVG
// writes; an arc is taken at its ends).
func pathPoints(t *testing.T, d string) [][2]float64 {
	t.Helper()
	fields := strings.FieldsFunc(d, func(r rune) bool { return r == ' ' || r == ',' })
	var pts [][2]float64
	var x, y float64
	num := func(i int) float64 {
		f, err := strconv.ParseFloat(strings.TrimLeft(fields[i], "MCHLvaz"), 64)
		if err != nil {
			t.Fatalf("path %q: %v", d, err)
		}
		return f
	}
	for i := 0; i < len(fields); {
		switch fields[i][0] {
		case 'M':
			x, y = num(i), num(i+1)
			pts = append(pts, [2]float64{x, y})
			i += 2
		case 'H':
			x = num(i)
			pts = append(pts, [2]float64{x, y})
			i++
		case 'L':
			x0, y0 := x, y
			x, y = num(i), num(i+1)
			for k := 1; k <= 24; k++ {
				s := float64(k) / 24
				pts = append(pts, [2]float64{x0 + (x-x0)*s, y0 + (y-y0)*s})
			}
			i += 2
		case 'v':
			y += num(i)
			pts = append(pts, [2]float64{x, y})
			i++
		case 'C':
			x1, y1, x2, y2, x3, y3 := num(i), num(i+1), num(i+2), num(i+3), num(i+4), num(i+5)
			for k := 1; k <= 24; k++ {
				s := float64(k) / 24
				u := 1 - s
				pts = append(pts, [2]float64{
					u*u*u*x + 3*u*u*s*x1 + 3*u*s*s*x2 + s*s*s*x3,
					u*u*u*y + 3*u*u*s*y1 + 3*u*s*s*y2 + s*s*s*y3,
				})
			}
			x, y = x3, y3
			i += 6
		case 'a':
			x, y = x+num(i+5), y+num(i+6)
			pts = append(pts, [2]float64{x, y})
			i += 7
		case 'z':
			i++
		default:
			t.Fatalf("path %q: unexpected %q", d, fields[i])
		}
	}
	return pts
}

// checkReadable holds an SVG picture to what makes it readable however many
// edges it has: no two edge labels overlap, no label covers a node, no edge
// passes through a node, and the edges into a node end apart, so that each
// arrowhead shows; and the picture scales to its width.
func checkReadable(t *testing.T, src string) geometry {
	t.Helper()
	g := readGeometry(t, src)
	if g.rootAttrs["width"] != "100%" || g.rootAttrs["height"] != "" || !strings.HasPrefix(g.rootAttrs["viewBox"], "0 0 ") {
		t.Errorf("the picture does not scale to its width: %v", g.rootAttrs)
	}
	if len(g.labels) != len(g.labelTexts) {
		t.Fatalf("%d label boxes for %d labels", len(g.labels), len(g.labelTexts))
	}
	for i, a := range g.labels {
		for j := i + 1; j < len(g.labels); j++ {
			if a.overlaps(g.labels[j]) {
				t.Errorf("labels %q and %q overlap: %v %v", g.labelTexts[i], g.labelTexts[j], a, g.labels[j])
			}
		}
		for id, n := range g.nodes {
			if a.overlaps(n) {
				t.Errorf("label %q covers node %s", g.labelTexts[i], id)
			}
		}
	}
	ends := map[string][]float64{}
	for i, e := range g.edges {
		for _, p := range e {
			for id, n := range g.nodes {
				if (box{n.x0 + 1, n.y0 + 1, n.x1 - 1, n.y1 - 1}).contains(p[0], p[1]) {
					t.Errorf("edge %d passes through node %s at %v", i, id, p)
				}
			}
		}
		end := e[len(e)-1]
		for id, n := range g.nodes {
			if math.Abs(end[0]-n.x0) < 3 && end[1] >= n.y0 && end[1] <= n.y1 {
				for _, y := range ends[id] {
					if math.Abs(y-end[1]) < 9 {
						t.Errorf("two edges end %.1f px apart on node %s", math.Abs(y-end[1]), id)
					}
				}
				ends[id] = append(ends[id], end[1])
			}
		}
	}
	for i, a := range g.nodes {
		for j, b := range g.nodes {
			if i < j && a.overlaps(b) {
				t.Errorf("nodes %s and %s overlap", i, j)
			}
		}
	}
	return g
}

// At six Stages pushing to one branch, every edge keeps a label of its own
// and an arrowhead of its own, and the Stages read in promotion order.
func TestSVGSixStagesReadable(t *testing.T) {
	race.Sequential(t)
	g := build(t, estates["six-stages"])
	geo := checkReadable(t, SVG(g, "six"))
	var stages []string
	byID := map[string]string{}
	for _, n := range g.Nodes {
		byID["six-"+n.ID] = n.Key
	}
	ids := slices.Clone(geo.nodeOrder)
	slices.SortStableFunc(ids, func(a, b string) int { return cmp.Compare(geo.nodes[a].y0, geo.nodes[b].y0) })
	for _, id := range ids {
		if k := byID[id]; strings.HasPrefix(id, "six-s") {
			stages = append(stages, k)
		}
	}
	want := []string{"acme/dev", "acme/integration", "acme/qa", "acme/staging", "acme/prod-eu", "acme/prod-us"}
	if !slices.Equal(stages, want) {
		t.Errorf("Stages top to bottom %q, want the promotion order %q", stages, want)
	}
	if len(geo.labels) != 12 {
		t.Errorf("%d edge labels, want 12 (6 pins, 6 writes): %q", len(geo.labels), geo.labelTexts)
	}
	if got := len(geo.edges); got != len(g.Edges) {
		t.Errorf("%d edges drawn, want %d", got, len(g.Edges))
	}
}

// Every estate of the golden tests, and graphs made at random, are drawn
// readably.
func TestSVGReadable(t *testing.T) {
	for name := range estates {
		t.Run(name, func(t *testing.T) {
			race.Sequential(t)
			checkReadable(t, SVG(build(t, estates[name]), name))
		})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 40 {
		g := randomGraph(rng)
		t.Run(fmt.Sprintf("random-%d", i), func(t *testing.T) {
			src := SVG(g, "r")
			geo := checkReadable(t, src)
			if len(geo.edges) != len(g.Edges) || len(geo.nodes) != len(g.Nodes) {
				t.Errorf("%d nodes and %d edges drawn, want %d and %d", len(geo.nodes), len(geo.edges), len(g.Nodes), len(g.Edges))
			}
		})
	}
}

// randomGraph is a graph of the shape Build draws: Stages pinning
// Applications and pushing to pointers, Applications tracking pointers.
func randomGraph(rng *rand.Rand) *Graph {
	g := &Graph{}
	ns, na, np := 1+rng.IntN(8), rng.IntN(9), 1+rng.IntN(4)
	for i := range ns {
		g.Nodes = append(g.Nodes, Node{ID: fmt.Sprintf("s%d", i+1), Kind: KindStage, Label: fmt.Sprintf("p/stage-%s", strings.Repeat("x", rng.IntN(20)))})
	}
	for i := range na {
		g.Nodes = append(g.Nodes, Node{ID: fmt.Sprintf("a%d", i+1), Kind: KindApplication, Label: fmt.Sprintf("argocd/app-%d", i)})
	}
	for i := range np {
		g.Nodes = append(g.Nodes, Node{ID: fmt.Sprintf("p%d", i+1), Kind: KindPointer, Label: fmt.Sprintf("git.example.com/r @ b%d", i)})
	}
	seen := map[string]bool{}
	edge := func(e Edge) {
		if k := e.From + e.To; !seen[k] {
			seen[k] = true
			g.Edges = append(g.Edges, e)
		}
	}
	for i := range ns {
		for range rng.IntN(3) {
			if na > 0 {
				edge(Edge{From: fmt.Sprintf("s%d", i+1), To: fmt.Sprintf("a%d", 1+rng.IntN(na)), Kind: EdgePin, Label: "pins its own commit", Error: rng.IntN(2) == 0})
			}
		}
		if rng.IntN(3) > 0 {
			edge(Edge{From: fmt.Sprintf("s%d", i+1), To: fmt.Sprintf("p%d", 1+rng.IntN(np)), Kind: EdgeWrite, Label: fmt.Sprintf("stage-%d pushes", i)})
		}
	}
	for i := range na {
		for k := range 1 + rng.IntN(2) {
			label := ""
			if k > 0 {
				label = fmt.Sprintf("source %d", k)
			}
			edge(Edge{From: fmt.Sprintf("a%d", i+1), To: fmt.Sprintf("p%d", 1+rng.IntN(np)), Kind: EdgeTrack, Label: label})
		}
	}
	return g
}
