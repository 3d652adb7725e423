package fix

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/flipflop-dev/flipflop/internal/safefile"
)

// Write applies the patch to the files themselves (fix --apply). Every file
// must lie inside one of roots (the files and directories the user gave, with
// symbolic links resolved on both sides), be a regular file that is not a
// symbolic link and that no symbolic link leads to (safefile.CheckDirs: a
// checkout can plant links), and still hold the text the patch was computed
// from; otherwise nothing is written. Each file is written to a temporary file
// beside it first and renamed over it only when all of them were written, so
// an error leaves every file as it was. It returns the paths written.
func (p *Patch) Write(roots []string) ([]string, error) {
	var realRoots []string
	for _, r := range roots {
		real, err := realPath(r)
		if err != nil {
			return nil, err
		}
		realRoots = append(realRoots, real)
	}
	type pending struct {
		shown, target, tmp string
	}
	var todo []pending
	cleanup := func() {
		for _, t := range todo {
			if t.tmp != "" {
				os.Remove(t.tmp)
			}
		}
	}
	for _, f := range p.Files {
		target, err := realPath(f.Path)
		if err != nil {
			cleanup()
			return nil, err
		}
		if !insideAny(target, realRoots) {
			cleanup()
			return nil, fmt.Errorf("%s resolves to %s, outside the paths given: nothing was written", f.Path, target)
		}
		path := filepath.FromSlash(f.Path)
		if err := safefile.CheckDirs(path); err != nil {
			cleanup()
			return nil, fmt.Errorf("%w: nothing was written", err)
		}
		fi, err := os.Lstat(path)
		if err != nil {
			cleanup()
			return nil, err
		}
		if !fi.Mode().IsRegular() {
			cleanup()
			return nil, fmt.Errorf("refusing to write %s: it is %s (fix writes no file through a symbolic link, and only regular files): nothing was written", f.Path, safefile.Kind(fi.Mode()))
		}
		cur, err := safefile.ReadRegular(path)
		if err != nil {
			cleanup()
			return nil, err
		}
		if !bytes.Equal(cur, f.Old) {
			cleanup()
			return nil, fmt.Errorf("%s changed since it was read: nothing was written (run fix again)", f.Path)
		}
		tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".flipflop-*")
		if err != nil {
			cleanup()
			return nil, err
		}
		todo = append(todo, pending{shown: f.Path, target: path, tmp: tmp.Name()})
		_, werr := tmp.Write(f.New)
		cerr := tmp.Close()
		if werr == nil {
			werr = cerr
		}
		if werr == nil {
			werr = os.Chmod(tmp.Name(), fi.Mode().Perm())
		}
		if werr != nil {
			cleanup()
			return nil, fmt.Errorf("writing %s: %w", f.Path, werr)
		}
	}
	var written []string
	for i, t := range todo {
		if err := os.Rename(t.tmp, t.target); err != nil {
			for _, rest := range todo[i:] {
				os.Remove(rest.tmp)
			}
			return written, fmt.Errorf("writing %s: %w (written before it: %s)", t.shown, err, strings.Join(written, ", "))
		}
		written = append(written, t.shown)
	}
	return written, nil
}

// realPath is p absolute with every symbolic link resolved.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(filepath.FromSlash(p))
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// insideAny reports whether path is one of roots or lies under one of them.
func insideAny(path string, roots []string) bool {
	for _, r := range roots {
		if path == r {
			return true
		}
		rel, err := filepath.Rel(r, path)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}
