package htmlreport

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/digest"
	"github.com/flipflop-dev/flipflop/internal/explain"
	"github.com/flipflop-dev/flipflop/internal/fix"
	"github.com/flipflop-dev/flipflop/internal/graph"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// element is what the tests read of a parsed page.
type element struct {
	tag   string
	attrs map[string]string
	text  string // the text directly inside it
}

func parse(t *testing.T, page string) []element {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var out []element
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			e := element{tag: n.Data, attrs: map[string]string{}}
			for _, a := range n.Attr {
				e.attrs[a.Key] = a.Val
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == html.TextNode {
					e.text += c.Data
				}
			}
			out = append(out, e)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return out
}

func contradictionPage(t *testing.T) (Page, *evaluator.Report) {
	t.Helper()
	ctx := context.Background()
	ev, err := evaluator.New(ctx, evaluator.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	objs, errs := (&loader.Loader{}).Load([]string{"../../examples/contradiction"})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	report, model, err := ev.Analyze(ctx, objs, evaluator.Detailed())
	if err != nil {
		t.Fatal(err)
	}
	plan, err := fix.New(objs, report, model, fix.Options{Rules: ev.Rules(), Dir: "../.."})
	if err != nil {
		t.Fatal(err)
	}
	d := digest.Build(digest.Input{Report: report, Model: model, Plan: plan, Command: func(w fix.Way) string { return "flipflop fix --way " + string(w) + " examples/contradiction" }})
	return Page{Digest: d, Timelines: explain.Build(model, report, ev.Rules()), Plan: plan, Rules: ev.Rules(), Version: "1.2.3", Paths: []string{"examples/contradiction"}}, report
}

// The seed contradiction's page: the CSP, no script and nothing loaded; the
// estate and each finding drawn; why, the ways out with their commands, the
// timeline and the previews of every way.
func TestContradictionPage(t *testing.T) {
	race.Sequential(t)
	p, report := contradictionPage(t)
	var b bytes.Buffer
	if err := Write(&b, p); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	els := parse(t, out)
	var csp bool
	figures, svgs := 0, 0
	for _, e := range els {
		switch e.tag {
		case "script", "iframe", "object", "embed", "link", "img", "base", "form":
			t.Errorf("<%s> in the page", e.tag)
		case "meta":
			if e.attrs["http-equiv"] == "Content-Security-Policy" && e.attrs["content"] == CSP {
				csp = true
			}
		case "figure":
			figures++
		case "svg":
			svgs++
		}
		for k, v := range e.attrs {
			if strings.HasPrefix(k, "on") || k == "src" || (k == "href" && !strings.HasPrefix(v, "https://github.com/flipflop-dev/flipflop/blob/main/docs/rules/")) {
				t.Errorf("<%s %s=%q>", e.tag, k, v)
			}
		}
	}
	if !csp {
		t.Error("no Content-Security-Policy")
	}
	// The estate and one picture per finding (both findings are about objects).
	if want := 1 + len(report.Findings); figures != want || svgs != want {
		t.Errorf("%d figures, %d pictures, want %d", figures, svgs, want)
	}
	for _, want := range []string{
		"shared-branch-contradiction", "Only one commit can be the head of it",
		"flipflop fix --way stage-branches examples/contradiction",
		"promote to qa → qa pushes commit B to main; main is now B", // the timeline
		"+    targetRevision: env/dev",                              // a preview's diff
		"no-desired-revision", "update-target-revision",
		"acme/dev", "examples/contradiction/kargo.yaml:18",
	} {
		if !strings.Contains(html.UnescapeString(out), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if got := strings.Count(out, `<pre class="diff">`); got != len(fix.Ways()) {
		t.Errorf("%d previews, want one per way (%d)", got, len(fix.Ways()))
	}
}

// Names from a hostile pull request are text in the page, never markup: no
// element, attribute, script or link comes from them.
func TestHostilePage(t *testing.T) {
	for _, name := range []string{
		`a"]-->X;click A "javascript:alert(1)"`, `<img src=x onerror=alert(1)>`, `</pre><script>alert(1)</script>`,
		`"><svg onload=alert(1)>`, "x\n\u202e", `](http://evil)`, strings.Repeat("long-", 300),
	} {
		res := evaluator.Resource{Kind: "Stage", Namespace: name, Name: name, File: name, Line: 1, GeneratedBy: name}
		f := evaluator.Finding{Rule: name, Severity: "error", Title: name, Message: name + ". " + name, Remediation: name,
			Resources: []evaluator.Resource{res}, PointerText: name, Key: name}
		r := &evaluator.Report{Findings: []evaluator.Finding{f}, Errors: []evaluator.LoadError{{Path: name, Message: name}}, Summary: evaluator.Summary{Error: 1}}
		g := &graph.Graph{Nodes: []graph.Node{{ID: "s1", Kind: graph.KindStage, Key: name, Label: name, Error: true}}}
		d := &digest.Digest{Report: r, Estate: g, NoFix: name, Items: []digest.Item{{Finding: f, Why: name, Picture: g, PictureNodes: 1,
			Ways: []digest.Way{{Way: fix.StageBranches, Applicable: true, Command: "flipflop fix --way stage-branches '" + name + "'"}, {Way: fix.NoDesiredRevision, Reason: name}}},
			{Finding: f, Why: name}}} // its remediation as the ways out
		var b bytes.Buffer
		if err := Write(&b, Page{Digest: d, Version: name, Paths: []string{name}}); err != nil {
			t.Fatal(err)
		}
		for _, e := range parse(t, b.String()) {
			switch e.tag {
			case "script", "img", "a", "iframe":
				t.Errorf("%q: <%s %v> in the page", name, e.tag, e.attrs)
			}
			for k := range e.attrs {
				if strings.HasPrefix(k, "on") {
					t.Errorf("%q: <%s %s>", name, e.tag, k)
				}
			}
			if strings.ContainsRune(e.text, '\u202e') {
				t.Errorf("%q: a bidi override reaches the page", name)
			}
		}
	}
}

// A finding without ways out (a warning) shows its rule's remediation as
// paragraphs and lists the page wraps: no "\n" written out, no line as wide
// as the METADATA's wrapped text joined.
func TestRemediationReadsAsProse(t *testing.T) {
	race.Sequential(t)
	ev, err := evaluator.New(context.Background(), evaluator.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	var items []digest.Item
	var want [][2]int // paragraphs and list items of each
	for _, r := range ev.Rules() {
		if r.ID != "shared-write-branch" && r.ID != "shared-branch-contradiction" {
			continue
		}
		f := evaluator.Finding{Rule: r.ID, Severity: "warning", Title: r.Title, Message: "m", Remediation: r.Remediation}
		items = append(items, digest.Item{Finding: f, Why: "m"})
		if r.ID == "shared-write-branch" {
			want = append(want, [2]int{1, 0})
		} else {
			want = append(want, [2]int{1, 4}) // a lead-in and four ways
		}
	}
	if len(items) != 2 {
		t.Fatalf("%d rules found", len(items))
	}
	d := &digest.Digest{Report: &evaluator.Report{Summary: evaluator.Summary{Warning: 2}}, Items: items}
	var b bytes.Buffer
	if err := Write(&b, Page{Digest: d}); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	var got [][2]int
	var texts []string
	var walk func(n *html.Node, in bool)
	walk = func(n *html.Node, in bool) {
		if n.Type == html.ElementNode && n.Data == "pre" && in {
			t.Errorf("the remediation is preformatted")
		}
		if n.Type == html.ElementNode && hasClass(n, "remediation") {
			got = append(got, [2]int{})
			in = true
		}
		if in && n.Type == html.ElementNode {
			switch n.Data {
			case "p":
				got[len(got)-1][0]++
			case "li":
				got[len(got)-1][1]++
			}
		}
		if in && n.Type == html.TextNode {
			texts = append(texts, n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, in)
		}
	}
	walk(doc, false)
	if len(got) != len(want) {
		t.Fatalf("%d remediations shown, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("remediation %d: %d paragraphs and %d items, want %v", i+1, got[i][0], got[i][1], want[i])
		}
	}
	all := strings.Join(texts, "")
	if strings.Contains(all, `\n`) {
		t.Errorf("a line break written out as \\n:\n%s", all)
	}
	for _, w := range []string{"Prefer a branch per Stage (render into env/<stage> and push there). If all Stages must write one branch", "Stage-specific branches (recommended): render plain manifests"} {
		if !strings.Contains(all, w) {
			t.Errorf("the remediations lack %q:\n%s", w, all)
		}
	}
}

func hasClass(n *html.Node, class string) bool {
	for _, a := range n.Attr {
		if a.Key == "class" && slices.Contains(strings.Fields(a.Val), class) {
			return true
		}
	}
	return false
}
