package cluster

import (
	"fmt"
	"slices"

	"github.com/open-policy-agent/opa/v1/ast"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// lastApplied is kubectl's copy of the previous manifest: large, and nothing
// flipflop reads.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// serverSet are the metadata fields the API server and controllers set that
// no policy reads (TestPoliciesReadOnlyTheModelView adds them all to every
// object of every test estate, and the reports do not change): dropped as an
// object is read. The UID and the owner references are kept: a policy report
// names the resources of a result by their UIDs, and Merge finds the
// Applications an ApplicationSet in the files generates anew by their owner.
var serverSet = []string{"managedFields", "resourceVersion", "generation", "creationTimestamp", "finalizers"}

// toObject converts an object read from the API server into an
// evaluator.Object with Path label and Line 0. The server-set metadata and
// kubectl's last-applied annotation are dropped, and so are the status and
// an Application's operation (what Argo CD is asked to do next) unless
// keepStatus: no policy reads them (TestPoliciesReadOnlyTheModelView), and
// a live Application's status (its resources, history and last operation)
// is often larger than the rest of it. The spec is kept.
func toObject(u *unstructured.Unstructured, label string, keepStatus bool) (evaluator.Object, error) {
	obj := make(map[string]any, len(u.Object))
	for k, v := range u.Object {
		switch {
		case (k == "status" || k == "operation") && !keepStatus:
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

// trimMetadata is an object's metadata without the server-set fields and
// kubectl's last-applied annotation (as it stands when it is not an object).
func trimMetadata(v any) any {
	md, ok := v.(map[string]any)
	if !ok {
		return v
	}
	trimmed := without(md, serverSet...)
	if ann, ok := md["annotations"].(map[string]any); ok {
		if _, has := ann[lastApplied]; has {
			trimmed["annotations"] = without(ann, lastApplied)
		}
	}
	return trimmed
}

// without is a shallow copy of m without keys: the objects read are the
// client's, and are left as they are.
func without(m map[string]any, keys ...string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if !slices.Contains(keys, k) {
			out[k] = v
		}
	}
	return out
}
