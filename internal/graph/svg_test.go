package graph

import (
	"encoding/xml"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"testing"

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
	for _, want := range []string{"acme/dev", "acme/qa", "argocd/dev", "argocd/qa", "github.com/acme/deploy @ main", "pins its own commit", "pushes"} {
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
