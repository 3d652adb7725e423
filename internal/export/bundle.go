package export

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/bundle"
)

// BundleRoots are the roots the OPA bundle owns.
var BundleRoots = []string{"lib/flipflop", "flipflop"}

// conftestMain is the conftest folder's package main (conftest's default
// namespace): conftest's alone, outside the OPA bundle's roots.
const conftestMain = "hosts/conftest/main.rego"

// Bundle returns flipflop's OPA bundle as a gzipped tarball: the model, the
// rules and the conftest entrypoint (package flipflop, without the conftest
// folder's package main), tests excluded, with a manifest declaring its roots
// and rego_version 1. Query data.flipflop.findings (or deny/warn) with the
// combined input [{path, contents}].
func Bundle() ([]byte, error) {
	paths, srcs, err := regoSources("lib/", "rules/", "hosts/conftest/")
	if err != nil {
		return nil, err
	}
	paths = slices.DeleteFunc(paths, func(p string) bool { return p == conftestMain })
	regoVersion := ast.RegoV1.Int()
	roots := BundleRoots
	b := bundle.Bundle{
		Manifest: bundle.Manifest{Roots: &roots, RegoVersion: &regoVersion},
		Data:     map[string]any{},
	}
	for _, p := range paths {
		m, err := ast.ParseModuleWithOpts(p, srcs[p], ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
		if err != nil {
			return nil, fmt.Errorf("parsing %s: %w", p, err)
		}
		b.Modules = append(b.Modules, bundle.ModuleFile{URL: "/" + p, Path: "/" + p, Raw: []byte(srcs[p]), Parsed: m})
	}
	var buf bytes.Buffer
	if err := bundle.NewWriter(&buf).Write(b); err != nil {
		return nil, fmt.Errorf("writing bundle: %w", err)
	}
	return buf.Bytes(), nil
}
