package gentree

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Write writes what changed and deletes the stale; Check then finds nothing,
// and reports a drifted file by its first differing line; a link is never
// written through.
func TestWriteAndCheck(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "d", "old.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"d/a.md": []byte("one\ntwo\n")}
	if err := Write(root, files, []string{"d/old.md"}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "d", "old.md")); !os.IsNotExist(err) {
		t.Errorf("stale page kept: %v", err)
	}
	if p := Check(root, files, nil, "stale"); len(p) != 0 {
		t.Errorf("after Write: %v", p)
	}
	files["d/a.md"] = []byte("one\nthree\n")
	files["d/b.md"] = []byte("b")
	p := Check(root, files, []string{"d/c.md"}, "no rule")
	want := []string{`d/a.md: line 2 is "two", generated "three"`, "d/b.md: missing", "d/c.md: no rule"}
	if !slices.Equal(p, want) {
		t.Errorf("Check: %q, want %q", p, want)
	}
	target := filepath.Join(t.TempDir(), "target")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, filepath.Join(root, "d", "b.md")); err != nil {
		t.Fatal(err)
	}
	if err := Write(root, files, nil); err == nil || !strings.Contains(err.Error(), "link") {
		t.Errorf("write through a link: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Errorf("the link's target was written: %q", b)
	}
}
