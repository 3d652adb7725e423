package safetext

import "testing"

func TestControls(t *testing.T) {
	for in, want := range map[string]string{
		"a\nb\x1b[31mc\u202ed\te": `a\x0ab\x1b[31mc\u202ed e`,
		"\u2066x\u2069\ufeff":     `\u2066x\u2069\ufeff`,
		"\u0085\x7f":              `\x85\x7f`,
		"##vso[x] ::error::":      "##vso[x] ::error::",
		"plain ünïcode":           "plain ünïcode",
	} {
		if got := Controls(in); got != want {
			t.Errorf("Controls(%q) = %q, want %q", in, got, want)
		}
	}
}
