package loader_test

import (
	"context"
	"fmt"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
)

// A program reads a directory of manifests, keeping the file and line of each
// object, and evaluates them; whatever could not be read is reported beside the
// findings, never instead of them.
func ExampleLoader_Load() {
	objs, loadErrs := (&loader.Loader{}).Load([]string{"../../examples/contradiction"})
	for _, e := range loadErrs {
		fmt.Println("cannot read:", e)
	}
	for _, o := range objs {
		fmt.Printf("%s %s/%s at %s:%d\n", o.Kind, o.Namespace, o.Name, o.Path, o.Line)
	}

	ctx := context.Background()
	ev, err := evaluator.New(ctx, evaluator.Settings{})
	if err != nil {
		panic(err)
	}
	report, err := ev.Evaluate(ctx, objs)
	if err != nil {
		panic(err)
	}
	for _, f := range report.Findings {
		fmt.Println(f.Severity, f.Rule, f.PointerText)
	}
	// Output:
	// Application argocd/dev at ../../examples/contradiction/argocd.yaml:2
	// Application argocd/qa at ../../examples/contradiction/argocd.yaml:21
	// Warehouse acme/app at ../../examples/contradiction/kargo.yaml:6
	// Stage acme/dev at ../../examples/contradiction/kargo.yaml:18
	// Stage acme/qa at ../../examples/contradiction/kargo.yaml:59
	// error shared-branch-contradiction github.com/acme/deploy @ main
	// warning shared-write-branch github.com/acme/deploy @ main
}
