//go:build !race

// Package race says whether the race detector is on.
package race

// Enabled is set when the binary is built with the race detector (go test
// -race): tests that only evaluate policies, slow under it and with nothing
// concurrent to find, skip then and run in make go-test's run without it.
const Enabled = false
