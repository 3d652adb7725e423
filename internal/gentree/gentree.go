// Package gentree writes and checks trees of generated files kept in the
// repository (the rule pages of docs/rules, the command reference and man
// pages): write what changed, delete stale pages, and report drift.
package gentree

import (
	"bytes"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flipflop-dev/flipflop/internal/safefile"
)

// Write writes files (slash-separated names relative to root) under root,
// leaving alone those already up to date and never writing through a
// symbolic link, after deleting the stale names.
func Write(root string, files map[string][]byte, stale []string) error {
	for _, name := range stale {
		if err := os.Remove(filepath.Join(root, filepath.FromSlash(name))); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(files)) {
		p := filepath.Join(root, filepath.FromSlash(name))
		if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, files[name]) {
			continue
		}
		if err := safefile.Write(p, files[name], 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Check lists the files under root that are missing or differ from files,
// and the stale names, each saying staleWhy; empty means up to date.
func Check(root string, files map[string][]byte, stale []string, staleWhy string) []string {
	var problems []string
	for _, name := range slices.Sorted(maps.Keys(files)) {
		old, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(name)))
		switch {
		case err != nil:
			problems = append(problems, name+": missing")
		case !bytes.Equal(old, files[name]):
			problems = append(problems, name+": "+firstDifference(string(old), string(files[name])))
		}
	}
	for _, name := range stale {
		problems = append(problems, name+": "+staleWhy)
	}
	return problems
}

// firstDifference describes where two texts first differ, for drift reports.
func firstDifference(have, want string) string {
	hl, wl := strings.Split(have, "\n"), strings.Split(want, "\n")
	for i := range max(len(hl), len(wl)) {
		var h, w string
		if i < len(hl) {
			h = hl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if h != w {
			return fmt.Sprintf("line %d is %q, generated %q", i+1, h, w)
		}
	}
	return "differs"
}
