package race

import "testing"

// Sequential skips t when the race detector is on. It marks a test whose work
// is evaluating policies or reading data on one goroutine: the race detector
// has nothing to find there and makes it about ten times slower. make go-test
// runs every test without the race detector as well, so a test that skips
// here still runs on every change; the tests of concurrent code (parallel
// evaluation, the loader's workers, render workers, the cluster reader) do
// not call it.
func Sequential(t testing.TB) {
	t.Helper()
	if Enabled {
		t.Skip("sequential: runs in make go-test's run without -race")
	}
}
