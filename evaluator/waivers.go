package evaluator

import (
	"bytes"
	"fmt"
	"os"
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

// LoadWaivers reads the waivers of a waivers file (see LoadConfig).
func LoadWaivers(path string) ([]Waiver, error) {
	c, err := LoadConfig(path)
	if err != nil {
		return nil, err
	}
	return c.Waivers, nil
}

// LoadConfig reads a configuration file: waivers and exclude patterns.
// Unknown keys are an error, so a typo cannot silently waive nothing.
func LoadConfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	var wf WaiverFile
	var excludeLines []int
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if err := dec.Decode(&wf); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	// Lines of each entry, for findings about the waivers themselves.
	if len(doc.Content) > 0 {
		root := doc.Content[0]
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value == "waivers" && root.Content[i+1].Kind == yaml.SequenceNode {
				for j, item := range root.Content[i+1].Content {
					if j < len(wf.Waivers) {
						wf.Waivers[j].Line = item.Line
					}
				}
			}
			if root.Content[i].Value == "exclude" && root.Content[i+1].Kind == yaml.SequenceNode {
				for _, item := range root.Content[i+1].Content {
					excludeLines = append(excludeLines, item.Line)
				}
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
