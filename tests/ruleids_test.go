package tests

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// Go code outside tests never names a rule by id: what a command does with a
// rule's findings comes from the rule's METADATA (fixable, timeline,
// diagnose), so a renamed rule cannot silently switch a command off.
// internal/estate is exempt: it is the benchmark's estate generator, and the
// findings it expects per rule are its test oracle.
func TestNoRuleIDsInGo(t *testing.T) {
	rules, err := evaluator.BundleRules()
	if err != nil {
		t.Fatal(err)
	}
	exempt := map[string]bool{filepath.Join("internal", "estate", "estate.go"): true}
	root := ".."
	err = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || rel == "tools" || rel == "bundles" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || exempt[rel] {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, r := range rules {
			if strings.Contains(string(b), `"`+r.ID+`"`) {
				t.Errorf("%s names rule %s: read what it needs from the rule's METADATA", rel, r.ID)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
