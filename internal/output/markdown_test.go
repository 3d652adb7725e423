package output

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/digest"
	"github.com/flipflop-dev/flipflop/internal/fix"
	"github.com/flipflop-dev/flipflop/internal/graph"
	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// mdHostile are names aimed at Markdown, Mermaid and HTML.
var mdHostile = []string{
	`a"]-->X;click A "javascript:alert(1)"`,
	`<img src=x onerror=alert(1)>`,
	"|", "`", "x\n# forged heading\n| a | b |", `](http://evil)`, "[x](http://evil)", "www.evil.example",
	"%%{init: {'securityLevel':'loose'}}%%", "```\nforged", strings.Repeat("long-", 400),
}

// gfm renders Markdown as GitHub does (tables, strike-through, autolinks).
var gfm = goldmark.New(goldmark.WithExtensions(extension.GFM))

// hostileMarkdownDigest is a report whose every input value is hostile, with
// a digest that draws a picture of hostile names and offers a way out.
func hostileMarkdownDigest(name string) (*evaluator.Report, *digest.Digest) {
	res := func(kind string) evaluator.Resource {
		return evaluator.Resource{Kind: kind, Namespace: name, Name: name, File: name + ".yaml", Line: 3, GeneratedBy: name, RenderedBy: name}
	}
	f := evaluator.Finding{
		Rule: "shared-branch-contradiction", Severity: "error", Title: "Several Stages pin one floating pointer",
		Message:     "Stages " + name + " pin " + name + ". Second " + name + ". Third.",
		Remediation: "Give " + name + " a pointer.\n",
		Resources:   []evaluator.Resource{res("Stage"), res("Application")},
		Key:         name, Pointer: name, PointerText: name,
	}
	w := f
	w.Severity, w.Rule = "warning", "shared-write-branch"
	r := &evaluator.Report{
		Findings: []evaluator.Finding{f, w},
		Errors:   []evaluator.LoadError{{Path: name, Line: 2, Message: name}},
		Summary:  evaluator.Summary{Objects: 2, Error: 1, Warning: 1},
	}
	pic := &graph.Graph{
		Nodes: []graph.Node{
			{ID: "s1", Kind: graph.KindStage, Key: name, Label: digest.Clip(name, digest.MaxLabel), Error: true},
			{ID: "a1", Kind: graph.KindApplication, Key: name, Label: digest.Clip(name, digest.MaxLabel), Error: true},
			{ID: "p1", Kind: graph.KindPointer, Key: name, Label: digest.Clip(name, digest.MaxLabel)},
		},
		Edges: []graph.Edge{
			{From: "s1", To: "a1", Kind: graph.EdgePin, Label: digest.Clip(name, digest.MaxLabel), Error: true},
			{From: "a1", To: "p1", Kind: graph.EdgeTrack},
		},
	}
	d := &digest.Digest{Report: r, Items: []digest.Item{
		{Finding: f, Why: digest.Sentences(f.Message, 2, digest.MaxWhy), Picture: pic, PictureNodes: 3, Ways: []digest.Way{
			{Way: fix.StageBranches, TradeOff: fix.StageBranches.TradeOff(), Applicable: true, Command: "flipflop fix --way stage-branches '" + name + "'"},
			{Way: fix.NoDesiredRevision, TradeOff: fix.NoDesiredRevision.TradeOff(), Applicable: true, Command: "x"},
		}},
		{Finding: w, Why: w.Message},
	}}
	return r, d
}

// mdNodes walks a parsed Markdown document: the kinds of its nodes, the
// destinations of its links and images, and its fenced code blocks by
// language.
func mdNodes(t *testing.T, src []byte) (kinds map[string]int, links []string, blocks map[string][]string) {
	t.Helper()
	doc := gfm.Parser().Parse(text.NewReader(src))
	kinds, blocks = map[string]int{}, map[string][]string{}
	err := ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		kinds[n.Kind().String()]++
		switch x := n.(type) {
		case *ast.Link:
			links = append(links, string(x.Destination))
		case *ast.AutoLink:
			links = append(links, string(x.URL(src)))
		case *ast.Image:
			links = append(links, string(x.Destination))
		case *ast.FencedCodeBlock:
			var b strings.Builder
			for i := 0; i < x.Lines().Len(); i++ {
				seg := x.Lines().At(i)
				b.Write(seg.Value(src))
			}
			lang := string(x.Language(src))
			blocks[lang] = append(blocks[lang], b.String())
		}
		return ast.WalkContinue, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return kinds, links, blocks
}

// Parsed as GitHub parses it, the Markdown of a report whose every value is
// hostile holds no raw HTML but ours, no link but the rule pages, no image,
// no heading or table row of the input's, one Mermaid block per error whose
// labels hold no quote, bracket or directive; every value is shown as text.
func TestMarkdownHostile(t *testing.T) {
	for _, name := range mdHostile {
		r, d := hostileMarkdownDigest(name)
		opts := fixtureOptions()
		opts.Digest = d
		out := render(t, "markdown", r, opts)
		kinds, links, blocks := mdNodes(t, out)
		for _, l := range links {
			if !strings.HasPrefix(l, "https://github.com/flipflop-dev/flipflop/blob/main/docs/rules/") {
				t.Errorf("%q: link to %q:\n%s", name, l, out)
			}
		}
		if kinds["Image"] > 0 || kinds["HTMLBlock"] > 0 {
			t.Errorf("%q: images %d, HTML blocks %d:\n%s", name, kinds["Image"], kinds["HTMLBlock"], out)
		}
		// Our own inline HTML is the version line's <sub></sub>.
		if kinds["RawHTML"] != 2 {
			t.Errorf("%q: %d raw HTML spans, want our <sub> and </sub>:\n%s", name, kinds["RawHTML"], out)
		}
		// Headings: the title, one per error, Other findings, Input errors.
		if kinds["Heading"] != 4 {
			t.Errorf("%q: %d headings, want 4:\n%s", name, kinds["Heading"], out)
		}
		if kinds["Table"] != 2 {
			t.Errorf("%q: %d tables, want 2:\n%s", name, kinds["Table"], out)
		}
		if len(blocks["mermaid"]) != 1 || len(blocks["sh"]) != 1 || len(blocks) != 2 {
			t.Fatalf("%q: code blocks %v:\n%s", name, blocks, out)
		}
		checkMermaidLabels(t, blocks["mermaid"][0])
		if strings.Contains(blocks["sh"][0], "\n") != true || strings.Count(blocks["sh"][0], "\n") != 1 {
			t.Errorf("%q: the command block is not one line: %q", name, blocks["sh"][0])
		}
		var h bytes.Buffer
		if err := gfm.Convert(out, &h); err != nil {
			t.Fatal(err)
		}
		page := h.String()
		for _, bad := range []string{"<img", "<script", `href="javascript:`, `href="http://evil`} {
			if strings.Contains(strings.ToLower(page), bad) {
				t.Errorf("%q: the rendered page holds %q:\n%s", name, bad, page)
			}
		}
		// Every table row has as many cells as its header.
		for _, table := range regexp.MustCompile(`(?s)<table>.*?</table>`).FindAllString(page, -1) {
			head := len(regexp.MustCompile(`<th[ >]`).FindAllString(regexp.MustCompile(`(?s)<thead>.*?</thead>`).FindString(table), -1))
			for _, row := range regexp.MustCompile(`(?s)<tbody>.*?</tbody>`).FindAllString(table, -1) {
				for _, tr := range strings.Split(row, "<tr>")[1:] {
					if n := len(regexp.MustCompile(`<td[ >]`).FindAllString(tr, -1)); n != head {
						t.Errorf("%q: a row of %d cells under %d headers: %s", name, n, head, tr)
					}
				}
			}
		}
		if short := safetext.Text(name); !strings.Contains(html.UnescapeString(page), short[:min(len(short), 20)]) {
			t.Errorf("%q is not shown:\n%s", name, page)
		}
	}
}

// checkMermaidLabels fails when a label of a Mermaid flowchart could end
// itself, start a statement or a directive, or hold HTML.
func checkMermaidLabels(t *testing.T, src string) {
	t.Helper()
	for _, l := range strings.Split(strings.TrimSuffix(src, "\n"), "\n") {
		if strings.Count(l, `"`)%2 != 0 {
			t.Errorf("unbalanced quotes: %q", l)
		}
		if strings.HasPrefix(strings.TrimSpace(l), "click") || strings.Contains(l, "%%") || strings.ContainsAny(l, "<>`") && !strings.Contains(l, "-->") && !strings.Contains(l, "-.->") {
			t.Errorf("mermaid line %q", l)
		}
	}
	for _, label := range regexp.MustCompile(`"[^"]*"`).FindAllString(src, -1) {
		if strings.ContainsAny(label, "<>`%&") {
			t.Errorf("label %s", label)
		}
	}
}

// The output stays under the limit, leaving out the errors that do not fit
// and saying how many.
func TestMarkdownBounded(t *testing.T) {
	r, d := hostileMarkdownDigest(strings.Repeat("x", 70))
	item := d.Items[0]
	r.Findings, d.Items = nil, nil
	for range 200 {
		r.Findings = append(r.Findings, item.Finding)
		d.Items = append(d.Items, item)
	}
	r.Summary = evaluator.Summary{Objects: 400, Error: 200}
	opts := fixtureOptions()
	opts.Digest = d
	opts.MarkdownLimit = 16 << 10
	out := string(render(t, "markdown", r, opts))
	if len(out) > opts.MarkdownLimit {
		t.Errorf("%d bytes, limit %d", len(out), opts.MarkdownLimit)
	}
	shown := strings.Count(out, "```mermaid")
	if shown == 0 || shown == 200 {
		t.Fatalf("%d pictures shown", shown)
	}
	if want := "**" + plural(200-shown, "finding") + " left out** to keep this under 16 KiB"; !strings.Contains(out, want) {
		t.Errorf("no %q:\n%s", want, out[len(out)-400:])
	}
	opts.MarkdownLimit = 0
	if out := render(t, "markdown", r, opts); len(out) > DefaultMarkdownLimit || !bytes.Contains(out, []byte("left out")) {
		t.Errorf("default limit: %d bytes", len(out))
	}
}

// Without a digest (no model), the markdown format still lists every finding
// with its why and way out, and draws no picture.
func TestMarkdownWithoutDigest(t *testing.T) {
	out := string(render(t, "markdown", fixtureReport(), fixtureOptions()))
	if strings.Contains(out, "```mermaid") || strings.Contains(out, "flipflop fix --way") {
		t.Errorf("a picture or command without a model:\n%s", out)
	}
	if !strings.Contains(out, "**Why:**") || !strings.Contains(out, "| severity | rule | findings |") {
		t.Errorf("no why or table:\n%s", out)
	}
}

// GitHub finds mentions and issue references in the rendered text, outside
// code, whatever backslash the Markdown held (github/markup#1168,
// github/cmark-gfm#181): the patterns it acts on.
var githubReference = regexp.MustCompile(`(?i)@[a-z0-9]|#[0-9]|\bgh-[0-9]`)

// code is what GitHub leaves alone: code spans, code blocks, and the
// destination of the rule links (an attribute, not text).
var code = regexp.MustCompile(`(?s)<code>.*?</code>|<pre>.*?</pre>|<a href="[^"]*"`)

// A job summary or a pull-request comment made of -o markdown mentions no one
// and links no issue, whatever the names, paths and messages hold.
func TestMarkdownMentionsNobody(t *testing.T) {
	for _, name := range []string{"@acme/platform-team", "#12", "acme/deploy#3", "GH-4", `\@octocat`, "a@b", "x#5"} {
		r, d := hostileMarkdownDigest(name)
		opts := fixtureOptions()
		opts.Digest = d
		out := render(t, "markdown", r, opts)
		var h bytes.Buffer
		if err := gfm.Convert(out, &h); err != nil {
			t.Fatal(err)
		}
		text := html.UnescapeString(code.ReplaceAllString(h.String(), ""))
		if m := githubReference.FindAllString(text, -1); len(m) > 0 {
			t.Errorf("%q: GitHub would read %q as mentions or references:\n%s", name, m, out)
		}
		if !strings.Contains(strings.ReplaceAll(text, "\u200b", ""), safetext.Text(name)) {
			t.Errorf("%q is not shown:\n%s", name, text)
		}
	}
}

// Each picture is followed by what its shapes are, since Mermaid draws the
// kinds of node as shapes and no column titles.
func TestMarkdownPictureKey(t *testing.T) {
	r, d := hostileMarkdownDigest("acme")
	opts := fixtureOptions()
	opts.Digest = d
	out := render(t, "markdown", r, opts)
	if !strings.Contains(string(out), "```\n\n*Rounded: Kargo Stages, upstream first · boxes: Argo CD Applications · cylinders: repository @ revision · dashed: pushes · red: what this error is about.*\n") {
		t.Errorf("no key under the picture:\n%s", out)
	}
}

// Markdown escapes what comes from the input and only that: flipflop's own
// sentences read as written, and no backslash stands before punctuation that
// Markdown gives no meaning (a GitLab note or a chat message showing the
// source would show it).
func TestMarkdownEscapesOnlyInput(t *testing.T) {
	clean := string(render(t, "markdown", cleanReport(), fixtureOptions()))
	if want := "Kargo v1.11.2 assumed, the newest release flipflop models (name yours with `--kargo-version`)."; !strings.Contains(clean, want) {
		t.Errorf("the Kargo note is not written as prose, want %q:\n%s", want, clean)
	}
	r := fixtureReport()
	r.Findings[0].Message = "Stages acme/dev, acme/qa all pin desiredRevision (\"does not match\") on github.com/acme/deploy @ main. Only one commit can be the head of it: every promotion flips."
	r.Kargo = &evaluator.KargoVersion{Version: "v1.9.0", Named: "v1.99.0", Source: "--kargo-version"}
	_, d := hostileMarkdownDigest("acme/dev")
	d.Report, d.Items[0].Finding = r, r.Findings[0]
	d.Items[0].Why = r.Findings[0].Message
	d.Items = d.Items[:1]
	for _, f := range r.Findings[1:] {
		d.Items = append(d.Items, digest.Item{Finding: f, Why: f.Message})
	}
	opts := fixtureOptions()
	opts.Digest = d
	out := string(render(t, "markdown", r, opts))
	for _, want := range []string{
		"**Why:** " + r.Findings[0].Message + "\n",
		"Kargo v1.99.0 (from \\--kargo-version), read as v1.9.0, the newest release flipflop models.",
		"| 🔴 error | [`shared-branch-contradiction`](" + ruleDocURL("shared-branch-contradiction") + "): Several Stages pin one floating pointer | 1 |",
		"— recommended: each Stage renders into a branch only it writes (`env/<stage>`) and its Application tracks it; the revision check stays.",
		"(smallest change: the flip-flop ends, but Kargo no longer checks that the Application runs the promoted commit)",
		"| github.com/acme/deploy @ main | Stage acme/dev odd dir/a,b: 100%.yaml\\:3 |",
		"`charts/broken.yaml:4`: yaml: line 4: mapping values are not allowed in this context",
		"<sub>flipflop 1.2.3</sub>",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in:\n%s", want, out)
		}
	}
	if m := regexp.MustCompile(`\\[.,()/'"?;=+]`).FindAllString(out, -1); len(m) > 0 {
		t.Errorf("backslashes Markdown needs not: %q\n%s", m, out)
	}
}

// flipflop's own text that the markdown format writes as it is (every rule's
// title, every way's trade-off) is Markdown-safe prose: rendered, it makes
// no element but code spans (its placeholders) and reads as written.
func TestMarkdownOwnTextIsProse(t *testing.T) {
	_, rules := evaluatedReport(t)
	var own []string
	for _, r := range rules {
		own = append(own, r.Title)
	}
	for _, w := range fix.Ways() {
		own = append(own, w.TradeOff())
	}
	own = append(own, "1.2.3", "v0.0.0-20260101000000-abcdef012345+dirty", "dev")
	for _, s := range own {
		var h bytes.Buffer
		if err := gfm.Convert([]byte("x "+prose(s)+"\n"), &h); err != nil {
			t.Fatal(err)
		}
		page := strings.TrimSpace(h.String())
		for _, tag := range regexp.MustCompile(`<(/?)([a-z0-9]+)`).FindAllStringSubmatch(page, -1) {
			if tag[2] != "p" && tag[2] != "code" {
				t.Errorf("%q renders <%s>: %s", s, tag[2], page)
			}
		}
		if text := html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(page, "")); text != "x "+s {
			t.Errorf("%q renders as %q", s, text)
		}
	}
}
