package tests

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
	xhtml "golang.org/x/net/html"
)

// The browser tests render flipflop's Markdown through a real Markdown parser
// (goldmark, with GitHub's extensions) and Mermaid's own parser and renderer
// (the mermaid package that @mermaid-js/mermaid-cli installs, run by
// hack/browser-tools/render-mermaid.mjs in Debian's Chromium through
// puppeteer: one page for every chart, where mmdc would start a page and load
// Mermaid per chart), and load the HTML report in that Chromium. hack/browser-tools/install.sh installs the npm side (make
// tools does), apt-get install chromium the browser; without them the tests
// skip, unless FLIPFLOP_REQUIRE_BROWSER=1 (.ci/run sets it), which makes a
// missing tool a failure. Screenshots go to $FLIPFLOP_ARTIFACTS/<test> (or a
// temporary directory) and their path is logged; FLIPFLOP_UPDATE_SCREENSHOTS=1
// also copies the job summary's to docs/images/, where README.md shows it.

// browser holds the tools the browser tests run.
type browser struct {
	node, mermaid, inspect, chromium string
}

func browserTools(t *testing.T) browser {
	t.Helper()
	missing := func(format string, args ...any) {
		t.Helper()
		msg := fmt.Sprintf(format, args...)
		if os.Getenv("FLIPFLOP_REQUIRE_BROWSER") == "1" {
			t.Fatalf("%s (FLIPFLOP_REQUIRE_BROWSER=1)", msg)
		}
		t.Skip(msg)
	}
	b := browser{chromium: os.Getenv("CHROMIUM")}
	if b.chromium == "" {
		b.chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(b.chromium); err != nil {
		missing("Chromium not found at %s (apt-get install chromium)", b.chromium)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node not found (apt-get install nodejs npm)")
	}
	dir, _ := filepath.Abs(filepath.Join("..", "hack", "browser-tools"))
	b.node, b.mermaid, b.inspect = node, filepath.Join(dir, "render-mermaid.mjs"), filepath.Join(dir, "inspect.mjs")
	for _, m := range []string{"mermaid/dist/mermaid.min.js", "puppeteer/package.json"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", m)); err != nil {
			missing("%s not found under hack/browser-tools/node_modules (bash hack/browser-tools/install.sh)", m)
		}
	}
	return b
}

// artifacts is where a test keeps its screenshots and pages.
func artifacts(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if root := os.Getenv("FLIPFLOP_ARTIFACTS"); root != "" {
		dir = filepath.Join(root, t.Name())
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	abs, _ := filepath.Abs(dir)
	t.Logf("artifacts (pages, pictures, screenshots): %s", abs)
	return abs
}

// run runs a command, failing the test on a non-zero exit.
func (b browser) run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s%s", filepath.Base(name), strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String()
}

// inspection is what inspect.mjs reports of a page.
type inspection struct {
	URL      string   `json:"url"`
	Requests []string `json:"requests"`
	Console  []string `json:"console"`
	Figures  []struct {
		ID      string  `json:"id"`
		Kind    string  `json:"kind"`
		Width   float64 `json:"width"`
		Height  float64 `json:"height"`
		Box     rect    `json:"box"`
		Clipped bool    `json:"clipped"`
		Loaded  bool    `json:"loaded"`
		Texts   []struct {
			Text   string  `json:"text"`
			Class  string  `json:"class"`
			Box    rect    `json:"box"`
			Length float64 `json:"length"`
			Inside bool    `json:"inside"`
		} `json:"texts"`
	} `json:"figures"`
	// Overflow lists what sticks out of the window or of its card.
	Overflow []string `json:"overflow"`
}

// rect is a box as the browser laid it out, in CSS pixels.
type rect struct {
	Left   float64 `json:"left"`
	Top    float64 `json:"top"`
	Right  float64 `json:"right"`
	Bottom float64 `json:"bottom"`
}

// overlap is how far two boxes overlap, in the lesser of the two directions
// (0 when they do not).
func (a rect) overlap(b rect) float64 {
	return max(0, min(min(a.Right, b.Right)-max(a.Left, b.Left), min(a.Bottom, b.Bottom)-max(a.Top, b.Top)))
}

// labelled is a text with its box, as a browser drew it.
type labelled struct {
	text string
	box  rect
}

// checkNoOverlap fails when two of the boxes overlap by more than half a
// pixel.
func checkNoOverlap(t *testing.T, what string, ls []labelled) {
	t.Helper()
	for i, a := range ls {
		for _, b := range ls[i+1:] {
			if o := a.box.overlap(b.box); o > 0.5 {
				t.Errorf("%s: %q and %q overlap by %.1f px (%+v, %+v)", what, a.text, b.text, o, a.box, b.box)
			}
		}
	}
}

// sixStages is the promotion line of testdata/graph/six-stages, upstream
// first.
var sixStages = []string{"acme/dev", "acme/integration", "acme/qa", "acme/staging", "acme/prod-eu", "acme/prod-us"}

// load opens page in Chromium and takes a full-page screenshot to shot.
func (b browser) load(t *testing.T, page, shot string, width int) inspection {
	t.Helper()
	out := b.run(t, []string{"CHROMIUM=" + b.chromium, "CHROMIUM_PROFILE=" + t.TempDir()}, b.node, b.inspect, page, shot, fmt.Sprint(width))
	var in inspection
	if err := json.Unmarshal([]byte(out), &in); err != nil {
		t.Fatalf("inspect.mjs: %v\n%s", err, out)
	}
	t.Logf("screenshot: %s", shot)
	return in
}

// hostileEstate writes the seed contradiction with Stages named to break
// Markdown, Mermaid and HTML, and returns its directory.
func hostileBrowserEstate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	kargo, err := os.ReadFile("../examples/contradiction/kargo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	argocd, err := os.ReadFile("../examples/contradiction/argocd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{
		"dev": `a"]-->X;click A "javascript:alert(1)"` + "\n| `x` |",
		"qa":  `<img src=x onerror=alert(1)>](http://evil) %%{init: {'securityLevel':'loose'}}%% \ #quot;`,
	}
	k, a := string(kargo), string(argocd)
	for old, name := range names {
		q, _ := json.Marshal(name)
		auth, _ := json.Marshal("acme:" + name)
		k = strings.Replace(k, "  name: "+old+"\n  namespace: acme\n", "  name: "+string(q)+"\n  namespace: acme\n", 1)
		a = strings.Replace(a, "kargo.akuity.io/authorized-stage: acme:"+old+"\n", "kargo.akuity.io/authorized-stage: "+string(auth)+"\n", 1)
	}
	for name, content := range map[string]string{"kargo.yaml": k, "argocd.yaml": a} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

var gfmMarkdown = goldmark.New(goldmark.WithExtensions(extension.GFM))

// mermaidBlocks returns the mermaid code blocks of a Markdown document, as a
// GFM parser finds them.
func mermaidBlocks(t *testing.T, src []byte) []string {
	t.Helper()
	doc := gfmMarkdown.Parser().Parse(text.NewReader(src))
	var blocks []string
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if fc, ok := n.(*ast.FencedCodeBlock); ok && entering && string(fc.Language(src)) == "mermaid" {
			var b strings.Builder
			for i := 0; i < fc.Lines().Len(); i++ {
				seg := fc.Lines().At(i)
				b.Write(seg.Value(src))
			}
			blocks = append(blocks, b.String())
		}
		return ast.WalkContinue, nil
	})
	return blocks
}

// mermaidEntities are the entity codes graph.Mermaid writes.
var mermaidEntities = strings.NewReplacer("#quot;", `"`, "#lt;", "<", "#gt;", ">", "#35;", "#", "#38;", "&", "#96;", "`", "#37;", "%", "#92;", `\`, "#64258;", "\ufb02", "#182;", "\u00b6")

// svgLabels returns the text of every label Mermaid drew in an SVG (its
// HTML labels), and fails on any element or attribute that could act: a link,
// an image, a script, an event handler.
func svgLabels(t *testing.T, svg string) []string {
	t.Helper()
	doc, err := xhtml.Parse(strings.NewReader(svg))
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	var walk func(n *xhtml.Node)
	walk = func(n *xhtml.Node) {
		if n.Type == xhtml.ElementNode {
			switch n.Data {
			case "a", "img", "script", "iframe", "image", "use":
				t.Errorf("<%s> in a Mermaid picture", n.Data)
			}
			for _, a := range n.Attr {
				if strings.HasPrefix(a.Key, "on") || strings.Contains(a.Key, "href") {
					t.Errorf("<%s %s=%q> in a Mermaid picture", n.Data, a.Key, a.Val)
				}
			}
			if n.Data == "p" || n.Data == "span" && slices.ContainsFunc(n.Attr, func(a xhtml.Attribute) bool { return a.Key == "class" && strings.Contains(a.Val, "edgeLabel") }) {
				var b strings.Builder
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					if c.Type == xhtml.TextNode {
						b.WriteString(c.Data)
					}
				}
				if b.Len() > 0 {
					labels = append(labels, b.String())
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return labels
}

var mermaidLabel = regexp.MustCompile(`"([^"]*)"`)

// Every picture of check -o markdown parses with Mermaid's own parser and is
// drawn by its renderer with every label as written, on the examples, the
// rules' samples and an estate with hostile names; the job summary, rendered
// as GitHub renders it, is screenshot.
func TestMarkdownPicturesRenderInMermaid(t *testing.T) {
	bin := tool(t, "FLIPFLOP_BIN")
	b := browserTools(t)
	dir := artifacts(t)
	estates := [][]string{
		{"examples/contradiction"},
		{"policies/rules/shared_application/samples/fires/two-stages-one-app"},
		{"policies/rules/foreign_branch_writer/samples/fires/head-pinned-main-pushed"},
		{"policies/rules/unreachable_desired_revision/samples/fires/own-commit-other-branch"},
		{"policies/rules/shared_branch_contradiction/samples/fires/list-applicationset"},
		{"examples/contradiction", "testdata/hostile/names.yaml"},
		{hostileBrowserEstate(t)},
		{"testdata/graph/six-stages"},
	}
	var all bytes.Buffer
	var blocks []string
	var summary, sixSummary []byte
	six := -1 // the six Stages' picture
	for i, paths := range estates {
		out, stderr, code := runCmd(t, "..", bin, append([]string{"check", "-o", "markdown", "--fail-on", "never"}, paths...)...)
		if code != 0 {
			t.Fatalf("check -o markdown %v: exit %d\n%s", paths, code, stderr)
		}
		bs := mermaidBlocks(t, []byte(out))
		if len(bs) == 0 {
			t.Fatalf("%v: no picture in\n%s", paths, out)
		}
		blocks = append(blocks, bs...)
		all.WriteString(out + "\n")
		if i == 0 {
			summary = []byte(out)
		}
		if paths[0] == "testdata/graph/six-stages" {
			six, sixSummary = len(blocks)-len(bs), []byte(out)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "all.md"), all.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// A broken chart last: the renderer must refuse it, or it proves nothing.
	charts, _ := json.Marshal(append(slices.Clone(blocks), "flowchart LR\n  a[\"x\" --> b\n"))
	chartsFile := filepath.Join(dir, "charts.json")
	if err := os.WriteFile(chartsFile, charts, 0o644); err != nil {
		t.Fatal(err)
	}
	var results []struct {
		SVG, Error string
		Labels     []struct {
			Text string `json:"text"`
			rect
		}
		Nodes []struct {
			ID string `json:"id"`
			rect
		}
	}
	out := b.run(t, []string{"CHROMIUM=" + b.chromium, "CHROMIUM_PROFILE=" + t.TempDir()}, b.node, b.mermaid, chartsFile)
	if err := json.Unmarshal([]byte(out), &results); err != nil || len(results) != len(blocks)+1 {
		t.Fatalf("render-mermaid.mjs: %v, %d results for %d charts\n%s", err, len(results), len(blocks)+1, out)
	}
	if !strings.Contains(results[len(blocks)].Error, "Parse error") {
		t.Fatalf("Mermaid accepted a broken chart: %+v", results[len(blocks)])
	}
	svgs := make([]string, len(blocks))
	for i, block := range blocks {
		if results[i].Error != "" || results[i].SVG == "" {
			t.Errorf("picture %d does not parse: %s\n%s", i+1, results[i].Error, block)
			continue
		}
		svgs[i] = results[i].SVG
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("picture-%d.svg", i+1)), []byte(svgs[i]), 0o644); err != nil {
			t.Fatal(err)
		}
		drawn := svgLabels(t, svgs[i])
		for _, l := range strings.Split(block, "\n") {
			for _, m := range mermaidLabel.FindAllStringSubmatch(l, -1) {
				want := mermaidEntities.Replace(m[1])
				if !slices.Contains(drawn, want) {
					t.Errorf("picture %d: label %q is not drawn as %q (drawn: %q)", i+1, m[1], want, drawn)
				}
			}
		}
		if strings.Contains(svgs[i], "javascript:") && !strings.Contains(block, "javascript:") {
			t.Errorf("picture %d holds javascript: that its source does not", i+1)
		}
		// Mermaid's layout keeps each edge label apart from the others.
		var ls []labelled
		for _, l := range results[i].Labels {
			ls = append(ls, labelled{l.Text, l.rect})
		}
		checkNoOverlap(t, fmt.Sprintf("picture %d's edge labels", i+1), ls)
	}
	// The six Stages, declared in promotion order, are drawn in it, top to
	// bottom, each write labelled with its own Stage.
	if six < 0 {
		t.Fatal("no picture of the six Stages")
	}
	var stages []string
	nodes := results[six].Nodes
	slices.SortStableFunc(nodes, func(a, b struct {
		ID string `json:"id"`
		rect
	}) int {
		return cmp.Compare(a.Top, b.Top)
	})
	for _, n := range nodes {
		if strings.HasPrefix(n.ID, "s") {
			stages = append(stages, n.ID)
		}
	}
	if want := []string{"s1", "s2", "s3", "s4", "s5", "s6"}; !slices.Equal(stages, want) {
		t.Errorf("Mermaid draws the six Stages as %q top to bottom, want the promotion order %q:\n%s", stages, want, blocks[six])
	}
	for _, s := range sixStages {
		name := strings.TrimPrefix(s, "acme/")
		if !strings.Contains(blocks[six], `("`+s+`")`) || !strings.Contains(blocks[six], `|"`+name+` pushes"|`) {
			t.Errorf("the six Stages' picture lacks %s or its write %q:\n%s", s, name+" pushes", blocks[six])
		}
	}
	if t.Failed() {
		return
	}

	// The job summary of the seed contradiction as GitHub shows it (the
	// Markdown rendered, each picture as Mermaid drew it), and of the six
	// Stages in an 800 px window.
	summaryShot := func(name string, md []byte, first, width int) {
		t.Helper()
		var page bytes.Buffer
		if err := gfmMarkdown.Convert(md, &page); err != nil {
			t.Fatal(err)
		}
		n := 0
		body := regexp.MustCompile(`(?s)<pre><code class="language-mermaid">.*?</code></pre>`).ReplaceAllStringFunc(page.String(), func(string) string {
			svg := svgs[first+n]
			n++
			return `<figure><img alt="picture" src="data:image/svg+xml;base64,` + base64.StdEncoding.EncodeToString([]byte(svg)) + `"></figure>`
		})
		htmlPage := filepath.Join(dir, name+".html")
		if err := os.WriteFile(htmlPage, []byte(summaryPage(body)), 0o644); err != nil {
			t.Fatal(err)
		}
		in := b.load(t, htmlPage, filepath.Join(dir, name+".png"), width)
		if len(in.Figures) != n || n == 0 {
			t.Fatalf("%s: %d pictures on the summary page, want %d", name, len(in.Figures), n)
		}
		for i, f := range in.Figures {
			if f.Kind != "img" || !f.Loaded || f.Width < 200 || f.Height < 80 || f.Clipped {
				t.Errorf("%s: summary picture %d not shown whole: %+v", name, i+1, f)
			}
		}
		for _, o := range in.Overflow {
			t.Errorf("%s at %d px: %s", name, width, o)
		}
	}
	summaryShot("job-summary", summary, 0, 900)
	summaryShot("job-summary-six-stages", sixSummary, six, 800)
	shot := filepath.Join(dir, "job-summary.png")
	if os.Getenv("FLIPFLOP_UPDATE_SCREENSHOTS") == "1" {
		png, err := os.ReadFile(shot)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("..", readmeScreenshot), png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", readmeScreenshot)
	}
}

// readmeScreenshot is the job summary's picture that README.md shows.
const readmeScreenshot = "docs/images/job-summary.png"

// summaryPage wraps rendered Markdown in a page styled like GitHub's job
// summary.
func summaryPage(body string) string {
	return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>flipflop job summary</title><style>
body { font: 14px/1.5 -apple-system, "Segoe UI", "DejaVu Sans", Helvetica, Arial, sans-serif; color: #1f2328; margin: 0; padding: 16px 24px; max-width: 840px; background: #fff; }
h2 { font-size: 20px; border-bottom: 1px solid #d1d9e0; padding-bottom: 6px; } h3 { font-size: 16px; margin-top: 24px; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; background: #eff1f3; padding: 2px 4px; border-radius: 6px; }
pre { background: #f6f8fa; padding: 12px; border-radius: 6px; } pre code { background: none; padding: 0; }
table { border-collapse: collapse; } th, td { border: 1px solid #d1d9e0; padding: 4px 10px; } th { background: #f6f8fa; }
a { color: #0969da; text-decoration: none; } figure { margin: 8px 0; } figure img { max-width: 100%; }
</style></head><body>
` + body + `</body></html>
`
}

// The HTML report, loaded in Chromium, shows every picture it holds (each
// label drawn with a width, inside its picture), makes no request but for
// itself, and its Content-Security-Policy blocks what a hostile value would
// need (a script, an image from the network).
func TestReportRendersInBrowser(t *testing.T) {
	bin := tool(t, "FLIPFLOP_BIN")
	b := browserTools(t)
	dir := artifacts(t)
	for _, tc := range []struct {
		name  string
		paths []string
		want  []string // labels the estate's picture must show
		width int      // of the window
	}{
		{"report", []string{"examples/contradiction"}, []string{"acme/dev", "acme/qa", "argocd/dev", "argocd/qa", "github.com/acme/deploy @ main", "pins its own commit", "dev pushes", "qa pushes"}, 1100},
		{"report-hostile", []string{hostileBrowserEstate(t), "testdata/hostile/names.yaml"}, []string{"argocd/dev", "github.com/acme/deploy @ main"}, 1100},
		{"report-six-stages", []string{"testdata/graph/six-stages"}, append(slices.Clone(sixStages), "dev pushes", "prod-us pushes"), 800},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := filepath.Join(dir, tc.name+".html")
			_, stderr, code := runCmd(t, "..", bin, append([]string{"report", "--out", page, "--fail-on", "never"}, tc.paths...)...)
			if code != 0 {
				t.Fatalf("report: exit %d\n%s", code, stderr)
			}
			src, err := os.ReadFile(page)
			if err != nil {
				t.Fatal(err)
			}
			want := sourceFigures(t, string(src))
			in := b.load(t, page, filepath.Join(dir, tc.name+".png"), tc.width)
			for _, o := range in.Overflow {
				t.Errorf("at %d px: %s", tc.width, o)
			}
			if len(in.Requests) != 1 || in.Requests[0] != in.URL {
				t.Errorf("requests beyond the page itself: %q", in.Requests)
			}
			if len(in.Console) > 0 {
				t.Errorf("console: %q", in.Console)
			}
			if len(in.Figures) != len(want) || len(want) < 2 {
				t.Fatalf("%d pictures shown, %d in the page", len(in.Figures), len(want))
			}
			for i, f := range in.Figures {
				if f.Kind != "svg" || f.Width < 150 || f.Height < 60 {
					t.Errorf("picture %d (%s) not drawn: %s %.0fx%.0f", i+1, f.ID, f.Kind, f.Width, f.Height)
				}
				if f.Clipped {
					t.Errorf("picture %d (%s) is clipped at %d px: %+v", i+1, f.ID, tc.width, f.Box)
				}
				var shown []string
				var edgeLabels []labelled
				for _, tx := range f.Texts {
					if tx.Length <= 0 || !tx.Inside {
						t.Errorf("picture %d: label %q not drawn inside it (length %.1f)", i+1, tx.Text, tx.Length)
					}
					shown = append(shown, tx.Text)
					if tx.Class == "edge-label" {
						edgeLabels = append(edgeLabels, labelled{tx.Text, tx.Box})
					}
				}
				checkNoOverlap(t, fmt.Sprintf("picture %d's edge labels", i+1), edgeLabels)
				if !slices.Equal(shown, want[i]) {
					t.Errorf("picture %d shows %q, its source holds %q", i+1, shown, want[i])
				}
				if i == 0 {
					for _, w := range tc.want {
						if !slices.Contains(shown, w) {
							t.Errorf("the estate's picture lacks %q: %q", w, shown)
						}
					}
				}
				if tc.name == "report-six-stages" {
					// The Stages top to bottom, as drawn.
					var stages []labelled
					for _, tx := range f.Texts {
						if slices.Contains(sixStages, tx.Text) && tx.Class == "" {
							stages = append(stages, labelled{tx.Text, tx.Box})
						}
					}
					slices.SortStableFunc(stages, func(a, b labelled) int { return cmp.Compare(a.box.Top, b.box.Top) })
					var order []string
					for _, s := range stages {
						order = append(order, s.text)
					}
					if !slices.Equal(order, sixStages) {
						t.Errorf("picture %d draws the Stages as %q top to bottom, want the promotion order %q", i+1, order, sixStages)
					}
				}
			}
		})
	}

	// The policy is in force: a script and an image from the network added
	// to the page are refused, and nothing is requested.
	src, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	injected := strings.Replace(string(src), "</body>", `<img src="http://127.0.0.1:9/pixel.png"><script>console.log("script ran")</script></body>`, 1)
	page := filepath.Join(dir, "csp-probe.html")
	if err := os.WriteFile(page, []byte(injected), 0o644); err != nil {
		t.Fatal(err)
	}
	in := b.load(t, page, filepath.Join(dir, "csp-probe.png"), 1100)
	console := strings.Join(in.Console, "\n")
	if strings.Contains(console, "script ran") || !strings.Contains(console, "Content Security Policy") {
		t.Errorf("the Content-Security-Policy did not block the probe:\n%s", console)
	}
	for _, r := range in.Requests {
		if strings.HasPrefix(r, "http") && !strings.Contains(console, "request failed: "+r+" (csp)") {
			t.Errorf("the page requested %s:\n%s", r, console)
		}
	}
}

// sourceFigures returns, per <figure> of a page's source, the text of each
// <text> of its SVG.
func sourceFigures(t *testing.T, src string) [][]string {
	t.Helper()
	doc, err := xhtml.Parse(strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	var figures [][]string
	var walk func(n *xhtml.Node, fig int)
	walk = func(n *xhtml.Node, fig int) {
		if n.Type == xhtml.ElementNode && n.Data == "figure" {
			figures = append(figures, nil)
			fig = len(figures) - 1
		}
		if n.Type == xhtml.ElementNode && n.Data == "text" && fig >= 0 {
			var b strings.Builder
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				if c.Type == xhtml.TextNode {
					b.WriteString(c.Data)
				}
			}
			figures[fig] = append(figures[fig], html.UnescapeString(b.String()))
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, fig)
		}
	}
	walk(doc, -1)
	return figures
}

// README.md's CI section shows the job summary as the browser test draws it.
func TestReadmeShowsTheJobSummary(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	ci := string(readme)
	start := strings.Index(ci, "## Check in CI")
	end := strings.Index(ci, "## Check the cluster")
	if start < 0 || end < start {
		t.Fatal("README.md has no 'Check in CI' section")
	}
	if !strings.Contains(ci[start:end], "]("+readmeScreenshot+")") {
		t.Errorf("README.md's CI section does not show %s", readmeScreenshot)
	}
	png, err := os.ReadFile(filepath.Join("..", readmeScreenshot))
	if err != nil {
		t.Fatalf("%v (FLIPFLOP_UPDATE_SCREENSHOTS=1 go test ./tests -run TestMarkdownPicturesRenderInMermaid writes it)", err)
	}
	if !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) || len(png) < 10000 {
		t.Errorf("%s is not a screenshot (%d bytes)", readmeScreenshot, len(png))
	}
}
