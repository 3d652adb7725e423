package render_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/evaluator/render"
)

// A program checks an estate written as a Helm chart (the Argo CD
// Applications) and a kustomization (the Kargo Stages, in the namespace the
// kustomization sets): a Renderer confined to the paths given renders both,
// with a values file for the chart, and the evaluator checks what they render
// to. Without the Renderer, the Loader would read the chart's templates as
// plain YAML (and fail on them), and the Stages outside any namespace.
func Example() {
	paths := []string{"testdata/estate"}
	r := render.New(paths...)
	values, err := os.ReadFile("testdata/with-qa.yaml")
	if err != nil {
		panic(err)
	}
	r.Helm.ValuesFiles = []render.ValuesFile{{Name: "with-qa.yaml", Data: values}}

	l := &loader.Loader{Renderer: r}
	loaded := l.LoadAll(paths)
	for _, e := range loaded.Errors {
		fmt.Println("cannot read:", e)
	}
	for _, root := range loaded.Rendered {
		fmt.Printf("%s %s: %d objects", root.Mode, root.Path, root.Objects)
		if root.Chart != "" {
			fmt.Printf(" (chart %s, values %s)", root.Chart, strings.Join(root.Values, ", "))
		}
		fmt.Println()
	}
	for _, o := range loaded.Objects {
		fmt.Printf("%s %s/%s at %s:%d (%s)\n", o.Kind, o.Namespace, o.Name, o.Path, o.Line, o.RenderedBy)
	}

	ctx := context.Background()
	ev, err := evaluator.New(ctx, evaluator.Settings{})
	if err != nil {
		panic(err)
	}
	report, err := ev.Evaluate(ctx, loaded.Objects)
	if err != nil {
		panic(err)
	}
	for _, f := range report.Findings {
		fmt.Println(f.Severity, f.Rule, f.PointerText, f.Stages)
	}
	// Output:
	// helm testdata/estate/apps: 2 objects (chart apps 0.1.0, values values.yaml, with-qa.yaml)
	// kustomize testdata/estate/stages: 2 objects
	// Application argocd/dev at testdata/estate/apps/templates/applications.yaml:3 (helm chart testdata/estate/apps)
	// Application argocd/qa at testdata/estate/apps/templates/applications.yaml:3 (helm chart testdata/estate/apps)
	// Stage acme/dev at testdata/estate/stages/stages.yaml:2 (kustomize testdata/estate/stages)
	// Stage acme/qa at testdata/estate/stages/stages.yaml:29 (kustomize testdata/estate/stages)
	// error shared-branch-contradiction github.com/acme/deploy @ main [acme/dev acme/qa]
	// warning shared-write-branch github.com/acme/deploy @ main [acme/dev acme/qa]
}
