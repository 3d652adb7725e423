package export

import (
	"context"
	"os"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"syscall"
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
// Gatekeeper rows of docs/benchmarks.md); FLIPFLOP_PROFILE_SHAPE a shape of
// internal/estate instead (monorepo: every Application in one repository),
// of FLIPFLOP_PROFILE_APPS Applications (default 10,000);
// FLIPFLOP_PROFILE_KIND the kind of the reviewed object (default Stage). It
// times the review first, without the profiler (median of 9), then profiles
// one more.
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
	if shape := os.Getenv("FLIPFLOP_PROFILE_SHAPE"); shape != "" {
		apps := 10000
		if s := os.Getenv("FLIPFLOP_PROFILE_APPS"); s != "" {
			n, err := strconv.Atoi(s)
			if err != nil {
				t.Fatalf("FLIPFLOP_PROFILE_APPS: %v", err)
			}
			apps = n
		}
		var err error
		if files, err = estate.Shape(shape, apps); err != nil {
			t.Fatal(err)
		}
	}
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

	var ms, cpu []float64
	for range 9 {
		start, startCPU := time.Now(), cpuTime(t)
		if _, err := pq.Eval(context.Background(), in); err != nil {
			t.Fatal(err)
		}
		ms = append(ms, float64(time.Since(start).Microseconds())/1000)
		cpu = append(cpu, float64((cpuTime(t)-startCPU).Microseconds())/1000)
	}
	sort.Float64s(ms)
	sort.Float64s(cpu)
	t.Logf("reviewing %s in an inventory of %d objects: median %.0f ms (%.0f–%.0f, 9 runs), CPU time (the process's, GC included) median %.0f ms (%.0f–%.0f)",
		kept[i].id, len(kept), ms[4], ms[0], ms[8], cpu[4], cpu[0], cpu[8])
	// What a review allocates, and (below) how many expressions it
	// evaluates: measures that do not depend on the machine's load.
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	if _, err := pq.Eval(context.Background(), in); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	t.Logf("one review: %d allocations, %.1f MB", after.Mallocs-before.Mallocs, float64(after.TotalAlloc-before.TotalAlloc)/1e6)

	p := profiler.New()
	if _, err := pq.Eval(context.Background(), in, rego.EvalQueryTracer(p)); err != nil {
		t.Fatal(err)
	}
	all := p.ReportTopNResults(1<<30, []string{"total_time_ns"})
	evals := 0
	for _, s := range all {
		evals += s.NumEval
	}
	t.Logf("one review: %d expression evaluations", evals)
	for _, s := range all[:min(40, len(all))] {
		t.Logf("%8.1f ms %8d evaluations  %s:%d", float64(s.ExprTimeNs)/1e6, s.NumEval, s.Location.File, s.Location.Row)
	}
}

// cpuTime is the CPU time the process has used (user and system): on a
// loaded machine, a steadier measure of a review than its wall time.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
