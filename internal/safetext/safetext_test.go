package safetext

import (
	"testing"
	"unicode"
)

func TestText(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"acme/dev", "acme/dev"},
		{"", ""},
		{"café ünïcode → ok", "café ünïcode → ok"},
		{"dev\n::error file=x::owned", `dev\n\x3a:error file=x::owned`},
		{"::add-mask::secret", `\x3a:add-mask::secret`},
		{"a ::stop-commands::tok", `a \x3a:stop-commands::tok`},
		{"a\u00a0::x::y", "a\u00a0\\x3a:x::y"},
		{"task-0::step-1", "task-0::step-1"},
		{"x##[error]forged", `x##\x5berror]forged`},
		{"\x1b]52;c;aGVsbG8=\x07", `\x1b]52;c;aGVsbG8=\x07`},
		{"\x1b[31mred\x1b[0m", `\x1b[31mred\x1b[0m`},
		{"tab\there\rcr", `tab\there\rcr`},
		{"del\x7f", `del\x7f`},
		{"c1\u009b31m", `c1\u009b31m`},
		{"bidi\u202eevil\u202c", `bidi\u202eevil\u202c`},
		{"zero\u200bwidth\u200d\ufeff", `zero\u200bwidth\u200d\ufeff`},
		{"iso\u2066x\u2069", `iso\u2066x\u2069`},
		{"line\u2028sep", `line\u2028sep`},
		{"tag\U000e0041", `tag\U000e0041`},
		{"bad\xffutf8", `bad\xffutf8`},
		{`back\slash "quote"`, `back\slash "quote"`},
	} {
		if got := Text(c.in); got != c.want {
			t.Errorf("Text(%q) = %q, want %q", c.in, got, c.want)
		}
		if _, what, bad := Unsafe(Text(c.in)); bad {
			t.Errorf("Text(%q) = %q still holds %s", c.in, Text(c.in), what)
		}
	}
}

func TestName(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"dev", "dev"},
		{"my-app.v2", "my-app.v2"},
		{"Dev", `"Dev"`},
		{"", `""`},
		{"-dev", `"-dev"`},
		{"dev\n::error::x", `"dev\n\x3a:error::x"`},
		{`a"b\c`, `"a\"b\\c"`},
		{"de\u200bv", `"de\u200bv"`},
		{"dеv", `"dеv"`}, // Cyrillic е: printable, but not a Kubernetes name
	} {
		if got := Name(c.in); got != c.want {
			t.Errorf("Name(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// Every rune that is a control or format character is escaped, whatever its
// plane; printable runes are left alone.
func TestEveryControlEscaped(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff {
			continue
		}
		s := string(r)
		esc := Text(s)
		control := unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029'
		if control && esc == s {
			t.Errorf("%U left raw", r)
		}
		if !control && esc != s && r != ':' {
			t.Errorf("%U escaped as %q", r, esc)
		}
	}
}

func TestUnsafe(t *testing.T) {
	if _, _, bad := Unsafe("ERROR  rule  title\n"); !bad {
		t.Error("a newline is reported (callers strip their own line breaks)")
	}
	if off, _, bad := Unsafe("ok \x1b[1m"); !bad || off != 3 {
		t.Errorf("ESC at 3: got %d %v", off, bad)
	}
	if _, _, bad := Unsafe("plain text: fine"); bad {
		t.Error("plain text reported")
	}
}

func BenchmarkTextClean(b *testing.B) {
	s := "Stages acme/dev, acme/qa all pin desiredRevision on Applications argocd/dev, argocd/qa"
	for range b.N {
		_ = Text(s)
	}
}

func TestLines(t *testing.T) {
	in := "ok line\nevil \x1b[2J\n::add-mask::x\nlast"
	want := "ok line\nevil \\x1b[2J\n\\x3a:add-mask::x\nlast"
	if got := Lines(in); got != want {
		t.Errorf("Lines = %q, want %q", got, want)
	}
	if got := Lines(Lines(in)); got != want {
		t.Errorf("Lines is not idempotent: %q", got)
	}
	clean := "a\nb\n"
	if got := Lines(clean); got != clean {
		t.Errorf("clean text changed: %q", got)
	}
}
