package loader

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"go.yaml.in/yaml/v3"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// Config is what a configuration file (--waivers FILE, or .flipflop.yaml in
// the working directory) holds, ready to use: see ConfigKeys.
type Config struct {
	Waivers []evaluator.Waiver
	// Exclude are the file's exclude patterns, relative to its directory,
	// with their file and line as Source.
	Exclude []Exclude
	// KargoVersion is the file's kargoVersion ("" when it names none), and
	// KargoVersionSource its file and line.
	KargoVersion, KargoVersionSource string
	// Settings are the flag defaults the file gives (the keys of ConfigKeys
	// with a Flag), in the file's order.
	Settings []Setting
	// Errors are the input errors that leave the rest of the file usable,
	// each at its line and naming its key: an unknown key (with the nearest
	// known one), a value of the wrong type (the key is not read), a waiver
	// with such a problem (it is not read), or whose expiry is no date that
	// exists (it is still listed, and waives nothing, since the policies find
	// it invalid).
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

// ReadConfig reads a configuration file (waivers, exclude patterns, flag
// defaults: ConfigKeys) as every input is read: a regular file (FIFOs and
// devices are never opened) of at most MaxFileSize bytes, in UTF-8, UTF-16 or
// UTF-32. An empty or comment-only file, or "waivers:" with nothing under it,
// is an empty configuration. A file that is no YAML mapping is an error; a
// problem with one key or one waiver is reported in Config.Errors (an
// unknown key with the nearest known one, so a typo cannot silently waive
// nothing) and the rest of the file is read.
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
	r := &configReader{path: path, budget: configBudget + len(b)}
	c := &Config{}
	r.readConfigNode(root, c)
	if r.budget <= 0 {
		return nil, &evaluator.LoadError{Path: path, Line: 1, Message: fmt.Sprintf("the configuration file expands to more than %d values (YAML aliases): not read", configBudget+len(b))}
	}
	c.Errors = r.errs
	return c, nil
}

// configBudget, plus one per byte, bounds the nodes a configuration file's
// aliases may expand to.
const configBudget = 100_000

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}
