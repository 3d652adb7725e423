// Package safefile writes the files flipflop is told to write (check
// --summary and --out, report --out, export, fix --apply) so that a checkout
// cannot redirect a write: in CI the working directory is a pull request's
// checkout, and a path there (flipflop.sarif, a summary, a report) may be a
// symbolic link the pull request committed, pointing at any file the runner
// can write, or a named pipe that blocks whoever opens it.
//
// A write is refused, with an error naming the path, when
//
//   - the file is a symbolic link (it is opened with O_NOFOLLOW as well, where
//     the system has it);
//   - a directory on the way to it is a symbolic link: every directory of a
//     relative path, and those of an absolute path that lie below the working
//     directory (the directories above it, such as macOS's /tmp, are the
//     machine's, not the checkout's);
//   - the file exists and is not a regular file (a named pipe, a device, a
//     socket, a directory). It is checked before it is opened, opened without
//     blocking (O_NONBLOCK) and checked again on the open file before a byte
//     is written or anything truncated.
//
// A file that does not exist is created exclusively (O_EXCL), so no link can
// appear in its place between the check and the open.
package safefile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// RefusedError is a write flipflop refused; Path is the path as given.
type RefusedError struct {
	Path   string
	Reason string
}

func (e *RefusedError) Error() string {
	return "refusing to write " + e.Path + ": " + e.Reason
}

func refused(path, format string, args ...any) error {
	return &RefusedError{Path: path, Reason: fmt.Sprintf(format, args...)}
}

const linkAdvice = "flipflop writes no file through a symbolic link; give a path that is not one"

// Write replaces the contents of the file at path with data, creating it with
// perm when it does not exist.
func Write(path string, data []byte, perm fs.FileMode) error {
	return write(path, data, perm, false)
}

// Append appends data to the file at path, creating it with perm when it does
// not exist (a GitHub job summary: GitHub gives each step a file to append to).
func Append(path string, data []byte, perm fs.FileMode) error {
	return write(path, data, perm, true)
}

func write(path string, data []byte, perm fs.FileMode, appendTo bool) error {
	if err := CheckDirs(path); err != nil {
		return err
	}
	fi, err := os.Lstat(path)
	var f *os.File
	switch {
	case errors.Is(err, fs.ErrNotExist):
		flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL | noFollow
		f, err = os.OpenFile(path, flags, perm)
		if err != nil {
			return openError(path, err)
		}
	case err != nil:
		return err
	default:
		if err := regular(path, fi); err != nil {
			return err
		}
		flags := os.O_WRONLY | noFollow | nonBlock
		if appendTo {
			flags |= os.O_APPEND
		}
		f, err = os.OpenFile(path, flags, 0)
		if err != nil {
			return openError(path, err)
		}
		ofi, err := f.Stat()
		if err == nil {
			err = regular(path, ofi)
		}
		if err == nil && !os.SameFile(fi, ofi) {
			err = refused(path, "it changed while it was being opened")
		}
		if err == nil && !appendTo {
			err = f.Truncate(0)
		}
		if err != nil {
			f.Close()
			return err
		}
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// openError words an open that O_NOFOLLOW or O_NONBLOCK refused.
func openError(path string, err error) error {
	switch {
	case errors.Is(err, syscall.ELOOP):
		return refused(path, "it is a symbolic link (%s)", linkAdvice)
	case errors.Is(err, syscall.ENXIO):
		return refused(path, "it is not a regular file")
	}
	return err
}

// regular refuses what is not a regular file.
func regular(path string, fi fs.FileInfo) error {
	mode := fi.Mode()
	switch {
	case mode&fs.ModeSymlink != 0:
		return refused(path, "it is a symbolic link (%s)", linkAdvice)
	case mode.IsRegular():
		return nil
	}
	return refused(path, "it is %s, not a regular file", Kind(mode))
}

// Kind names a file mode for a message: "a named pipe", "a directory".
func Kind(mode fs.FileMode) string {
	switch {
	case mode&fs.ModeSymlink != 0:
		return "a symbolic link"
	case mode.IsDir():
		return "a directory"
	case mode&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case mode&fs.ModeSocket != 0:
		return "a socket"
	case mode&fs.ModeDevice != 0:
		return "a device"
	case mode.IsRegular():
		return "a regular file"
	}
	return "a special file"
}

// CheckDirs refuses a path whose way to its file passes through a symbolic
// link: any directory of a relative path, or of an absolute path below the
// working directory. Directories that do not exist yet pass.
func CheckDirs(path string) error { return checkDirs(path, path, false) }

// checkDirs checks the directories of path (path itself too, with self),
// naming shown in its error.
func checkDirs(shown, path string, self bool) error {
	sep := string(filepath.Separator)
	var dirs []string
	if filepath.IsAbs(path) {
		wd, err := os.Getwd()
		if err != nil {
			return nil
		}
		rel, err := filepath.Rel(wd, filepath.Clean(path))
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+sep) || filepath.IsAbs(rel) {
			return nil
		}
		parts := strings.Split(rel, sep)
		last := len(parts) - 1
		if self {
			last++
		}
		for i := 1; i <= last; i++ {
			dirs = append(dirs, filepath.Join(wd, filepath.Join(parts[:i]...)))
		}
	} else {
		parts := strings.Split(filepath.ToSlash(path), "/")
		if !self {
			parts = parts[:len(parts)-1]
		}
		var at string
		for _, p := range parts {
			if p == "" || p == "." {
				continue
			}
			at = filepath.Join(at, p)
			if p == ".." {
				continue // the kernel takes the physical parent: no link to follow
			}
			dirs = append(dirs, at)
		}
	}
	for _, d := range dirs {
		fi, err := os.Lstat(d)
		if err != nil {
			return nil // the rest does not exist yet, or the open will say why
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if d == path {
				return refused(shown, "it is a symbolic link (%s)", linkAdvice)
			}
			return refused(shown, "%s is a symbolic link (%s)", d, linkAdvice)
		}
	}
	return nil
}

// MkdirAll creates dir and the directories it needs, refusing a symbolic
// link on the way (as CheckDirs does, and dir itself).
func MkdirAll(dir string, perm fs.FileMode) error {
	if err := checkDirs(dir, dir, true); err != nil {
		return err
	}
	if fi, err := os.Lstat(dir); err == nil && !fi.IsDir() {
		return refused(dir, "it is %s, not a directory", Kind(fi.Mode()))
	}
	return os.MkdirAll(dir, perm)
}

// ReadRegular reads the file at path (a symbolic link is followed), only when
// it is a regular file: checked before it is opened, opened without blocking,
// and checked again on the open file, so that a named pipe cannot hang the
// read.
func ReadRegular(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", path, Kind(fi.Mode()))
	}
	f, err := os.OpenFile(path, os.O_RDONLY|nonBlock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s, not a regular file", path, Kind(fi.Mode()))
	}
	var b bytes.Buffer
	b.Grow(int(fi.Size()) + bytes.MinRead)
	_, err = io.Copy(&b, f)
	return b.Bytes(), err
}
