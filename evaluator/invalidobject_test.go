package evaluator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"sigs.k8s.io/yaml"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/race"
	"github.com/flipflop-dev/flipflop/internal/upstream"
)

// fieldTables reads the invalid-object rule's tables: kind (or step) -> [[path, type]].
func fieldTables(t *testing.T) (fields, legacy, configs, legacyConfigs map[string][][2]any) {
	t.Helper()
	mods, err := evaluator.Modules()
	if err != nil {
		t.Fatal(err)
	}
	opts := []func(*rego.Rego){rego.Query(`r := data.lib.flipflop.rules.invalid_object; x := [r.fields, r.legacy_fields, r.config_fields, r.legacy_config_fields]`)}
	for _, m := range mods {
		opts = append(opts, rego.ParsedModule(m))
	}
	rs, err := rego.New(opts...).Eval(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(rs[0].Bindings["x"])
	var tables [4]map[string][][2]any
	if err := json.Unmarshal(raw, &tables); err != nil {
		t.Fatal(err)
	}
	return tables[0], tables[1], tables[2], tables[3]
}

func pathOf(v any) []string {
	var p []string
	for _, s := range v.([]any) {
		p = append(p, s.(string))
	}
	return p
}

// crdSchemas returns the v1alpha1 openAPIV3Schema of every kind of Kargo's
// and Argo CD's released CRDs.
func crdSchemas(t *testing.T) map[string]map[string]any {
	t.Helper()
	kargo, err := upstream.KargoCRDs()
	if err != nil {
		t.Skipf("Kargo's CRDs: %v", err)
	}
	argo, err := upstream.ArgoCDCRDs()
	if err != nil {
		t.Skipf("Argo CD's CRDs: %v", err)
	}
	out := map[string]map[string]any{}
	for _, f := range append(kargo, argo...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var crd struct {
			Spec struct {
				Names    struct{ Kind string }
				Versions []struct {
					Name   string
					Schema struct {
						OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
					}
				}
			}
		}
		if err := yaml.Unmarshal(b, &crd); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, v := range crd.Spec.Versions {
			if v.Name == "v1alpha1" {
				out[crd.Spec.Names.Kind] = v.Schema.OpenAPIV3Schema
			}
		}
	}
	return out
}

// objectMeta is the part of Kubernetes' ObjectMeta the model reads (CRDs
// leave metadata to the API server).
var objectMeta = map[string]any{"type": "object", "properties": map[string]any{
	"name":        map[string]any{"type": "string"},
	"namespace":   map[string]any{"type": "string"},
	"labels":      map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
	"annotations": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}},
}}

// stepSchemas resolves the $refs of Kargo's step config schemas.
type stepSchemas struct {
	dir   string
	files map[string]map[string]any
}

func (s *stepSchemas) file(t *testing.T, name string) map[string]any {
	t.Helper()
	if f, ok := s.files[name]; ok {
		return f
	}
	b, err := os.ReadFile(filepath.Join(s.dir, name))
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	s.files[name] = f
	return f
}

// deref follows a $ref ("file.json#/definitions/x" or "#/definitions/x").
func (s *stepSchemas) deref(t *testing.T, file string, node map[string]any) (string, map[string]any) {
	for {
		ref, ok := node["$ref"].(string)
		if !ok {
			return file, node
		}
		f, frag, _ := strings.Cut(ref, "#")
		if f != "" {
			file = f
		}
		n := s.file(t, file)
		for _, seg := range strings.Split(strings.TrimPrefix(frag, "/"), "/") {
			if seg != "" {
				n = n[seg].(map[string]any)
			}
		}
		node = n
	}
}

// schemaType returns the JSON type a schema gives the value at path, or ""
// when the schema does not say. resolve follows $refs (nil for CRDs).
func schemaType(t *testing.T, node map[string]any, path []string, resolve func(map[string]any) map[string]any) string {
	t.Helper()
	if resolve == nil {
		resolve = func(n map[string]any) map[string]any { return n }
	}
	node = resolve(node)
	for i, seg := range path {
		var next any
		switch seg {
		case "[]":
			next = node["items"]
		case "*":
			next = node["additionalProperties"]
		default:
			if i == 0 && seg == "metadata" && node["properties"] != nil && node["properties"].(map[string]any)["metadata"] != nil {
				next = objectMeta
			} else if props, ok := node["properties"].(map[string]any); ok && props[seg] != nil {
				next = props[seg]
			} else {
				next = node["additionalProperties"] // a key of a map
			}
		}
		if open, _ := node["x-kubernetes-preserve-unknown-fields"].(bool); open && node["properties"] == nil && node["items"] == nil {
			return "open" // the CRD leaves what is below to the controller
		}
		n, ok := next.(map[string]any)
		if !ok {
			return ""
		}
		node = resolve(n)
	}
	if open, _ := node["x-kubernetes-preserve-unknown-fields"].(bool); open && node["type"] == nil {
		return "open"
	}
	typ, _ := node["type"].(string)
	if typ == "integer" {
		typ = "number"
	}
	return typ
}

// Every field the invalid-object rule checks has the type Kargo's and Argo
// CD's released CRDs give it (metadata: Kubernetes' ObjectMeta), and every
// step config field the type of Kargo's step config schema; the legacy
// fields are the ones neither has any more.
func TestInvalidObjectFieldsMatchUpstreamSchemas(t *testing.T) {
	t.Parallel() // shares nothing mutable, times nothing: beside the package's other long tests
	race.Sequential(t)
	fields, legacy, configs, legacyConfigs := fieldTables(t)
	crds := crdSchemas(t)
	for kind, entries := range fields {
		schema, ok := crds[kind]
		if !ok {
			t.Errorf("no CRD for %s", kind)
			continue
		}
		for _, e := range entries {
			p := pathOf(e[0])
			got := schemaType(t, schema, p, nil)
			switch {
			case got == "open" && p[len(p)-1] == "config":
				// A step's config: its type is its step config schema's (checked below).
			case got == "open":
				// x-kubernetes-preserve-unknown-fields: the CRD leaves the value to
				// the controller, which needs the type the rule wants.
				t.Logf("%s %s: open in the CRD; the rule wants %s", kind, strings.Join(p, "."), e[1])
			case got != e[1]:
				t.Errorf("%s %s: the rule wants %s, the CRD says %q", kind, strings.Join(p, "."), e[1], got)
			}
		}
	}
	for kind, entries := range legacy {
		for _, e := range entries {
			p := pathOf(e[0])
			if got := schemaType(t, crds[kind], p, nil); got != "" {
				t.Errorf("legacy %s %s is in the CRD (%s): move it to the fields", kind, strings.Join(p, "."), got)
			}
		}
	}
	dir, err := upstream.KargoStepSchemaDir()
	if err != nil {
		t.Skipf("Kargo's step schemas: %v", err)
	}
	steps := &stepSchemas{dir: dir, files: map[string]map[string]any{}}
	for uses, entries := range configs {
		file := uses + "-config.json"
		root := steps.file(t, file)
		cur := file
		resolve := func(n map[string]any) map[string]any {
			f, r := steps.deref(t, cur, n)
			cur = f
			return r
		}
		for _, e := range entries {
			cur = file
			p := pathOf(e[0])
			if got := schemaType(t, root, p, resolve); got != e[1] {
				t.Errorf("%s config %s: the rule wants %s, %s says %q", uses, strings.Join(p, "."), e[1], file, got)
			}
		}
		// The step's config itself is an object (opaque to the Stage CRD).
		if typ, _ := root["type"].(string); typ != "object" {
			t.Errorf("%s: config type %q", file, typ)
		}
	}
	for uses, entries := range legacyConfigs {
		file := uses + "-config.json"
		for _, e := range entries {
			cur := file
			resolve := func(n map[string]any) map[string]any {
				f, r := steps.deref(t, cur, n)
				cur = f
				return r
			}
			if got := schemaType(t, steps.file(t, file), pathOf(e[0]), resolve); got != "" {
				t.Errorf("legacy %s config %v is in %s (%s): move it to the fields", uses, e[0], file, got)
			}
		}
	}
}

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

// tables knows which paths of an object the invalid-object rule checks.
type tables struct {
	fields, configs map[string][][]string
}

func loadTables(t *testing.T) tables {
	fields, legacy, configs, legacyConfigs := fieldTables(t)
	tb := tables{fields: map[string][][]string{}, configs: map[string][][]string{}}
	for _, m := range []map[string][][2]any{fields, legacy} {
		for kind, entries := range m {
			for _, e := range entries {
				tb.fields[kind] = append(tb.fields[kind], pathOf(e[0]))
			}
		}
	}
	for _, m := range []map[string][][2]any{configs, legacyConfigs} {
		for uses, entries := range m {
			for _, e := range entries {
				tb.configs[uses] = append(tb.configs[uses], pathOf(e[0]))
			}
		}
	}
	return tb
}

var stepsAt = map[string][]any{
	"Stage":                {"spec", "promotionTemplate", "spec", "steps"},
	"PromotionTask":        {"spec", "steps"},
	"ClusterPromotionTask": {"spec", "steps"},
}

// checked reports whether the rule checks the value at keys of doc.
func (tb tables) checked(kind string, doc any, keys []any) bool {
	for _, p := range tb.fields[kind] {
		if matchKeys(p, keys) {
			return true
		}
	}
	prefix := stepsAt[kind]
	if len(keys) < len(prefix)+2 || !slices.Equal(keys[:len(prefix)], prefix) || keys[len(prefix)+1] != "config" {
		return false
	}
	step, _ := valueAt(doc, keys[:len(prefix)+1]).(map[string]any)
	uses, _ := step["uses"].(string)
	for _, p := range tb.configs[uses] {
		if matchKeys(p, keys[len(prefix)+2:]) {
			return true
		}
	}
	return false
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

// split walks an object: the values the rule checks that hold no other
// checked value (leaves), and the values it does not check whose parent it
// does (frontier: the tops of the regions outside the tables).
func (tb tables) split(kind string, doc any) (leaves, frontier []node) {
	var walk func(n node)
	walk = func(n node) {
		for _, c := range children(n) {
			switch p := c.path; {
			case p == "apiVersion" || p == "kind" || p == "status",
				p == "metadata.annotations.flipflop.dev/ignore", p == "metadata.annotations.flipflop.dev/ignore-expires":
				// Identity, live state, and waivers (invalid-waiver checks those).
			case tb.checked(kind, doc, c.keys):
				if len(children(c)) == 0 || !hasChecked(tb, kind, doc, c) {
					leaves = append(leaves, c)
				}
				walk(c)
			case isListParameter(c.keys):
				// A list generator's parameters: any JSON value is one.
			default:
				frontier = append(frontier, c)
			}
		}
	}
	walk(node{value: doc})
	return leaves, frontier
}

func hasChecked(tb tables, kind string, doc any, n node) bool {
	for _, c := range children(n) {
		if tb.checked(kind, doc, c.keys) {
			return true
		}
	}
	return false
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

// outcome is what an evaluation says: the findings of every rule but
// invalid-object, and the fields invalid-object names ("Kind field").
type outcome struct {
	others  []string
	flagged map[string]bool
}

func evaluate(t *testing.T, ev *evaluator.Evaluator, objs []evaluator.Object) outcome {
	t.Helper()
	r, err := ev.Evaluate(context.Background(), objs)
	if err != nil {
		t.Fatal(err)
	}
	out := outcome{flagged: map[string]bool{}}
	for _, f := range r.Findings {
		if f.Rule == "invalid-object" {
			out.flagged[f.Resources[0].Kind+" "+f.Details["field"].(string)] = true
			continue
		}
		// The expression check reads every string of a step, whatever field
		// holds it, and a value of another type holds no expression: Kargo
		// evaluates strings only, so the finding going away is right, not a
		// misread type.
		if f.Rule == "invalid-step-config" && f.Details["kind"] == "expression" {
			continue
		}
		b, _ := json.Marshal(f.Resources)
		out.others = append(out.others, f.Rule+" "+f.Key+" "+string(b)+" "+f.Message)
	}
	slices.Sort(out.others)
	return out
}

// No wrong type where the model reads goes unreported. In every example and
// sample estate, for each object the rules read:
//   - every value the rule's tables check is replaced by a value of another
//     JSON type, all at once, and invalid-object must name each of them;
//   - every value outside the tables (the top of each such region) is
//     replaced likewise, and what the other rules report must not change; when
//     it does, the culprits are found by halving the set, and each is a field
//     the model reads that the tables miss.
func TestInvalidObjectCoversEveryReadField(t *testing.T) {
	t.Parallel() // shares nothing mutable, times nothing: beside the package's other long tests
	race.Sequential(t)
	ev, err := evaluator.New(context.Background(), evaluator.Settings{DefaultBranch: "main"})
	if err != nil {
		t.Fatal(err)
	}
	tb := loadTables(t)
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
			leaves, frontier := tb.split(o.Kind, doc)
			// A step's uses decides which config fields are read: mutate it
			// apart from the rest.
			uses := slices.DeleteFunc(slices.Clone(leaves), func(n node) bool { return !strings.HasSuffix(n.path, ".uses") })
			rest := slices.DeleteFunc(slices.Clone(leaves), func(n node) bool { return strings.HasSuffix(n.path, ".uses") })
			for _, group := range [][]node{uses, rest} {
				if len(group) == 0 {
					continue
				}
				got := evaluate(t, ev, mutate(t, objs, i, doc, group))
				evaluations++
				for _, n := range group {
					if !got.flagged[o.Kind+" "+n.path] {
						t.Errorf("%s: %s %s/%s: %s of another type is not reported", dir, o.Kind, o.Namespace, o.Name, n.path)
					}
				}
			}
			var culprits func(ns []node)
			culprits = func(ns []node) {
				got := evaluate(t, ev, mutate(t, objs, i, doc, ns))
				evaluations++
				if slices.Equal(got.others, base.others) {
					return
				}
				if len(ns) == 1 {
					t.Errorf("%s: %s %s/%s: %s is read (another type changes the findings) but invalid-object does not check it",
						dir, o.Kind, o.Namespace, o.Name, ns[0].path)
					return
				}
				culprits(ns[:len(ns)/2])
				culprits(ns[len(ns)/2:])
			}
			if len(frontier) > 0 {
				culprits(frontier)
			}
		}
	}
	t.Logf("%d evaluations", evaluations)
}

// The wrong types of the issue (an unquoted targetRevision: 1.0, repoURL: 5,
// metadata.name: 7, sources: [5]) and mistyped step config fields are
// invalid-object warnings, and beside examples/contradiction the contradiction
// is still reported.
func TestWrongTypesBesideARealEstate(t *testing.T) {
	race.Sequential(t)
	report := check(t, evaluator.Settings{}, "../examples/contradiction", "../testdata/hostile/wrong-types.yaml")
	var got []string
	contradiction := false
	for _, f := range report.Findings {
		switch f.Rule {
		case "invalid-object":
			got = append(got, f.Resources[0].Name+" "+f.Details["field"].(string)+" "+f.Details["got"].(string))
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
		"typed-wrong spec.promotionTemplate.spec.steps[0].config.generateTargetBranch string",
		"typed-wrong spec.promotionTemplate.spec.steps[1].config.apps[0].sources[0].desiredRevision number",
		"typed-wrong spec.promotionTemplate.spec.steps[1].config.apps[0].sources[0].updateTargetRevision string",
	}
	if !slices.Equal(got, want) {
		t.Errorf("invalid-object:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
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
