package export

import (
	"context"
	"os"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/profiler"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"sigs.k8s.io/yaml"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/estate"
)

// TestReviewProfile prints where one Flipflop review of a Stage
// spends its time, line by line (OPA's profiler), over an inventory of the
// benchmark estate held as Go values, as Gatekeeper holds it, when
// FLIPFLOP_PROFILE is set. FLIPFLOP_PROFILE_OBJECTS sets the estate's size
// (default 22,000 objects, about 10,000 Applications: the size of the
// Gatekeeper rows of docs/benchmarks.md); FLIPFLOP_PROFILE_KIND the kind of
// the reviewed object (default Stage). It times the review first, without
// the profiler (median of 9), then profiles one more.
//
//	FLIPFLOP_PROFILE=1 go test -run TestReviewProfile -v ./internal/export/
func TestReviewProfile(t *testing.T) {
	if os.Getenv("FLIPFLOP_PROFILE") == "" {
		t.Skip("set FLIPFLOP_PROFILE=1 to print the profile")
	}
	size := 22000
	if s := os.Getenv("FLIPFLOP_PROFILE_OBJECTS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("FLIPFLOP_PROFILE_OBJECTS: %v", err)
		}
		size = n
	}
	kind := "Stage"
	if k := os.Getenv("FLIPFLOP_PROFILE_KIND"); k != "" {
		kind = k
	}
	files, _ := estate.Generate(estate.Options{Objects: size, Seed: 1})
	inv, kept := inventory(t, load(t, files))
	i := slices.IndexFunc(kept, func(r reviewed) bool { return r.obj["kind"] == kind })
	if i < 0 {
		t.Fatalf("the estate has no %s", kind)
	}

	rules, err := evaluator.BundleRules()
	if err != nil {
		t.Fatal(err)
	}
	admission := slices.DeleteFunc(rules, func(r evaluator.Rule) bool { return !r.Admission })
	raw, err := Template(admission)
	if err != nil {
		t.Fatal(err)
	}
	var tmpl struct {
		Spec struct {
			Targets []struct {
				Code []struct {
					Source struct {
						Rego string `json:"rego"`
					} `json:"source"`
				} `json:"code"`
			} `json:"targets"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &tmpl); err != nil || len(tmpl.Spec.Targets) == 0 || len(tmpl.Spec.Targets[0].Code) == 0 {
		t.Fatalf("reading the admission template: %v", err)
	}
	entry, err := ast.ParseModuleWithOpts("admission.rego", tmpl.Spec.Targets[0].Code[0].Source.Rego, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatal(err)
	}
	store := inmem.NewFromObject(map[string]any{"inventory": inv})
	pq, err := rego.New(append(policyQuery(t, `v := data.flipflop.admission.violation`), rego.Store(store), rego.ParsedModule(entry))...).PrepareForEval(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	in := rego.EvalInput(map[string]any{"review": map[string]any{"object": kept[i].obj}, "parameters": map[string]any{}})

	var ms []float64
	for range 9 {
		start := time.Now()
		if _, err := pq.Eval(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		ms = append(ms, float64(time.Since(start).Microseconds())/1000)
	}
	sort.Float64s(ms)
	t.Logf("reviewing %s in an inventory of %d objects: median %.0f ms (%.0f–%.0f, 9 runs)", kept[i].id, len(kept), ms[4], ms[0], ms[8])

	p := profiler.New()
	if _, err := pq.Eval(context.Background(), in, rego.EvalQueryTracer(p)); err != nil {
		t.Fatal(err)
	}
	stats := p.ReportTopNResults(40, []string{"total_time_ns"})
	for _, s := range stats {
		t.Logf("%8.1f ms %8d evaluations  %s:%d", float64(s.ExprTimeNs)/1e6, s.NumEval, s.Location.File, s.Location.Row)
	}
}
