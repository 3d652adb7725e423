package evaluator_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
)

// An embedding program loads manifests and evaluates them with the bundle
// compiled into the evaluator.
func Example() {
	ctx := context.Background()
	ev, err := evaluator.New(ctx, evaluator.Settings{})
	if err != nil {
		panic(err)
	}
	objs, errs := loader.LoadBytes("estate.yaml", []byte(strings.TrimSpace(`
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: dev, namespace: argocd, annotations: {kargo.akuity.io/authorized-stage: "acme:dev"}}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc}
  source: {repoURL: https://git.example/acme/deploy.git, targetRevision: main}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: qa, namespace: argocd, annotations: {kargo.akuity.io/authorized-stage: "acme:qa"}}
spec:
  project: default
  destination: {server: https://kubernetes.default.svc}
  source: {repoURL: https://git.example/acme/deploy.git, targetRevision: main}
---
apiVersion: kargo.akuity.io/v1alpha1
kind: Stage
metadata: {name: dev, namespace: acme}
spec:
  requestedFreight: [{origin: {kind: Warehouse, name: app}, sources: {direct: true}}]
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
  requestedFreight: [{origin: {kind: Warehouse, name: app}, sources: {direct: true}}]
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
	//   Stage acme/dev at estate.yaml:17
	//   Stage acme/qa at estate.yaml:32
	//   Application argocd/dev at estate.yaml:1
	//   Application argocd/qa at estate.yaml:9
}

// A program with objects already in memory (decoded JSON, or the Object of an
// unstructured.Unstructured from client-go) builds Objects with NewObject and
// reads findings and the model, with where each fact is written, in one
// evaluation.
func ExampleEvaluator_Analyze() {
	ctx := context.Background()
	ev, err := evaluator.New(ctx, evaluator.Settings{})
	if err != nil {
		panic(err)
	}
	app := func(name string) map[string]any {
		return map[string]any{
			"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
			"metadata": map[string]any{"name": name, "namespace": "argocd", "annotations": map[string]any{
				"kargo.akuity.io/authorized-stage": "acme:" + name,
			}},
			"spec": map[string]any{"source": map[string]any{
				"repoURL": "https://git.example/acme/deploy.git", "targetRevision": "main",
			}},
		}
	}
	stage := func(name string) map[string]any {
		return map[string]any{
			"apiVersion": "kargo.akuity.io/v1alpha1", "kind": "Stage",
			"metadata": map[string]any{"name": name, "namespace": "acme"},
			"spec": map[string]any{"promotionTemplate": map[string]any{"spec": map[string]any{"steps": []any{
				map[string]any{"uses": "argocd-update", "config": map[string]any{"apps": []any{map[string]any{
					"name": name, "sources": []any{map[string]any{
						"repoURL": "https://git.example/acme/deploy.git", "desiredRevision": "${{ commitFrom(vars.repo).ID }}",
					}},
				}}}},
			}}}},
		}
	}
	var objs []evaluator.Object
	for _, o := range []map[string]any{app("dev"), app("qa"), stage("dev"), stage("qa")} {
		obj, err := evaluator.NewObject("cluster", 0, o)
		if err != nil {
			panic(err)
		}
		objs = append(objs, obj)
	}
	report, model, err := ev.Analyze(ctx, objs)
	if err != nil {
		panic(err)
	}
	for _, f := range report.Findings {
		if f.Severity != evaluator.SeverityError {
			continue
		}
		fmt.Println(f.Rule, f.PointerText)
		for _, p := range model.PinsOf(f) {
			fmt.Printf("  %s pins %s at %s %s\n", p.Stage, p.Application, p.Entry.Ref.Kind, p.Entry.Path)
		}
	}
	// Output:
	// shared-branch-contradiction git.example/acme/deploy @ main
	//   acme/dev pins argocd/dev at Stage /spec/promotionTemplate/spec/steps/0/config/apps/0/sources/0
	//   acme/qa pins argocd/qa at Stage /spec/promotionTemplate/spec/steps/0/config/apps/0/sources/0
}
