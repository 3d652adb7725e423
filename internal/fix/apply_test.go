package fix

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/evaluator/loader"
	"github.com/flipflop-dev/flipflop/internal/race"
)

// repoRoot is the module root, where examples/ and policies/ live.
const repoRoot = "../.."

// A sample estate and the ways expected to apply to each of its findings of
// the rules fix handles ("rule key" -> ways).
var applyCases = []struct {
	dir  string
	ways map[string][]Way
	// variant rewrites every file of the copy before the run (line endings,
	// byte order mark, final newline).
	variant string
}{
	{"examples/contradiction", map[string][]Way{
		"shared-branch-contradiction github.com/acme/deploy@main": {StageBranches, NoDesiredRevision, UpdateTargetRevision},
	}, ""},
	{"policies/rules/shared_branch_contradiction/samples/fires/three-stages-head", map[string][]Way{
		"shared-branch-contradiction github.com/acme/web-deploy@main": {StageBranches, NoDesiredRevision, UpdateTargetRevision},
	}, ""},
	// The ApplicationSet writes its template back over a rewritten
	// targetRevision (policy sync): updateTargetRevision would not last.
	{"policies/rules/shared_branch_contradiction/samples/fires/list-applicationset", map[string][]Way{
		"shared-branch-contradiction git.example.com/shop/deploy@main": {StageBranches, NoDesiredRevision},
	}, ""},
	// The same, with updateTargetRevision already set: no-desired-revision
	// drops it with desiredRevision (Kargo requires the one with the other).
	{"policies/rules/shared_branch_contradiction/samples/fires/update-target-revision-applicationset", map[string][]Way{
		"shared-branch-contradiction git.example.com/shop/deploy@main": {StageBranches, NoDesiredRevision},
	}, ""},
	{"policies/rules/foreign_branch_writer/samples/fires/head-pinned-main-pushed", map[string][]Way{
		"foreign-branch-writer git.example.com/me/homelab@main": {StageBranches, NoDesiredRevision, UpdateTargetRevision},
	}, ""},
	{"policies/rules/shared_application/samples/fires/two-stages-one-app", map[string][]Way{
		"shared-application argocd/platform":                                  {NoDesiredRevision},
		"shared-branch-contradiction git.example.com/infra/platform@env/prod": {NoDesiredRevision},
	}, ""},
	{"policies/rules/unreachable_desired_revision/samples/fires/literal-branch", map[string][]Way{
		"unreachable-desired-revision api/dev|argocd/api|1": {NoDesiredRevision},
	}, ""},
	{"policies/rules/unreachable_desired_revision/samples/fires/own-commit-other-branch", map[string][]Way{
		"unreachable-desired-revision web/dev|argocd/web-dev|0": {StageBranches, NoDesiredRevision, UpdateTargetRevision},
	}, ""},
	{"internal/fix/testdata/odd-format", map[string][]Way{
		"shared-branch-contradiction git.example.com/odd/deploy@main": {StageBranches, NoDesiredRevision, UpdateTargetRevision},
	}, ""},
	{"internal/fix/testdata/json-list", map[string][]Way{
		"shared-branch-contradiction git.example.com/json/deploy@main": {StageBranches, NoDesiredRevision, UpdateTargetRevision},
	}, ""},
	{"examples/contradiction", map[string][]Way{
		"shared-branch-contradiction github.com/acme/deploy@main": {StageBranches, NoDesiredRevision, UpdateTargetRevision},
	}, "crlf"},
	{"examples/contradiction", map[string][]Way{
		"shared-branch-contradiction github.com/acme/deploy@main": {StageBranches, NoDesiredRevision, UpdateTargetRevision},
	}, "bom-no-final-newline"},
	{"internal/fix/testdata/helm-task", map[string][]Way{
		"shared-branch-contradiction git.example.com/charts/deploy@main": {StageBranches, NoDesiredRevision, UpdateTargetRevision},
	}, ""},
	// The work tree is named through a chain of vars (dir uses sub, defined
	// after it): the model resolves it, so fix can migrate the Stages.
	{"internal/fix/testdata/vars-chain", map[string][]Way{
		"shared-branch-contradiction github.com/acme/deploy@main": {StageBranches, NoDesiredRevision, UpdateTargetRevision},
	}, ""},
	// Applications with a one-entry spec.sources: multi-source Applications are
	// migrated to branches by hand.
	{"internal/fix/testdata/one-entry-sources", map[string][]Way{
		"shared-branch-contradiction github.com/acme/deploy@main": {NoDesiredRevision, UpdateTargetRevision},
	}, ""},
}

func findingID(f evaluator.Finding) string { return f.Rule + " " + f.Key }

// copyTree copies the files of dir into a new git repository and returns it.
func copyTree(t *testing.T, dir, variant string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		switch variant {
		case "crlf":
			data = []byte(strings.ReplaceAll(string(data), "\n", "\r\n"))
		case "bom-no-final-newline":
			data = append([]byte("\xef\xbb\xbf"), strings.TrimRight(string(data), "\n")...)
		}
		if err := os.MkdirAll(filepath.Join(dst, filepath.Dir(rel)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	git(t, dst, "", "init", "-q")
	return dst
}

func git(t *testing.T, dir, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s\npatch:\n%s", strings.Join(args, " "), err, out, stdin)
	}
	return string(out)
}

// evaluate loads dir (absolute) and evaluates it.
func evaluate(t *testing.T, dir string) *evaluator.Report {
	t.Helper()
	r, err := evaluatorFor(t).Evaluate(context.Background(), loadAll(t, dir))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestWaysApplyAndCheckClean: for each sample estate and each way that
// applies, the diff applies to a copy of the estate with git apply, and
// checking the patched estate no longer reports the findings the way fixed,
// nor any new error. stage-branches also clears shared-write-branch.
func TestWaysApplyAndCheckClean(t *testing.T) {
	race.Sequential(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	for _, tc := range applyCases {
		for _, w := range Ways() {
			name := filepath.Base(tc.dir)
			if tc.variant != "" {
				name += "-" + tc.variant
			}
			t.Run(name+"/"+string(w), func(t *testing.T) {
				dst := copyTree(t, filepath.Join(repoRoot, tc.dir), tc.variant)
				plan, before := planFor(t, dst, dst)
				var fixed []string
				for _, prop := range plan.Proposals {
					id := findingID(prop.Finding)
					want, ok := tc.ways[id]
					if !ok {
						t.Fatalf("unexpected finding %s", id)
					}
					o := prop.Option(w)
					if o.Applicable != slices.Contains(want, w) {
						t.Fatalf("%s: %s applicable = %v (reason %q), want %v", id, w, o.Applicable, o.Reason, !o.Applicable)
					}
					if o.Applicable {
						if o.Partial {
							t.Errorf("%s: %s is partial: %q", id, w, o.Notes)
						}
						fixed = append(fixed, id)
					}
				}
				for id, ways := range tc.ways {
					if len(ways) > 0 && !slices.ContainsFunc(plan.Proposals, func(p Proposal) bool { return findingID(p.Finding) == id }) {
						t.Fatalf("finding %s was not reported", id)
					}
				}
				patch, err := plan.Patch(w)
				if err != nil {
					t.Fatal(err)
				}
				if len(fixed) == 0 {
					if !patch.Empty() {
						t.Fatalf("a patch for a way that applies to nothing:\n%s", patch.Diff())
					}
					return
				}
				diff := patch.Diff()
				if diff == "" {
					t.Fatal("empty diff")
				}
				git(t, dst, diff, "apply", "--check", "-")
				git(t, dst, diff, "apply", "-")
				for _, f := range patch.Files {
					got, err := os.ReadFile(filepath.Join(dst, f.Name))
					if err != nil {
						t.Fatal(err)
					}
					if string(got) != string(f.New) {
						t.Errorf("%s after git apply differs from the patched text", f.Name)
					}
				}
				after := evaluate(t, dst)
				for _, o := range loadAll(t, dst) {
					if p := updateWithoutRevision(o.Value); p != "" {
						t.Errorf("after %s, %s %s/%s sets updateTargetRevision without desiredRevision (%s): Kargo's argocd-update schema rejects it", w, o.Kind, o.Namespace, o.Name, p)
					}
				}
				had := map[string]bool{}
				for _, f := range before.Findings {
					had[findingID(f)] = true
				}
				for _, f := range after.Findings {
					id := findingID(f)
					if slices.Contains(fixed, id) {
						t.Errorf("%s still reported after %s:\n%s", id, w, f.Message)
					}
					if f.Severity == evaluator.SeverityError && !had[id] {
						t.Errorf("new error after %s: %s: %s", w, id, f.Message)
					}
					if w == StageBranches && f.Rule == "shared-write-branch" {
						t.Errorf("shared-write-branch still reported after stage-branches: %s", f.Message)
					}
				}
				// The patched estate needs no further fix of this way.
				again, _ := planFor(t, dst, dst)
				for _, prop := range again.Proposals {
					if o := prop.Option(w); o.Applicable {
						t.Errorf("after %s, %s still offers it", w, findingID(prop.Finding))
					}
				}
			})
		}
	}
}

// TestFixedExamplesNeedNothing: the examples that show each way out have no
// finding to fix.
func TestFixedExamplesNeedNothing(t *testing.T) {
	race.Sequential(t)
	for _, d := range []string{"fix-no-desired-revision", "fix-update-target-revision", "fix-stage-branches"} {
		plan, _ := planFor(t, repoRoot, filepath.Join(repoRoot, "examples", d))
		if len(plan.Proposals) != 0 {
			t.Errorf("%s: %d proposals, want none", d, len(plan.Proposals))
		}
	}
}

func loadAll(t *testing.T, dir string) []evaluator.Object {
	t.Helper()
	objs, errs := (&loader.Loader{}).Load([]string{dir})
	if len(errs) > 0 {
		t.Fatalf("load %s: %v", dir, errs)
	}
	return objs
}

// updateWithoutRevision returns the path of an object in v that sets
// updateTargetRevision: true without a desiredRevision (or the legacy
// desiredCommitFromStep), "" when there is none.
func updateWithoutRevision(v ast.Value) string {
	found := ""
	ast.WalkTerms(v, func(t *ast.Term) bool {
		obj, ok := t.Value.(ast.Object)
		if !ok || found != "" {
			return found != ""
		}
		if u := obj.Get(ast.StringTerm("updateTargetRevision")); u != nil && u.Value.Compare(ast.Boolean(true)) == 0 &&
			obj.Get(ast.StringTerm("desiredRevision")) == nil && obj.Get(ast.StringTerm("desiredCommitFromStep")) == nil {
			found = obj.String()
		}
		return false
	})
	return found
}
