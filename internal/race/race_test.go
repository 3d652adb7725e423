package race

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// make go-test-plain leaves out the packages GO_RACE_ONLY_PKGS lists when the
// race pass runs: their tests run whole under -race. A test there that skips
// under -race would then run in neither pass, so none may.
func TestRaceOnlyPackagesSkipNothingUnderRace(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^GO_RACE_ONLY_PKGS := (.*)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("the Makefile has no GO_RACE_ONLY_PKGS")
	}
	skips := regexp.MustCompile(`\brace\.(Sequential|Enabled)\b`)
	for _, pkg := range strings.Fields(string(m[1])) {
		files, _ := filepath.Glob(filepath.Join("..", "..", pkg, "*_test.go"))
		if len(files) == 0 {
			t.Errorf("GO_RACE_ONLY_PKGS lists %s, which has no tests", pkg)
		}
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if skips.Match(b) {
				t.Errorf("%s skips under -race, but GO_RACE_ONLY_PKGS lists %s, so the plain pass leaves it out: take %s out of GO_RACE_ONLY_PKGS", f, pkg, pkg)
			}
		}
	}
}
