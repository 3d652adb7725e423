package evaluator

import (
	"bytes"

	"go.yaml.in/yaml/v3"
)

// Waiver is one entry of a waivers file: findings of Rule ("*" for any) that
// involve a resource matching one of Resources ("Kind/namespace/name" globs,
// e.g. "Stage/acme/*") are waived for Reason until Expires (YYYY-MM-DD, optional).
// A waiver without a reason waives nothing and is reported (invalid-waiver);
// an expired one waives nothing and is reported (waiver-expired).
type Waiver struct {
	Rule      string   `yaml:"rule" json:"rule"`
	Resources []string `yaml:"resources" json:"resources"`
	Reason    string   `yaml:"reason" json:"reason"`
	Expires   string   `yaml:"expires" json:"expires,omitempty"`
	// File and Line say where the waiver was written.
	File string `yaml:"-" json:"-"`
	Line int    `yaml:"-" json:"-"`
}

func (w Waiver) data() map[string]any {
	resources := make([]any, 0, len(w.Resources))
	for _, r := range w.Resources {
		resources = append(resources, r)
	}
	return map[string]any{
		"rule": w.Rule, "resources": resources, "reason": w.Reason, "expires": w.Expires,
		"origin": map[string]any{"apiVersion": "flipflop.dev/v1", "kind": "Waiver", "namespace": "", "name": w.Rule, "file": w.File, "line": w.Line},
	}
}

// WaiverFile is the configuration file flipflop reads waivers from
// (--waivers FILE, or .flipflop.yaml in the working directory).
type WaiverFile struct {
	Waivers []Waiver `yaml:"waivers"`
}

// LoadWaivers reads a waivers file under the rules of a Loader with default
// settings (see Loader.ReadWaivers).
func LoadWaivers(path string) ([]Waiver, error) {
	return (&Loader{}).ReadWaivers(path)
}

// ReadWaivers reads a waivers file as every input is read: a regular file
// (FIFOs and devices are never opened) of at most MaxFileSize bytes, in
// UTF-8, UTF-16 or UTF-32. An empty or comment-only file, or "waivers:" with
// nothing under it, is an empty list. Unknown keys are an error, so a typo
// cannot silently waive nothing.
func (l *Loader) ReadWaivers(path string) ([]Waiver, error) {
	b, lerr := readFileLimited(path, path, l.maxFileSize())
	if lerr != nil {
		return nil, lerr
	}
	b, lerr = decodeText(path, b)
	if lerr != nil {
		return nil, lerr
	}
	if line, msg, bad := invalidUTF8(b); bad {
		return nil, &LoadError{Path: path, Line: line, Message: msg}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		line, msg := yamlErrorLine(err.Error(), b)
		return nil, &LoadError{Path: path, Line: line, Message: msg}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, nil // empty, or comments only
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &LoadError{Path: path, Line: root.Line, Message: "a waivers file is a mapping: waivers: [{rule, resources, reason, expires}]"}
	}
	var wf WaiverFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&wf); err != nil {
		line, msg := yamlErrorLine(err.Error(), b)
		return nil, &LoadError{Path: path, Line: line, Message: msg}
	}
	// Lines of each entry, for findings about the waivers themselves.
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "waivers" && root.Content[i+1].Kind == yaml.SequenceNode {
			for j, item := range root.Content[i+1].Content {
				if j < len(wf.Waivers) {
					wf.Waivers[j].Line = item.Line
				}
			}
		}
	}
	for i := range wf.Waivers {
		wf.Waivers[i].File = path
	}
	return wf.Waivers, nil
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}
