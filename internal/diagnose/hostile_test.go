package diagnose

import (
	"bytes"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// Names, revisions and Kargo's messages come from the cluster and the files:
// the text rendering prints every one of them escaped, log commands of every
// CI system included.
func TestTextEscapesHostileValues(t *testing.T) {
	evil := "evil\n::error file=x::forged\x1b]52;c;aGk=\x07\u202e##[add-mask]y\u200b ##vso[task.setvariable variable=x]y " +
		"##teamcity[message text='x'] section_start:1:x\n--- x\n+++ y\n^^^ +++\n~~~ z"
	rep := &Report{
		Diagnoses: []Diagnosis{{
			Stage:         "acme/" + evil,
			Resource:      evaluator.Resource{Kind: "Stage", Namespace: "acme", Name: evil, File: "dir/" + evil + ".yaml", Line: 3},
			Cause:         "shared-branch-contradiction",
			Kind:          SharedPointer,
			Contradiction: true,
			Message:       "Stage acme/" + evil + " pins a branch",
			Pointer:       "github.com/acme/" + evil + " @ main",
			Head:          "abc" + evil,
			HeadHeldBy:    []string{"acme/" + evil},
			Stages:        []StageState{{Stage: "acme/" + evil, Health: "Unhealthy" + evil, Desired: []AppRevision{{Application: "argocd/" + evil, Revision: evil}}}},
			Issues:        []string{"Application \"" + evil + "\" does not match\n::stop-commands::x"},
			Promotion:     "--- " + evil,
			Remediation:   "Use stage branches.",
		}},
		Errors: []evaluator.LoadError{{Path: "cluster:" + evil, Message: "forbidden " + evil}},
	}
	var out bytes.Buffer
	if err := Write(&out, "text", rep); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	for i, line := range lines {
		if off, what, bad := safetext.Unsafe(line); bad {
			t.Errorf("line %d holds %s at %d: %q", i+1, what, off, line)
		}
	}
	// One line per field: no value broke a line.
	if !strings.HasPrefix(lines[0], "FLIP-FLOP  Stage acme/evil\\n") || !strings.Contains(out.String(), "  pointer    github.com/acme/evil\\n") {
		t.Errorf("layout broken:\n%s", out.String())
	}
}
