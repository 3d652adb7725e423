package evaluator

import (
	"fmt"
	"sort"

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
	// Rendered is how the object was produced when it is not written in Path
	// as it stands: ModeHelm (Path is the template it was rendered from) or
	// ModeKustomize (Path is the file kustomize read it from, before the
	// kustomization's patches and transformers). Empty for plain YAML.
	Rendered string
	// Duplicates lists the mapping keys the object's document repeats: the
	// last value was kept, as Kubernetes does (the duplicate-key rule warns).
	Duplicates []DuplicateKey
	// RenderedBy names what rendered the object, for findings:
	// "helm chart <dir>" or "kustomize <dir>". Empty for plain YAML.
	RenderedBy string
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

// withDuplicates gives each object the repeated keys of its document: for the
// items of a List, those at or after the item's first line and before the
// next item's.
func withDuplicates(objs []Object, dups []DuplicateKey) []Object {
	if len(dups) == 0 || len(objs) == 0 {
		return objs
	}
	for _, d := range dups {
		// objs are in line order: the owner is the last one starting at or
		// before the key (a binary search, so that many keys in a long List
		// cost n log n, not n²).
		owner := max(0, sort.Search(len(objs), func(i int) bool { return objs[i].Line > d.Line })-1)
		objs[owner].Duplicates = append(objs[owner].Duplicates, d)
	}
	return objs
}
