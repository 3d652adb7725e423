package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/internal/race"
)

// The program docs/embedding.md shows builds, and renders as a program of its
// own (its binary the render worker, where evaluator/render's Example runs in
// a test binary): on evaluator/render's example estate, with the values file
// it reads from the working directory and its --set, the chart renders both
// Applications and the kustomization puts its Stages in their namespace, so
// the contradiction is found on rendered objects.
func TestEmbeddingDocProgram(t *testing.T) {
	race.Sequential(t) // builds and runs a program: nothing concurrent here
	doc, err := os.ReadFile("../docs/embedding.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```go\n(package main\n.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/embedding.md shows no Go program (a ```go block starting with package main)")
	}
	repo, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	src := filepath.Join(tmp, "main.go")
	if err := os.WriteFile(src, m[1], 0o644); err != nil {
		t.Fatal(err)
	}
	// The program is built as a package of this module that exists only in
	// the overlay: nothing is written into the source tree.
	overlay, err := json.Marshal(map[string]map[string]string{"Replace": {filepath.Join(repo, "hack", "embeddoc", "main.go"): src}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "overlay.json"), overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(tmp, "embeddoc")
	build := exec.Command("go", "build", "-overlay", filepath.Join(tmp, "overlay.json"), "-o", bin, "./hack/embeddoc")
	build.Dir = repo
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the program of docs/embedding.md does not build: %v\n%s", err, out)
	}

	work := filepath.Join(tmp, "work")
	if err := os.CopyFS(filepath.Join(work, "estate"), os.DirFS("../evaluator/render/testdata/estate")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "prod-values.yaml"), []byte("stages: [dev, qa]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := exec.Command(bin, "estate")
	run.Dir = work
	out, err := run.Output()
	if err != nil {
		t.Fatalf("the program failed: %v\n%s", err, out)
	}
	var report struct {
		Findings []struct {
			Rule      string `json:"rule"`
			Resources []struct {
				Kind       string `json:"kind"`
				Namespace  string `json:"namespace"`
				RenderedBy string `json:"renderedBy"`
			} `json:"resources"`
		} `json:"findings"`
		Errors   []json.RawMessage `json:"errors"`
		Rendered []struct {
			Path    string   `json:"path"`
			Mode    string   `json:"mode"`
			Objects int      `json:"objects"`
			Values  []string `json:"values"`
		} `json:"rendered"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("the program's output is not a report: %v\n%s", err, out)
	}
	if len(report.Errors) > 0 {
		t.Errorf("input errors: %s", report.Errors)
	}
	if len(report.Rendered) != 2 {
		t.Fatalf("rendered %+v, want the chart and the kustomization", report.Rendered)
	}
	chart, kust := report.Rendered[0], report.Rendered[1]
	if chart.Mode != "helm" || chart.Path != "estate/apps" || chart.Objects != 2 ||
		!slices.Equal(chart.Values, []string{"values.yaml", "prod-values.yaml", "--set image.tag=v1.2.3"}) {
		t.Errorf("chart rendered %+v, want estate/apps with its values.yaml, prod-values.yaml and the --set: 2 Applications", chart)
	}
	if kust.Mode != "kustomize" || kust.Path != "estate/stages" || kust.Objects != 2 {
		t.Errorf("kustomization rendered %+v, want estate/stages: 2 Stages", kust)
	}
	found := false
	for _, f := range report.Findings {
		if f.Rule != "shared-branch-contradiction" {
			continue
		}
		found = true
		for _, r := range f.Resources {
			if r.Kind == "Stage" && (r.Namespace != "acme" || !strings.HasPrefix(r.RenderedBy, "kustomize ")) {
				t.Errorf("Stage %+v: want namespace acme, rendered by kustomize", r)
			}
		}
	}
	if !found {
		t.Errorf("no shared-branch-contradiction among the findings:\n%s", out)
	}
}
