package evaluator

import (
	"slices"
	"strings"
	"testing"
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
	if want := []DuplicateKey{{Key: "steps", Line: 8, First: 7}}; !slices.Equal(task.Duplicates, want) {
		t.Errorf("duplicates %+v, want %+v", task.Duplicates, want)
	}
	steps := task.Value.(interface{ String() string }).String()
	if !strings.Contains(steps, `"uses": "git-clone"`) {
		t.Errorf("the last value was not kept: %s", steps)
	}
	if len(objs[2].Duplicates) != 0 || objs[3].Name != "three" || len(objs[3].Duplicates) != 1 || objs[3].Duplicates[0].Line != 16 {
		t.Errorf("list items %+v", objs[2:])
	}
	// YAMLToValue stays strict.
	if _, err := yamlValue(t, "a: 1\na: 2\n"); err == nil {
		t.Error("YAMLToValue accepted a duplicate key")
	}
}
