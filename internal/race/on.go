//go:build race

package race

// Enabled is set when the binary is built with the race detector (go test
// -race): tests that only evaluate policies, slow under it and with nothing
// concurrent to find, skip then and run in make go-test's run without it.
const Enabled = true
