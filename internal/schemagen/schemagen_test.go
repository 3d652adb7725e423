package schemagen

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/internal/upstream"
	"github.com/open-policy-agent/opa/v1/ast"
)

// The schemas the policies validate with are generated from Kargo's and Argo
// CD's releases as released, and regenerated whenever they change: a stale
// file fails here (go run ./hack/genschemas rewrites it). The CRDs and the
// newest Kargo release are read from their Go modules, always; the older
// Kargo releases from a Kargo repository at their tags, when one is at hand
// (DefaultGitDir): without it, their schemas are checked only for being there.
func TestSchemasAreCurrent(t *testing.T) {
	committed := map[string][]byte{}
	for _, p := range []string{KindsPath, Path} {
		committed[p] = mustRead(t, filepath.Join("..", "..", p))
	}
	gitDir := DefaultGitDir()
	if !filepath.IsAbs(gitDir) {
		gitDir = filepath.Join("..", "..", gitDir)
	}
	if _, err := os.Stat(gitDir); err == nil {
		want, err := Generate(gitDir)
		if err != nil {
			t.Fatal(err)
		}
		for p, b := range committed {
			if !bytes.Equal(b, want[p]) {
				t.Errorf("%s is stale: run go run ./hack/genschemas", p)
			}
		}
		return
	}
	t.Logf("no Kargo repository at %s (FLIPFLOP_KARGO_GIT): the step schemas of the releases before %s are not regenerated", gitDir, upstream.KargoVersion)
	kinds, err := Kinds()
	if err != nil {
		t.Fatal(err)
	}
	want, err := Rego(kinds, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(committed[KindsPath], want[KindsPath]) {
		t.Errorf("%s is stale: run go run ./hack/genschemas", KindsPath)
	}
	r, err := ReleaseOf("", upstream.KargoVersion)
	if err != nil {
		t.Fatal(err)
	}
	m := parse(t, committed[Path])
	for name, s := range r.Steps {
		if want, _ := json.Marshal(s.JSON); stepSchema(t, m, Minor(r.Version), name) != string(want) {
			t.Errorf("%s is stale for %s %s: run go run ./hack/genschemas", Path, r.Version, name)
		}
	}
	if got := len(m["releases"].(map[string]any)); got != len(Releases) {
		t.Errorf("%s has %d releases, want %d", Path, got, len(Releases))
	}
}

// stepSchema is the schema of step uses in minor release minor of the
// generated module m, each $ref replaced by the definition it names: the
// schema as Kargo's files say it (as json.Marshal writes it).
func stepSchema(t *testing.T, m map[string]any, minor, uses string) string {
	t.Helper()
	place, ok := m["releases"].(map[string]any)[minor].(map[string]any)["steps"].(map[string]any)[uses].(json.Number)
	if !ok {
		t.Fatalf("no %s schema in %s", uses, minor)
	}
	i, _ := place.Int64()
	entry := m["configs"].(map[string]any)[uses].([]any)[i].(map[string]any)
	defs := m["definitions"].(map[string]any)
	decoded := func(v any) any { // a schema or a definition: its JSON text
		dec := json.NewDecoder(strings.NewReader(v.(string)))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	var expand func(v any) any
	expand = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok && len(x) == 1 {
				return expand(decoded(defs[strings.TrimPrefix(ref, "#/definitions/")]))
			}
			out := map[string]any{}
			for k, e := range x {
				out[k] = expand(e)
			}
			return out
		case []any:
			out := make([]any, len(x))
			for k, e := range x {
				out[k] = expand(e)
			}
			return out
		}
		return v
	}
	b, err := json.Marshal(expand(decoded(entry["schema"])))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// parse reads the generated module's values back.
func parse(t *testing.T, src []byte) map[string]any {
	t.Helper()
	m, err := ast.ParseModuleWithOpts(Path, string(src), ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	for _, r := range m.Rules {
		v, err := ast.JSON(r.Head.Value.Value)
		if err != nil {
			t.Fatal(err)
		}
		out[r.Head.Name.String()] = v
	}
	return out
}

// What the schemas are for: the fields real Stages get wrong, each in the
// schema of the releases that have it.
func TestStepSchemasHoldWhatRealStagesGetWrong(t *testing.T) {
	m := parse(t, mustRead(t, filepath.Join("..", "..", Path)))
	schema := func(minor, step string) string { return stepSchema(t, m, minor, step) }
	// kustomize-set-image's images need a tag or a digest from v1.4 (a oneOf,
	// akuity/kargo#3578).
	if s := schema("1.11", "kustomize-set-image"); !strings.Contains(s, `"oneOf"`) || !strings.Contains(s, `"required":["tag"]`) {
		t.Errorf("kustomize-set-image at v1.11: %s", s)
	}
	// git-commit's messageFromSteps until v1.5
	if !strings.Contains(schema("1.4", "git-commit"), "messageFromSteps") || strings.Contains(schema("1.11", "git-commit"), "messageFromSteps") {
		t.Error("git-commit: messageFromSteps is v1.4's, not v1.11's")
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Each rewrite of the package doc: $refs resolved in place, a CRD's
// nullable, int-or-string and defaulted required fields, a pattern kept and
// listed (with its not), one below a oneOf that lists words as an enum, and
// a keyword no rewrite knows refused.
func TestConversion(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("common.json", `{"definitions": {"sel": {"type": "object", "additionalProperties": false, "properties": {"a": {"type": "string", "pattern": "^a"}}}}}`)
	write("x-config.json", `{"type": "object", "required": ["items"], "properties": {
		"items": {"type": "array", "items": {"$ref": "common.json#/definitions/sel"}},
		"mode": {"type": "string", "oneOf": [{"properties": {}, "pattern": "^(On|Off)$"}]}}}`)
	steps, err := Steps(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(steps["x"].JSON)
	want := `{"properties":{"items":{"items":{"additionalProperties":false,"properties":{"a":{"not":{"pattern":"[^\\x00-\\x{10FFFF}]","type":"string"},"pattern":"^a","type":"string"}},"type":"object"},"type":"array"},` +
		`"mode":{"oneOf":[{"anyOf":[{"not":{"type":"string"}},{"enum":["On","Off"]}],"properties":{}}],"type":"string"}},"required":["items"],"type":"object"}`
	if string(got) != want {
		t.Errorf("step schema:\n got %s\nwant %s", got, want)
	}
	if p := steps["x"].Patterns; len(p) != 1 || strings.Join(p[0].Path, ".") != "items.[].a" || p[0].Pattern != "^a" {
		t.Errorf("patterns: %+v", p)
	}

	write("bad-config.json", `{"type": "object", "if": {}}`)
	if _, err := Steps(os.DirFS(dir)); err == nil || !strings.Contains(err.Error(), `"if"`) {
		t.Errorf("a keyword no rewrite knows: %v", err)
	}
	if err := os.Remove(filepath.Join(dir, "bad-config.json")); err != nil {
		t.Fatal(err)
	}

	write("crd.yaml", `spec:
  names: {kind: Thing}
  versions:
  - name: v1alpha1
    schema:
      openAPIV3Schema:
        type: object
        properties:
          status: {type: object}
          spec:
            type: object
            required: [a, b]
            properties:
              a: {type: string}
              b: {type: string, default: x}
              c: {x-kubernetes-int-or-string: true}
              d: {type: string, enum: [p, q]}
              e: {type: object, x-kubernetes-validations: [{rule: "true"}]}
`)
	kind, s, err := FromCRD(filepath.Join(dir, "crd.yaml"), "v1alpha1")
	if err != nil {
		t.Fatal(err)
	}
	got, _ = json.Marshal(s.JSON["properties"].(map[string]any)["spec"])
	want = `{"properties":{"a":{"type":"string"},"b":{"type":["string","null"]},"c":{"anyOf":[{"type":"integer"},{"type":"string"},{"type":"null"}]},` +
		`"d":{"enum":["p","q",null],"type":["string","null"]},"e":{"type":["object","null"]}},"required":["a"],"type":["object","null"]}`
	if kind != "Thing" || string(got) != want {
		t.Errorf("CRD %s:\n got %s\nwant %s", kind, got, want)
	}
	if _, ok := s.JSON["properties"].(map[string]any)["status"]; ok {
		t.Error("status is the controller's, not validated")
	}
}

// A schema is written as its JSON text in a raw string, or, when the text
// holds a backquote (a raw string cannot), as an escaped one: either way the
// Rego string is the JSON text.
func TestLiteral(t *testing.T) {
	for _, v := range []any{
		map[string]any{"pattern": "^[a-z]+$", "type": "string"},
		map[string]any{"description": "use `x`", "enum": []any{"a`b"}},
	} {
		lit := literal(v)
		term, err := ast.ParseTerm(lit)
		if err != nil {
			t.Fatalf("%s: %v", lit, err)
		}
		want := text(v)
		if s, ok := term.Value.(ast.String); !ok || string(s) != want {
			t.Errorf("literal(%v) = %s, reads as %v, want the string %s", v, lit, term, want)
		}
	}
}
