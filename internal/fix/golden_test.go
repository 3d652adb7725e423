package fix

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/internal/race"
)

var update = flag.Bool("update", false, "rewrite the golden files of the fix tests")

// TestGolden compares each way's diff (and, for stage-branches, the patched
// documents) with the files in testdata/golden; go test -run TestGolden -update
// rewrites them.
func TestGolden(t *testing.T) {
	race.Sequential(t)
	for _, tc := range []struct{ name, dir string }{
		{"contradiction", "examples/contradiction"},
		{"odd-format", "internal/fix/testdata/odd-format"},
		{"helm-task", "internal/fix/testdata/helm-task"},
		{"list-applicationset", "policies/rules/shared_branch_contradiction/samples/fires/list-applicationset"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			golden, err := filepath.Abs(filepath.Join("testdata", "golden"))
			if err != nil {
				t.Fatal(err)
			}
			t.Chdir(repoRoot)
			plan, _ := planFor(t, "", tc.dir)
			for _, w := range Ways() {
				patch, err := plan.Patch(w)
				if err != nil {
					t.Fatal(err)
				}
				var b strings.Builder
				for _, n := range patch.Notes {
					b.WriteString("# note: " + strings.ReplaceAll(n, "\n", "\n#   ") + "\n")
				}
				for _, s := range patch.Skipped {
					b.WriteString("# skipped: " + s + "\n")
				}
				b.WriteString(patch.Diff())
				check(t, filepath.Join(golden, tc.name+"."+string(w)+".diff"), b.String())
				if w == StageBranches {
					check(t, filepath.Join(golden, tc.name+"."+string(w)+".yaml"), patch.YAML())
				}
			}
		})
	}
}

func check(t *testing.T, file, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the output:\n%s", file, got)
	}
}
