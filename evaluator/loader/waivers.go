package loader

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/safetext"
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
	// Errors are the input errors that leave the rest of the file usable: a
	// waiver whose expiry is no date that exists (it is still listed, and
	// waives nothing, since the policies find it invalid).
	Errors []evaluator.LoadError
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

// ReadConfigIn reads a configuration file found in dir rather than named by
// the user (.flipflop.yaml in the working directory): as ReadConfig, but,
// unless FollowSymlinks, a symbolic link leading outside dir is refused
// unread, as the files of a directory walk are, so that a checkout cannot
// make flipflop read (and quote in its errors) a file next to it.
func (l *Loader) ReadConfigIn(dir, path string) (*Config, error) {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 && !l.FollowSymlinks {
		absDir, dirErr := filepath.Abs(dir)
		absPath, pathErr := filepath.Abs(path)
		realDir := ""
		if dirErr == nil {
			realDir, dirErr = filepath.EvalSymlinks(absDir)
		}
		if _, err := filepath.EvalSymlinks(absPath); err == nil && (pathErr != nil || !insideRoot(absPath, realDir, dirErr)) {
			where := filepath.ToSlash(dir)
			if filepath.Clean(dir) == "." {
				where = "the working directory"
			}
			return nil, &evaluator.LoadError{Path: filepath.ToSlash(path), Message: "a symbolic link leading outside " + where + ": not read (use --follow-symlinks to read it)"}
		}
		// A dangling link or a loop: ReadConfig says which.
	}
	return l.ReadConfig(path)
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
		return nil, configError(path, err, b)
	}
	// Lines of each entry, for findings about the waivers themselves and
	// for the sources of exclude patterns.
	var excludeLines []int
	var items []*yaml.Node
	kargoLine := 0
	for i := 0; i+1 < len(root.Content); i += 2 {
		switch {
		case root.Content[i].Value == "kargoVersion":
			kargoLine = root.Content[i+1].Line
		case root.Content[i].Value == "waivers" && root.Content[i+1].Kind == yaml.SequenceNode:
			items = root.Content[i+1].Content
			for j, item := range items {
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
	for i, w := range wf.Waivers {
		if problem := expiryProblem(w.Expires); problem != "" {
			line := w.Line
			if i < len(items) {
				if l := keyLine(items[i], "expires"); l > 0 {
					line = l
				}
			}
			c.Errors = append(c.Errors, evaluator.LoadError{Path: path, Line: line, Message: fmt.Sprintf("waiver %d: expires: %s; the waiver waives nothing", i+1, problem)})
		}
	}
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

// configError turns an error of decoding a configuration file into a
// LoadError in the file's words: the line of the value (yaml.v3 puts the
// first of its type errors after a line of its own) and no Go type names.
func configError(path string, err error, data []byte) *evaluator.LoadError {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	line, msg := yamlErrorLine(msg, data)
	return &evaluator.LoadError{Path: path, Line: line, Message: configWords(msg)}
}

var (
	unknownField    = regexp.MustCompile(`^field (.*) not found in type (\S+)$`)
	cannotUnmarshal = regexp.MustCompile(`^cannot unmarshal !!(\w+)(?: ` + "`" + `.*` + "`" + `)? into (\S+)$`)
)

// configTypes names, in the file's words, the Go types a configuration file
// decodes into.
var configTypes = map[string]string{
	"loader.WaiverFile":  "the configuration file (keys: waivers, exclude, kargoVersion)",
	"evaluator.Waiver":   "a waiver (keys: rule, resources, reason, expires)",
	"[]evaluator.Waiver": "a list of waivers",
	"[]string":           "a list of strings",
	"string":             "a string",
}

var yamlTags = map[string]string{
	"str": "a string", "int": "a number", "float": "a number", "bool": "a boolean",
	"seq": "a list", "map": "a mapping", "null": "null", "timestamp": "a date", "binary": "binary data",
}

// configWords rewrites yaml.v3's type errors without Go type names; a key it
// quotes is cut to 64 characters.
func configWords(msg string) string {
	if m := unknownField.FindStringSubmatch(msg); m != nil {
		if where, ok := configTypes[m[2]]; ok {
			return fmt.Sprintf("unknown key %q in %s", safetext.Cut(m[1], 64), where)
		}
	}
	if m := cannotUnmarshal.FindStringSubmatch(msg); m != nil {
		got, ok1 := yamlTags[m[1]]
		want, ok2 := configTypes[m[2]]
		if ok1 && ok2 {
			return fmt.Sprintf("%s where %s belongs", got, strings.SplitN(want, " (", 2)[0])
		}
	}
	return msg
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}
