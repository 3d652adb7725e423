package evaluator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/xeipuuv/gojsonschema"

	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/race"
	"github.com/flipflop-dev/flipflop/internal/upstream"
)

// stepConfig is one promotion step's config as written, and where.
type stepConfig struct {
	where, uses string
	config      map[string]any
}

// corpusStepConfigs are the step configs of the real corpora (each
// repository as a path; skipped when absent) and of the rule samples.
func corpusStepConfigs(t *testing.T) (real, samples []stepConfig) {
	t.Helper()
	var dirs []string
	for _, c := range []string{"real", "real-world"} {
		d, _ := filepath.Glob(filepath.Join("..", "..", "shared", "corpus", c, "*"))
		dirs = append(dirs, d...)
	}
	if env := os.Getenv("FLIPFLOP_CORPUS"); env != "" {
		dirs, _ = filepath.Glob(filepath.Join(env, "*", "*"))
	}
	sampleDirs, _ := filepath.Glob("../policies/rules/*/samples/*/*")
	read := func(dirs []string) []stepConfig {
		var out []stepConfig
		for _, dir := range dirs {
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				continue
			}
			objs, _ := (&loader.Loader{}).Load([]string{dir})
			for _, o := range objs {
				doc, err := ast.JSON(o.Value)
				if err != nil {
					t.Fatal(err)
				}
				var steps any
				switch o.Kind {
				case "Stage":
					steps = valueAt(doc, []any{"spec", "promotionTemplate", "spec", "steps"})
				case "PromotionTask", "ClusterPromotionTask":
					steps = valueAt(doc, []any{"spec", "steps"})
				}
				list, _ := steps.([]any)
				for i, s := range list {
					step, _ := s.(map[string]any)
					uses, _ := step["uses"].(string)
					config, ok := step["config"].(map[string]any)
					if uses == "" || !ok {
						continue
					}
					out = append(out, stepConfig{fmt.Sprintf("%s %s %s/%s step %d", o.Path, o.Kind, o.Namespace, o.Name, i), uses, config})
				}
			}
		}
		return out
	}
	return read(dirs), read(sampleDirs)
}

// expression finds a value Kargo evaluates before it validates.
var expression = regexp.MustCompile(`\$\{[{%]`)

// fuzz makes n configs from the given ones, each changed in one place: a
// key dropped, a value of another type, an empty string, a key no schema
// has, a value replaced by one taken from another config.
func fuzz(configs []stepConfig, n int) []stepConfig {
	r := rand.New(rand.NewPCG(1, 2))
	var out []stepConfig
	for len(out) < n && len(configs) > 0 {
		c := configs[r.IntN(len(configs))]
		doc := deepCopy(c.config).(map[string]any)
		paths := containers(doc, nil)
		p := paths[r.IntN(len(paths))]
		target := valueAt(doc, p)
		what := ""
		switch m := target.(type) {
		case map[string]any:
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			switch op := r.IntN(4); {
			case op == 0 && len(keys) > 0:
				k := keys[r.IntN(len(keys))]
				delete(m, k)
				what = "drop " + k
			case op == 1 && len(keys) > 0:
				k := keys[r.IntN(len(keys))]
				m[k] = wrongValue(m[k])
				what = "retype " + k
			case op == 2 && len(keys) > 0:
				k := keys[r.IntN(len(keys))]
				m[k] = ""
				what = "empty " + k
			default:
				m["unknownKey"] = "x"
				what = "add unknownKey"
			}
		case []any:
			if len(m) > 0 {
				i := r.IntN(len(m))
				m[i] = wrongValue(m[i])
				what = fmt.Sprintf("retype element %d", i)
			}
		}
		out = append(out, stepConfig{fmt.Sprintf("fuzz %d (%s at %v of %s)", len(out), what, p, c.where), c.uses, doc})
	}
	return out
}

// containers are the paths of the objects and arrays in v.
func containers(v any, at []any) [][]any {
	var out [][]any
	switch x := v.(type) {
	case map[string]any:
		out = append(out, slices.Clone(at))
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			out = append(out, containers(x[k], append(slices.Clone(at), k))...)
		}
	case []any:
		out = append(out, slices.Clone(at))
		for i, e := range x {
			out = append(out, containers(e, append(slices.Clone(at), i))...)
		}
	}
	return out
}

func deepCopy(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// flipflopVerdicts validates each config as the policies do
// (lib.flipflop.validation, with the release's generated schemas) and
// returns, for each, whether it has no problem.
func flipflopVerdicts(t *testing.T, minor string, configs []stepConfig) []bool {
	t.Helper()
	pq, err := rego.New(
		rego.Compiler(compiledPolicies(t)),
		rego.Query(`s := data.lib.flipflop.schemas.configs[input.uses][data.lib.flipflop.schemas.releases[input.minor].steps[input.uses]]; x := {i | some [i, _] in data.lib.flipflop.validation.problems(input.configs, s, data.lib.flipflop.schemas.definitions)}`),
	).PrepareForEval(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	byUses := map[string][]int{}
	for i, c := range configs {
		byUses[c.uses] = append(byUses[c.uses], i)
	}
	valid := make([]bool, len(configs))
	for uses, idx := range byUses {
		var docs []any
		for _, i := range idx {
			docs = append(docs, configs[i].config)
		}
		rs, err := pq.Eval(context.Background(), rego.EvalInput(map[string]any{"minor": minor, "uses": uses, "configs": docs}))
		if err != nil {
			t.Fatal(err)
		}
		if len(rs) == 0 {
			// no schema of that step in the release: a platform's own step
			for _, i := range idx {
				valid[i] = true
			}
			continue
		}
		bad := map[int]bool{}
		for _, x := range rs[0].Bindings["x"].([]any) {
			n, _ := x.(json.Number).Int64()
			bad[int(n)] = true
		}
		for k, i := range idx {
			valid[i] = !bad[k]
		}
	}
	return valid
}

// Every step config of the corpora, of the rule samples and a fuzzed set gets
// the same verdict from flipflop's validation as from the JSON Schema library
// Kargo validates step configs with (github.com/xeipuuv/gojsonschema, which
// Kargo's go.mod requires, on the step's schema files of the pinned release,
// $refs and all). Where they cannot agree the configs are left out and
// counted: a value holding an expression (Kargo evaluates it first, so its
// verdict depends on what it yields) and a step Kargo does not ship.
func TestStepConfigsAgreeWithKargosValidator(t *testing.T) {
	race.Sequential(t)
	dir, err := upstream.KargoStepSchemaDir()
	if err != nil {
		t.Skipf("Kargo's step schemas: %v", err)
	}
	real, samples := corpusStepConfigs(t)
	all := append(append([]stepConfig{}, real...), samples...)
	configs := append(all, fuzz(all, 2000)...)
	var judged []stepConfig
	skipped := map[string]int{}
	for _, c := range configs {
		b, _ := json.Marshal(c.config)
		switch _, err := os.Stat(filepath.Join(dir, c.uses+"-config.json")); {
		case err != nil:
			skipped["a step Kargo does not ship"]++
		case expression.Match(b):
			skipped["a value holding an expression"]++
		default:
			judged = append(judged, c)
		}
	}
	ours := flipflopVerdicts(t, "1.11", judged)
	schemas := map[string]*gojsonschema.Schema{}
	invalid := map[string]int{}
	for i, c := range judged {
		s, ok := schemas[c.uses]
		if !ok {
			abs, _ := filepath.Abs(filepath.Join(dir, c.uses+"-config.json"))
			if s, err = gojsonschema.NewSchema(gojsonschema.NewReferenceLoader("file://" + abs)); err != nil {
				t.Fatalf("%s: %v", c.uses, err)
			}
			schemas[c.uses] = s
		}
		res, err := s.Validate(gojsonschema.NewGoLoader(c.config))
		if err != nil {
			t.Fatal(err)
		}
		if !res.Valid() {
			invalid[strings.SplitN(c.where, " ", 2)[0]]++
		}
		if res.Valid() != ours[i] {
			var errs []string
			for _, e := range res.Errors() {
				errs = append(errs, e.String())
			}
			b, _ := json.Marshal(c.config)
			t.Errorf("%s: %s config %s: Kargo's validator says valid=%v (%s), flipflop valid=%v", c.where, c.uses, b, res.Valid(), strings.Join(errs, "; "), ours[i])
		}
	}
	t.Logf("%d step configs (%d of the corpora, %d of the samples, %d fuzzed): %d judged, the same verdict; left out: %v",
		len(configs), len(real), len(samples), len(configs)-len(all), len(judged), skipped)
	if len(judged) < 1000 {
		t.Errorf("only %d configs judged", len(judged))
	}
}
