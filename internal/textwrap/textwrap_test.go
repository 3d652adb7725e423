package textwrap

import "testing"

func TestWrap(t *testing.T) {
	for _, tc := range []struct{ text, indent, want string }{
		{"", "  ", ""},
		{"one two three four", "  ", "  one two\n  three\n  four\n"},
		{"averyveryverylongword x", "", "averyveryverylongword\nx\n"},
		{"  spaced   out  ", "> ", "> spaced\n> out\n"},
	} {
		if got := Wrap(tc.text, tc.indent, 10); got != tc.want {
			t.Errorf("Wrap(%q, %q) = %q, want %q", tc.text, tc.indent, got, tc.want)
		}
	}
}
