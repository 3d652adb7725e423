package fix

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// Write writes exactly what the diff says (the same bytes git apply produces,
// see TestWaysApplyAndCheckClean), and nothing at all when a file changed since
// it was read or lies outside the paths given.
func TestPatchWrite(t *testing.T) {
	dst := copyTree(t, filepath.Join(repoRoot, "examples/contradiction"), "crlf")
	plan, _ := planFor(t, dst, dst)
	patch, err := plan.Patch(StageBranches)
	if err != nil || patch.Empty() {
		t.Fatalf("patch: %v", err)
	}

	// Outside the paths given: refused, nothing written.
	other := t.TempDir()
	if _, err := patch.Write([]string{other}); err == nil || !strings.Contains(err.Error(), "outside the paths given") {
		t.Fatalf("a file outside the roots was accepted: %v", err)
	}
	// Changed since read: refused, nothing written.
	first := patch.Files[0].Path
	orig, _ := os.ReadFile(first)
	if err := os.WriteFile(first, append(orig, "# edited\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := patch.Write([]string{dst}); err == nil || !strings.Contains(err.Error(), "changed since it was read") {
		t.Fatalf("a changed file was overwritten: %v", err)
	}
	for _, f := range patch.Files[1:] {
		if b, _ := os.ReadFile(f.Path); string(b) != string(f.Old) {
			t.Fatalf("%s was written although the patch was refused", f.Path)
		}
	}
	if err := os.WriteFile(first, orig, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(first, 0o600); err != nil {
		t.Fatal(err)
	}
	// A symbolic link inside the root is refused (a checkout can plant
	// one): nothing is written, the link's target included.
	if err := os.Rename(first, filepath.Join(dst, "target.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target.yaml", first); err != nil {
		t.Skip("symbolic links unsupported:", err)
	}
	if _, err := patch.Write([]string{dst}); err == nil || !strings.Contains(err.Error(), "refusing to write") || !strings.Contains(err.Error(), "symbolic link") {
		t.Fatalf("a link was written through: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dst, "target.yaml")); string(b) != string(patch.Files[0].Old) {
		t.Fatal("the link's target was written")
	}
	for _, f := range patch.Files[1:] {
		if b, _ := os.ReadFile(f.Path); string(b) != string(f.Old) {
			t.Fatalf("%s was written although the patch was refused", f.Path)
		}
	}
	if err := os.Remove(first); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dst, "target.yaml"), first); err != nil {
		t.Fatal(err)
	}
	written, err := patch.Write([]string{dst})
	if err != nil || len(written) != len(patch.Files) {
		t.Fatalf("written %v: %v", written, err)
	}
	for _, f := range patch.Files {
		b, err := os.ReadFile(f.Path)
		if err != nil || string(b) != string(f.New) {
			t.Errorf("%s does not hold the patched text", f.Path)
		}
	}
	if fi, _ := os.Stat(first); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want the file's 0600 kept", fi.Mode().Perm())
	}
	if left, _ := filepath.Glob(filepath.Join(dst, ".*.flipflop-*")); len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// fix reads (and so patches) only the files the objects were read from, by
// their exact bytes: a file a finding or the model names otherwise (a name
// that lost its bytes on the way, "a\uFFFD" for "a\xff") is never opened.
func TestEstateReadsOnlyFilesRead(t *testing.T) {
	var opened []string
	e := newEstate([]evaluator.Object{{Path: "a\xff/kargo.yaml"}}, nil, func(p string) ([]byte, error) {
		opened = append(opened, p)
		return []byte("kind: Stage\n"), nil
	})
	if _, err := e.source("a\uFFFD/kargo.yaml"); err == nil || !strings.Contains(err.Error(), "not a file the objects were read from") {
		t.Errorf("a file no object came from was read: %v", err)
	}
	if _, err := e.source("a\xff/kargo.yaml"); err != nil {
		t.Error(err)
	}
	if len(opened) != 1 || opened[0] != filepath.FromSlash("a\xff/kargo.yaml") {
		t.Errorf("opened %q", opened)
	}
}
