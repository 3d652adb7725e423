package evaluator_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
)

var (
	fuzzOnce  sync.Once
	fuzzQuery rego.PreparedEvalQuery
	fuzzEval  *evaluator.Evaluator
	fuzzErr   error
)

// fuzzSetup prepares, once, a query over the policies' pure functions and a
// strict evaluator.
func fuzzSetup(t *testing.T) {
	fuzzOnce.Do(func() {
		c, err := hostPolicies()
		if err != nil {
			fuzzErr = err
			return
		}
		opts := []func(*rego.Rego){
			rego.Compiler(c),
			rego.Query(`id := data.lib.flipflop.repo.id(input.s)
				class := data.lib.flipflop.revision.classify(input.s)
				chart := data.lib.flipflop.revision.for_chart(class)
				sub := data.lib.flipflop.expr.subst(input.s, {"ctx": {"stage": "dev", "project": "p"}, "vars": {"a": input.s, "b": "x"}})`),
			rego.StrictBuiltinErrors(true),
		}
		fuzzQuery, fuzzErr = rego.New(opts...).PrepareForEval(context.Background())
		if fuzzErr == nil {
			fuzzEval, fuzzErr = evaluator.New(context.Background(), evaluator.Settings{}, evaluator.StrictBuiltinErrors())
		}
	})
	if fuzzErr != nil {
		t.Fatal(fuzzErr)
	}
}

// FuzzPureFunctions feeds arbitrary strings to repository identity, revision
// classification and expression substitution: they must never error, always be
// defined, agree with the Go RepoID, and substitution must only ever replace
// expressions it knows.
func FuzzPureFunctions(f *testing.F) {
	for _, s := range []string{
		"", "HEAD", "main", "refs/heads/env/dev", "v1.2.3", ">=1.0.0 <2", "0123456789abcdef0123456789abcdef01234567",
		"git@github.com:acme/deploy.git", "ssh://git@h:22/a/b", "https://u:p@h/a/b.git/", "${{ vars.a }}", "env/${{ ctx.stage }}",
		"${{ vars['b'] }}-${{ outputs.x.commit }}", "{{.path.basename}}", "::::", "@@@", "${{", "}}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fuzzSetup(t)
		in, _ := ast.InterfaceToValue(map[string]any{"s": s})
		rs, err := fuzzQuery.Eval(context.Background(), rego.EvalParsedInput(in))
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		if len(rs) != 1 {
			t.Fatalf("%q: undefined", s)
		}
		b := rs[0].Bindings
		if id, _ := b["id"].(string); id != loader.RepoID(s) {
			t.Errorf("repo.id(%q) = %q, Go RepoID = %q", s, id, loader.RepoID(s))
		}
		class, _ := b["class"].(map[string]any)
		switch class["kind"] {
		case "default", "branch", "tag", "sha", "semver", "unknown":
		default:
			t.Errorf("classify(%q) = %v", s, class)
		}
		sub, ok := b["sub"].(string)
		if !ok {
			t.Fatalf("subst(%q) = %v", s, b["sub"])
		}
		if !strings.Contains(s, "${{") && sub != s {
			t.Errorf("subst changed a string without expressions: %q -> %q", s, sub)
		}
	})
}

// FuzzCheck runs arbitrary bytes through the whole path: load, evaluate (with
// built-in errors fatal), summarise. Nothing may panic or fail.
func FuzzCheck(f *testing.F) {
	f.Add([]byte("apiVersion: kargo.akuity.io/v1alpha1\nkind: Stage\nmetadata: {name: a, namespace: b}\nspec: {promotionTemplate: {spec: {steps: [{uses: argocd-update, config: {apps: [{name: x, sources: [{repoURL: r, desiredRevision: d}]}]}}]}}}\n"))
	f.Add([]byte("apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata: {name: s}\nspec: {generators: [{list: {elements: [{a: 1}]}}], template: {metadata: {name: '{{a}}'}, spec: {source: {repoURL: r}}}}\n"))
	f.Add([]byte("kind: List\nitems: [{kind: Application, metadata: {name: a}, spec: {source: 5}}]\n"))
	f.Add([]byte("{]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fuzzSetup(t)
		objs, _ := loader.LoadBytes("fuzz.yaml", data)
		if _, err := fuzzEval.Evaluate(context.Background(), objs); err != nil {
			t.Fatalf("evaluate: %v\ninput: %q", err, data)
		}
		if _, err := fuzzEval.Model(context.Background(), objs); err != nil {
			t.Fatalf("model: %v\ninput: %q", err, data)
		}
	})
}
