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
	obj := u.Object
	if _, has := obj["status"]; has && !keepStatus {
		shallow := make(map[string]any, len(obj))
		for k, v := range obj {
			if k != "status" {
				shallow[k] = v
			}
		}
		obj = shallow
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		trimmed := make(map[string]any, len(md))
		for k, v := range md {
			if k != "managedFields" {
				trimmed[k] = v
			}
		}
		if ann, ok := md["annotations"].(map[string]any); ok {
			if _, has := ann[lastApplied]; has {
				a := make(map[string]any, len(ann))
				for k, v := range ann {
					if k != lastApplied {
						a[k] = v
					}
				}
				trimmed["annotations"] = a
			}
		}
		shallow := make(map[string]any, len(obj))
		for k, v := range obj {
			shallow[k] = v
		}
		shallow["metadata"] = trimmed
		obj = shallow
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
