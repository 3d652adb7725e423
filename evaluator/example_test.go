package evaluator_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// An embedding program loads manifests and evaluates them with the bundle
// compiled into the evaluator.
func Example() {
	ctx := context.Background()
	ev, err := evaluator.New(ctx, evaluator.Settings{})
	if err != nil {
		panic(err)
	}
	objs, errs := evaluator.LoadBytes("estate.yaml", []byte(strings.TrimSpace(`
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: dev, namespace: argocd, annotations: {kargo.akuity.io/authorized-stage: "acme:dev"}}
spec:
  source: {repoURL: https://git.example/acme/deploy.git, targetRevision: main}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: qa, namespace: argocd, annotations: {kargo.akuity.io/authorized-stage: "acme:qa"}}
spec:
  source: {repoURL: https://git.example/acme/deploy.git, targetRevision: main}
---
apiVersion: kargo.akuity.io/v1alpha1
kind: Stage
metadata: {name: dev, namespace: acme}
spec:
  promotionTemplate:
    spec:
      steps:
      - uses: argocd-update
        config:
          apps:
          - name: dev
            sources:
            - {repoURL: https://git.example/acme/deploy.git, desiredRevision: "${{ outputs.push.commit }}"}
---
apiVersion: kargo.akuity.io/v1alpha1
kind: Stage
metadata: {name: qa, namespace: acme}
spec:
  promotionTemplate:
    spec:
      steps:
      - uses: argocd-update
        config:
          apps:
          - name: qa
            sources:
            - {repoURL: https://git.example/acme/deploy.git, desiredRevision: "${{ outputs.push.commit }}"}
`)))
	if len(errs) > 0 {
		panic(errs)
	}
	report, err := ev.Evaluate(ctx, objs)
	if err != nil {
		panic(err)
	}
	for _, f := range report.Findings {
		fmt.Println(f.Severity, f.Rule, f.Details["pointer"])
		for _, r := range f.Resources {
			fmt.Printf("  %s %s/%s at %s:%d\n", r.Kind, r.Namespace, r.Name, r.File, r.Line)
		}
	}
	// Output:
	// error shared-branch-contradiction git.example/acme/deploy @ main
	//   Stage acme/dev at estate.yaml:13
	//   Stage acme/qa at estate.yaml:27
	//   Application argocd/dev at estate.yaml:1
	//   Application argocd/qa at estate.yaml:7
}
