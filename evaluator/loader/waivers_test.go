package loader

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flipflop-dev/flipflop/evaluator"
)

// writeConfig writes a configuration file in a new directory.
func writeConfig(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), ".flipflop.yaml")
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// A configuration file that does not decode is reported at the line of the
// value, in the file's words: no Go type name, and a key cut to 64 characters.
func TestConfigErrorsInTheFilesWords(t *testing.T) {
	for _, tc := range []struct {
		content string
		line    int
		want    string
	}{
		{"foo: 1\n", 1, `unknown key "foo" in the configuration file (keys: waivers, exclude, kargoVersion)`},
		{"waivers: foo\n", 1, "a string where a list of waivers belongs"},
		{"waivers: [1]\n", 1, "a number where a waiver belongs"},
		{"waivers:\n- rule: x\n  bogus: 1\n", 3, `unknown key "bogus" in a waiver (keys: rule, resources, reason, expires)`},
		{"waivers:\n- rule: x\n  resources: foo\n", 3, "a string where a list of strings belongs"},
		{"exclude: {a: 1}\n", 1, "a mapping where a list of strings belongs"},
		{"kargoVersion: [1]\n", 1, "a list where a string belongs"},
		{strings.Repeat("k", 1000) + ": 1\n", 1, `unknown key "` + strings.Repeat("k", 64) + `…" in the configuration file`},
	} {
		_, err := LoadConfig(writeConfig(t, tc.content))
		le, ok := err.(*evaluator.LoadError)
		if !ok || le.Line != tc.line || !strings.HasPrefix(le.Message, tc.want) || strings.Contains(le.Message, "evaluator.") || strings.Contains(le.Message, "loader.") {
			t.Errorf("%.40q: %v, want line %d: %s", tc.content, err, tc.line, tc.want)
		}
	}
}
