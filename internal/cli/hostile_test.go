package cli

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// hostileEstate is examples/contradiction beside testdata/hostile/names.yaml
// (a Stage and Applications whose names carry terminal escapes, workflow
// commands and bidi controls, joining the contradiction), plus a file whose
// name carries them too and does not parse.
func hostileEstate(t *testing.T) []string {
	t.Helper()
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad\n::error file=x::forged\x1b]52;c;aGk=\x07\u202e.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: v1\nkind: [\n"), 0o644); err != nil {
		t.Skipf("this file system refuses hostile file names: %v", err)
	}
	return []string{"../../examples/contradiction", "../../testdata/hostile/names.yaml", dir}
}

// assertSafe fails when out, with its own line breaks taken out, still holds
// a character safetext escapes (a control or format character, a workflow
// command marker).
func assertSafe(t *testing.T, what, out string) {
	t.Helper()
	for i, line := range strings.Split(out, "\n") {
		if off, bad, ok := safetext.Unsafe(line); ok {
			t.Errorf("%s line %d holds %s at %d: %q", what, i+1, bad, off, line)
		}
	}
}

// Every human-facing output of check, explain, graph and fix prints the hostile
// names escaped, and the real finding of the estate is still reported.
func TestHostileNamesEscapedEverywhere(t *testing.T) {
	paths := hostileEstate(t)

	// The real finding is still there (JSON is data: the names as they are).
	stdout, _, code := run(t, "", append([]string{"check", "-o", "json"}, paths...)...)
	if code != ExitIncomplete {
		t.Errorf("check -o json: exit %d, want %d (the file that does not parse)", code, ExitIncomplete)
	}
	var report struct {
		Findings []struct {
			Rule      string
			Resources []struct{ Kind, Namespace, Name string }
		}
	}
	if err := json.Unmarshal([]byte(stdout), &report); err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range report.Findings {
		var names []string
		for _, r := range f.Resources {
			names = append(names, r.Namespace+"/"+r.Name)
		}
		if f.Rule == "shared-branch-contradiction" && slices.Contains(names, "acme/dev") && slices.Contains(names, "acme/qa") &&
			slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "acme/evil\n::error") }) {
			found = true
		}
	}
	if !found {
		t.Fatalf("the contradiction of acme/dev, acme/qa and the hostile Stage is not reported:\n%s", stdout)
	}

	for _, format := range []string{"text", "github", "junit", "sarif"} {
		stdout, stderr, _ := run(t, "", append([]string{"check", "-o", format, "--color", "never"}, paths...)...)
		assertSafe(t, "stderr of check -o "+format, stderr)
		switch format {
		case "text":
			assertSafe(t, "check -o text", stdout)
			if !strings.Contains(stdout, `Stage       acme/"evil\n\x3a:error file=README.md`) {
				t.Errorf("the hostile Stage is not shown quoted and escaped:\n%s", stdout)
			}
		case "github":
			// Each line is one workflow command of ours, or the summary.
			command := regexp.MustCompile(`^::(error|warning|notice)( [^:]*)?::(.*)$`)
			for _, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
				m := command.FindStringSubmatch(line)
				if m == nil {
					if !strings.HasPrefix(line, "flipflop: ") {
						t.Errorf("-o github line is neither a command nor the summary: %q", line)
					}
					continue
				}
				assertSafe(t, "-o github properties", m[2])
				assertSafe(t, "-o github message", m[3])
			}
		case "junit":
			if err := xml.Unmarshal([]byte(stdout), new(any)); err != nil {
				t.Errorf("junit does not parse: %v", err)
			}
			assertSafe(t, "check -o junit", stdout)
		case "sarif":
			var doc any
			if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
				t.Fatal(err)
			}
			walkStrings(doc, func(s string) { assertSafe(t, "a SARIF string", s) })
		}
	}

	stdout, stderr, _ := run(t, "", append([]string{"explain"}, paths...)...)
	assertSafe(t, "explain", stdout)
	assertSafe(t, "stderr of explain", stderr)
	if !strings.Contains(stdout, "github.com/acme/deploy @ main") {
		t.Errorf("explain lost the timeline:\n%s", stdout)
	}
	for _, format := range []string{"mermaid", "dot"} {
		stdout, stderr, _ = run(t, "", append([]string{"graph", "-o", format}, paths...)...)
		assertSafe(t, "graph -o "+format, stdout)
		assertSafe(t, "stderr of graph", stderr)
	}
	// fix prints no patch from a partly read estate; without the broken file
	// it lists the ways out.
	_, stderr, _ = run(t, "", append([]string{"fix"}, paths...)...)
	assertSafe(t, "stderr of fix", stderr)
	stdout, stderr, _ = run(t, "", "fix", paths[0], paths[1])
	assertSafe(t, "fix listing", stdout)
	assertSafe(t, "stderr of fix", stderr)
	if !strings.Contains(stdout, "shared-branch-contradiction") {
		t.Errorf("fix lists no way out:\n%s", stdout)
	}
}

func walkStrings(v any, f func(string)) {
	switch x := v.(type) {
	case string:
		f(x)
	case []any:
		for _, e := range x {
			walkStrings(e, f)
		}
	case map[string]any:
		for k, e := range x {
			f(k)
			walkStrings(e, f)
		}
	}
}
