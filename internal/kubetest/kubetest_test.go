package kubetest

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDecode(t *testing.T) {
	objs, err := Decode([]byte(`
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Namespace, metadata: {name: a}}
- {apiVersion: v1, kind: Namespace, metadata: {name: b}}
---
---
{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "a"}}
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, o.GetKind()+"/"+o.GetName())
	}
	if len(got) != 3 || got[0] != "Namespace/a" || got[1] != "Namespace/b" || got[2] != "ConfigMap/c" {
		t.Errorf("got %v", got)
	}
}

func TestAssets(t *testing.T) {
	root, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "hack", "kube-tools", "go.mod")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBEBUILDER_ASSETS", "/elsewhere")
	if dir, _ := Assets(); dir != "/elsewhere" {
		t.Errorf("KUBEBUILDER_ASSETS ignored: %s", dir)
	}
	t.Setenv("KUBEBUILDER_ASSETS", "")
	if dir, _ := Assets(); dir != filepath.Join(root, "hack", "kube-tools", "bin") {
		t.Errorf("default assets: %s", dir)
	}
}
