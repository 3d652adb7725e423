package stepschema

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flipflop-dev/flipflop/internal/upstream"
)

// The table the policies check step configs with is generated from Kargo's
// schemas as released, and regenerated whenever they change: a stale file
// fails here (go run ./hack/genstepschemas rewrites it).
func TestTableIsCurrent(t *testing.T) {
	dir, err := upstream.Dir(upstream.KargoModule, upstream.KargoVersion)
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := Nodes(filepath.Join(dir, SchemaDir))
	if err != nil {
		t.Fatal(err)
	}
	want, err := Rego(nodes, upstream.KargoModule, upstream.KargoVersion)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", "..", Path))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run go run ./hack/genstepschemas", Path)
	}
	// What the table is for: the fields real Stages get wrong.
	push := nodes["git-push"]
	if len(push) == 0 || !slices.Equal(push[0].Required, []string{"path"}) || !slices.Contains(push[0].Allowed, "targetBranch") {
		t.Errorf("git-push: %+v", push)
	}
	commit := nodes["git-commit"]
	if len(commit) == 0 || slices.Contains(commit[0].Allowed, "messageFromSteps") || !slices.Contains(commit[0].Required, "message") {
		t.Errorf("git-commit: %+v", commit)
	}
	clone := nodes["git-clone"]
	if !slices.ContainsFunc(clone, func(n Node) bool {
		return slices.Equal(n.Path, []string{"checkout", "[]"}) && !slices.Contains(n.Allowed, "fromFreight")
	}) {
		t.Errorf("git-clone: %+v", clone)
	}
}

// $ref is followed within a file and across files, and only closed or
// requiring objects are kept.
func TestNodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("common.json", `{"definitions": {"sel": {"type": "object", "additionalProperties": false, "properties": {"a": {}, "b": {}}}}}`)
	write("x-config.json", `{"type": "object", "additionalProperties": false, "required": ["items"],
		"definitions": {"item": {"type": "object", "required": ["k"], "properties": {"k": {}, "v": {}}}},
		"properties": {"items": {"type": "array", "items": {"$ref": "#/definitions/item"}}, "sel": {"$ref": "common.json#/definitions/sel"}, "free": {"type": "object"}}}`)
	write("open-config.json", `{"type": "object", "properties": {"a": {}}}`)
	nodes, err := Nodes(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := nodes["x"]
	if len(got) != 3 || !slices.Equal(got[0].Allowed, []string{"free", "items", "sel"}) || !slices.Equal(got[1].Path, []string{"items", "[]"}) ||
		got[1].Allowed != nil || !slices.Equal(got[1].Required, []string{"k"}) || !slices.Equal(got[2].Allowed, []string{"a", "b"}) {
		t.Errorf("x: %+v", got)
	}
	if _, ok := nodes["open"]; ok {
		t.Errorf("an open object without required keys is no node: %+v", nodes["open"])
	}
}
