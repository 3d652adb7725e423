package render

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// The tests run the renderer for real: the worker is this test binary (its
// init starts serving when FLIPFLOP_RENDER_WORKER is set).

const seed = "../../testdata/render"

// write creates files under dir (name -> content).
func write(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// renderDir renders dir with r (roots default to dir).
func renderDir(t *testing.T, r *Renderer, dir string) loader.Rendered {
	t.Helper()
	if r.roots == nil {
		root, err := newRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		r.roots = []rootDir{root}
	}
	mode := r.Claim(dir)
	if mode == "" {
		t.Fatalf("%s is not claimed", dir)
	}
	return r.Render(dir, filepath.ToSlash(dir), mode)
}

// field reads a string at path in an object's value.
func field(o evaluator.Object, path ...string) string {
	v := o.Value
	for _, k := range path {
		obj, ok := v.(ast.Object)
		if !ok {
			if arr, ok := v.(*ast.Array); ok {
				var i int
				fmt.Sscan(k, &i)
				if i < arr.Len() {
					v = arr.Elem(i).Value
					continue
				}
			}
			return ""
		}
		t := obj.Get(ast.StringTerm(k))
		if t == nil {
			return ""
		}
		v = t.Value
	}
	if s, ok := v.(ast.String); ok {
		return string(s)
	}
	return ""
}

func byKind(objs []evaluator.Object, kind string) []evaluator.Object {
	var out []evaluator.Object
	for _, o := range objs {
		if o.Kind == kind {
			out = append(out, o)
		}
	}
	return out
}

func wantError(t *testing.T, out loader.Rendered, file, substr string) evaluator.LoadError {
	t.Helper()
	if !out.Root.Failed {
		t.Errorf("root not marked failed: %+v", out.Root)
	}
	for _, e := range out.Errors {
		if strings.Contains(e.Message, substr) && (file == "" || e.Path == file) {
			return e
		}
	}
	t.Fatalf("no error at %s containing %q; errors: %+v", file, substr, out.Errors)
	return evaluator.LoadError{}
}

func TestHelmSeedChart(t *testing.T) {
	dir := seed + "/seed-helm/kargo"
	out := renderDir(t, &Renderer{}, dir)
	if len(out.Errors) > 0 {
		t.Fatal(out.Errors)
	}
	if out.Root.Mode != evaluator.ModeHelm || out.Root.Chart != "acme-pipeline 0.1.0" || !slices.Equal(out.Root.Values, []string{"values.yaml"}) || out.Root.Objects != 5 {
		t.Errorf("root %+v", out.Root)
	}
	stages := byKind(out.Objects, "Stage")
	if len(stages) != 2 {
		t.Fatalf("stages %+v", stages)
	}
	for _, s := range stages {
		// Both come from the one document of the template, which starts at line 5.
		if s.Path != dir+"/templates/stages.yaml" || s.Line != 5 || s.Rendered != evaluator.ModeHelm || s.RenderedBy != "helm chart "+dir {
			t.Errorf("stage %s at %s:%d rendered %q by %q", s.Name, s.Path, s.Line, s.Rendered, s.RenderedBy)
		}
		if got := field(s, "spec", "promotionTemplate", "spec", "steps", "0", "config", "checkout", "0", "branch"); got != "main" {
			t.Errorf("stage %s clones %q", s.Name, got)
		}
	}
	wh := byKind(out.Objects, "Warehouse")
	if len(wh) != 1 || wh[0].Line != 1 || wh[0].Path != dir+"/templates/warehouse.yaml" {
		t.Errorf("warehouse %+v", wh)
	}
}

func TestHelmSetAndValuesFiles(t *testing.T) {
	dir := seed + "/seed-helm/kargo"
	out := renderDir(t, &Renderer{Helm: HelmOptions{Set: []string{"stageBranches=true"}}}, dir)
	if len(out.Errors) > 0 {
		t.Fatal(out.Errors)
	}
	for _, a := range byKind(out.Objects, "Application") {
		if got := field(a, "spec", "source", "targetRevision"); got != "env/"+a.Name {
			t.Errorf("%s tracks %q", a.Name, got)
		}
	}
	if !slices.Equal(out.Root.Values, []string{"values.yaml", "--set stageBranches=true"}) {
		t.Errorf("values %v", out.Root.Values)
	}
	// A values file, then --set-string over it.
	out = renderDir(t, &Renderer{Helm: HelmOptions{
		ValuesFiles: []ValuesFile{{Name: "prod.yaml", Data: []byte("project: shop\nbranch: release\n")}},
		SetString:   []string{"branch=hotfix"},
		ReleaseName: "r", Namespace: "ns",
	}}, dir)
	if len(out.Errors) > 0 {
		t.Fatal(out.Errors)
	}
	for _, s := range byKind(out.Objects, "Stage") {
		if s.Namespace != "shop" || field(s, "spec", "promotionTemplate", "spec", "steps", "0", "config", "checkout", "0", "branch") != "hotfix" {
			t.Errorf("stage %s/%s: %v", s.Namespace, s.Name, s.Value)
		}
	}
	if !slices.Equal(out.Root.Values, []string{"values.yaml", "prod.yaml", "--set-string branch=hotfix"}) {
		t.Errorf("values %v", out.Root.Values)
	}
}

const chartYAML = "apiVersion: v2\nname: c\nversion: 1.0.0\n"

func TestHelmUnvendoredDependency(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"Chart.yaml":            chartYAML + "dependencies:\n- name: postgresql\n  version: 15.0.0\n  repository: https://charts.example.com\n",
		"templates/stage.yaml":  "apiVersion: kargo.akuity.io/v1alpha1\nkind: Stage\nmetadata: {name: s, namespace: p}\n",
		"charts/.keep-dir.yaml": "",
	})
	out := renderDir(t, &Renderer{}, dir)
	wantError(t, out, filepath.ToSlash(dir)+"/Chart.yaml", "postgresql 15.0.0 (https://charts.example.com)")
	if len(out.Objects) != 0 {
		t.Errorf("objects from a chart that could not be rendered: %+v", out.Objects)
	}
}

// A file:// dependency is a chart in the repository: one whose path names no
// directory (relative to the chart's) is a mistake Helm and Argo CD fail on as
// well, and says so; one that exists is only not built into charts/; a remote
// one is not downloaded (issue 40 item 4: the rewyekha estate's wrong paths).
func TestHelmLocalDependencies(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{
		"charts-src/catalogue/Chart.yaml": "apiVersion: v2\nname: catalogue\nversion: 0.1.1\n",
		"umbrella/Chart.yaml": chartYAML + "dependencies:\n" +
			"- name: catalogue\n  version: 0.1.1\n  repository: file://../charts-src/catalogue\n" +
			"- name: voting\n  version: 0.1.1\n  repository: file://umbrella/voting\n" +
			"- name: postgresql\n  version: 15.0.0\n  repository: https://charts.example.com\n",
		"umbrella/templates/stage.yaml": "apiVersion: kargo.akuity.io/v1alpha1\nkind: Stage\nmetadata: {name: s, namespace: p}\n",
	})
	whole, err := newRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	out := renderDir(t, &Renderer{roots: []rootDir{whole}}, filepath.Join(root, "umbrella"))
	chartFile := filepath.ToSlash(root) + "/umbrella/Chart.yaml"
	e := wantError(t, out, chartFile, "file:// dependencies name directories that do not exist (the path is relative to the chart's directory")
	for _, want := range []string{
		"voting 0.1.1 (file://umbrella/voting): " + filepath.ToSlash(root) + "/umbrella/umbrella/voting does not exist",
		"file:// dependencies are not built into charts/ (flipflop renders what charts/ holds; `helm dependency build` copies them there",
		"catalogue 0.1.1 (file://../charts-src/catalogue)",
		"dependencies are not vendored under charts/ (flipflop does not download charts): postgresql 15.0.0 (https://charts.example.com)",
	} {
		if !strings.Contains(e.Message, want) {
			t.Errorf("message does not say %q: %s", want, e.Message)
		}
	}
	if strings.Contains(e.Message, "download charts): voting") || strings.Contains(e.Message, "download charts): catalogue") {
		t.Errorf("a file:// dependency is called a download: %s", e.Message)
	}
	// Given the chart alone, the existing dependency lies outside what is read.
	out = renderDir(t, &Renderer{}, filepath.Join(root, "umbrella"))
	wantError(t, out, chartFile, "file:// dependencies are not built into charts/, and flipflop may not read them where they are: catalogue 0.1.1 (file://../charts-src/catalogue): ")
}

func TestHelmVendoredDependency(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"Chart.yaml":                     chartYAML + "dependencies:\n- name: sub\n  version: 0.1.0\n  repository: https://charts.example.com\n",
		"charts/sub/Chart.yaml":          "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
		"charts/sub/templates/wh.yaml":   "apiVersion: kargo.akuity.io/v1alpha1\nkind: Warehouse\nmetadata: {name: {{ .Release.Name }}, namespace: {{ .Release.Namespace }}}\n",
		"templates/lookup.yaml":          "{{- $x := lookup \"v1\" \"Secret\" \"ns\" \"s\" }}\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: found-{{ len $x }}}\n",
		"templates/NOTES.txt":            "not a manifest {{ .Release.Name }}",
		"templates/_helpers.tpl":         "{{ define \"x\" }}y{{ end }}",
		"templates/empty.yaml":           "{{- if false }}\nkind: Nothing\n{{- end }}\n",
		"templates/tests/test-pod.yaml":  "apiVersion: v1\nkind: Pod\nmetadata: {name: t}\n",
		".helmignore":                    "ignored.yaml\n",
		"templates/ignored.yaml":         "{{ this does not parse",
		"templates/ignored/ignored.yaml": "",
	})
	out := renderDir(t, &Renderer{AllKinds: true}, dir)
	if len(out.Errors) > 0 {
		t.Fatal(out.Errors)
	}
	wh := byKind(out.Objects, "Warehouse")
	if len(wh) != 1 || wh[0].Name != "c" || wh[0].Namespace != "default" || wh[0].Path != filepath.ToSlash(dir)+"/charts/sub/templates/wh.yaml" {
		t.Errorf("subchart objects %+v", wh)
	}
	if cm := byKind(out.Objects, "ConfigMap"); len(cm) != 1 || cm[0].Name != "found-0" {
		t.Errorf("lookup without a cluster: %+v", cm)
	}
}

func TestHelmTemplateErrors(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"Chart.yaml":          chartYAML,
		"templates/fail.yaml": "a: 1\n\nb: {{ required \"b is required\" .Values.b }}\n",
	})
	out := renderDir(t, &Renderer{}, dir)
	e := wantError(t, out, filepath.ToSlash(dir)+"/templates/fail.yaml", "b is required")
	if e.Line != 3 {
		t.Errorf("line %d, want 3", e.Line)
	}

	dir = t.TempDir()
	write(t, dir, map[string]string{
		"Chart.yaml":          chartYAML,
		"templates/yaml.yaml": "kind: A\n---\n# c\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: {{ \"[\" }}x}\n",
	})
	out = renderDir(t, &Renderer{}, dir)
	e = wantError(t, out, filepath.ToSlash(dir)+"/templates/yaml.yaml", "in the rendered output of this template")
	if e.Line != 4 {
		t.Errorf("line %d, want 4 (the document's first line in the template)", e.Line)
	}
}

func TestHelmLimits(t *testing.T) {
	if testing.Short() {
		t.Skip("renders until limits are hit")
	}
	dir := t.TempDir()
	write(t, dir, map[string]string{
		"Chart.yaml":          chartYAML,
		"templates/loop.yaml": "{{- range until 100000 }}{{- range until 100000 }}{{- end }}{{- end }}\n",
	})
	start := time.Now()
	out := renderDir(t, &Renderer{Timeout: 2 * time.Second}, dir)
	wantError(t, out, "", "did not finish within what was left of the run's render budget")
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the worker was not stopped at its deadline: %s", d)
	}

	// A tiny chart whose output would be gigabytes.
	dir = t.TempDir()
	write(t, dir, map[string]string{
		"Chart.yaml":          chartYAML,
		"templates/bomb.yaml": "{{- range until 1000 }}{{ \"x\" | repeat 400000000 }}{{- end }}\n",
	})
	out = renderDir(t, &Renderer{Memory: 256 << 20}, dir)
	wantError(t, out, "", "memory")

	// Output over the limit.
	dir = t.TempDir()
	write(t, dir, map[string]string{
		"Chart.yaml":         chartYAML,
		"templates/big.yaml": "data: {{ \"x\" | repeat 3000000 }}\n",
	})
	out = renderDir(t, &Renderer{MaxFileSize: 1 << 20}, dir)
	wantError(t, out, "", "larger than 1048576 bytes")
}

func TestHelmConfinement(t *testing.T) {
	outside := t.TempDir()
	write(t, outside, map[string]string{"secret.yaml": "kind: ConfigMap\n"})
	dir := t.TempDir()
	write(t, dir, map[string]string{"Chart.yaml": chartYAML})
	if err := os.MkdirAll(filepath.Join(dir, "templates"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret.yaml"), filepath.Join(dir, "templates", "link.yaml")); err != nil {
		t.Skip(err)
	}
	out := renderDir(t, &Renderer{}, dir)
	wantError(t, out, "", "outside the paths given")

	dir = t.TempDir()
	write(t, dir, map[string]string{"Chart.yaml": chartYAML})
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.yaml"), 0o644); err != nil {
		t.Skip(err)
	}
	done := make(chan loader.Rendered)
	go func() { done <- renderDir(t, &Renderer{}, dir) }()
	select {
	case out := <-done:
		wantError(t, out, "", "not a regular file")
	case <-time.After(time.Minute):
		t.Fatal("a FIFO in a chart blocked the renderer")
	}
}

func TestKustomizeSeedOverlay(t *testing.T) {
	dir := seed + "/seed-kustomize/overlay"
	root, _ := newRoot(seed + "/seed-kustomize")
	out := renderDir(t, &Renderer{roots: []rootDir{root}}, dir)
	if len(out.Errors) > 0 {
		t.Fatal(out.Errors)
	}
	stages := byKind(out.Objects, "Stage")
	if len(stages) != 2 {
		t.Fatalf("stages %+v", stages)
	}
	lines := map[string]int{"dev": 18, "qa": 56}
	for _, s := range stages {
		if s.Path != seed+"/seed-kustomize/base/kargo.yaml" || s.Line != lines[s.Name] || s.RenderedBy != "kustomize "+dir {
			t.Errorf("stage %s at %s:%d by %q", s.Name, s.Path, s.Line, s.RenderedBy)
		}
		if got := field(s, "spec", "promotionTemplate", "spec", "steps", "4", "config", "apps", "0", "sources", "0", "desiredRevision"); got != "${{ outputs.push.commit }}" {
			t.Errorf("the patch was not applied to %s: %q", s.Name, got)
		}
		if field(s, "metadata", "annotations", originAnnotation) != "" {
			t.Errorf("origin annotation left on %s", s.Name)
		}
	}
	var read []string
	for _, p := range out.Read {
		read = append(read, filepath.Base(filepath.Dir(p))+"/"+filepath.Base(p))
	}
	for _, want := range []string{"base/kustomization.yaml", "base/kargo.yaml", "base/argocd.yaml", "overlay/kustomization.yaml"} {
		if !slices.Contains(read, want) {
			t.Errorf("read %v, missing %s", read, want)
		}
	}
	if slices.Contains(read, "overlay/extra.yaml") {
		t.Errorf("read a file the kustomization does not list")
	}
}

func TestKustomizeRefusals(t *testing.T) {
	race.Sequential(t)
	for name, c := range map[string]struct {
		files map[string]string
		want  string
		line  int
	}{
		"remote base": {map[string]string{
			"kustomization.yaml": "resources:\n- stage.yaml\n- github.com/acme/deploy//kargo?ref=main\n",
			"stage.yaml":         "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		}, `remote base "github.com/acme/deploy//kargo?ref=main"`, 3},
		"remote https base": {map[string]string{
			"kustomization.yaml": "resources:\n- https://example.com/acme/deploy.git\n",
		}, "remote base", 2},
		"remote base of a base": {map[string]string{
			"kustomization.yaml":      "resources:\n- base\n",
			"base/kustomization.yaml": "resources:\n- git@github.com:acme/deploy.git\n",
		}, "remote base", 2},
		"remote patch": {map[string]string{
			"kustomization.yaml": "patches:\n- path: https://example.com/patch.yaml\n",
		}, `remote reference "https://example.com/patch.yaml"`, 2},
		"helm charts": {map[string]string{
			"kustomization.yaml": "helmCharts:\n- name: x\n  repo: https://charts.example.com\n",
		}, "helm program", 1},
		"exec function": {map[string]string{
			"kustomization.yaml": "transformers:\n- fn.yaml\n",
			"fn.yaml":            "apiVersion: example.com/v1\nkind: Fn\nmetadata:\n  name: f\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: /bin/sh\n",
		}, "kustomize:", 0},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, dir, c.files)
			out := renderDir(t, &Renderer{}, dir)
			e := wantError(t, out, "", c.want)
			if e.Line != c.line {
				t.Errorf("line %d, want %d (%s)", e.Line, c.line, e.Message)
			}
		})
	}
}

func TestKustomizeConfinement(t *testing.T) {
	parent := t.TempDir()
	write(t, parent, map[string]string{
		"base/kustomization.yaml":    "resources:\n- cm.yaml\n",
		"base/cm.yaml":               "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n",
		"overlay/kustomization.yaml": "resources:\n- ../base\n",
	})
	// Only the overlay was given: its base is outside.
	out := renderDir(t, &Renderer{}, filepath.Join(parent, "overlay"))
	wantError(t, out, "", "outside the paths given")

	// A symbolic link to a file outside the root.
	outside := t.TempDir()
	write(t, outside, map[string]string{"cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: secret}\n"})
	dir := t.TempDir()
	write(t, dir, map[string]string{"kustomization.yaml": "resources:\n- link.yaml\n"})
	if err := os.Symlink(filepath.Join(outside, "cm.yaml"), filepath.Join(dir, "link.yaml")); err != nil {
		t.Skip(err)
	}
	out = renderDir(t, &Renderer{}, dir)
	wantError(t, out, "", "outside the paths given")
	if len(out.Objects) != 0 {
		t.Errorf("read through a link leaving the root: %+v", out.Objects)
	}
}

// A kustomization that reads one base through exponentially many paths runs
// out of its read budget instead of the machine's memory.
func TestKustomizeReadBudget(t *testing.T) {
	race.Sequential(t)
	dir := t.TempDir()
	files := map[string]string{
		"l0/kustomization.yaml": "resources:\n- cm.yaml\n",
		"l0/cm.yaml":            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cm}\ndata: {x: \"" + strings.Repeat("x", 100<<10) + "\"}\n",
	}
	for i := 1; i <= 12; i++ {
		files[fmt.Sprintf("l%d/kustomization.yaml", i)] = "resources:\n- a\n- b\n"
		for _, ab := range []string{"a", "b"} {
			files[fmt.Sprintf("l%d/%s/kustomization.yaml", i, ab)] = fmt.Sprintf("namePrefix: %s-\nresources:\n- ../../l%d\n", ab, i-1)
		}
	}
	write(t, dir, files)
	root, _ := newRoot(dir)
	out := renderDir(t, &Renderer{MaxFileSize: 1 << 20, roots: []rootDir{root}}, filepath.Join(dir, "l12"))
	wantError(t, out, "", "more than 8388608 bytes")
}
