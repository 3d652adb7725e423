package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// invoke runs the CLI in-process: stdout, stderr and the exit code.
func invoke(args ...string) (string, string, int) {
	var out, errOut bytes.Buffer
	err := Run(context.Background(), args, IO{In: strings.NewReader(""), Out: &out, Err: &errOut})
	code := ExitCode(err, &errOut)
	return out.String(), errOut.String(), code
}

func TestExplainRule(t *testing.T) {
	out, errOut, code := invoke("explain", "shared-branch-contradiction")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"shared-branch-contradiction: Pins expect different heads of one floating pointer",
		"WHY IT BREAKS", "does not match the desired revision", "HOW TO FIX", "WAIVERS",
		`flipflop.dev/ignore: "shared-branch-contradiction: <reason>"`, "REFERENCES", "https://github.com/akuity/kargo/pull/2980",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain RULE lacks %q", want)
		}
	}
}

func TestExplainEstate(t *testing.T) {
	out, errOut, code := invoke("explain", "../../examples/contradiction")
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{"github.com/acme/deploy @ main", "dev pushes commit A to main", "argocd/dev now reports B ≠ A → dev Unhealthy", "shared-write-branch"} {
		if !strings.Contains(out, want) {
			t.Errorf("explain lacks %q:\n%s", want, out)
		}
	}
	out, _, code = invoke("explain", "../../examples/fix-stage-branches")
	if code != ExitOK || !strings.Contains(out, "No shared-branch contradiction") {
		t.Errorf("clean estate: exit %d\n%s", code, out)
	}
}

func TestExplainUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"explain"}, ExitIncomplete, "give at least one PATH"},
		{[]string{"explain", "no-such-rule"}, ExitIncomplete, "neither a rule nor a file"},
		{[]string{"explain", "./no/such/dir"}, ExitIncomplete, "no/such/dir"},
		{[]string{"explain", "--nope"}, ExitIncomplete, "unknown flag"},
	} {
		_, errOut, code := invoke(tc.args...)
		if code != tc.code || !strings.Contains(errOut, tc.err) {
			t.Errorf("%v: exit %d, stderr %q; want %d and %q", tc.args, code, errOut, tc.code, tc.err)
		}
	}
	if out, errOut, code := invoke("explain", "--help"); code != ExitOK || errOut != "" || !strings.HasPrefix(out, "Usage: flipflop explain") {
		t.Errorf("explain --help: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

func TestGraphCommand(t *testing.T) {
	out, errOut, code := invoke("graph", "../../examples/contradiction")
	if code != ExitOK || !strings.HasPrefix(out, "flowchart LR\n") {
		t.Fatalf("mermaid: exit %d %s\n%s", code, errOut, out)
	}
	out, errOut, code = invoke("graph", "-o", "dot", "../../examples/contradiction")
	if code != ExitOK || !strings.HasPrefix(out, "digraph flipflop {") || !strings.Contains(out, "style=dashed") {
		t.Fatalf("dot: exit %d %s\n%s", code, errOut, out)
	}
	out, errOut, code = invoke("graph", "-o", "svg", "../../examples/contradiction")
	if code != ExitOK || !strings.HasPrefix(out, "<svg ") || !strings.Contains(out, "github.com/acme/deploy @ main") {
		t.Errorf("svg: exit %d %s\n%s", code, errOut, out)
	}
	if _, errOut, code = invoke("graph", "-o", "png", "../../examples/contradiction"); code != ExitIncomplete || !strings.Contains(errOut, "unknown output format") {
		t.Errorf("png: exit %d %s", code, errOut)
	}
	if _, errOut, code = invoke("graph"); code != ExitIncomplete || !strings.Contains(errOut, "give at least one PATH") {
		t.Errorf("no paths: exit %d %s", code, errOut)
	}
}
