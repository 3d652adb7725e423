package evaluator

import (
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
)

// Object is one Kubernetes object as read, with where it came from.
type Object struct {
	// Path is the file the object was read from, as the user named it
	// (slash-separated), "<stdin>" for standard input, or "cluster".
	Path string
	// Line is the 1-based line where the object starts in Path; 0 when unknown.
	Line int
	// APIVersion, Kind, Namespace and Name are copied from the object for
	// callers that index objects without touching Value.
	APIVersion, Kind, Namespace, Name string
	// Value is the decoded object (an ast.Object), converted once at load time.
	Value ast.Value
}

// LoadError reports input that could not be read or decoded. Every other
// file and document is still loaded and evaluated.
type LoadError struct {
	Path    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Message string `json:"message"`
}

// Error implements error as "path:line: message".
func (e LoadError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.Path, e.Line, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Message)
}

// where names an object for messages: "file:line" or its kind and name.
func (o *Object) where() string {
	switch {
	case o.Path != "" && o.Line > 0:
		return fmt.Sprintf("%s:%d", o.Path, o.Line)
	case o.Path != "":
		return o.Path
	}
	return fmt.Sprintf("%s %s/%s", o.Kind, o.Namespace, o.Name)
}

// NewObject makes an Object from a decoded Kubernetes object (as
// encoding/json, sigs.k8s.io/yaml or unstructured.Unstructured.Object hold
// it), read from path at line (0 when unknown): for programs that have objects
// in memory and do not use a Loader.
func NewObject(path string, line int, obj map[string]any) (Object, error) {
	if obj == nil {
		return Object{}, fmt.Errorf("%s: no object", path)
	}
	v, err := ast.InterfaceToValue(obj)
	if err != nil {
		return Object{}, fmt.Errorf("%s: %v", path, err)
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }
	md, _ := obj["metadata"].(map[string]any)
	return Object{
		Path: path, Line: line,
		APIVersion: str(obj, "apiVersion"), Kind: str(obj, "kind"),
		Namespace: str(md, "namespace"), Name: str(md, "name"),
		Value: v,
	}, nil
}
