package loader

import (
	"bytes"
	"fmt"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// WaiverFile is the configuration file flipflop reads waivers from
// (--waivers FILE, or .flipflop.yaml in the working directory).
type WaiverFile struct {
	Waivers []evaluator.Waiver `yaml:"waivers"`
	// Exclude lists patterns of paths not to read (see Exclude), relative to
	// the file's directory.
	Exclude []string `yaml:"exclude"`
	// KargoVersion is the Kargo release the estate runs on (--kargo-version
	// wins over it).
	KargoVersion string `yaml:"kargoVersion"`
}

// Config is what a configuration file (WaiverFile) holds, ready to use.
type Config struct {
	Waivers []evaluator.Waiver
	// Exclude are the file's exclude patterns, relative to its directory,
	// with their file and line as Source.
	Exclude []Exclude
	// KargoVersion is the file's kargoVersion ("" when it names none), and
	// KargoVersionSource its file and line.
	KargoVersion, KargoVersionSource string
}

// LoadWaivers reads the waivers of a configuration file under the rules of a
// Loader with default settings (see Loader.ReadConfig).
func LoadWaivers(path string) ([]evaluator.Waiver, error) {
	return (&Loader{}).ReadWaivers(path)
}

// LoadConfig reads a configuration file under the rules of a Loader with
// default settings (see Loader.ReadConfig).
func LoadConfig(path string) (*Config, error) {
	return (&Loader{}).ReadConfig(path)
}

// ReadWaivers reads the waivers of a configuration file (see ReadConfig).
func (l *Loader) ReadWaivers(path string) ([]evaluator.Waiver, error) {
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
		return nil, &evaluator.LoadError{Path: path, Line: line, Message: msg}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		line, msg := yamlErrorLine(err.Error(), b)
		return nil, &evaluator.LoadError{Path: path, Line: line, Message: msg}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return &Config{}, nil // empty, or comments only
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &evaluator.LoadError{Path: path, Line: root.Line, Message: "a configuration file is a mapping: waivers: [{rule, resources, reason, expires}], exclude: [patterns], kargoVersion: v1.x"}
	}
	var wf WaiverFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&wf); err != nil {
		line, msg := yamlErrorLine(err.Error(), b)
		return nil, &evaluator.LoadError{Path: path, Line: line, Message: msg}
	}
	// Lines of each entry, for findings about the waivers themselves and
	// for the sources of exclude patterns.
	var excludeLines []int
	kargoLine := 0
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch {
		case root.Content[i].Value == "kargoVersion":
			kargoLine = root.Content[i+1].Line
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
	c := &Config{Waivers: wf.Waivers, KargoVersion: wf.KargoVersion}
	if wf.KargoVersion != "" {
		c.KargoVersionSource = fmt.Sprintf("%s:%d", path, kargoLine)
	}
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
