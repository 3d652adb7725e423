package fix

import (
	"strings"
	"testing"
)

// The field updateTargetRevision rewrites is the one the Application has: a
// one-entry spec.sources list is /spec/sources/0, not /spec/source.
func TestUpdateTargetRevisionNamesTheSourceTheApplicationHas(t *testing.T) {
	t.Chdir(repoRoot)
	plan, _ := planFor(t, "", "internal/fix/testdata/one-entry-sources")
	patch, err := plan.Patch(UpdateTargetRevision)
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(patch.Notes, "\n")
	if !strings.Contains(notes, "/spec/sources/0/targetRevision") || strings.Contains(notes, "/spec/source/targetRevision") {
		t.Errorf("notes name the wrong field:\n%s", notes)
	}
}

// A chain of vars naming the work tree resolves as check resolves it.
func TestStageBranchesThroughAChainOfVars(t *testing.T) {
	t.Chdir(repoRoot)
	plan, report := planFor(t, "", "internal/fix/testdata/vars-chain")
	if len(report.Findings) == 0 {
		t.Fatal("check finds nothing")
	}
	if len(plan.Proposals) != 1 {
		t.Fatalf("%d proposals", len(plan.Proposals))
	}
	o := plan.Proposals[0].Option(StageBranches)
	if !o.Applicable {
		t.Fatalf("stage-branches does not apply: %s", o.Reason)
	}
	patch, err := plan.Patch(StageBranches)
	if err != nil {
		t.Fatal(err)
	}
	diff := patch.Diff()
	for _, want := range []string{"branch: env/dev", "branch: env/qa", "kustomize-build", "targetRevision: env/dev"} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, diff)
		}
	}
}
