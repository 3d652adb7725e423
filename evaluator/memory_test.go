package evaluator_test

// This file deliberately imports neither OPA's ast nor package loader: it is
// a program with objects already in memory, and it compiles only if the
// evaluator's API is enough for one.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// inMemoryEstates are estates read both by the loader and as objects in memory.
var inMemoryEstates = []string{
	"../examples/contradiction",
	"../examples/fix-stage-branches",
	"../policies/rules/shared_branch_contradiction/samples/fires/three-stages-head",
	"../policies/rules/shared_branch_contradiction/samples/fires/other-project-waiver",
}

// manifestFiles lists the YAML files of an estate directory, sorted.
func manifestFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: no manifests (%v)", dir, err)
	}
	slices.Sort(files)
	return files
}

// fromMaps decodes each document of the estate's files into a map[string]any,
// as a program using sigs.k8s.io/yaml or encoding/json holds it.
func fromMaps(t *testing.T, dir string) []evaluator.Object {
	t.Helper()
	var objs []evaluator.Object
	for _, file := range manifestFiles(t, dir) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for doc := range strings.SplitSeq(string(data), "\n---\n") {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if m == nil {
				continue
			}
			o, err := evaluator.NewObject(file, 0, m)
			if err != nil {
				t.Fatal(err)
			}
			objs = append(objs, o)
		}
	}
	return objs
}

// fromUnstructured decodes the estate's files into unstructured.Unstructured
// objects, as client-go's dynamic client and controller-runtime hold them.
func fromUnstructured(t *testing.T, dir string) []evaluator.Object {
	t.Helper()
	var objs []evaluator.Object
	for _, file := range manifestFiles(t, dir) {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
		for {
			var u unstructured.Unstructured
			if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if u.Object == nil {
				continue
			}
			o, err := evaluator.NewObject(file, 0, u.Object)
			if err != nil {
				t.Fatal(err)
			}
			if o.Kind != u.GetKind() || o.Namespace != u.GetNamespace() || o.Name != u.GetName() || o.APIVersion != u.GetAPIVersion() {
				t.Errorf("NewObject(%s %s/%s) = %s %s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName(), o.APIVersion, o.Kind, o.Namespace, o.Name)
			}
			objs = append(objs, o)
		}
	}
	return objs
}

// verdicts describes findings by what does not depend on how the objects were
// read (files and lines do).
func verdicts(r *evaluator.Report) []string {
	var out []string
	for _, f := range r.Findings {
		out = append(out, fmt.Sprintf("%s %s key=%s pointer=%s stages=%v apps=%v resources=%v waived=%v",
			f.Severity, f.Rule, f.Key, f.Pointer, f.Stages, f.Applications, names(f), f.Waived != nil))
	}
	return out
}

// Objects built in memory, from map[string]any or from an
// unstructured.Unstructured's Object, are evaluated as the same objects read
// from files: same findings, and Analyze works on them too.
func TestObjectsInMemory(t *testing.T) {
	race.Sequential(t)
	ctx := context.Background()
	ev := shared(t, evaluator.Settings{})
	for _, dir := range inMemoryEstates {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			want := verdicts(check(t, evaluator.Settings{}, dir))
			if dir != "../examples/fix-stage-branches" && !slices.ContainsFunc(want, func(v string) bool { return strings.HasPrefix(v, "error shared-branch-contradiction") }) {
				t.Fatalf("the loader found no contradiction in %s: %v", dir, want)
			}
			for name, objs := range map[string][]evaluator.Object{"map": fromMaps(t, dir), "unstructured": fromUnstructured(t, dir)} {
				report, err := ev.Evaluate(ctx, objs)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if got := verdicts(report); !slices.Equal(got, want) {
					t.Errorf("%s objects: findings\n%s\nwant (as loaded from files)\n%s", name, strings.Join(got, "\n"), strings.Join(want, "\n"))
				}
				areport, model, err := ev.Analyze(ctx, objs)
				if err != nil {
					t.Fatalf("%s: Analyze: %v", name, err)
				}
				if got := verdicts(areport); !slices.Equal(got, want) {
					t.Errorf("%s objects: Analyze findings %v, want %v", name, got, want)
				}
				if len(model.Stages) == 0 || len(model.Applications) == 0 {
					t.Errorf("%s objects: model without Stages or Applications: %d, %d", name, len(model.Stages), len(model.Applications))
				}
			}
		})
	}
}

// An Object without a value, among good ones, is an error naming it from every
// entry point, never a panic.
func TestObjectWithoutValueAmongOthers(t *testing.T) {
	ctx := context.Background()
	ev := shared(t, evaluator.Settings{})
	objs := fromUnstructured(t, "../examples/contradiction")
	objs = slices.Insert(objs, 1, evaluator.Object{Path: "memory.yaml", Line: 7, Kind: "Stage", Namespace: "acme", Name: "ghost"})
	const want = "memory.yaml:7"
	if _, err := ev.Evaluate(ctx, objs); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Evaluate: %v, want an error naming %s", err, want)
	}
	if _, _, err := ev.Analyze(ctx, objs); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Analyze: %v, want an error naming %s", err, want)
	}
	if _, err := ev.Model(ctx, objs); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Model: %v, want an error naming %s", err, want)
	}
	if _, err := ev.Kinds(ctx, objs); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Kinds: %v, want an error naming %s", err, want)
	}
}
