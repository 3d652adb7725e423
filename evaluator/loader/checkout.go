package loader

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"
)

// gitReader reads the checkouts of the roots for the git generators of one
// ExpandGitGenerators call, each on first need.
type gitReader struct {
	roots     []RepoRoot
	checkouts []*checkout // by index in roots
	budget    gitBudget
	aliases   *AliasBudget
}

func newGitReader(roots []RepoRoot, aliases *AliasBudget) *gitReader {
	bytes := roots[0].maxFileSize()
	for _, r := range roots[1:] {
		bytes = min(bytes, r.maxFileSize())
	}
	return &gitReader{roots: roots, checkouts: make([]*checkout, len(roots)), budget: newGitBudget(bytes), aliases: aliases}
}

// work is how many directory entries and candidate paths the checkouts have
// matched a pattern against so far, and produced how many bytes of
// parameters.
func (g *gitReader) work() (work int, bytes int64) {
	for _, c := range g.checkouts {
		if c != nil {
			work += c.examined
			bytes += c.produced
		}
	}
	return work, bytes
}

// rootFor returns the checkout of the first root that checks out repoURL (or
// stands in for every repository).
func (g *gitReader) rootFor(repoURL string) (*checkout, bool) {
	id := RepoID(repoURL)
	for i, r := range g.roots {
		if r.Origin == "" || r.Origin == id {
			if g.checkouts[i] == nil {
				g.checkouts[i] = &checkout{RepoRoot: r, reads: map[string]dirRead{}, lstats: map[string]bool{},
					stats: map[string]bool{}, insides: map[string]bool{}, files: map[string]paramsFile{}, aliases: g.aliases}
			}
			return g.checkouts[i], true
		}
	}
	return nil, false
}

// checkout is what the git generators of one ExpandGitGenerators call read of
// one RepoRoot, each read once however many generators ask: every directory
// (os.ReadDir), the walk of the whole tree the directory generators match,
// the resolution of its symbolic links and every parameters file. (Each
// generator used to walk the checkout again: 400 ApplicationSets over one
// checkout took 44 s.) Directories no generator reaches are never read.
type checkout struct {
	RepoRoot
	reads   map[string]dirRead // by path, as the walk and glob name it
	lstats  map[string]bool    // os.Lstat succeeded, by path
	stats   map[string]bool    // os.Stat says a directory, by path
	insides map[string]bool    // insideRoot, by path
	files   map[string]paramsFile
	aliases *AliasBudget // the run's: each parameters file is a source of it

	// examined counts the directory entries and candidate paths matched
	// against a pattern; produced, the bytes of the parameters built (a
	// file's size, a path's length): what the budget (gitBudget) charges.
	examined int
	produced int64

	walked  bool
	tree    dirNode  // the directories the walk found, under the root
	all     []string // the same, in walk order
	walkErr error

	realDone bool
	real     string
	realErr  error
}

type dirRead struct {
	entries []fs.DirEntry
	err     error
}

// paramsFile is a git files generator file read and decoded, or the error
// that stops the generator.
type paramsFile struct {
	content map[string]any
	size    int64 // bytes read
	err     error
}

// readDir and readParamsFile read a directory and a parameters file; tests
// count the calls.
var (
	readDir        = os.ReadDir
	readParamsFile = readFileLimited
)

func (c *checkout) readDir(dir string) ([]fs.DirEntry, error) {
	r, ok := c.reads[dir]
	if !ok {
		r.entries, r.err = readDir(dir)
		c.reads[dir] = r
	}
	return r.entries, r.err
}

func (c *checkout) lstat(p string) bool {
	ok, done := c.lstats[p]
	if !done {
		_, err := os.Lstat(p)
		ok = err == nil
		c.lstats[p] = ok
	}
	return ok
}

func (c *checkout) isDir(p string) bool {
	ok, done := c.stats[p]
	if !done {
		fi, err := os.Stat(p)
		ok = err == nil && fi.IsDir()
		c.stats[p] = ok
	}
	return ok
}

// dirNode is a directory the walk found, with those under it.
type dirNode struct {
	name, rel string // rel: slash-separated, relative to the checkout
	children  []*dirNode
	byName    map[string]*dirNode
}

// match appends the directories under n whose paths from n match segs, one
// path.Match pattern per segment.
// examined counts the children matched against a pattern.
func (n *dirNode) match(segs []string, out []string, examined *int) []string {
	if len(segs) == 0 {
		return append(out, n.rel)
	}
	if !strings.ContainsAny(segs[0], "*?") {
		if ch := n.byName[segs[0]]; ch != nil {
			out = ch.match(segs[1:], out, examined)
		}
		return out
	}
	*examined += len(n.children)
	for _, ch := range n.children {
		if ok, _ := path.Match(segs[0], ch.name); ok {
			out = ch.match(segs[1:], out, examined)
		}
	}
	return out
}

// walk returns the directories of the checkout (slash-separated, relative to
// it), as a tree and as a list, as a filepath.WalkDir of it finds them:
// symbolic links are not followed (nor a root that is one), hidden
// directories are skipped, and the first error stops the walk and is
// returned.
func (c *checkout) walk() (*dirNode, []string, error) {
	if !c.walked {
		c.walked = true
		c.walkErr = c.walkFrom()
	}
	if c.walkErr != nil {
		return nil, nil, c.walkErr
	}
	return &c.tree, c.all, nil
}

func (c *checkout) walkFrom() error {
	fi, err := os.Lstat(c.Dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return nil
	}
	var walk func(dir string, n *dirNode) error
	walk = func(dir string, n *dirNode) error {
		entries, err := c.readDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			ch := &dirNode{name: e.Name(), rel: e.Name()}
			if n.rel != "" {
				ch.rel = n.rel + "/" + ch.name
			}
			if n.byName == nil {
				n.byName = map[string]*dirNode{}
			}
			n.children, n.byName[ch.name] = append(n.children, ch), ch
			c.all = append(c.all, ch.rel)
			if err := walk(filepath.Join(dir, e.Name()), ch); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(c.Dir, &c.tree)
}

// realDir is the checkout's directory with its symbolic links resolved.
func (c *checkout) realDir() (string, error) {
	if !c.realDone {
		c.realDone = true
		c.real, c.realErr = filepath.EvalSymlinks(c.Dir)
	}
	return c.real, c.realErr
}

// inside is insideRoot(p, realDir).
func (c *checkout) inside(p, realDir string) bool {
	ok, done := c.insides[p]
	if !done {
		ok = insideRoot(p, realDir, nil)
		c.insides[p] = ok
	}
	return ok
}

// params reads and decodes the parameters file at p (rel: as reports name it).
func (c *checkout) params(p, rel string) (map[string]any, error) {
	f, ok := c.files[p]
	if !ok {
		if b, lerr := readParamsFile(p, rel, c.maxFileSize()); lerr != nil {
			f.err = fmt.Errorf("git files generator: %s: %s", lerr.Path, lerr.Message)
		} else {
			f.size = int64(len(b))
			m := c.aliases.newSource()
			content, lerr := decodeParamsFile(rel, b, m)
			m.finish()
			if lerr != nil {
				f.err = fmt.Errorf("git files generator: %v", lerr)
			} else {
				f.content = content
			}
		}
		c.files[p] = f
	}
	if f.err == nil {
		c.produced += f.size // one more parameter set holds it
	}
	return f.content, f.err
}

// glob is filepath.Glob (Go 1.26) reading directories through the checkout:
// the same matches in the same order and the same errors, with each
// directory, and each path without a wildcard, looked at once per call of
// ExpandGitGenerators. (filepath.Glob lists a directory with Readdirnames,
// this with os.ReadDir; they differ only where an entry's type cannot be read
// on a file system that does not report types, where ReadDir stops.)
func (c *checkout) glob(pattern string) ([]string, error) { return c.globDepth(pattern, 0) }

func (c *checkout) globDepth(pattern string, depth int) (matches []string, err error) {
	const pathSeparatorsLimit = 10000 // as filepath.Glob: CVE-2022-30632
	if depth == pathSeparatorsLimit {
		return nil, filepath.ErrBadPattern
	}
	if _, err := filepath.Match(pattern, ""); err != nil {
		return nil, err
	}
	if !hasMeta(pattern) {
		if !c.lstat(pattern) {
			return nil, nil
		}
		return []string{pattern}, nil
	}
	dir, file := filepath.Split(pattern)
	volumeLen := 0
	if runtime.GOOS == "windows" {
		volumeLen, dir = cleanGlobPathWindows(dir)
	} else {
		dir = cleanGlobPath(dir)
	}
	if !hasMeta(dir[volumeLen:]) {
		return c.globDir(dir, file, nil)
	}
	if dir == pattern {
		return nil, filepath.ErrBadPattern
	}
	m, err := c.globDepth(dir, depth+1)
	if err != nil {
		return nil, err
	}
	for _, d := range m {
		if matches, err = c.globDir(d, file, matches); err != nil {
			return matches, err
		}
	}
	return matches, nil
}

// globDir appends the entries of dir whose names match pattern (unreadable
// directories have none).
func (c *checkout) globDir(dir, pattern string, matches []string) ([]string, error) {
	if !c.isDir(dir) {
		return matches, nil
	}
	entries, _ := c.readDir(dir) // sorted by name, as Glob sorts the names
	c.examined += len(entries)
	for _, e := range entries {
		matched, err := filepath.Match(pattern, e.Name())
		if err != nil {
			return matches, err
		}
		if matched {
			matches = append(matches, filepath.Join(dir, e.Name()))
		}
	}
	return matches, nil
}

// hasMeta, cleanGlobPath and cleanGlobPathWindows are filepath's.
func hasMeta(path string) bool {
	magicChars := `*?[`
	if runtime.GOOS != "windows" {
		magicChars = `*?[\`
	}
	return strings.ContainsAny(path, magicChars)
}

func cleanGlobPath(path string) string {
	switch path {
	case "":
		return "."
	case string(filepath.Separator):
		return path
	default:
		return path[0 : len(path)-1] // chop off trailing separator
	}
}

func cleanGlobPathWindows(path string) (prefixLen int, cleaned string) {
	vollen := len(filepath.VolumeName(path))
	switch {
	case path == "":
		return 0, "."
	case vollen+1 == len(path) && os.IsPathSeparator(path[len(path)-1]): // /, \, C:\ and C:/
		return vollen + 1, path
	case vollen == len(path) && len(path) == 2: // C:
		return vollen, path + "." // convert C: into C:.
	default:
		if vollen >= len(path) {
			vollen = len(path) - 1
		}
		return vollen, path[0 : len(path)-1] // chop off trailing separator
	}
}
