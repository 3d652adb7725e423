// Package stepschema turns Kargo's promotion step config schemas (the JSON
// schemas Kargo validates a step's config against when a Promotion runs it)
// into the table the policies check step configs with: for each step, the
// objects of its config that the schema closes (additionalProperties: false)
// or whose keys it requires, at the top level and one level down.
//
// The table is generated from the Kargo module as released (internal/upstream)
// into policies/lib/flipflop/step_schemas.rego; a test regenerates it and fails
// when the file drifts.
package stepschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/format"
)

// Path is where the generated table lives, relative to the repository root.
const Path = "policies/lib/flipflop/step_schemas.rego"

// SchemaDir is where Kargo keeps the step config schemas (v1.8 on).
const SchemaDir = "pkg/promotion/runner/builtin/schemas"

// Node is one object of a step's config the schema constrains: its path from
// the config (a key, or "[]" for the elements of an array), the keys it
// allows (nil: any) and the keys it requires.
type Node struct {
	Path     []string `json:"path"`
	Allowed  []string `json:"allowed"`
	Required []string `json:"required"`
}

// Nodes reads every <step>-config.json of the schema directory dir and
// returns each step's nodes.
func Nodes(dir string) (map[string][]Node, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*-config.json"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no step config schemas in %s", dir)
	}
	r := &resolver{dir: dir, docs: map[string]map[string]any{}}
	out := map[string][]Node{}
	for _, f := range files {
		name := filepath.Base(f)
		doc, err := r.load(name)
		if err != nil {
			return nil, err
		}
		var nodes []Node
		if err := r.walk(doc, name, nil, &nodes); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(nodes) > 0 {
			out[strings.TrimSuffix(name, "-config.json")] = nodes
		}
	}
	return out, nil
}

type resolver struct {
	dir  string
	docs map[string]map[string]any
}

func (r *resolver) load(name string) (map[string]any, error) {
	if d, ok := r.docs[name]; ok {
		return d, nil
	}
	b, err := os.ReadFile(filepath.Join(r.dir, filepath.Base(name)))
	if err != nil {
		return nil, err
	}
	var d map[string]any
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r.docs[name] = d
	return d, nil
}

// resolve follows $ref ("#/definitions/x", "other.json#/definitions/x").
func (r *resolver) resolve(s map[string]any, file string) (map[string]any, string, error) {
	for range 16 {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s, file, nil
		}
		target, pointer, _ := strings.Cut(ref, "#")
		if target != "" {
			file = target
		}
		doc, err := r.load(file)
		if err != nil {
			return nil, "", err
		}
		var cur any = doc
		for _, part := range strings.Split(strings.Trim(pointer, "/"), "/") {
			if part == "" {
				continue
			}
			m, ok := cur.(map[string]any)
			if !ok {
				return nil, "", fmt.Errorf("unresolvable $ref %q", ref)
			}
			cur = m[part]
		}
		next, ok := cur.(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("unresolvable $ref %q", ref)
		}
		s = next
	}
	return nil, "", fmt.Errorf("$ref chain too long")
}

// walk records s at path when it constrains its keys, and goes one level
// down: into object properties and the elements of array properties.
func (r *resolver) walk(s map[string]any, file string, path []string, out *[]Node) error {
	s, file, err := r.resolve(s, file)
	if err != nil {
		return err
	}
	props, ok := s["properties"].(map[string]any)
	if !ok {
		return nil
	}
	n := Node{Path: slices.Clone(path), Required: strings2(s["required"])}
	if n.Path == nil {
		n.Path = []string{}
	}
	if s["additionalProperties"] == false {
		n.Allowed = make([]string, 0, len(props))
		for k := range props {
			n.Allowed = append(n.Allowed, k)
		}
		sort.Strings(n.Allowed)
	}
	if n.Allowed != nil || len(n.Required) > 0 {
		*out = append(*out, n)
	}
	if len(path) > 0 {
		return nil // one level down only
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p, ok := props[k].(map[string]any)
		if !ok {
			continue
		}
		p, pfile, err := r.resolve(p, file)
		if err != nil {
			return err
		}
		if _, ok := p["properties"]; ok {
			if err := r.walk(p, pfile, []string{k}, out); err != nil {
				return err
			}
			continue
		}
		if items, ok := p["items"].(map[string]any); ok && p["type"] == "array" {
			if err := r.walk(items, pfile, []string{k, "[]"}, out); err != nil {
				return err
			}
		}
	}
	return nil
}

func strings2(v any) []string {
	out := []string{}
	xs, _ := v.([]any)
	for _, x := range xs {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	sort.Strings(out)
	return out
}

// Rego renders the table as the policy module at Path.
func Rego(nodes map[string][]Node, module, version string) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Code generated by go run ./hack/genstepschemas; DO NOT EDIT.\n")
	fmt.Fprintf(&b, "# From %s@%s, %s: for each promotion step, the objects of\n", module, version, SchemaDir)
	b.WriteString("# its config that Kargo's schema closes (additionalProperties: false; allowed\n")
	b.WriteString("# lists their keys, null: any) or whose keys it requires, at the top level\n")
	b.WriteString("# (path []) and one level down ([key], [key, \"[]\"] for array elements).\n")
	b.WriteString("package lib.flipflop.step_schemas\n\n")
	b.WriteString("# version is the Kargo release the table is generated from.\n")
	fmt.Fprintf(&b, "version := %q\n\n", version)
	b.WriteString("# nodes maps each step (its uses) to its constrained objects.\n")
	b.WriteString("nodes := {\n")
	steps := make([]string, 0, len(nodes))
	for s := range nodes {
		steps = append(steps, s)
	}
	sort.Strings(steps)
	for _, s := range steps {
		fmt.Fprintf(&b, "\t%q: [\n", s)
		for _, n := range nodes[s] {
			j, err := json.Marshal(n)
			if err != nil {
				return nil, err
			}
			fmt.Fprintf(&b, "\t\t%s,\n", j)
		}
		b.WriteString("\t],\n")
	}
	b.WriteString("}\n")
	m, err := ast.ParseModuleWithOpts(Path, b.String(), ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		return nil, fmt.Errorf("generated module: %w", err)
	}
	return format.AstWithOpts(m, format.Opts{RegoVersion: ast.RegoV1})
}
