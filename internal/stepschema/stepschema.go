// Package stepschema turns Kargo's promotion step config schemas (the JSON
// schemas Kargo validates a step's config against when a Promotion runs it)
// into the table the policies check step configs with: for each step, the
// objects of its config that the schema closes (additionalProperties: false)
// or whose keys it requires, at the top level and one level down.
//
// The table holds one release of each Kargo minor release flipflop models
// (Releases): the newest from the Kargo module as released (internal/upstream),
// the older ones from the Kargo repository at their release tags (the module
// proxy serves no other version of the Kargo module; a module's zip is its
// tag's tree). It is generated into policies/lib/flipflop/step_schemas.rego;
// a test regenerates it and fails when the file drifts.
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

// Releases are the Kargo releases the table is generated from, oldest first:
// the newest patch release of each minor release the model follows (v0.9,
// the first with promotion steps, to the newest). A run that names another
// patch release is judged by its minor release's table. The last one is the
// module internal/upstream pins.
var Releases = []string{
	"v0.9.2", "v1.0.4", "v1.1.3", "v1.2.3", "v1.3.4", "v1.4.4", "v1.5.3",
	"v1.6.4", "v1.7.10", "v1.8.14", "v1.9.10", "v1.10.10", "v1.11.2",
}

// SchemaDirOf returns where Kargo release version keeps its step config
// schemas: internal/directives up to v1.3, internal/promotion/runner/builtin
// in v1.4 to v1.7, SchemaDir from v1.8.
func SchemaDirOf(version string) string {
	switch minor := Minor(version); {
	case minor == "0.9" || minor == "1.0" || minor == "1.1" || minor == "1.2" || minor == "1.3":
		return "internal/directives/schemas"
	case minor == "1.4" || minor == "1.5" || minor == "1.6" || minor == "1.7":
		return "internal/promotion/runner/builtin/schemas"
	default:
		return SchemaDir
	}
}

// Minor returns a version's minor release as the table keys it: "v1.10.4"
// gives "1.10".
func Minor(version string) string {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	if len(parts) < 2 {
		return strings.TrimPrefix(version, "v")
	}
	return parts[0] + "." + parts[1]
}

// Release is one Kargo release of the table: its version, where its schemas
// were read, and their nodes.
type Release struct {
	Version string
	Source  string
	Nodes   map[string][]Node
}

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

// Rego renders the table of releases (oldest first) as the policy module at
// Path.
func Rego(releases []Release) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("# Code generated by go run ./hack/genstepschemas; DO NOT EDIT.\n")
	b.WriteString("# From Kargo's step config schemas, one release of each minor release: for\n")
	b.WriteString("# each promotion step, the objects of its config that Kargo's schema closes\n")
	b.WriteString("# (additionalProperties: false; allowed lists their keys, null: any) or whose\n")
	b.WriteString("# keys it requires, at the top level (path []) and one level down ([key],\n")
	b.WriteString("# [key, \"[]\"] for array elements).\n")
	b.WriteString("package lib.flipflop.step_schemas\n\n")
	b.WriteString("# releases names, for each minor release, the release its table is read\n")
	b.WriteString("# from and where its schemas were read.\n")
	b.WriteString("releases := {\n")
	for _, r := range releases {
		fmt.Fprintf(&b, "\t%q: {\"version\": %q, \"source\": %q},\n", Minor(r.Version), r.Version, r.Source)
	}
	b.WriteString("}\n\n")
	b.WriteString("# nodes maps each minor release to each step (its uses) to its constrained\n")
	b.WriteString("# objects.\n")
	b.WriteString("nodes := {\n")
	for _, r := range releases {
		fmt.Fprintf(&b, "\t%q: {\n", Minor(r.Version))
		steps := make([]string, 0, len(r.Nodes))
		for s := range r.Nodes {
			steps = append(steps, s)
		}
		sort.Strings(steps)
		for _, s := range steps {
			fmt.Fprintf(&b, "\t\t%q: [\n", s)
			for _, n := range r.Nodes[s] {
				j, err := json.Marshal(n)
				if err != nil {
					return nil, err
				}
				fmt.Fprintf(&b, "\t\t\t%s,\n", j)
			}
			b.WriteString("\t\t],\n")
		}
		b.WriteString("\t},\n")
	}
	b.WriteString("}\n")
	m, err := ast.ParseModuleWithOpts(Path, b.String(), ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		return nil, fmt.Errorf("generated module: %w", err)
	}
	return format.AstWithOpts(m, format.Opts{RegoVersion: ast.RegoV1})
}
