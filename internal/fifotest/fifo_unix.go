//go:build unix

package fifotest

import (
	"testing"

	"golang.org/x/sys/unix"
)

// Make creates a named pipe at path, failing the test when the system
// refuses it.
func Make(t testing.TB, path string) {
	t.Helper()
	if err := unix.Mkfifo(path, 0o644); err != nil {
		t.Fatalf("mkfifo %s: %v", path, err)
	}
}
