// Package schemagen turns the schemas Kargo and Argo CD publish into the
// JSON schemas the policies validate objects with (json.match_schema, a JSON
// Schema validator in the OPA of every host): the CRDs of the kinds the model
// reads (what the API server enforces when an object is applied) and Kargo's
// promotion step config schemas (what Kargo enforces when a Promotion runs a
// step), one release of each Kargo minor release.
//
// Every keyword the upstream schemas use is kept, at any depth: type,
// properties, required, additionalProperties, items, enum, const, pattern,
// format, oneOf, anyOf, allOf and the min/max bounds; a keyword it does not
// know fails the generation, so a new one cannot be dropped unnoticed. Two
// rewrites keep every host's verdict the same:
//   - a CRD's OpenAPI extensions become JSON Schema (nullable, int-or-string),
//     and a field that is not required accepts null, since the API server
//     prunes a null it does not allow instead of rejecting it;
//   - OPA before v1.17 ignores "pattern", so each one is listed (Site) and the
//     policies test it themselves; the schema keeps the pattern and adds a
//     "not" that an OPA honouring patterns never fails and an older one fails
//     on every string there, so each host reports every string the policies
//     must test.
//
// The schemas are generated into policies/lib/flipflop/schemas.rego (Path),
// the step schemas of the newest release from the Kargo module as released
// (internal/upstream), the older ones from Kargo's repository at their release
// tags (the module proxy serves no other version of the Kargo module); a test
// regenerates the file and fails when it drifts.
package schemagen

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/go-openapi/jsonpointer"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/format"
	"sigs.k8s.io/yaml"
)

// Path is where the generated schemas live, relative to the repository root.
const Path = "policies/lib/flipflop/schemas.rego"

// SchemaDir is where Kargo keeps the step config schemas (v1.8 on).
const SchemaDir = "pkg/promotion/runner/builtin/schemas"

// Releases are the Kargo releases whose step schemas are generated, oldest
// first: the newest patch release of each minor release the model follows
// (v0.9, the first with promotion steps, to the newest). A run that names
// another patch release is judged by its minor release's schemas. The last one
// is the module internal/upstream pins.
var Releases = []string{
	"v0.9.2", "v1.0.4", "v1.1.3", "v1.2.3", "v1.3.4", "v1.4.4", "v1.5.3",
	"v1.6.4", "v1.7.10", "v1.8.14", "v1.9.10", "v1.10.10", "v1.11.2",
}

// SchemaDirOf returns where Kargo release version keeps its step config
// schemas: internal/directives up to v1.3, internal/promotion/runner/builtin
// in v1.4 to v1.7, SchemaDir from v1.8.
func SchemaDirOf(version string) string {
	switch minor := Minor(version); minor {
	case "0.9", "1.0", "1.1", "1.2", "1.3":
		return "internal/directives/schemas"
	case "1.4", "1.5", "1.6", "1.7":
		return "internal/promotion/runner/builtin/schemas"
	default:
		return SchemaDir
	}
}

// Minor returns a version's minor release as the policies key it: "v1.10.4"
// gives "1.10".
func Minor(version string) string {
	parts := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	return strings.Join(parts[:min(len(parts), 2)], ".")
}

// Schema is one JSON schema as the policies validate with it, and the
// patterns it holds (which the policies test themselves: see the package
// doc).
type Schema struct {
	JSON     map[string]any
	Patterns []Site
}

// Site is a pattern of a schema: the path of the values it constrains (keys;
// "[]" for every element of an array, "*" for every value of a map) and the
// regular expression.
type Site struct {
	Path    []string `json:"path"`
	Pattern string   `json:"pattern"`
}

// never is a regular expression no string matches (see the package doc).
const never = `[^\x00-\x{10FFFF}]`

// kept are the keywords the schemas are validated with, each as JSON Schema
// defines it; the walk handles properties, items, additionalProperties, the
// combinators and pattern itself.
var kept = map[string]bool{
	"type": true, "required": true, "enum": true, "const": true, "format": true,
	"minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true, "multipleOf": true,
	"minLength": true, "maxLength": true, "minItems": true, "maxItems": true, "uniqueItems": true,
	"minProperties": true, "maxProperties": true,
}

// ignored are annotations, which validate nothing.
var ignored = map[string]bool{
	"description": true, "title": true, "default": true, "examples": true, "example": true,
	"deprecated": true, "$schema": true, "$id": true, "$comment": true, "definitions": true, "$defs": true,
	// Kubernetes: how lists and maps merge, and that an object is a whole
	// resource; neither is validated by a JSON schema.
	"x-kubernetes-list-type": true, "x-kubernetes-list-map-keys": true, "x-kubernetes-map-type": true,
	"x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true,
}

// converter walks one schema. crd: an OpenAPI schema of a CRD (nullable
// fields, Kubernetes extensions); else a step schema, whose $refs it
// resolves.
type converter struct {
	crd      bool
	refs     *resolver
	patterns []Site
}

// node converts schema s at path. nullable: the value may be null (a CRD
// field that is not required). combined: s is below oneOf/anyOf/allOf.
func (c *converter) node(s map[string]any, file string, path []string, nullable, combined bool) (map[string]any, error) {
	if c.refs != nil {
		var err error
		if s, file, err = c.refs.resolve(s, file); err != nil {
			return nil, err
		}
	}
	// sub converts v, a subschema of keyword k at path and then seg (none
	// for a branch of a combinator).
	sub := func(k string, v any, seg string, nullable, combined bool) (any, error) {
		at := path
		if seg != "" {
			at = append(slices.Clone(path), seg)
		}
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: %s holds no schema", where(at), k)
		}
		return c.node(m, file, at, nullable, combined)
	}
	out := map[string]any{}
	for _, k := range sortedKeys(s) {
		v := s[k]
		var err error
		switch {
		case k == "required" && c.crd && s["properties"] != nil:
			// with the properties, less those the API server defaults
		case kept[k]:
			out[k] = v
		case ignored[k], k == "x-kubernetes-validations" && c.crd:
			// annotations; a CRD's CEL rules, which the API server runs and
			// no JSON schema says
		case k == "nullable" && c.crd:
			nullable = nullable || v == true
		case k == "x-kubernetes-int-or-string" && c.crd:
			if v == true {
				out["anyOf"] = []any{map[string]any{"type": "integer"}, map[string]any{"type": "string"}}
			}
		case k == "pattern":
			p, ok := v.(string)
			words, listed := literals(p)
			switch {
			case !ok || s["not"] != nil || combined && !listed:
				return nil, fmt.Errorf("%s: a pattern that is no string, is beside not, or is below oneOf, anyOf or allOf and lists no words", where(path))
			case combined:
				// The not below would change which branch holds on an OPA
				// that ignores patterns: a pattern that lists its strings
				// (^(a|b)$) is said as an enum of them, for strings only.
				out["anyOf"] = []any{map[string]any{"not": map[string]any{"type": "string"}}, map[string]any{"enum": words}}
			default:
				out[k], out["not"] = p, map[string]any{"type": "string", "pattern": never}
				c.patterns = append(c.patterns, Site{Path: slices.Clone(path), Pattern: p})
			}
		case k == "properties":
			props, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: properties is no object", where(path))
			}
			// A CRD's required field with a default is never missing: the API
			// server sets the default before it validates.
			var required []any
			for _, r := range strings2(s["required"]) {
				p, _ := props[r].(map[string]any)
				if _, defaulted := p["default"]; !c.crd || !defaulted {
					required = append(required, r)
				}
			}
			if c.crd && len(required) > 0 {
				out["required"] = required
			}
			conv := map[string]any{}
			for _, name := range sortedKeys(props) {
				if conv[name], err = sub(k, props[name], name, c.crd && !slices.Contains(required, any(name)), combined); err != nil {
					return nil, err
				}
			}
			out[k] = conv
		case k == "items":
			out[k], err = sub(k, v, "[]", false, combined)
		case k == "additionalProperties":
			if b, ok := v.(bool); ok {
				out[k] = b
			} else {
				out[k], err = sub(k, v, "*", c.crd, combined)
			}
		case k == "oneOf" || k == "anyOf" || k == "allOf":
			list, ok := v.([]any)
			if !ok {
				return nil, fmt.Errorf("%s: %s is no list", where(path), k)
			}
			conv := make([]any, len(list))
			for i, b := range list {
				if conv[i], err = sub(k, b, "", false, true); err != nil {
					return nil, err
				}
			}
			out[k] = conv
		default:
			return nil, fmt.Errorf("%s: keyword %q is not supported", where(path), k)
		}
		if err != nil {
			return nil, err
		}
	}
	if nullable {
		allowNull(out)
	}
	return out, nil
}

// allowNull lets schema s of a CRD accept null as well (a CRD's schema is
// structural: its type is one string, and it has no const).
func allowNull(s map[string]any) {
	if t, ok := s["type"].(string); ok {
		s["type"] = []any{t, "null"}
	}
	if e, ok := s["enum"].([]any); ok && !slices.Contains(e, nil) {
		s["enum"] = append(e, nil)
	}
	if a, ok := s["anyOf"].([]any); ok && s["type"] == nil {
		s["anyOf"] = append(a, map[string]any{"type": "null"})
	}
}

// literals returns the strings an anchored alternation of plain words
// (^(a|b|c)$, ^a$) matches.
func literals(p string) ([]any, bool) {
	m := regexp.MustCompile(`^\^(?:\(([\w-]+(?:\|[\w-]+)*)\)|([\w-]+))\$$`).FindStringSubmatch(p)
	if m == nil {
		return nil, false
	}
	var out []any
	for _, w := range strings.Split(m[1]+m[2], "|") {
		out = append(out, w)
	}
	return out, true
}

// where names a schema's path in an error (/spec/sources/[]/path).
func where(path []string) string {
	return "/" + strings.Join(path, "/")
}

// objectMeta is the part of Kubernetes' ObjectMeta the model reads (a CRD
// leaves metadata to the API server, which decodes it into its Go type: a
// null is the zero value there).
var objectMeta = map[string]any{"type": []any{"object", "null"}, "properties": map[string]any{
	"name":        map[string]any{"type": []any{"string", "null"}},
	"namespace":   map[string]any{"type": []any{"string", "null"}},
	"labels":      map[string]any{"type": []any{"object", "null"}, "additionalProperties": map[string]any{"type": []any{"string", "null"}}},
	"annotations": map[string]any{"type": []any{"object", "null"}, "additionalProperties": map[string]any{"type": []any{"string", "null"}}},
}}

// FromCRD reads the CRD manifest at file and converts the schema of its
// version (v1alpha1) for validating objects as written: metadata is
// ObjectMeta's part the model reads, and status, the controller's, is left
// out. It also returns the kind.
func FromCRD(file, version string) (kind string, s Schema, err error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", Schema{}, err
	}
	var crd struct {
		Spec struct {
			Names    struct{ Kind string }
			Versions []struct {
				Name   string
				Schema struct {
					OpenAPIV3Schema map[string]any `json:"openAPIV3Schema"`
				}
			}
		}
	}
	if err := yaml.Unmarshal(b, &crd); err != nil {
		return "", Schema{}, fmt.Errorf("%s: %w", file, err)
	}
	for _, v := range crd.Spec.Versions {
		root := maps.Clone(v.Schema.OpenAPIV3Schema)
		props, ok := root["properties"].(map[string]any)
		if v.Name != version || !ok {
			continue
		}
		props = maps.Clone(props)
		delete(props, "status")
		root["properties"] = props
		c := &converter{crd: true}
		js, err := c.node(root, "", nil, false, false)
		if err != nil {
			return "", Schema{}, fmt.Errorf("%s: %w", file, err)
		}
		js["properties"].(map[string]any)["metadata"] = objectMeta
		return crd.Spec.Names.Kind, Schema{JSON: js, Patterns: c.patterns}, nil
	}
	return "", Schema{}, fmt.Errorf("%s: no version %s with properties", file, version)
}

// Steps reads every <step>-config.json of the schema directory dir and
// returns each step's schema (its uses: the file name without
// -config.json), its $refs resolved in place.
func Steps(dir fs.FS) (map[string]Schema, error) {
	files, err := fs.Glob(dir, "*-config.json")
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no step config schemas (%v)", err)
	}
	r := &resolver{dir: dir, docs: map[string]map[string]any{}}
	out := map[string]Schema{}
	for _, name := range files {
		doc, err := r.load(name)
		if err != nil {
			return nil, err
		}
		c := &converter{refs: r}
		js, err := c.node(doc, name, nil, false, false)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[strings.TrimSuffix(name, "-config.json")] = Schema{JSON: js, Patterns: c.patterns}
	}
	return out, nil
}

// resolver reads the files of a schema directory, each once, and follows
// the $refs within and between them.
type resolver struct {
	dir  fs.FS
	docs map[string]map[string]any
}

func (r *resolver) load(name string) (map[string]any, error) {
	d, ok := r.docs[name]
	if !ok {
		b, err := fs.ReadFile(r.dir, path.Base(name))
		if err == nil {
			err = json.Unmarshal(b, &d)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		r.docs[name] = d
	}
	return d, nil
}

// resolve follows $ref ("#/definitions/x", "other.json#/definitions/x"); a
// $ref's siblings are annotations only (draft 4 and 7 ignore the others,
// and the walk rejects them).
func (r *resolver) resolve(s map[string]any, file string) (map[string]any, string, error) {
	for range 16 {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s, file, nil
		}
		for k := range s {
			if k != "$ref" && !ignored[k] {
				return nil, "", fmt.Errorf("$ref %q beside %q", ref, k)
			}
		}
		target, pointer, _ := strings.Cut(ref, "#")
		file = cmp.Or(target, file)
		doc, err := r.load(file)
		if err != nil {
			return nil, "", err
		}
		var v any
		if pointer != "" && pointer[0] != '/' {
			pointer = "/" + pointer // "#definitions/x" (Kargo v0.9), which gojsonschema reads
		}
		p, err := jsonpointer.New(pointer)
		if err == nil {
			v, _, err = p.Get(doc)
		}
		if s, ok = v.(map[string]any); !ok {
			return nil, "", fmt.Errorf("unresolvable $ref %q (%v)", ref, err)
		}
	}
	return nil, "", fmt.Errorf("$ref chain too long")
}

func strings2(v any) []string {
	out := []string{}
	xs, _ := v.([]any)
	for _, x := range xs {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// Kind is the schema of one kind the model reads, and where it comes from.
type Kind struct {
	Kind string
	// Version names the project's release ("Argo CD v3.5.1"), Source the
	// module and file it was read from.
	Version, Source string
	Schema          Schema
}

// Release is the step schemas of one Kargo release, and where they were read.
type Release struct {
	Version, Source string
	Steps           map[string]Schema
}

// KindsPath is where the generated CRD schemas live, relative to the
// repository root: only invalid-object reads them, so the Gatekeeper
// template, which carries the modules its rules import, goes without them.
const KindsPath = "policies/lib/flipflop/kind_schemas.rego"

// Rego renders the kinds (the module at KindsPath) and the releases, oldest
// first (the module at Path). Each schema is its JSON text, which
// json.match_schema takes as it is, and the subschemas that occur more than once in a
// module are written once, as its definitions (pool); an entry lists the
// definitions it needs (refs), which lib.flipflop.validation puts beside it.
func Rego(kinds []Kind, releases []Release) (map[string][]byte, error) {
	schemas := make([]Schema, len(kinds))
	for i, k := range kinds {
		schemas[i] = k.Schema
	}
	entries, defs := pool(schemas)
	rows := make([]string, len(kinds))
	for i, k := range kinds {
		rows[i] = fmt.Sprintf("%q: {\"version\": %q, \"source\": %q, %s}", k.Kind, k.Version, k.Source, entries[i])
	}
	kindsModule, err := module(KindsPath, "kind_schemas", "objects are validated with (internal/schemagen): the CRDs\n# of the kinds the model reads.",
		rule("kinds: each kind's schema, with the release and the file it was read from.", "kinds", rows), defs)
	if err != nil {
		return nil, err
	}

	// A step's schema changes in few releases: each one is written once, in
	// configs, and a release names it by its place there.
	configs, seen := map[string][]Schema{}, map[string]int{} // step: its distinct schemas, oldest first; step and schema text: its place there
	var versions []string
	for _, r := range releases {
		var at []string
		for _, name := range sortedKeys(r.Steps) {
			key := name + text(r.Steps[name])
			j, ok := seen[key]
			if !ok {
				j, seen[key] = len(configs[name]), len(configs[name])
				configs[name] = append(configs[name], r.Steps[name])
			}
			at = append(at, fmt.Sprintf("%q: %d", name, j))
		}
		versions = append(versions, fmt.Sprintf("%q: {\"version\": %q, \"source\": %q, \"steps\": {%s}}", Minor(r.Version), r.Version, r.Source, strings.Join(at, ", ")))
	}
	var distinct []Schema
	for _, name := range sortedKeys(configs) {
		distinct = append(distinct, configs[name]...)
	}
	entries, defs = pool(distinct)
	rows = nil
	for _, name := range sortedKeys(configs) {
		n := len(configs[name])
		rows = append(rows, fmt.Sprintf("%q: [\n\t\t{%s},\n\t]", name, strings.Join(entries[:n], "},\n\t\t{")))
		entries = entries[n:]
	}
	stepsModule, err := module(Path, "schemas", "step configs are validated with (internal/schemagen):\n# Kargo's promotion step config schemas of one release of each minor\n# release.",
		rule("releases names, for each Kargo minor release, the release its step schemas\n# are read from, where they were read, and the place of each step's (its uses)\n# schema in configs.", "releases", versions),
		rule("configs holds, for each step (its uses), each distinct schema of its config\n# over the releases, oldest first.", "configs", rows),
		defs)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{KindsPath: kindsModule, Path: stepsModule}, nil
}

// module is the generated module at path, package lib.flipflop.pkg, of the
// schemas what says, its rules as opa fmt formats them.
func module(path, pkg, what string, rules ...string) ([]byte, error) {
	src := fmt.Sprintf("# Code generated by go run ./hack/genschemas; DO NOT EDIT.\n# The JSON schemas %s patterns lists each schema's patterns, which\n"+
		"# lib.flipflop.validation tests itself; refs, the definitions it needs.\npackage lib.flipflop.%s\n\n%s", what, pkg, strings.Join(rules, "\n"))
	m, err := ast.ParseModuleWithOpts(path, src, ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		return nil, fmt.Errorf("generated module %s: %w", path, err)
	}
	return format.AstWithOpts(m, format.Opts{RegoVersion: ast.RegoV1})
}

// rule is the rule name := {rows}, one row a line (none: {}), after its
// comment.
func rule(comment, name string, rows []string) string {
	return fmt.Sprintf("# %s\n%s := {\n\t%s\n}\n", comment, name, strings.Join(rows, ",\n\t"))
}

// sortedKeys is m's keys, sorted: what is generated comes out in one order.
// (Never nil: an empty list is written [].)
func sortedKeys[V any](m map[string]V) []string {
	keys := slices.AppendSeq(make([]string, 0, len(m)), maps.Keys(m))
	slices.Sort(keys)
	return keys
}

// minShared is the size (of its JSON text) below which a subschema that
// occurs more than once is written out each time: a $ref costs the validator
// a lookup, and a small one saves little.
const minShared = 96

// pool renders schemas as entries of one module: each entry's
// "patterns", "refs" and "schema" (its JSON text, literal), the subschemas that
// occur more than once among them (Argo CD's ApplicationSet repeats the
// Application template under every generator; a step's schema changes
// little from one release to the next) each a $ref to one of the module's
// definitions, and the rule that holds those definitions. The larger ones
// are shared first, so a repeat inside one is shared too.
func pool(schemas []Schema) (entries []string, defsRule string) {
	counts := map[string]int{}
	var count func(s map[string]any) map[string]any
	count = func(s map[string]any) map[string]any {
		counts[text(s)]++
		return mapChildren(s, count)
	}
	for _, s := range schemas {
		count(s.JSON)
	}
	var defs []string              // definition "d<i>" is defs[i]
	ids := map[string]string{}     // a subschema's text: its definition
	needs := map[string][]string{} // a definition: it and those it needs
	var replace func(s map[string]any, top bool, refs map[string]bool) map[string]any
	replace = func(s map[string]any, top bool, refs map[string]bool) map[string]any {
		c := text(s)
		if top || counts[c] < 2 || len(c) < minShared {
			return mapChildren(s, func(c map[string]any) map[string]any { return replace(c, false, refs) })
		}
		id, ok := ids[c]
		if !ok {
			id = fmt.Sprintf("d%d", len(defs))
			ids[c] = id
			defs = append(defs, "")
			inner := map[string]bool{id: true}
			defs[len(defs)-1] = fmt.Sprintf("%q: %s", id, literal(replace(s, true, inner)))
			needs[id] = sortedKeys(inner)
		}
		for _, n := range needs[id] {
			refs[n] = true
		}
		return map[string]any{"$ref": "#/definitions/" + id}
	}
	for _, s := range schemas {
		refs := map[string]bool{}
		js := replace(s.JSON, true, refs)
		entries = append(entries, fmt.Sprintf("\"patterns\": %s, \"refs\": %s, \"schema\": %s", text(append([]Site{}, s.Patterns...)), text(sortedKeys(refs)), literal(js)))
	}
	return entries, rule("definitions are the subschemas the schemas above share, each a $ref's target\n# (as JSON text, as the schemas are).", "definitions", defs)
}

// text is v as JSON, keys sorted and nothing escaped that JSON does not
// require: a Rego term as it is. (What it is given was decoded from JSON or
// YAML, or built of such values, and always encodes.)
func text(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

// literal is v's JSON text as a Rego string, raw unless the text holds a
// backquote: json.match_schema reads a schema given as its text without
// converting it, and OPA parses the string as one token where an object
// costs a term per key (half of the policies' parsing, every run).
func literal(v any) string {
	j := text(v)
	if !strings.Contains(j, "`") {
		return "`" + j + "`"
	}
	return text(j)
}

// mapChildren returns a copy of s with each of its subschemas c (a
// property's, items, additionalProperties, not, a combinator's branch)
// replaced by f(c), in the order of s's sorted keys.
func mapChildren(s map[string]any, f func(c map[string]any) map[string]any) map[string]any {
	out := maps.Clone(s)
	for _, k := range sortedKeys(s) {
		switch x := s[k].(type) {
		case map[string]any:
			if k == "properties" {
				props := map[string]any{}
				for _, name := range sortedKeys(x) {
					props[name] = f(x[name].(map[string]any))
				}
				out[k] = props
			} else if k == "items" || k == "additionalProperties" || k == "not" {
				out[k] = f(x)
			}
		case []any:
			if k == "oneOf" || k == "anyOf" || k == "allOf" {
				list := make([]any, 0, len(x))
				for _, b := range x {
					list = append(list, f(b.(map[string]any)))
				}
				out[k] = list
			}
		}
	}
	return out
}
