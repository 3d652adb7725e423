package tests

import (
	"os/exec"
	"strings"
	"testing"
)

// File mode needs no network: the binary runs in a network namespace with no
// interfaces, and (where strace exists) opens no inet socket at all.
func TestNoNetworkInFileMode(t *testing.T) {
	bin := tool(t, "FLIPFLOP_BIN")
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Skip("unshare not available")
	}
	if err := exec.Command("unshare", "-n", "true").Run(); err != nil {
		t.Skipf("cannot create a network namespace here: %v", err)
	}
	out, stderr, code := runCmd(t, "..", "unshare", "-n", bin, "check", "examples/contradiction")
	if code != 1 || !strings.Contains(out, "shared-branch-contradiction") {
		t.Fatalf("without a network: exit %d\n%s\n%s", code, out, stderr)
	}
	if _, err := exec.LookPath("strace"); err != nil {
		return
	}
	_, trace, code := runCmd(t, "..", "strace", "-f", "-e", "trace=socket,connect", bin, "check", "examples/contradiction")
	if code != 1 {
		t.Fatalf("under strace: exit %d\n%s", code, trace)
	}
	for _, line := range strings.Split(trace, "\n") {
		if strings.Contains(line, "AF_INET") {
			t.Errorf("file mode opened a network socket: %s", line)
		}
	}
}
