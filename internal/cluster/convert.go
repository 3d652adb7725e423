package cluster

import (
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// lastApplied is kubectl's copy of the previous manifest: large, and nothing
// flipflop reads.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// toObject converts an object read from the API server into an
// evaluator.Object with Path label and Line 0. Managed fields and kubectl's
// last-applied annotation are dropped, and so is the status unless
// keepStatus; the spec is kept.
func toObject(u *unstructured.Unstructured, label string, keepStatus bool) (evaluator.Object, error) {
	obj := make(map[string]any, len(u.Object))
	for k, v := range u.Object {
		switch {
		case k == "status" && !keepStatus:
		case k == "metadata":
			obj[k] = trimMetadata(v)
		default:
			obj[k] = v
		}
	}
	v, err := ast.InterfaceToValue(obj)
	if err != nil {
		return evaluator.Object{}, fmt.Errorf("%s %s/%s: cannot convert: %v", u.GetKind(), u.GetNamespace(), u.GetName(), err)
	}
	return evaluator.Object{
		Path:       label,
		APIVersion: u.GetAPIVersion(),
		Kind:       u.GetKind(),
		Namespace:  u.GetNamespace(),
		Name:       u.GetName(),
		Value:      v,
	}, nil
}

// trimMetadata is an object's metadata without its managed fields and
// kubectl's last-applied annotation (as it stands when it is not an object).
func trimMetadata(v any) any {
	md, ok := v.(map[string]any)
	if !ok {
		return v
	}
	trimmed := without(md, "managedFields")
	if ann, ok := md["annotations"].(map[string]any); ok {
		if _, has := ann[lastApplied]; has {
			trimmed["annotations"] = without(ann, lastApplied)
		}
	}
	return trimmed
}

// without is a shallow copy of m without key: the objects read are the
// client's, and are left as they are.
func without(m map[string]any, key string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}
