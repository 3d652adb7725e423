package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/internal/race"
)

// A file name that is not UTF-8 is printed with its bytes escaped (a\xff),
// never as U+FFFD, which is another directory's name a pull request can add
// beside it; fix --apply patches the very file that was read, and the
// commands flipflop prints name it by its bytes ($'a\xff').
func TestNonUTF8PathsKeepTheirBytes(t *testing.T) {
	race.Sequential(t)
	kargo, argocd := readExample(t, "kargo.yaml"), readExample(t, "argocd.yaml")
	clean, err := os.ReadFile("../../examples/fix-stage-branches/kargo.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	const raw, lookalike = "a\xff", "a\uFFFD"
	if err := os.Mkdir(filepath.Join(dir, raw), 0o755); err != nil {
		t.Skip("this file system refuses names that are not UTF-8:", err)
	}
	// The lookalike holds other text at the same names: what it was read as
	// must never matter for the raw directory.
	writeFiles(t, dir, map[string]string{
		raw + "/kargo.yaml": kargo, raw + "/argocd.yaml": argocd,
		lookalike + "/kargo.yaml": string(clean), lookalike + "/argocd.yaml": argocd,
	})
	chdir(t, dir)

	stdout, _, code := run(t, "", "check", "--color", "never", raw)
	if code != ExitFindings || !strings.Contains(stdout, `a\xff/kargo.yaml:18`) || strings.Contains(stdout, lookalike) {
		t.Errorf("check %s: exit %d, want the path printed a\\xff:\n%s", raw, code, stdout)
	}
	stdout, _, _ = run(t, "", "check", "-o", "github", raw)
	if !strings.Contains(stdout, `file=a\xff/kargo.yaml,line=18`) || strings.Contains(stdout, lookalike) {
		t.Errorf("-o github:\n%s", stdout)
	}

	listing, stderr, code := run(t, "", "fix", raw)
	if code != ExitOK {
		t.Fatalf("fix: exit %d\n%s", code, stderr)
	}
	cmds := previewCommands(listing)
	if len(cmds) == 0 || !strings.Contains(cmds[0], `-- $'a\xff'`) {
		t.Fatalf("the listing does not name %q by its bytes:\n%s", raw, listing)
	}
	for _, cmd := range cmds {
		if args := shellWords(t, cmd); !slices.Equal(args[len(args)-2:], []string{"--", raw}) {
			t.Errorf("%q does not name %q", cmd, raw)
		}
	}
	diff, stderr, code := run(t, "", shellWords(t, cmds[0])[1:]...)
	if code != ExitOK || !strings.Contains(diff, `"a/a\377/kargo.yaml"`) || strings.Contains(diff, "\\357\\277\\275") {
		t.Errorf("the preview does not patch %q (exit %d):\n%s%s", raw, code, diff, stderr)
	}

	stdout, stderr, code = run(t, "", "fix", "--way", "no-desired-revision", "--apply", raw)
	if code != ExitOK || !strings.Contains(stderr, `wrote 1 file: a\xff/kargo.yaml`) {
		t.Errorf("fix --apply %s: exit %d\n%s%s", raw, code, stdout, stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(raw, "kargo.yaml")); string(b) == kargo || strings.Contains(string(b), "desiredRevision: ${{") {
		t.Errorf("%s/kargo.yaml was not patched", raw)
	}
	if b, _ := os.ReadFile(filepath.Join(lookalike, "kargo.yaml")); string(b) != string(clean) {
		t.Errorf("fix --apply %s wrote %s/kargo.yaml", raw, lookalike)
	}
}
