package evaluator_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/race"
	"github.com/open-policy-agent/opa/v1/ast"
)

// noise is what a live object carries besides what was applied: status
// written by Argo CD and Kargo (naming other repositories, revisions and
// health), server-set metadata, and the Application's operation.
const noise = `{
	"status": {
		"sync": {"status": "OutOfSync", "revision": "0123456789abcdef0123456789abcdef01234567",
			"comparedTo": {"source": {"repoURL": "https://git.example.com/noise/other.git", "targetRevision": "main"}}},
		"health": {"status": "Unhealthy"},
		"freightHistory": [{"commits": [{"repoURL": "https://git.example.com/noise/other.git", "branch": "main"}]}],
		"lastPromotion": {"name": "p", "status": {"phase": "Failed"}}
	},
	"operation": {"sync": {"revision": "main"}},
	"metadata": {
		"resourceVersion": "42", "uid": "00000000-0000-0000-0000-000000000000", "generation": 7,
		"creationTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["resources-finalizer.argocd.argoproj.io"],
		"ownerReferences": [{"apiVersion": "argoproj.io/v1alpha1", "kind": "ApplicationSet", "name": "noise", "uid": "1"}],
		"managedFields": [{"manager": "argocd-application-controller", "fieldsV1": {"f:spec": {"f:source": {}}}}]
	}
}`

// withNoise returns o with noise merged in: the noise's fields where o has
// none (metadata field by field), o's own fields kept.
func withNoise(t *testing.T, o evaluator.Object) evaluator.Object {
	t.Helper()
	obj, ok := o.Value.(ast.Object)
	if !ok {
		return o
	}
	n, err := ast.ValueFromReader(strings.NewReader(noise))
	if err != nil {
		t.Fatal(err)
	}
	o.Value = union(n.(ast.Object), obj)
	return o
}

// union is a with b's fields added, recursively where both hold an object; b
// wins elsewhere.
func union(a, b ast.Object) ast.Object {
	out := a.Copy()
	b.Foreach(func(k, v *ast.Term) {
		if cur := out.Get(k); cur != nil {
			x, xok := cur.Value.(ast.Object)
			if y, ok := v.Value.(ast.Object); ok && xok {
				out.Insert(k, ast.NewTerm(union(x, y)))
				return
			}
		}
		out.Insert(k, v)
	})
	return out
}

// The policies read of an object only what the Gatekeeper adapter's
// model_view compares on an UPDATE (apiVersion, kind, metadata name,
// namespace, labels and annotations, spec): with status, server-set metadata
// and an operation added to every object of every example, rule sample and
// test estate, every report is byte for byte what it was. An UPDATE that
// leaves the view as it was therefore changes no finding, and the adapter
// skips it.
func TestPoliciesReadOnlyTheModelView(t *testing.T) {
	race.Sequential(t)
	var dirs []string
	for _, g := range []string{"../examples/*", "../policies/rules/*/samples/*/*", "../testdata/*"} {
		m, _ := filepath.Glob(g)
		dirs = append(dirs, m...)
	}
	if len(dirs) < 50 {
		t.Fatalf("found %d estates, want the examples, the rule samples and testdata", len(dirs))
	}
	ev := shared(t, evaluator.Settings{Today: "2026-01-01"})
	for _, dir := range dirs {
		objs, errs := (&loader.Loader{}).Load([]string{dir})
		if len(errs) > 0 || len(objs) == 0 {
			continue // estates that test loading; nothing to perturb
		}
		noisy := make([]evaluator.Object, len(objs))
		for i, o := range objs {
			noisy[i] = withNoise(t, o)
		}
		want, got := report(t, ev, objs), report(t, ev, noisy)
		if want != got {
			t.Errorf("%s: status or server-set metadata changed the report:\nwithout: %s\nwith:    %s", dir, want, got)
		}
	}
}

// report evaluates objs and returns the report as JSON.
func report(t *testing.T, ev *evaluator.Evaluator, objs []evaluator.Object) string {
	t.Helper()
	r, err := ev.Evaluate(context.Background(), objs)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// DetailedForErrors computes the detailed model only when some finding is an
// error: a clean estate costs what Analyze costs, and an estate with an error
// gets what fix plans with.
func TestDetailedForErrors(t *testing.T) {
	ev := shared(t, evaluator.Settings{})
	for _, c := range []struct {
		dir      string
		detailed bool
	}{{"../examples/contradiction", true}, {"../examples/fix-stage-branches", false}} {
		objs, errs := (&loader.Loader{}).Load([]string{c.dir})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		report, m, err := ev.Analyze(context.Background(), objs, evaluator.DetailedForErrors())
		if err != nil {
			t.Fatal(err)
		}
		steps := 0
		for _, s := range m.Stages {
			steps += len(s.Steps)
		}
		if m.Detailed != c.detailed || (steps > 0) != c.detailed {
			t.Errorf("%s: Detailed %v with %d steps, want %v", c.dir, m.Detailed, steps, c.detailed)
		}
		plain, err := ev.Evaluate(context.Background(), objs)
		if err != nil {
			t.Fatal(err)
		}
		if len(report.Findings) != len(plain.Findings) {
			t.Errorf("%s: %d findings, Evaluate has %d", c.dir, len(report.Findings), len(plain.Findings))
		}
	}
	_, m, err := ev.Analyze(context.Background(), nil, evaluator.Detailed())
	if err != nil || !m.Detailed {
		t.Errorf("Detailed: %v, %v", m.Detailed, err)
	}
}
