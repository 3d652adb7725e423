package evaluator_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/expr-lang/expr"
	"github.com/open-policy-agent/opa/v1/rego"
)

// kargoExpressions splits a string as Kargo's nextExpression does
// (pkg/expressions/json_templates.go, v1.11.2): from the first ${{ or ${% to
// the first closing delimiter of the same kind after it. unclosed reports an
// expression that is never closed.
func kargoExpressions(s string) (exprs []string, unclosed bool) {
	delims := [][2]string{{"${{", "}}"}, {"${%", "%}"}}
	for {
		start, which := -1, 0
		for i, d := range delims {
			if j := strings.Index(s, d[0]); j >= 0 && (start < 0 || j < start) {
				start, which = j, i
			}
		}
		if start < 0 {
			return exprs, false
		}
		rest := s[start+len(delims[which][0]):]
		end := strings.Index(rest, delims[which][1])
		if end < 0 {
			return exprs, true
		}
		exprs = append(exprs, rest[:end])
		s = rest[end+len(delims[which][1]):]
	}
}

// Every expression the policies say Kargo cannot parse fails to compile in
// expr-lang, the version Kargo v1.11.2 requires (go.mod), and every unclosed
// one is one Kargo's own split reports: the check never judges an expression
// that could work. Expressions that fail in other ways may go unreported.
func TestExpressionProblemsFailInExprLang(t *testing.T) {
	cases := []string{
		"${{ outputs.push.commit }}", `${{ imageFrom("ghcr.io/acme/app").Tag }}`, "env/${{ ctx.stage }}",
		"${{ vars.a }}-${{ vars.b }}", `${{ "}" + 'a(' }}`, "${{ a[0] }}", "${{ map(x, {a: #}) }}",
		"${{ a // c ( }}", "${{ a /* ' */ }}", "${{ ((((((((((a)))))))))) }}", "${{ ((((((((((a))))))))) }}",
		"${{ outputs.push.commit", "${{ }}", "a${{   }}b", `${{ imageFrom("ghcr.io/acme/app).Tag }}`,
		"${{ imageFrom('x'.Tag }}", "${{ a] }}", "${{ vars.a }} and ${{ vars.b", "${{ {a: {b: 1}} }}",
		"${% f(a %}", "${% ok %}", "${{ `raw ( string` }}", "${{ `unterminated }}", `${{ "a\"b" }}`,
		`${{ 'it\'s' }}`, "${{ [1, 2 }}", "${{ (1 + 2)) }}", "${{ f(a)[0]. }}", "${{ a ? b : c }}",
		"${{\n  quote(vars.x)\n}}", "${{ {\"a\": [1, {\"b\": (2)}]} }}", "text ${ not } one", "${{}}",
		"${{ \"\\\\\" }}", "${{ '\\\\' + ')' }}", "${{ a }} ${% b( %}", "${% %}",
		"${{ 1 + }}", "${{ a == }}", "${{ x and }}", "${{ * 2 }}", "${{ && x }}", "${{ vars.x ?? }}", "${{ a | }}",
		"${{ x not }}", "${{ in [1] }}", "${{ -1 }}", "${{ !x }}", "${{ not x }}", "${{ +1 }}", "${{ a.in }}",
		"${{ x in [1] }}", "${{ a ?? b }}", "${{ a?.b }}", "${{ a > b }}", "${{ 'a +' }}", "${{ a }}-${{ b or }}",
		"${{ x not in [1] }}", "${{ a // b + \n }}",
	}
	rs, err := rego.New(
		rego.Compiler(compiledPolicies(t)),
		rego.Query(`x := [data.lib.flipflop.expr_syntax.problems(s) | some s in input]`),
		rego.Input(cases),
	).Eval(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all := rs[0].Bindings["x"].([]any)
	flagged := 0
	for i, c := range cases {
		exprs, unclosed := kargoExpressions(c)
		for _, p := range all[i].([]any) {
			p := p.(map[string]any)
			flagged++
			if p["reason"] == "unclosed" {
				if !unclosed {
					t.Errorf("%q: reported unclosed, Kargo's split closes it", c)
				}
				continue
			}
			body := p["expression"].(string)
			found := false
			for _, e := range exprs {
				found = found || e == body
			}
			if !found {
				t.Errorf("%q: reported expression %q is none of Kargo's %q", c, body, exprs)
			}
			if _, err := expr.Compile(body); err == nil {
				t.Errorf("%q: reported %s, but expr-lang compiles %q", c, p["reason"], body)
			}
		}
		if unclosed && !strings.Contains(fmt.Sprint(all[i]), "unclosed") {
			t.Errorf("%q: Kargo's split finds an unclosed expression, not reported", c)
		}
	}
	// The operators left without an operand are reported as such.
	for _, c := range []string{"${{ 1 + }}", "${{ a == }}", "${{ x and }}", "${{ * 2 }}", "${{ && x }}", "${{ vars.x ?? }}", "${{ in [1] }}"} {
		i := slices.Index(cases, c)
		if got := fmt.Sprint(all[i]); !strings.Contains(got, "dangling-operator") {
			t.Errorf("%q: %s, want dangling-operator", c, got)
		}
	}
	if flagged < 10 {
		t.Errorf("only %d problems reported over %d cases: the check has gone quiet", flagged, len(cases))
	}
}
