package loader

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/ignore"
)

// DefaultIgnoreFile is the per-directory ignore file flipflop's command line
// honours (Loader.IgnoreFile).
const DefaultIgnoreFile = ".flipflopignore"

// maxIgnoreFileSize is the largest ignore file read.
const maxIgnoreFileSize = 1 << 20

// Exclude is a pattern of paths a Loader does not read, in .gitignore syntax:
// a pattern without a / (other than a trailing one) matches a name at any
// depth, one with a / is anchored to Dir; a trailing / matches directories
// only; *, ?, [a-z] and ** (any number of directories) as in .gitignore; !
// re-includes what an earlier pattern excluded.
type Exclude struct {
	Pattern string
	// Dir is the directory the pattern is relative to; "" means the working
	// directory. For a path given to Load outside Dir, the pattern is matched
	// relative to that path instead.
	Dir string
	// Source names where the pattern was written, for reports and errors:
	// "--exclude", ".flipflop.yaml:4".
	Source string
}

// excluder decides, during the collection of inputs, which paths are not read.
type excluder struct {
	set      ignore.Set
	exclude  []*ignore.Pattern // Loader.Exclude patterns relative to the working directory, to reapply outside it
	fileName string            // the per-directory ignore file, "" for none
	cwd      string
	read     map[string]bool // directories whose ignore file was looked for
	excluded []evaluator.Exclusion
	paths    []ExcludedPath // the same, resolved, for a Renderer
}

// newExcluder parses the Loader's patterns; nil when nothing can be excluded.
func newExcluder(l *Loader) (*excluder, []evaluator.LoadError) {
	if len(l.Exclude) == 0 && l.IgnoreFile == "" {
		return nil, nil
	}
	cwd, err := os.Getwd()
	if err != nil {
		return nil, []evaluator.LoadError{{Path: ".", Message: "cannot resolve the working directory: " + err.Error()}}
	}
	x := &excluder{fileName: l.IgnoreFile, cwd: cwd, read: map[string]bool{}}
	var errs []evaluator.LoadError
	for i, e := range l.Exclude {
		if i == ignore.MaxPatterns {
			errs = append(errs, evaluator.LoadError{Path: e.Source, Message: "too many exclude patterns"})
			break
		}
		p, err := ignore.Parse(e.Pattern, e.Source)
		if err != nil {
			errs = append(errs, evaluator.LoadError{Path: e.Source, Message: err.Error()})
			continue
		}
		if p == nil {
			continue
		}
		dir := cwd
		if e.Dir != "" {
			if dir, err = filepath.Abs(e.Dir); err != nil {
				errs = append(errs, evaluator.LoadError{Path: e.Source, Message: err.Error()})
				continue
			}
		}
		x.set.Add(dir, p)
		if e.Dir == "" {
			x.exclude = append(x.exclude, p)
		}
	}
	return x, errs
}

// root prepares a path given to Load: the ignore files of the directories
// from the working directory down to it are read, and the Exclude patterns of
// the working directory also apply relative to a path outside it. It returns
// whether the path itself is excluded, and the errors found.
func (x *excluder) root(p string, dir bool) (bool, []loadTask) {
	abs := x.abs(p)
	var tasks []loadTask
	if inside(x.cwd, abs) {
		for d := filepath.Dir(abs); inside(x.cwd, d) || d == x.cwd; d = filepath.Dir(d) {
			if dirTasks := x.enterAbs(d, ""); len(dirTasks) > 0 {
				tasks = append(tasks, dirTasks...)
			}
			if d == x.cwd {
				break
			}
		}
	} else if abs != x.cwd && len(x.exclude) > 0 {
		base := abs
		if !dir {
			base = filepath.Dir(abs)
		}
		x.set.Add(base, x.exclude...)
	}
	pat, ex := x.set.Excluded(abs, dir)
	if ex {
		x.record(p, dir, pat)
	}
	return ex, tasks
}

// skip reports whether a path met in a directory walk is excluded (its
// parent directories were decided on the way down), and records it.
func (x *excluder) skip(path string, dir bool) bool {
	pat, ex := x.set.Decide(x.abs(path), dir)
	if ex {
		x.record(path, dir, pat)
	}
	return ex
}

// enter reads the ignore file of a directory the walk enters.
func (x *excluder) enter(dir string) []loadTask {
	return x.enterAbs(x.abs(dir), dir)
}

// abs is path made absolute against the working directory read once (not a
// system call per file, as filepath.Abs makes).
func (x *excluder) abs(path string) string {
	if filepath.IsAbs(path) {
		return filepath.Clean(path)
	}
	return filepath.Join(x.cwd, path)
}

// enterAbs reads the ignore file of directory abs once; shownDir is how the
// inputs name the directory ("" to name it relative to the working directory).
func (x *excluder) enterAbs(abs, shownDir string) []loadTask {
	if x.fileName == "" || x.read[abs] {
		return nil
	}
	x.read[abs] = true
	file := filepath.Join(abs, x.fileName)
	shown := filepath.ToSlash(filepath.Join(shownDir, x.fileName))
	if shownDir == "" {
		if rel, err := filepath.Rel(x.cwd, file); err == nil {
			shown = filepath.ToSlash(rel)
		}
	}
	fi, err := os.Lstat(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	fail := func(msg string, line int) []loadTask {
		return []loadTask{{err: &evaluator.LoadError{Path: shown, Line: line, Message: msg}}}
	}
	if err != nil {
		return fail(fsErrorMessage(err), 0)
	}
	if !fi.Mode().IsRegular() {
		// A link could make the patterns (which reports print) come from
		// outside the paths given.
		return fail("not a regular file (a symbolic link or a special file): not read", 0)
	}
	data, lerr := readFileLimited(file, shown, maxIgnoreFileSize)
	if lerr != nil {
		return []loadTask{{err: lerr}}
	}
	ps, err := ignore.ParseLines(string(data), shown)
	if err != nil {
		var pe *ignore.ParseError
		if errors.As(err, &pe) {
			return fail(pe.Err.Error(), pe.Line)
		}
		return fail(err.Error(), 0)
	}
	x.set.AddDir(abs, ps...)
	return nil
}

// record notes an excluded path.
func (x *excluder) record(path string, dir bool, p *ignore.Pattern) {
	shown := filepath.ToSlash(path)
	if dir && !strings.HasSuffix(shown, "/") {
		shown += "/"
	}
	x.excluded = append(x.excluded, evaluator.Exclusion{Path: shown, Pattern: p.Text, Source: p.Source})
	x.paths = append(x.paths, ExcludedPath{Real: realPath(x.abs(path)), Dir: dir, Pattern: p.Text, Source: p.Source})
}

// inside reports whether abs lies under dir (not dir itself).
func inside(dir, abs string) bool {
	rel, err := filepath.Rel(dir, abs)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
