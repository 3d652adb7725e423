package graph

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/race"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// sharedEvaluator compiles the policies once for all tests.
var sharedEvaluator = sync.OnceValues(func() (*evaluator.Evaluator, error) {
	return evaluator.New(context.Background(), evaluator.Settings{})
})

// estates are drawn in the golden tests.
var estates = map[string]string{
	"contradiction":      "../../examples/contradiction",
	"fix-stage-branches": "../../examples/fix-stage-branches",
	"foreign-writer":     "../../policies/rules/foreign_branch_writer/samples/fires/head-pinned-main-pushed",
	"shared-application": "../../policies/rules/shared_application/samples/fires/two-stages-one-app",
	"unreachable":        "../../policies/rules/unreachable_desired_revision/samples/fires/own-commit-other-branch",
	"applicationset":     "../../policies/rules/shared_branch_contradiction/samples/fires/list-applicationset",
	"six-stages":         "../../testdata/graph/six-stages",
}

func build(t *testing.T, path string) *Graph {
	t.Helper()
	ctx := context.Background()
	ev, err := sharedEvaluator()
	if err != nil {
		t.Fatal(err)
	}
	objs, errs := (&loader.Loader{}).Load([]string{path})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	r, m, err := ev.Analyze(ctx, objs)
	if err != nil {
		t.Fatal(err)
	}
	return Build(m, r)
}

func render(t *testing.T, format string, g *Graph) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, format, g); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

var ext = map[string]string{"mermaid": ".mmd", "dot": ".dot", "svg": ".svg"}

// TestGolden compares every format with testdata/<estate>.{mmd,dot,svg}
// (go test ./internal/graph -update rewrites them).
func TestGolden(t *testing.T) {
	race.Sequential(t)
	for name, path := range estates {
		g := build(t, path)
		for _, format := range Formats() {
			t.Run(name+"/"+format, func(t *testing.T) {
				got := render(t, format, g)
				if again := render(t, format, build(t, path)); again != got {
					t.Fatalf("output is not deterministic:\n%s\n---\n%s", got, again)
				}
				golden := filepath.Join("testdata", name+ext[format])
				if *update {
					if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (go test ./internal/graph -update writes it)", err)
				}
				if got != string(want) {
					t.Errorf("%s differs from %s (go test ./internal/graph -update rewrites it):\n%s", path, golden, got)
				}
			})
		}
	}
}

func TestContradictionIsRed(t *testing.T) {
	g := build(t, estates["contradiction"])
	for _, n := range g.Nodes {
		if !n.Error {
			t.Errorf("node %s (%s) not marked", n.ID, n.Key)
		}
	}
	for _, e := range g.Edges {
		if !e.Error {
			t.Errorf("edge %+v not marked", e)
		}
	}
	clean := build(t, estates["fix-stage-branches"])
	for _, n := range clean.Nodes {
		if n.Error {
			t.Errorf("clean estate: node %s marked", n.Key)
		}
	}
	kinds := map[string]int{}
	for _, e := range g.Edges {
		kinds[e.Kind]++
	}
	if kinds[EdgePin] != 2 || kinds[EdgeTrack] != 2 || kinds[EdgeWrite] != 2 {
		t.Errorf("edges %v", kinds)
	}
}

// The shapes of every line a Mermaid flowchart from Mermaid may hold.
var (
	mermaidID       = `[a-z][0-9]+`
	mermaidLabel    = `"[^"<>]*"`
	mermaidNode     = regexp.MustCompile(`^  (` + mermaidID + `)(\(` + mermaidLabel + `\)|\[` + mermaidLabel + `\]|\[\(` + mermaidLabel + `\)\])$`)
	mermaidSubgraph = regexp.MustCompile(`^  subgraph [a-z]+\[` + mermaidLabel + `\]$`)
	mermaidEdge     = regexp.MustCompile(`^  (` + mermaidID + `) (-->|-\.->)(\|` + mermaidLabel + `\|)? (` + mermaidID + `)$`)
	mermaidClassDef = regexp.MustCompile(`^  classDef [a-z]+ [a-z-]+:[#0-9a-z]+(,[a-z-]+:[#0-9a-z]+)*$`)
	mermaidClass    = regexp.MustCompile(`^  class (` + mermaidID + `(,` + mermaidID + `)*) [a-z]+$`)
	mermaidLink     = regexp.MustCompile(`^  linkStyle ([0-9]+(,[0-9]+)*) [a-z-]+:[#0-9a-z]+(,[a-z-]+:[#0-9a-z]+)*$`)
)

// checkMermaid is a syntax sanity check: every line has a known shape, quotes
// balance, subgraphs close, edges and classes name defined nodes, linkStyle
// indexes exist.
func checkMermaid(t *testing.T, src string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(src, "\n"), "\n")
	if lines[0] != "flowchart LR" {
		t.Fatalf("first line %q", lines[0])
	}
	defined := map[string]bool{}
	var used []string
	edges, depth := 0, 0
	for _, l := range lines[1:] {
		if strings.Count(l, `"`)%2 != 0 {
			t.Errorf("unbalanced quotes: %q", l)
		}
		switch {
		case mermaidNode.MatchString(l):
			id := mermaidNode.FindStringSubmatch(l)[1]
			if defined[id] {
				t.Errorf("node %s defined twice", id)
			}
			defined[id] = true
		case mermaidSubgraph.MatchString(l):
			depth++
		case l == "  end":
			depth--
		case mermaidEdge.MatchString(l):
			m := mermaidEdge.FindStringSubmatch(l)
			used = append(used, m[1], m[4])
			edges++
		case mermaidClassDef.MatchString(l):
		case mermaidClass.MatchString(l):
			used = append(used, strings.Split(mermaidClass.FindStringSubmatch(l)[1], ",")...)
		case mermaidLink.MatchString(l):
			for _, i := range strings.Split(mermaidLink.FindStringSubmatch(l)[1], ",") {
				if n, _ := strconv.Atoi(i); n >= edges {
					t.Errorf("linkStyle %d, but only %d edges", n, edges)
				}
			}
		default:
			t.Errorf("unexpected line %q", l)
		}
		if depth < 0 || depth > 1 {
			t.Errorf("subgraph nesting %d at %q", depth, l)
		}
	}
	if depth != 0 {
		t.Errorf("unclosed subgraph")
	}
	for _, id := range used {
		if !defined[id] {
			t.Errorf("%s used but not defined", id)
		}
	}
}

func TestMermaidSyntax(t *testing.T) {
	for name, path := range estates {
		t.Run(name, func(t *testing.T) { checkMermaid(t, Mermaid(build(t, path))) })
	}
}

// awkward is a graph whose labels hold every character Mermaid or DOT treat specially.
func awkward() *Graph {
	return &Graph{
		Nodes: []Node{
			{ID: "s1", Kind: KindStage, Key: `p/"quoted"`, Label: `p/"quoted" #1 <b>`, Error: true},
			{ID: "a1", Kind: KindApplication, Key: "argocd/a", Label: `back\slash; end`},
			{ID: "p1", Kind: KindPointer, Key: "x@${{ vars.b }}", Label: "x @ ${{ vars.branch }} | (semver) [1.x]"},
		},
		Edges: []Edge{
			{From: "s1", To: "a1", Kind: EdgePin, Label: `pins "main" <literal>`, Error: true},
			{From: "a1", To: "p1", Kind: EdgeTrack},
			{From: "s1", To: "p1", Kind: EdgeWrite, Label: "pushes"},
		},
	}
}

func TestMermaidEscapes(t *testing.T) {
	src := Mermaid(awkward())
	checkMermaid(t, src)
	for _, want := range []string{`s1("p/#quot;quoted#quot; #35;1 #lt;b#gt;")`, `-->|"pins #quot;main#quot; #lt;literal#gt;"|`, "linkStyle 0 "} {
		if !strings.Contains(src, want) {
			t.Errorf("mermaid lacks %q:\n%s", want, src)
		}
	}
}

func TestDOTEscapes(t *testing.T) {
	src := DOT(awkward())
	for _, want := range []string{`label="p/\"quoted\" #1 <b>"`, `label="back\\slash; end"`, `s1 -> p1 [label="pushes", style=dashed];`} {
		if !strings.Contains(src, want) {
			t.Errorf("dot lacks %q:\n%s", want, src)
		}
	}
	renderDOT(t, src)
}

// renderDOT renders DOT source with Graphviz, when installed (apt-get install graphviz).
func renderDOT(t *testing.T, src string) {
	t.Helper()
	dot, err := exec.LookPath("dot")
	if err != nil {
		t.Skip("Graphviz (dot) is not installed")
	}
	cmd := exec.Command(dot, "-Tsvg")
	cmd.Stdin = strings.NewReader(src)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil || stderr.Len() > 0 {
		t.Fatalf("dot -Tsvg: %v %s\n%s", err, stderr.String(), src)
	}
	if !strings.Contains(out.String(), "<svg") {
		t.Fatalf("dot -Tsvg wrote no SVG")
	}
}

func TestDOTRendersWithGraphviz(t *testing.T) {
	for name, path := range estates {
		t.Run(name, func(t *testing.T) {
			src := DOT(build(t, path))
			renderDOT(t, src)
		})
	}
}

func TestUnknownFormat(t *testing.T) {
	if err := Write(&bytes.Buffer{}, "png", &Graph{}); err == nil {
		t.Error("no error for an unknown format")
	}
}

// A pinned Application the model lists only under an ApplicationSet pattern
// still gets its tracking edge, from the pin.
func TestPinnedPatternInstanceTracksItsPointer(t *testing.T) {
	main := evaluator.Pointer{Key: "git.example.com/x@main", Known: true, Floating: true, Kind: "branch", Name: "main", Text: "git.example.com/x @ main"}
	m := &evaluator.Model{
		Applications: []evaluator.ModelApplication{{Key: "argocd/${{ pattern }}", Sources: []evaluator.ModelSource{{Pointer: main}}}},
		Pins:         []evaluator.Pin{{ID: "pin", Stage: "p/prod", Application: "argocd/portfolio", Pointer: main, DesiredClass: "own"}},
		Writes:       []evaluator.Write{{ID: "write", Stage: "p/stage", Pointer: main}},
	}
	report := &evaluator.Report{Findings: []evaluator.Finding{{
		Rule: "foreign-branch-writer", Severity: "error", Key: main.Key,
		Pointer: main.Key, Stages: []string{"p/prod", "p/stage"}, Applications: []string{"argocd/portfolio"},
		Pins: []string{"pin"}, Writes: []string{"write"},
	}}}
	src := Mermaid(Build(m, report))
	checkMermaid(t, src)
	for _, want := range []string{`a1["argocd/portfolio"]`, "a1 --> p1", "s2 -.->|\"stage pushes\"| p1", "class s1,s2,a1,p1 contradiction", "linkStyle 0,1,3 "} {
		if !strings.Contains(src, want) {
			t.Errorf("lacks %q:\n%s", want, src)
		}
	}
}

// One Application on HEAD (taken to be main) and one on main track the same
// pointer: the picture must not depend on the order of the Stage documents,
// since findings are joined to the model by id, not by text.
func TestSameEstateSamePictureWhateverTheOrder(t *testing.T) {
	app := func(name, rev string) string {
		return `apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: ` + name + `, namespace: argocd, annotations: {kargo.akuity.io/authorized-stage: "acme:` + name + `"}}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc, namespace: ` + name + `}
  source: {repoURL: https://github.com/acme/deploy.git, targetRevision: ` + rev + `, path: env/` + name + `}
`
	}
	stage := func(name string) string {
		return `apiVersion: kargo.akuity.io/v1alpha1
kind: Stage
metadata: {name: ` + name + `, namespace: acme}
spec:
  requestedFreight: [{origin: {kind: Warehouse, name: app}, sources: {direct: true}}]
  promotionTemplate:
    spec:
      steps:
      - uses: git-clone
        config: {repoURL: https://github.com/acme/deploy.git, checkout: [{branch: main, path: ./repo}]}
      - {uses: git-commit, config: {path: ./repo, message: m}}
      - {uses: git-push, as: push, config: {path: ./repo}}
      - uses: argocd-update
        config: {apps: [{name: ` + name + `, sources: [{repoURL: https://github.com/acme/deploy.git, desiredRevision: "${{ outputs.push.commit }}"}]}]}
`
	}
	draw := func(stages ...string) string {
		dir := t.TempDir()
		docs := app("dev", "HEAD") + "---\n" + app("qa", "main")
		if err := os.WriteFile(filepath.Join(dir, "argocd.yaml"), []byte(docs), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "kargo.yaml"), []byte(strings.Join(stages, "---\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		return render(t, "mermaid", build(t, dir))
	}
	a, b := draw(stage("dev"), stage("qa")), draw(stage("qa"), stage("dev"))
	if a != b {
		t.Fatalf("the order of the Stages changes the picture:\n%s\n---\n%s", a, b)
	}
	if !strings.Contains(a, "class s1,s2,a1,a2,p1 contradiction") {
		t.Errorf("the contradiction is not drawn:\n%s", a)
	}
}

// Stages are drawn in promotion order, upstream first (the model's
// Upstream, from requestedFreight), a line kept together; the Applications
// follow the Stages that pin them; a cycle, which Kargo refuses, still draws.
func TestStagesInPromotionOrder(t *testing.T) {
	main := evaluator.Pointer{Key: "git.example.com/x@main", Known: true, Floating: true, Kind: "branch", Name: "main", Text: "git.example.com/x @ main"}
	m := &evaluator.Model{Stages: []evaluator.ModelStage{
		{Key: "a/prod", Upstream: []string{"a/qa", "a/uat"}},
		{Key: "a/qa", Upstream: []string{"a/dev"}},
		{Key: "a/uat", Upstream: []string{"a/dev"}},
		{Key: "a/dev"},
		{Key: "b/x"},
		{Key: "c/loop1", Upstream: []string{"c/loop2"}},
		{Key: "c/loop2", Upstream: []string{"c/loop1"}},
		{Key: "d/lone", Upstream: []string{"d/gone"}},
		{Key: "e/self", Upstream: []string{"e/self"}},
	}}
	for _, s := range m.Stages {
		m.Writes = append(m.Writes, evaluator.Write{ID: s.Key, Stage: s.Key, Pointer: main})
		m.Pins = append(m.Pins, evaluator.Pin{ID: s.Key, Stage: s.Key, Application: "argocd/" + strings.ReplaceAll(s.Key, "/", "-"), Pointer: main, DesiredClass: "own"})
	}
	g := Build(m, &evaluator.Report{})
	var stages, apps []string
	for _, n := range g.Nodes {
		switch n.Kind {
		case KindStage:
			stages = append(stages, n.Key)
		case KindApplication:
			apps = append(apps, n.Key)
		}
	}
	want := []string{"a/dev", "a/qa", "a/uat", "a/prod", "b/x", "d/lone", "e/self", "c/loop1", "c/loop2"}
	if !slices.Equal(stages, want) {
		t.Errorf("Stages %q, want %q", stages, want)
	}
	for i, a := range apps {
		if w := "argocd/" + strings.ReplaceAll(want[i], "/", "-"); a != w {
			t.Errorf("Application %d is %s, want %s (pinned by %s)", i+1, a, w, want[i])
		}
	}

	t.Run("six-stages", func(t *testing.T) {
		race.Sequential(t)
		src := Mermaid(build(t, estates["six-stages"]))
		checkMermaid(t, src)
		at := -1
		for _, s := range []string{"dev", "integration", "qa", "staging", "prod-eu", "prod-us"} {
			i := strings.Index(src, `("acme/`+s+`")`)
			if i < at {
				t.Errorf("Mermaid declares acme/%s out of promotion order:\n%s", s, src)
			}
			at = i
		}
	})
}

// Each write is labelled with its Stage, so that where several Stages push to
// one branch each edge says whose it is; Stages of two projects with one
// name are told apart by their keys.
func TestWriteLabelsAreDistinct(t *testing.T) {
	t.Run("six-stages", func(t *testing.T) {
		race.Sequential(t)
		labels := map[string]bool{}
		for _, e := range build(t, estates["six-stages"]).Edges {
			if e.Kind == EdgeWrite {
				if labels[e.Label] {
					t.Errorf("two writes labelled %q", e.Label)
				}
				labels[e.Label] = true
			}
		}
		if len(labels) != 6 || !labels["prod-eu pushes"] {
			t.Errorf("write labels %v", labels)
		}
	})
	main := evaluator.Pointer{Key: "git.example.com/x@main", Known: true, Text: "git.example.com/x @ main"}
	m := &evaluator.Model{Writes: []evaluator.Write{{ID: "1", Stage: "a/dev", Pointer: main}, {ID: "2", Stage: "b/dev", Pointer: main},
		{ID: "3", Stage: "b/qa", Pointer: main}, {ID: "4", Stage: "c/x](http://evil)/y", Pointer: main}}}
	var got []string
	for _, e := range Build(m, &evaluator.Report{}).Edges {
		got = append(got, e.Label)
	}
	if want := []string{"a/dev pushes", "b/dev pushes", "qa pushes", "x](http://evil)/y pushes"}; !slices.Equal(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
}
