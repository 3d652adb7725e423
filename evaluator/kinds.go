package evaluator

import (
	"fmt"
	"strings"
	"sync"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/flipflop-dev/flipflop/policies"
)

// objectsModule is the policy module that says which kinds the model reads.
const objectsModule = "lib/flipflop/objects.rego"

var readKinds = sync.OnceValues(func() (map[string]string, error) {
	src, err := policies.FS.ReadFile(objectsModule)
	if err != nil {
		return nil, err
	}
	m, err := ast.ParseModuleWithOpts(objectsModule, string(src), ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err != nil {
		return nil, err
	}
	for _, r := range m.Rules {
		if r.Head.Name.String() != "read_kinds" && r.Head.Ref().String() != "read_kinds" {
			continue
		}
		v, err := ast.JSON(r.Head.Value.Value)
		if err != nil {
			return nil, fmt.Errorf("%s: read_kinds is not a constant: %w", objectsModule, err)
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: read_kinds is not an object", objectsModule)
		}
		kinds := make(map[string]string, len(obj))
		for k, prefix := range obj {
			p, ok := prefix.(string)
			if !ok {
				return nil, fmt.Errorf("%s: read_kinds[%q] is not a string", objectsModule, k)
			}
			kinds[k] = p
		}
		return kinds, nil
	}
	return nil, fmt.Errorf("%s has no read_kinds", objectsModule)
})

// ReadKinds returns the kinds the policies read, each with the prefix its
// apiVersion must have (Stage: "kargo.akuity.io/"), as the policies'
// lib.flipflop.objects.read_kinds says. Every other object is invisible to
// every rule.
func ReadKinds() map[string]string {
	kinds, err := readKinds()
	if err != nil {
		panic(err) // the embedded policies are broken: a build defect
	}
	out := make(map[string]string, len(kinds))
	for k, v := range kinds {
		out[k] = v
	}
	return out
}

// ReadKind reports whether some rule reads objects of kind with apiVersion.
func ReadKind(apiVersion, kind string) bool {
	kinds, err := readKinds()
	if err != nil {
		panic(err)
	}
	prefix, ok := kinds[kind]
	return ok && strings.HasPrefix(apiVersion, prefix)
}
