package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/flipflop-dev/flipflop/internal/fifotest"
)

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Skip("symbolic links unsupported:", err)
	}
}

func refusedWith(t *testing.T, err error, path, want string) {
	t.Helper()
	var r *RefusedError
	if !errors.As(err, &r) || r.Path != path || !strings.Contains(err.Error(), want) {
		t.Errorf("write to %s: %v, want a refusal saying %q", path, err, want)
	}
}

// A file is created, replaced and appended to; a missing directory is an error.
func TestWriteAndAppend(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "out.md")
	for _, step := range []struct {
		append bool
		data   string
		want   string
	}{{false, "one\n", "one\n"}, {true, "two\n", "one\ntwo\n"}, {false, "3\n", "3\n"}} {
		var err error
		if step.append {
			err = Append(p, []byte(step.data), 0o644)
		} else {
			err = Write(p, []byte(step.data), 0o644)
		}
		if b, _ := os.ReadFile(p); err != nil || string(b) != step.want {
			t.Errorf("after %q: %q, %v; want %q", step.data, b, err, step.want)
		}
	}
	if err := Append(filepath.Join(dir, "new.md"), []byte("x"), 0o644); err != nil {
		t.Error(err)
	}
	if err := Write(filepath.Join(dir, "no", "dir", "x"), []byte("x"), 0o644); err == nil {
		t.Error("a file in a missing directory was written")
	}
}

// A symbolic link is never written through, whether it is the file or a
// directory on the way to it, relative or absolute (below the working
// directory); what it points to is left as it was.
func TestRefusesLinks(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "victim.sh")
	if err := os.WriteFile(victim, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Dir(victim)
	checkout := t.TempDir()
	t.Chdir(checkout)
	symlink(t, victim, "flipflop.sarif")
	symlink(t, filepath.Join(outside, "nowhere.md"), "dangling.md")
	symlink(t, outside, "reports")
	if err := os.Mkdir("real", 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{"flipflop.sarif", "it is a symbolic link"},
		{"./flipflop.sarif", "it is a symbolic link"},
		{filepath.Join(checkout, "flipflop.sarif"), "it is a symbolic link"},
		{"dangling.md", "it is a symbolic link"},
		{"reports/victim.sh", "reports is a symbolic link"},
		{"real/../reports/victim.sh", "reports is a symbolic link"},
		{filepath.Join(checkout, "reports", "victim.sh"), filepath.Join(checkout, "reports") + " is a symbolic link"},
		{"reports/new/x.md", "reports is a symbolic link"},
	} {
		refusedWith(t, Write(tc.path, []byte("pwned"), 0o644), tc.path, tc.want)
		refusedWith(t, Append(tc.path, []byte("pwned"), 0o644), tc.path, tc.want)
	}
	refusedWith(t, MkdirAll("reports/sub", 0o755), "reports/sub", "reports is a symbolic link")
	if b, _ := os.ReadFile(victim); string(b) != "#!/bin/sh\n" {
		t.Errorf("the link's target was written: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "nowhere.md")); err == nil {
		t.Error("a dangling link's target was created")
	}
	// A directory above the working directory is the machine's, not the
	// checkout's (macOS's /tmp is a link): a link there is followed.
	machine := filepath.Join(t.TempDir(), "tmp")
	symlink(t, outside, machine)
	if err := Write(filepath.Join(machine, "report.html"), []byte("ok"), 0o644); err != nil {
		t.Errorf("a link above the working directory was refused: %v", err)
	}
}

// A named pipe, a device or a directory is refused, without blocking on the
// open and without truncating it.
func TestRefusesNonRegularFiles(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no named pipes in the file system")
	}
	dir := t.TempDir()
	fifo := filepath.Join(dir, "summary")
	fifotest.Make(t, fifo)
	done := make(chan error, 2)
	go func() { done <- Append(fifo, []byte("x"), 0o644) }()
	go func() { done <- Write(fifo, []byte("x"), 0o644) }()
	for range 2 {
		select {
		case err := <-done:
			refusedWith(t, err, fifo, "named pipe, not a regular file")
		case <-time.After(10 * time.Second):
			t.Fatal("writing to a named pipe blocked")
		}
	}
	refusedWith(t, Append(os.DevNull, []byte("x"), 0o644), os.DevNull, "a device, not a regular file")
	refusedWith(t, Write(dir, []byte("x"), 0o644), dir, "a directory, not a regular file")
	if _, err := ReadRegular(fifo); err == nil || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("ReadRegular of a named pipe: %v", err)
	}
}
