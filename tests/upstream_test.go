package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flipflop-dev/flipflop/internal/fix"
	"github.com/flipflop-dev/flipflop/internal/kubetest"
	"github.com/flipflop-dev/flipflop/internal/upstream"
)

// malformedOnPurpose are the estates built to hold objects a cluster or
// Kargo's step schemas reject: the invalid-object rule's firing samples, a
// selector with no criterion (unmatched-application-selector reports that
// Kargo rejects it), and the fields unsupported-field reports as removed from
// the newest Kargo, and the step config invalid-step-config reports as its
// schema rejects it. The API server or a step schema must reject each. (The
// expression invalid-step-config reports Kargo cannot parse meets every
// schema: it fails only when a Promotion compiles it.)
var malformedOnPurpose = []string{
	"policies/rules/invalid_object/samples/fires/",
	"policies/rules/unmatched_application_selector/samples/fires/empty-selector/",
	"policies/rules/unsupported_field/samples/fires/",
	"policies/rules/invalid_step_config/samples/fires/git-push-without-path/",
	"policies/rules/invalid_step_config/samples/fires/message-from-steps/",
	// kustomize-set-image without tag or digest, the step that fails first
	"policies/rules/missing_authorized_stage/samples/fires/earlier-step-fails-first/",
}

// Every object flipflop ships or prints for people to use is one a real cluster
// accepts: the examples, the rule samples (and so the Gatekeeper suites made from
// them), the Gatekeeper admission cases, and what `flipflop fix --way W -o yaml`
// prints for every estate. The API server, with Kargo's and Argo CD's released
// CRDs (internal/upstream), validates each as a create (dry run, strict field
// validation: unknown fields fail), and each Kargo promotion step's config meets
// Kargo's JSON schema for that step, which the CRD leaves opaque. Kargo's and
// Argo CD's admission webhooks (cross-object checks) are not run.
func TestObjectsMeetUpstreamSchemas(t *testing.T) {
	env := kube.Env(t)
	bin := tool(t, "FLIPFLOP_BIN")
	steps := newStepSchemas(t)

	sources := map[string][]byte{} // name → YAML stream
	var names []string
	add := func(name string, b []byte) {
		sources[name] = b
		names = append(names, name)
	}
	for _, pattern := range []string{"../examples/*/*.yaml", "../policies/rules/*/samples/*/*/*.yaml", "testdata/gatekeeper/admission/*.yaml"} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			if filepath.Base(f) == "suite.yaml" {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			add(strings.TrimPrefix(f, "../"), b)
		}
	}
	// fix without --way lists the ways that apply to an estate's findings, each
	// with the command that previews it: run those (a way fix does not offer
	// there has nothing to print), one listing per estate instead of every way.
	// The estates' fix runs are independent processes: they run side by side,
	// GOMAXPROCS at a time, and their outputs are added in the estates' order.
	fixed := 0
	dirs := estates(t)
	type fixOutput struct {
		name string
		out  []byte
	}
	outputs := make([][]fixOutput, len(dirs))
	problems := make([][]string, len(dirs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, dir := range dirs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			// --allow-empty: a rule's sample may hold only what the rule reads.
			list, stderr, code, err := runProcess("..", bin, "fix", "--allow-empty", dir)
			switch {
			case err != nil:
				problems[i] = append(problems[i], fmt.Sprintf("flipflop fix %s: %v", dir, err))
				return
			case code == 1, code == 0 && strings.HasPrefix(list, "nothing to fix: "):
				return // nothing to fix (exit 1 when errors remain)
			case code != 0:
				problems[i] = append(problems[i], fmt.Sprintf("flipflop fix %s: exit %d: %s", dir, code, stderr))
				return
			}
			ways := offeredWays(list)
			if len(ways) == 0 {
				problems[i] = append(problems[i], fmt.Sprintf("flipflop fix %s: exit 0 but no way offered:\n%s", dir, list))
			}
			for _, way := range ways {
				out, stderr, code, err := runProcess("..", bin, "fix", "--way", way, "-o", "yaml", "--allow-empty", dir)
				if err != nil || code != 0 {
					problems[i] = append(problems[i], fmt.Sprintf("flipflop fix --way %s %s: exit %d (offered): %v %s", way, dir, code, err, stderr))
					continue
				}
				outputs[i] = append(outputs[i], fixOutput{fmt.Sprintf("flipflop fix --way %s -o yaml %s", way, dir), []byte(out)})
			}
		}()
	}
	wg.Wait()
	for i := range dirs {
		for _, p := range problems[i] {
			t.Error(p)
		}
		for _, o := range outputs[i] {
			add(o.name, o.out)
			fixed++
		}
	}
	if fixed < len(fix.Ways()) {
		t.Errorf("only %d fix outputs validated, want at least one per way", fixed)
	}
	if len(names) < 30 {
		t.Fatalf("too few sources: %v", names)
	}

	checked := 0
	for i, name := range names {
		objs, err := kubetest.Decode(sources[name])
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		malformed := slices.ContainsFunc(malformedOnPurpose, func(p string) bool { return strings.HasPrefix(name, p) })
		rejected := 0
		for _, o := range reviewedObjects(objs) {
			what := fmt.Sprintf("%s: %s %s/%s", name, o.GetKind(), o.GetNamespace(), o.GetName())
			// The API server is shared with the cluster tests, and samples reuse
			// names: each source gets its own namespace, and cluster-scoped
			// objects a suffix, so that a create never meets an existing object.
			o = o.DeepCopy()
			if clusterScoped[o.GetKind()] {
				o.SetName(fmt.Sprintf("%s-schema%03d", o.GetName(), i))
			} else {
				o.SetNamespace(fmt.Sprintf("schema%03d", i))
			}
			err := env.DryRunCreate(kctx(t), o)
			if malformed {
				if err != nil || steps.check(o) != nil {
					rejected++
				}
				continue
			}
			if err != nil {
				t.Errorf("%s: the API server rejects it: %v", what, err)
			}
			if err := steps.check(o); err != nil {
				t.Errorf("%s: %v", what, err)
			}
			checked++
		}
		if malformed && rejected == 0 {
			t.Errorf("%s: made to be malformed, but the API server and Kargo's step schemas accept all of it", name)
		}
	}
	t.Logf("%d objects from %d sources validated", checked, len(names))
}

// clusterScoped are the cluster-scoped kinds of the CRDs tested against.
var clusterScoped = map[string]bool{"Project": true, "ClusterPromotionTask": true, "ClusterConfig": true}

// reviewedObjects expands AdmissionReviews into their object and oldObject.
func reviewedObjects(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() != "AdmissionReview" {
			out = append(out, o)
			continue
		}
		for _, field := range []string{"object", "oldObject"} {
			if m, ok, _ := unstructured.NestedMap(o.Object, "request", field); ok {
				out = append(out, &unstructured.Unstructured{Object: m})
			}
		}
	}
	return out
}

// stepSchemas validates Kargo promotion step configs against Kargo's
// <step>-config.json schemas.
type stepSchemas struct {
	dir string
	mu  sync.Mutex
	c   *jsonschema.Compiler
	by  map[string]*jsonschema.Schema
}

func newStepSchemas(t *testing.T) *stepSchemas {
	t.Helper()
	dir, err := upstream.KargoStepSchemaDir()
	if err != nil {
		t.Fatal(err)
	}
	return &stepSchemas{dir: dir, c: jsonschema.NewCompiler(), by: map[string]*jsonschema.Schema{}}
}

func (s *stepSchemas) schema(uses string) (*jsonschema.Schema, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sch, ok := s.by[uses]; ok {
		return sch, nil
	}
	p := filepath.Join(s.dir, uses+"-config.json")
	if _, err := os.Stat(p); err != nil {
		return nil, fmt.Errorf("Kargo %s has no step %q", upstream.KargoVersion, uses)
	}
	sch, err := s.c.Compile(p)
	if err != nil {
		return nil, err
	}
	s.by[uses] = sch
	return sch, nil
}

// check validates the config of every step of a Stage, PromotionTask or
// ClusterPromotionTask. A value that is a Kargo expression (${{ ... }}) is
// evaluated at promotion time, before Kargo validates the config: a schema
// error on such a value is not one.
func (s *stepSchemas) check(o *unstructured.Unstructured) error {
	var path []string
	switch o.GetKind() {
	case "Stage":
		path = []string{"spec", "promotionTemplate", "spec", "steps"}
	case "PromotionTask", "ClusterPromotionTask":
		path = []string{"spec", "steps"}
	default:
		return nil
	}
	list, _, _ := unstructured.NestedSlice(o.Object, path...)
	var errs []error
	for i, st := range list {
		step, _ := st.(map[string]any)
		uses, _ := step["uses"].(string)
		if uses == "" {
			continue // a task step
		}
		sch, err := s.schema(uses)
		if err != nil {
			errs = append(errs, fmt.Errorf("step %d: %w", i, err))
			continue
		}
		config := step["config"]
		if config == nil {
			config = map[string]any{}
		}
		// Through JSON, as Kargo reads it.
		b, _ := json.Marshal(config)
		inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if err := sch.Validate(inst); err != nil && !validUnderSomeEvaluation(sch, inst) {
			errs = append(errs, fmt.Errorf("step %d (%s): config does not meet Kargo %s's %s-config.json: %v", i, uses, upstream.KargoVersion, uses, err))
		}
	}
	return errors.Join(errs...)
}

// validUnderSomeEvaluation says whether a config that fails its schema as
// written passes once its expressions are evaluated. Kargo evaluates every
// ${{ ... }} before validating a step's config, and a value that is one whole
// expression takes the type of its result (a "true" becomes a boolean): each
// such value is tried as written, as true, as false and as a number (at most
// 4^6 tries).
func validUnderSomeEvaluation(sch *jsonschema.Schema, inst any) bool {
	var leaves [][]any // paths of whole-expression strings
	var walk func(v any, path []any)
	walk = func(v any, path []any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				walk(c, append(slices.Clone(path), k))
			}
		case []any:
			for i, c := range x {
				walk(c, append(slices.Clone(path), i))
			}
		case string:
			if t := strings.TrimSpace(x); strings.HasPrefix(t, "${{") && strings.HasSuffix(t, "}}") && strings.Count(t, "${{") == 1 {
				leaves = append(leaves, path)
			}
		}
	}
	walk(inst, nil)
	if len(leaves) == 0 || len(leaves) > 6 {
		return false
	}
	set := func(root any, path []any, v any) {
		cur := root
		for i, k := range path {
			last := i == len(path)-1
			switch c := cur.(type) {
			case map[string]any:
				if last {
					c[k.(string)] = v
				} else {
					cur = c[k.(string)]
				}
			case []any:
				if last {
					c[k.(int)] = v
				} else {
					cur = c[k.(int)]
				}
			}
		}
	}
	originals := make([]any, len(leaves))
	for i, p := range leaves {
		cur := inst
		for _, k := range p {
			switch c := cur.(type) {
			case map[string]any:
				cur = c[k.(string)]
			case []any:
				cur = c[k.(int)]
			}
		}
		originals[i] = cur
	}
	n := 1
	for range leaves {
		n *= 4
	}
	for combo := 0; combo < n; combo++ {
		c := combo
		for i, p := range leaves {
			set(inst, p, []any{originals[i], true, false, json.Number("1")}[c%4])
			c /= 4
		}
		if sch.Validate(inst) == nil {
			return true
		}
	}
	return false
}

// offeredWays are the ways a fix listing offers: the --way of each command it
// prints ("$ flipflop fix --way WAY -- PATH..."), in order, once each.
func offeredWays(listing string) []string {
	var ways []string
	for _, line := range strings.Split(listing, "\n") {
		f := strings.Fields(line)
		if len(f) >= 5 && f[0] == "$" && f[2] == "fix" && f[3] == "--way" && !slices.Contains(ways, f[4]) {
			ways = append(ways, f[4])
		}
	}
	return ways
}
