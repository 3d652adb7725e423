package export

import (
	"bytes"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
)

// The conftest folder answers in conftest's default namespace (package main)
// as well as in flipflop; the OPA bundle holds only packages under its roots,
// so package main stays out of it.
func TestConftestMainOnlyInTheConftestFolder(t *testing.T) {
	folder, err := Conftest()
	if err != nil {
		t.Fatal(err)
	}
	packages := map[string]bool{}
	for _, p := range folder.Paths() {
		m, err := ast.ParseModuleWithOpts(p, string(folder[p]), ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			t.Fatal(err)
		}
		packages[m.Package.Path.String()] = true
	}
	for _, want := range []string{"data.main", "data.flipflop"} {
		if !packages[want] {
			t.Errorf("the conftest folder has no %s", want)
		}
	}

	tarball, err := Bundle()
	if err != nil {
		t.Fatal(err)
	}
	b, err := bundle.NewReader(bytes.NewReader(tarball)).WithRegoVersion(ast.RegoV1).Read()
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Modules) == 0 {
		t.Fatal("the bundle holds no module")
	}
	for _, m := range b.Modules {
		path := strings.TrimPrefix(m.Parsed.Package.Path.String(), "data.")
		inRoots := false
		for _, root := range BundleRoots {
			r := strings.ReplaceAll(root, "/", ".")
			inRoots = inRoots || path == r || strings.HasPrefix(path, r+".")
		}
		if !inRoots {
			t.Errorf("bundle module %s: package %s is outside the roots %v", m.Path, path, BundleRoots)
		}
	}
}
