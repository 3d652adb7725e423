package loader

import (
	"slices"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// A repeated key keeps its last value, as Kubernetes does; the document still
// counts and the repetition is recorded on its object.
func TestLoadBytesDuplicateKeysKeepTheLastValue(t *testing.T) {
	src := "kind: A\n---\napiVersion: kargo.akuity.io/v1alpha1\nkind: PromotionTask\nmetadata: {name: t, namespace: p}\nspec:\n  steps: []\n  steps:\n  - uses: git-clone\n---\nkind: List\nitems:\n- kind: X\n  metadata: {name: one}\n- kind: Y\n  metadata: {name: two, name: three}\n"
	objs, errs := LoadBytes("d.yaml", []byte(src))
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if len(objs) != 4 {
		t.Fatalf("objects %+v", objs)
	}
	task := objs[1]
	if want := []evaluator.DuplicateKey{{Key: "steps", Line: 8, First: 7, MappingLine: 7, MappingColumn: 3}}; !slices.Equal(task.Duplicates, want) {
		t.Errorf("duplicates %+v, want %+v", task.Duplicates, want)
	}
	steps := task.Value.(interface{ String() string }).String()
	if !strings.Contains(steps, `"uses": "git-clone"`) {
		t.Errorf("the last value was not kept: %s", steps)
	}
	if len(objs[2].Duplicates) != 0 || objs[3].Name != "three" || len(objs[3].Duplicates) != 1 || objs[3].Duplicates[0].Line != 16 {
		t.Errorf("list items %+v", objs[2:])
	}
	// yamlToValue stays strict.
	if _, err := yamlValue(t, "a: 1\na: 2\n"); err == nil {
		t.Error("yamlToValue accepted a duplicate key")
	}
}

// The keys one mapping repeats carry the same mapping position, and those of
// another mapping another: a list entry that lost its "- " is one mistake.
func TestLoadBytesDuplicateKeysNameTheirMapping(t *testing.T) {
	src := "kind: Stage\nspec:\n  vars:\n  - name: a\n    value: 1\n    name: b\n    value: 2\n  - {name: c, name: d}\n"
	objs, errs := LoadBytes("s.yaml", []byte(src))
	if len(errs) > 0 || len(objs) != 1 {
		t.Fatal(objs, errs)
	}
	want := []evaluator.DuplicateKey{
		{Key: "name", Line: 6, First: 4, MappingLine: 4, MappingColumn: 5},
		{Key: "value", Line: 7, First: 5, MappingLine: 4, MappingColumn: 5},
		{Key: "name", Line: 8, First: 8, MappingLine: 8, MappingColumn: 5},
	}
	if !slices.Equal(objs[0].Duplicates, want) {
		t.Errorf("duplicates %+v, want %+v", objs[0].Duplicates, want)
	}
}
