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
	// Value is the decoded object (an ast.Object), converted once at load time;
	// NewObject and package loader fill it. An Object without one is an error
	// for the Evaluator.
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
// in memory and do not use a loader.Loader.
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

// DuplicateKey is a mapping key repeated in a document: the last value counts.
type DuplicateKey struct {
	Key string `json:"key"`
	// Line is the repeated key's line, First the line of its first occurrence
	// (1-based, absolute in the file).
	Line  int `json:"line"`
	First int `json:"first"`
	// MappingLine and MappingColumn place the mapping that repeats the key
	// (1-based; the line absolute in the file): the keys one mapping repeats
	// (a list entry that lost its "- " and took the next one's keys) are one
	// mistake. Zero when unknown.
	MappingLine   int `json:"mappingLine,omitempty"`
	MappingColumn int `json:"mappingColumn,omitempty"`
}

// Render modes: how a directory was read (Object.Rendered, RenderedRoot.Mode).
const (
	// ModeHelm renders a Helm chart (a directory with Chart.yaml).
	ModeHelm = "helm"
	// ModeKustomize builds a kustomization (a directory with kustomization.yaml,
	// kustomization.yml or Kustomization).
	ModeKustomize = "kustomize"
)

// Exclusion is a path a loader.Loader did not read because a pattern excluded it.
type Exclusion struct {
	// Path is the file or directory (ending in /) as the inputs name it.
	Path string `json:"path"`
	// Pattern is the pattern that excluded it, as written.
	Pattern string `json:"pattern"`
	// Source is where the pattern was written: "--exclude",
	// ".flipflop.yaml:4", "charts/.flipflopignore:2".
	Source string `json:"source"`
}

// RenderedRoot says how one directory was read. Reports list them so that a
// user can tell what was checked.
type RenderedRoot struct {
	// Path is the directory, as the user named it (slash-separated).
	Path string `json:"path"`
	// Mode is ModeHelm or ModeKustomize.
	Mode string `json:"mode"`
	// Objects counts the Kubernetes objects the rendering produced (of any kind).
	Objects int `json:"objects"`
	// Chart is "name version" of a Helm chart.
	Chart string `json:"chart,omitempty"`
	// Values lists the values a chart was rendered with: "values.yaml" (the
	// chart's defaults), then each --values file and --set flag.
	Values []string `json:"values,omitempty"`
	// BaseOf names a kustomization that reads this one as a base or
	// component (the first by path when several do). Its objects count there,
	// as that overlay changes them, and here too, as they stand: an
	// Application that points at this directory builds it unpatched.
	BaseOf string `json:"baseOf,omitempty"`
	// NotListed lists the manifest files in a kustomization's own directory
	// that no kustomization reads, or in a chart's own directory (not the
	// chart's data such as values files): an Application pointing at the
	// directory builds or renders it, which never reads them, so they are
	// not part of the estate and were not checked. Files in a plain
	// directory below are read as they stand.
	NotListed []string `json:"notListed,omitempty"`
	// Failed is set when the directory, or part of its output, could not be
	// rendered or read (the input errors say why).
	Failed bool `json:"failed,omitempty"`
}
