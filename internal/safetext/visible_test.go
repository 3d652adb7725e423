package safetext

import "testing"

func TestVisible(t *testing.T) {
	for in, want := range map[string]string{
		"--- a/x.yaml":          "--- a/x.yaml",
		"##vso[task] ::error::": "##vso[task] ::error::",
		"a\x1b[31mb":            `a\x1b[31mb`,
		"\u202eevil":            `\u202eevil`,
		"ok\xffbad":             `ok\xffbad`,
		"tab\there":             `tab\there`,
		"plain ünïcode":         "plain ünïcode",
		"\x00":                  `\x00`,
		"x\u200by":              `x\u200by`,
		"line1\nline2":          `line1\nline2`,
		"":                      "",
	} {
		if got := Visible(in); got != want {
			t.Errorf("Visible(%q) = %q, want %q", in, got, want)
		}
	}
}
