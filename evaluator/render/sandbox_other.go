//go:build !linux

package render

import (
	"os"
	"os/exec"
)

// sandbox: outside Linux the worker has no network namespace and is not
// killed with its parent by the kernel; it polls its parent instead
// (watchParent), and its HTTP client and resolver refuse every request.
func sandbox(*exec.Cmd, bool) {}

func namespaceRefused(error) bool { return false }

// limitSelf: outside Linux the worker's memory is bounded by its watchdog only.
func limitSelf(int64, int64) error { return nil }

func netnsID() string { return "" }

func cpuKilled(error) bool { return false }

func peakRSS(*os.ProcessState) int64 { return 0 }
