package estate

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDump writes a generated estate to $ESTATE_DIR (for profiling by hand).
func TestDump(t *testing.T) {
	dir := os.Getenv("ESTATE_DIR")
	if dir == "" {
		t.Skip("ESTATE_DIR not set")
	}
	files, _ := Generate(Options{Objects: 2000, Seed: 1})
	for _, f := range files {
		p := filepath.Join(dir, f.Path)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, f.Content, 0o644)
	}
}
