package render

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// errReadOnly is returned by every write of a confined file system.
var errReadOnly = errors.New("flipflop reads only: the file system is read-only")

// rootDir is a directory rendering may read, as the user named it and resolved.
type rootDir struct {
	// Shown is the path as the user gave it (slash-separated).
	Shown string `json:"shown"`
	// Real is the absolute path with symbolic links resolved.
	Real string `json:"real"`
}

// confined is a read-only view of the file system that refuses every path
// outside its roots (after resolving symbolic links), every file that is not
// a regular file (FIFOs, devices, sockets are never opened), files larger
// than MaxFile, and reads beyond a total Budget. It records the files read.
// It implements kustomize's filesys.FileSystem.
type confined struct {
	Roots []rootDir
	// Excluded are the paths the run excludes (--exclude, .flipflop.yaml,
	// .flipflopignore): a render never reads them, and one that needs them
	// fails naming the path and the pattern.
	Excluded []exclusion
	MaxFile  int64
	// Budget is the total number of bytes all reads may return; reading the same
	// file again counts again (a kustomization that reads one base through many
	// paths pays for each).
	Budget int64

	mu       sync.Mutex
	excluded map[string]exclusion // Excluded by real path, built on first use
	spent    int64
	read     map[string][]byte // real path -> content, of the files read
	override map[string][]byte // real path -> content served instead of the file's
}

var _ filesys.FileSystem = (*confined)(nil)

// exclusion is a path the run excludes, resolved.
type exclusion struct {
	// Real is the absolute path with symbolic links resolved; a directory
	// excludes everything under it.
	Real string `json:"real"`
	// Dir is set for a directory.
	Dir bool `json:"dir,omitempty"`
	// Pattern and Source say which pattern excluded it, and where it was written.
	Pattern string `json:"pattern"`
	Source  string `json:"source"`
}

// errExcluded says a render needed a path the run excludes.
type errExcluded struct {
	path string
	ex   exclusion
}

func (e *errExcluded) Error() string {
	return fmt.Sprintf("%s is excluded (pattern %q from %s), and this render needs it: flipflop never reads an excluded path; stop excluding it, or exclude what reads it too", e.path, e.ex.Pattern, e.ex.Source)
}

// excludedBy returns the exclusion that covers real, if any: real itself, or
// the nearest excluded directory above it (a look-up per path component, not a
// scan of every exclusion).
func (c *confined) excludedBy(real string) (exclusion, bool) {
	if len(c.Excluded) == 0 {
		return exclusion{}, false
	}
	c.mu.Lock()
	if c.excluded == nil {
		c.excluded = make(map[string]exclusion, len(c.Excluded))
		for _, e := range c.Excluded {
			c.excluded[filepath.Clean(e.Real)] = e
		}
	}
	c.mu.Unlock()
	if e, ok := c.excluded[real]; ok {
		return e, true
	}
	for d := filepath.Dir(real); ; d = filepath.Dir(d) {
		if e, ok := c.excluded[d]; ok && e.Dir {
			return e, true
		}
		if parent := filepath.Dir(d); parent == d {
			return exclusion{}, false
		}
	}
}

// errOutside says a path leaves the roots.
type errOutside struct{ path string }

func (e *errOutside) Error() string {
	return fmt.Sprintf("%s is outside the paths given to flipflop (give a directory that contains it)", e.path)
}

// resolve returns the real path of p (absolute, symbolic links resolved) when
// it lies inside a root and the run does not exclude it. A path that does not
// exist is resolved through its longest existing parent.
func (c *confined) resolve(p string) (string, error) {
	real, err := c.resolveInside(p)
	if err != nil {
		return "", err
	}
	return real, c.checkExcluded(real)
}

// checkExcluded fails for a real path the run excludes.
func (c *confined) checkExcluded(real string) error {
	if e, ok := c.excludedBy(real); ok {
		return &errExcluded{path: c.Show(real), ex: e}
	}
	return nil
}

// resolveInside is resolve without the exclusion check.
func (c *confined) resolveInside(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		// Resolve the parent and keep the missing tail.
		parent, tail := filepath.Dir(abs), filepath.Base(abs)
		if parent == abs {
			return "", err
		}
		rp, perr := c.resolveInside(parent)
		if perr != nil {
			return "", perr
		}
		real = filepath.Join(rp, tail)
	}
	if !c.inside(real) {
		return "", &errOutside{path: c.Show(abs)}
	}
	return real, nil
}

func (c *confined) inside(real string) bool {
	for _, r := range c.Roots {
		if real == r.Real || strings.HasPrefix(real, strings.TrimSuffix(r.Real, string(filepath.Separator))+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// Show renders an absolute path the way the user named its root.
func (c *confined) Show(p string) string {
	best := -1
	for i, r := range c.Roots {
		if (p == r.Real || strings.HasPrefix(p, strings.TrimSuffix(r.Real, string(filepath.Separator))+string(filepath.Separator))) &&
			(best < 0 || len(r.Real) > len(c.Roots[best].Real)) {
			best = i
		}
	}
	if best < 0 {
		// Outside the roots: relative to the working directory when under it.
		if wd, err := os.Getwd(); err == nil {
			if rel, err := filepath.Rel(wd, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return filepath.ToSlash(rel)
			}
		}
		return filepath.ToSlash(p)
	}
	r := c.Roots[best]
	rel, err := filepath.Rel(r.Real, p)
	if err != nil {
		return filepath.ToSlash(p)
	}
	if rel == "." {
		return r.Shown
	}
	return strings.TrimSuffix(r.Shown, "/") + "/" + filepath.ToSlash(rel)
}

// ShowAll replaces every absolute root path in a message with the path as the
// user named it.
func (c *confined) ShowAll(msg string) string {
	roots := slices.Clone(c.Roots)
	slices.SortFunc(roots, func(a, b rootDir) int { return len(b.Real) - len(a.Real) })
	for _, r := range roots {
		msg = strings.ReplaceAll(msg, r.Real+string(filepath.Separator), strings.TrimSuffix(r.Shown, "/")+"/")
		msg = strings.ReplaceAll(msg, r.Real, r.Shown)
	}
	return msg
}

// ReadFile reads a regular file inside the roots, within the limits.
func (c *confined) ReadFile(p string) ([]byte, error) {
	real, err := c.resolve(p)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if data, ok := c.override[real]; ok {
		c.mu.Unlock()
		return data, c.charge(real, data)
	}
	c.mu.Unlock()
	fi, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", c.Show(real))
	}
	if fi.Size() > c.MaxFile {
		return nil, fmt.Errorf("%s is too large (%d bytes; the limit is %d bytes)", c.Show(real), fi.Size(), c.MaxFile)
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", c.Show(real))
	}
	data, err := io.ReadAll(io.LimitReader(f, c.MaxFile+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > c.MaxFile {
		return nil, fmt.Errorf("%s is too large (the limit is %d bytes)", c.Show(real), c.MaxFile)
	}
	return data, c.charge(real, data)
}

// charge records a read against the budget.
func (c *confined) charge(real string, data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spent += int64(len(data))
	if c.spent > c.Budget {
		return fmt.Errorf("rendering read more than %d bytes in all (the limit); a kustomization that reads its files through many paths can do this", c.Budget)
	}
	if c.read == nil {
		c.read = map[string][]byte{}
	}
	c.read[real] = data
	return nil
}

// Override serves data instead of the file at p (a real path).
func (c *confined) Override(real string, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.override == nil {
		c.override = map[string][]byte{}
	}
	c.override[real] = data
}

// Read returns the real paths of the files read, sorted.
func (c *confined) Read() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.read))
	for p := range c.read {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Content returns what a read of the real path returned.
func (c *confined) Content(real string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	data, ok := c.read[real]
	return data, ok
}

// Open reads the file whole and serves it from memory.
func (c *confined) Open(p string) (filesys.File, error) {
	data, err := c.ReadFile(p)
	if err != nil {
		return nil, err
	}
	real, _ := c.resolve(p)
	fi, err := os.Stat(real)
	if err != nil {
		return nil, err
	}
	return &memFile{Reader: strings.NewReader(string(data)), info: fi}, nil
}

type memFile struct {
	*strings.Reader
	info fs.FileInfo
}

func (f *memFile) Write([]byte) (int, error)  { return 0, errReadOnly }
func (f *memFile) Close() error               { return nil }
func (f *memFile) Stat() (os.FileInfo, error) { return f.info, nil }

// CleanedAbs splits a path inside the roots into its directory and file name
// (file name "" when the path is a directory).
func (c *confined) CleanedAbs(p string) (filesys.ConfirmedDir, string, error) {
	real, err := c.resolve(p)
	if err != nil {
		return "", "", err
	}
	fi, err := os.Stat(real)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", c.Show(real), fs.ErrNotExist)
	}
	if fi.IsDir() {
		return filesys.ConfirmedDir(real), "", nil
	}
	return filesys.ConfirmedDir(filepath.Dir(real)), filepath.Base(real), nil
}

// Exists reports whether p exists inside the roots.
func (c *confined) Exists(p string) bool {
	real, err := c.resolve(p)
	if err != nil {
		return false
	}
	_, err = os.Stat(real)
	return err == nil
}

// IsDir reports whether p is a directory inside the roots.
func (c *confined) IsDir(p string) bool {
	real, err := c.resolve(p)
	if err != nil {
		return false
	}
	fi, err := os.Stat(real)
	return err == nil && fi.IsDir()
}

// ReadDir lists a directory inside the roots.
func (c *confined) ReadDir(p string) ([]string, error) {
	real, err := c.resolve(p)
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(real)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

// Glob matches a pattern; matches outside the roots are dropped, and hidden
// files are dropped unless the pattern names them (as kustomize does).
func (c *confined) Glob(pattern string) ([]string, error) {
	matches, err := filepath.Glob(pattern)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range matches {
		if _, err := c.resolve(m); err == nil {
			out = append(out, m)
		}
	}
	if !filesys.IsHiddenFilePath(pattern) {
		out = filesys.RemoveHiddenFiles(out)
	}
	return out, nil
}

// Walk walks a directory inside the roots without following symbolic links
// to directories; entries outside the roots are skipped.
func (c *confined) Walk(p string, fn filepath.WalkFunc) error {
	if _, err := c.resolve(p); err != nil {
		return err
	}
	return filepath.Walk(p, func(path string, info fs.FileInfo, err error) error {
		if err == nil {
			if _, rerr := c.resolve(path); rerr != nil {
				if info.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		return fn(path, info, err)
	})
}

// Create, Mkdir, MkdirAll, RemoveAll and WriteFile fail: rendering never writes.
func (c *confined) Create(string) (filesys.File, error) { return nil, errReadOnly }

// Mkdir fails: rendering never writes.
func (c *confined) Mkdir(string) error { return errReadOnly }

// MkdirAll fails: rendering never writes.
func (c *confined) MkdirAll(string) error { return errReadOnly }

// RemoveAll fails: rendering never writes.
func (c *confined) RemoveAll(string) error { return errReadOnly }

// WriteFile fails: rendering never writes.
func (c *confined) WriteFile(string, []byte) error { return errReadOnly }
