package evaluator

import (
	"bytes"
	"fmt"
	"path/filepath"

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
	// Exclude lists patterns of paths not to read (see Exclude), relative to
	// the file's directory.
	Exclude []string `yaml:"exclude"`
}

// Config is what a configuration file (WaiverFile) holds, ready to use.
type Config struct {
	Waivers []Waiver
	// Exclude are the file's exclude patterns, relative to its directory,
	// with their file and line as Source.
	Exclude []Exclude
}

// LoadWaivers reads the waivers of a configuration file under the rules of a
// Loader with default settings (see Loader.ReadConfig).
func LoadWaivers(path string) ([]Waiver, error) {
	return (&Loader{}).ReadWaivers(path)
}

// LoadConfig reads a configuration file under the rules of a Loader with
// default settings (see Loader.ReadConfig).
func LoadConfig(path string) (*Config, error) {
	return (&Loader{}).ReadConfig(path)
}

// ReadWaivers reads the waivers of a configuration file (see ReadConfig).
func (l *Loader) ReadWaivers(path string) ([]Waiver, error) {
	c, err := l.ReadConfig(path)
	if err != nil {
		return nil, err
	}
	return c.Waivers, nil
}

// ReadConfig reads a configuration file (waivers and exclude patterns) as
// every input is read: a regular file (FIFOs and devices are never opened) of
// at most MaxFileSize bytes, in UTF-8, UTF-16 or UTF-32. An empty or
// comment-only file, or "waivers:" with nothing under it, is an empty
// configuration. Unknown keys are an error, so a typo cannot silently waive
// nothing.
func (l *Loader) ReadConfig(path string) (*Config, error) {
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
		return &Config{}, nil // empty, or comments only
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &LoadError{Path: path, Line: root.Line, Message: "a configuration file is a mapping: waivers: [{rule, resources, reason, expires}], exclude: [patterns]"}
	}
	var wf WaiverFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&wf); err != nil {
		line, msg := yamlErrorLine(err.Error(), b)
		return nil, &LoadError{Path: path, Line: line, Message: msg}
	}
	// Lines of each entry, for findings about the waivers themselves and
	// for the sources of exclude patterns.
	var excludeLines []int
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch {
		case root.Content[i].Value == "waivers" && root.Content[i+1].Kind == yaml.SequenceNode:
			for j, item := range root.Content[i+1].Content {
				if j < len(wf.Waivers) {
					wf.Waivers[j].Line = item.Line
				}
			}
		case root.Content[i].Value == "exclude" && root.Content[i+1].Kind == yaml.SequenceNode:
			for _, item := range root.Content[i+1].Content {
				excludeLines = append(excludeLines, item.Line)
			}
		}
	}
	for i := range wf.Waivers {
		wf.Waivers[i].File = path
	}
	c := &Config{Waivers: wf.Waivers}
	for i, pattern := range wf.Exclude {
		source := path + ":exclude"
		if i < len(excludeLines) {
			source = fmt.Sprintf("%s:%d", path, excludeLines[i])
		}
		c.Exclude = append(c.Exclude, Exclude{Pattern: pattern, Dir: filepath.Dir(path), Source: source})
	}
	return c, nil
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}
