package tests

import (
	"testing"
)

// Two runs on the same input print the same bytes in every format.
func TestDeterministicOutput(t *testing.T) {
	bin := tool(t, "FLIPFLOP_BIN")
	for _, format := range []string{"text", "json", "sarif", "junit", "github"} {
		for _, dir := range []string{"examples", "policies/rules"} {
			first, _, code1 := runCmd(t, "..", bin, "check", "-o", format, "--color", "never", "--fail-on", "never", dir)
			second, _, code2 := runCmd(t, "..", bin, "check", "-o", format, "--color", "never", "--fail-on", "never", dir)
			if code1 != code2 || first != second {
				t.Errorf("%s on %s: two runs differ (exit %d vs %d)", format, dir, code1, code2)
			}
			if len(first) == 0 {
				t.Errorf("%s on %s: no output", format, dir)
			}
		}
	}
}
