//go:build !unix

package fifotest

import "testing"

// Make skips the test: this system has no named pipes in its file system.
func Make(t testing.TB, path string) {
	t.Helper()
	t.Skip("no named pipes in this system's file system")
}
