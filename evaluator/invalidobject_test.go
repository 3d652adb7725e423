package evaluator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// mutationEstates are the estates the completeness test mutates: the
// examples and every rule's sample estates.
func mutationEstates(t *testing.T) []string {
	dirs, _ := filepath.Glob("../examples/*")
	samples, _ := filepath.Glob("../policies/rules/*/samples/*/*")
	return append(dirs, samples...)
}

// wrongValue is a value of another JSON type than v's.
func wrongValue(v any) any {
	switch v.(type) {
	case string:
		return 7.5
	case bool, float64, json.Number:
		return "x"
	case []any:
		return "x"
	case map[string]any:
		return []any{"x"}
	}
	return nil
}

// node is one value of an object, with its path as the rule renders it
// (spec.sources[0].repoURL) and the keys and indices that reach it.
type node struct {
	path  string
	keys  []any
	value any
}

func child(n node, k any, v any) node {
	ks := append(slices.Clone(n.keys), k)
	switch k := k.(type) {
	case int:
		return node{fmt.Sprintf("%s[%d]", n.path, k), ks, v}
	default:
		if n.path == "" {
			return node{k.(string), ks, v}
		}
		return node{n.path + "." + k.(string), ks, v}
	}
}

func children(n node) []node {
	var out []node
	switch x := n.value.(type) {
	case map[string]any:
		for k, v := range x {
			out = append(out, child(n, k, v))
		}
	case []any:
		for i, v := range x {
			out = append(out, child(n, i, v))
		}
	}
	return out
}

// matchKeys reports whether keys fit a table path ("[]" an index, "*" a key).
func matchKeys(pattern []string, keys []any) bool {
	if len(pattern) != len(keys) {
		return false
	}
	for i, p := range pattern {
		switch k := keys[i].(type) {
		case int:
			if p != "[]" {
				return false
			}
		case string:
			if p != "*" && p != k {
				return false
			}
		}
	}
	return true
}

func valueAt(doc any, keys []any) any {
	for _, k := range keys {
		switch x := doc.(type) {
		case map[string]any:
			doc = x[k.(string)]
		case []any:
			doc = x[k.(int)]
		default:
			return nil
		}
	}
	return doc
}

func setAt(doc any, keys []any, v any) any {
	if len(keys) == 0 {
		return v
	}
	switch x := doc.(type) {
	case map[string]any:
		c := make(map[string]any, len(x))
		for k, e := range x {
			c[k] = e
		}
		c[keys[0].(string)] = setAt(x[keys[0].(string)], keys[1:], v)
		return c
	case []any:
		c := slices.Clone(x)
		c[keys[0].(int)] = setAt(x[keys[0].(int)], keys[1:], v)
		return c
	}
	return doc
}

// leaves are the values of an object that hold no other value, but its
// identity (apiVersion, kind), its live state (status) and its waivers
// (invalid-waiver checks those).
func leaves(doc any) []node {
	var out []node
	var walk func(n node)
	walk = func(n node) {
		for _, c := range children(n) {
			switch p := c.path; {
			case p == "apiVersion" || p == "kind" || p == "status",
				p == "metadata.annotations.flipflop.dev/ignore", p == "metadata.annotations.flipflop.dev/ignore-expires":
			case isListParameter(c.keys):
				// A list generator's parameters: any JSON value is one (the
				// CRD leaves them open).
			case len(children(c)) == 0:
				out = append(out, c)
			default:
				walk(c)
			}
		}
	}
	walk(node{value: doc})
	return out
}

// isListParameter reports a value inside a list generator's element.
func isListParameter(keys []any) bool {
	for i := 0; i+2 < len(keys); i++ {
		if keys[i] == "list" && keys[i+1] == "elements" {
			return true
		}
	}
	return false
}

// mutate replaces the values at ns in object i of objs by values of other types.
func mutate(t *testing.T, objs []evaluator.Object, i int, doc any, ns []node) []evaluator.Object {
	t.Helper()
	for _, n := range ns {
		doc = setAt(doc, n.keys, wrongValue(n.value))
	}
	v, err := ast.InterfaceToValue(doc)
	if err != nil {
		t.Fatal(err)
	}
	out := slices.Clone(objs)
	out[i].Value = v
	return out
}

// outcome is what an evaluation says: the findings of every rule but the
// validation's, and the fields invalid-object and invalid-step-config name
// (as paths from the object's root).
type outcome struct {
	others  []string
	flagged []string
}

func evaluate(t *testing.T, ev *evaluator.Evaluator, objs []evaluator.Object) outcome {
	t.Helper()
	r, err := ev.Evaluate(context.Background(), objs)
	if err != nil {
		t.Fatal(err)
	}
	var out outcome
	for _, f := range r.Findings {
		switch {
		case f.Rule == "invalid-object":
			out.flagged = append(out.flagged, f.Resources[0].Kind+" "+f.Details["field"].(string))
			continue
		case f.Rule == "invalid-step-config" && f.Details["kind"] == "schema":
			step := strings.TrimPrefix(strings.ReplaceAll(f.Details["path"].(string), "/", "."), ".")
			for _, p := range f.Details["problems"].([]any) {
				field := p.(map[string]any)["field"].(string)
				out.flagged = append(out.flagged, f.Resources[0].Kind+" "+dottedStep(step)+".config."+field)
			}
			continue
		case f.Rule == "invalid-step-config" && f.Details["kind"] == "expression":
			// The expression check reads every string of a step, whatever
			// field holds it, and a value of another type holds no
			// expression: Kargo evaluates strings only.
			continue
		}
		b, _ := json.Marshal(f.Resources)
		out.others = append(out.others, f.Rule+" "+f.Key+" "+string(b)+" "+f.Message)
	}
	slices.Sort(out.others)
	return out
}

// dottedStep writes a step's pointer (spec.steps.3) as findings name fields
// (spec.steps[3]).
func dottedStep(p string) string {
	parts := strings.Split(p, ".")
	i := len(parts) - 1
	return strings.Join(parts[:i], ".") + "[" + parts[i] + "]"
}

// flagged reports whether the validation names n's path or one above it.
func (o outcome) flaggedAt(prefix string, n node) bool {
	for _, f := range o.flagged {
		if f == prefix+n.path || strings.HasPrefix(prefix+n.path, f+".") || strings.HasPrefix(prefix+n.path, f+"[") {
			return true
		}
	}
	return false
}

// No wrong type where the model reads goes unnoticed. In every example and
// sample estate, for each object the rules read, every value is replaced by
// a value of another JSON type, all at once: those the validation
// (invalid-object, invalid-step-config) names are read around; what the
// other rules report must not change for the others (the values the schemas
// leave open: a step's config of a step Kargo does not ship, a list
// generator's parameters). When it does, the culprits are found by halving
// the set, and each is a field the model reads that no schema checks.
func TestValidationCoversEveryReadField(t *testing.T) {
	t.Parallel() // shares nothing mutable, times nothing: beside the package's other long tests
	race.Sequential(t)
	ev, err := evaluator.New(context.Background(), evaluator.Settings{DefaultBranch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	evaluations := 0
	for _, dir := range mutationEstates(t) {
		objs, errs := (&loader.Loader{}).Load([]string{dir})
		if len(errs) > 0 {
			t.Fatalf("%s: %v", dir, errs)
		}
		base := evaluate(t, ev, objs)
		evaluations++
		for i, o := range objs {
			doc, err := ast.JSON(o.Value)
			if err != nil {
				t.Fatal(err)
			}
			prefix := o.Kind + " "
			all := leaves(doc)
			// A step's uses decides which schema its config is read with:
			// mutate it apart from the rest.
			uses := slices.DeleteFunc(slices.Clone(all), func(n node) bool { return !strings.HasSuffix(n.path, ".uses") })
			rest := slices.DeleteFunc(slices.Clone(all), func(n node) bool { return strings.HasSuffix(n.path, ".uses") })
			for _, group := range [][]node{uses, rest} {
				if len(group) == 0 {
					continue
				}
				got := evaluate(t, ev, mutate(t, objs, i, doc, group))
				evaluations++
				unflagged := slices.DeleteFunc(slices.Clone(group), func(n node) bool { return got.flaggedAt(prefix, n) })
				var culprits func(ns []node)
				culprits = func(ns []node) {
					got := evaluate(t, ev, mutate(t, objs, i, doc, ns))
					evaluations++
					if slices.Equal(got.others, base.others) {
						return
					}
					if len(ns) == 1 {
						t.Errorf("%s: %s %s/%s: %s is read (another type changes the findings) but no schema checks it",
							dir, o.Kind, o.Namespace, o.Name, ns[0].path)
						return
					}
					culprits(ns[:len(ns)/2])
					culprits(ns[len(ns)/2:])
				}
				if len(unflagged) > 0 {
					culprits(unflagged)
				}
			}
		}
	}
	t.Logf("%d evaluations", evaluations)
}

// The wrong types of the issue (an unquoted targetRevision: 1.0, repoURL: 5,
// metadata.name: 7, sources: [5]) are invalid-object warnings, mistyped step
// config fields invalid-step-config ones, and beside examples/contradiction
// the contradiction is still reported.
func TestWrongTypesBesideARealEstate(t *testing.T) {
	race.Sequential(t)
	report := check(t, evaluator.Settings{}, "../examples/contradiction", "../testdata/hostile/wrong-types.yaml")
	var got []string
	contradiction := false
	for _, f := range report.Findings {
		switch f.Rule {
		case "invalid-object":
			got = append(got, f.Resources[0].Name+" "+f.Details["field"].(string)+" "+f.Details["got"].(string))
		case "invalid-step-config":
			for _, p := range f.Details["problems"].([]any) {
				// (a oneOf of git-push's also fails, which its type decides)
				if p := p.(map[string]any); p["problem"] == "type" {
					got = append(got, f.Resources[0].Name+" "+f.Details["path"].(string)+" "+p["field"].(string)+" "+p["got"].(string))
				}
			}
		case "shared-branch-contradiction":
			contradiction = slices.Contains(names(f), "Stage acme/dev") && slices.Contains(names(f), "Stage acme/qa")
		}
	}
	slices.Sort(got)
	want := []string{
		" metadata.name number",
		"float-revision spec.source.targetRevision number",
		"number-sources spec.sources[0] number",
		"number-url spec.source.repoURL number",
		"typed-wrong /spec/promotionTemplate/spec/steps/0 generateTargetBranch string",
		"typed-wrong /spec/promotionTemplate/spec/steps/1 apps[0].sources[0].desiredRevision number",
		"typed-wrong /spec/promotionTemplate/spec/steps/1 apps[0].sources[0].updateTargetRevision string",
	}
	if !slices.Equal(got, want) {
		t.Errorf("validation:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if !contradiction {
		t.Error("the contradiction of examples/contradiction is not reported beside the wrong types")
	}
}

// A branch name with a look-alike character beside examples/contradiction: a
// confusable-branch warning says which name it looks like, and the
// contradiction on main is still reported.
func TestConfusableBranchBesideARealEstate(t *testing.T) {
	race.Sequential(t)
	report := check(t, evaluator.Settings{}, "../examples/contradiction", "../testdata/hostile/confusable-branch.yaml")
	var hint, contradiction bool
	for _, f := range report.Findings {
		switch f.Rule {
		case "confusable-branch":
			hint = strings.Contains(f.Message, `Did you mean "main"?`) && slices.Contains(names(f), "Stage acme/lookalike")
		case "shared-branch-contradiction":
			contradiction = slices.Contains(names(f), "Stage acme/dev") && slices.Contains(names(f), "Stage acme/qa") &&
				!slices.Contains(names(f), "Stage acme/lookalike")
		}
	}
	if !hint || !contradiction {
		t.Errorf("hint %v, contradiction %v: %+v", hint, contradiction, report.Findings)
	}
}
