package safetext

import (
	"strconv"
	"strings"
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
		// Azure Pipelines and TeamCity: anywhere in a line, any spelling.
		{"##vso[task.setvariable variable=x]y", `##vso\x5btask.setvariable variable=x]y`},
		{"ok ##vso[task.complete result=Failed]", `ok ##vso\x5btask.complete result=Failed]`},
		{"x##VSO[task.setsecret]y", `x##VSO\x5btask.setsecret]y`},
		{"###vso[x]", `###vso\x5bx]`},
		{"##[group]g", `##\x5bgroup]g`},
		{"##teamcity[message text='x']", `##teamcity\x5bmessage text='x']`},
		{"a##teamcity[buildStatus text='green']", `a##teamcity\x5bbuildStatus text='green']`},
		{"## [x] ##vso #x[ ##1[", "## [x] ##vso #x[ ##1["},
		// GitLab CI: anywhere.
		{"section_start:1:x", `section_start\x3a1:x`},
		{"a section_end:1234567890:build[collapsed=true]", `a section_end\x3a1234567890:build[collapsed=true]`},
		{"xsection_start:1:y", `xsection_start\x3a1:y`},
		{"section_start section_middle:1", "section_start section_middle:1"},
		// Buildkite: at the start of a word, then white space or the end.
		{"--- x", `\x2d-- x`},
		{"a\n+++ y", `a\n\x2b++ y`},
		{"a ~~~ z", `a \x7e~~ z`},
		{"^^^ +++", `\x5e^^ \x2b++`},
		{"+++", `\x2b++`},
		{"---\u00a0x", "\\x2d--\u00a0x"},
		{"---- x ++ y x--- z ---x ~~", "---- x ++ y x--- z ---x ~~"},
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

// Every log command marker is reported by Unsafe where it starts, as a log
// command, and is gone from Text's result.
func TestUnsafeReportsEveryMarker(t *testing.T) {
	for _, c := range []struct {
		in   string
		at   int
		what string
	}{
		{"x ##vso[task.setvariable variable=x]y", 2, "Azure Pipelines"},
		{"##teamcity[message text='x']", 0, "TeamCity"},
		{"a##[error]b", 1, "GitHub Actions"},
		{"x\u00a0::error::y", 3, "GitHub Actions"},
		{"ab section_start:1:x", 3, "GitLab"},
		{"section_end:1:x", 0, "GitLab"},
		{"--- x", 0, "Buildkite"},
		{"a +++ b", 2, "Buildkite"},
		{"a ~~~", 2, "Buildkite"},
		{"^^^ +++", 0, "Buildkite"},
	} {
		off, what, bad := Unsafe(c.in)
		if !bad || off != c.at || !strings.Contains(what, c.what) {
			t.Errorf("Unsafe(%q) = %d %q %v, want %d and %s", c.in, off, what, bad, c.at, c.what)
		}
		if esc := Text(c.in); esc == c.in {
			t.Errorf("Text(%q) left it as is", c.in)
		} else if off, what, bad := Unsafe(esc); bad {
			t.Errorf("Text(%q) = %q still holds %s at %d", c.in, esc, what, off)
		}
	}
}

// fragments are the pieces of every marker, of escapes and of what surrounds
// them; TestTextProperties tries every sequence of up to three.
var fragments = []string{
	"#", "##", "vso", "teamcity", "[", ":", "::", "section_start", "section_end", "-", "---", "+++", "~~~", "^^^",
	" ", "\n", "\u00a0", "x", "\x1b", "\xff", "\u202e", `"`, `\`, "\\x5b",
}

// Text and Unsafe agree on every string built from fragments: Text leaves
// exactly the strings Unsafe finds nothing in as they are, its result holds
// nothing Unsafe reports and is left alone by a second pass, and Quote's
// result unquotes to the exact bytes.
func TestTextProperties(t *testing.T) {
	var check func(s string, depth int)
	check = func(s string, depth int) {
		checkProperties(t, s)
		if depth == 3 {
			return
		}
		for _, f := range fragments {
			check(s+f, depth+1)
		}
	}
	check("", 0)
}

func checkProperties(t *testing.T, s string) {
	t.Helper()
	esc := Text(s)
	if _, _, bad := Unsafe(s); !bad && esc != s {
		t.Errorf("Text(%q) = %q, though Unsafe finds nothing in it", s, esc)
	}
	if off, what, bad := Unsafe(esc); bad {
		t.Errorf("Text(%q) = %q still holds %s at %d", s, esc, what, off)
	}
	if again := Text(esc); again != esc {
		t.Errorf("Text is not idempotent on %q: %q, then %q", s, esc, again)
	}
	if got, err := strconv.Unquote(Quote(s)); err != nil || got != s {
		t.Errorf("Quote(%q) = %s does not unquote to it: %q, %v", s, Quote(s), got, err)
	}
	if off, what, bad := Unsafe(Quote(s)); bad {
		t.Errorf("Quote(%q) = %s still holds %s at %d", s, Quote(s), what, off)
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"##vso[task.setvariable variable=x]y", "--- x", "section_start:1:x", "a ::error::b", "\x1b[2J"} {
		f.Add(s)
	}
	f.Fuzz(checkProperties)
}

func TestCut(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 3, ""},
		{"abc", 3, "abc"},
		{"abcd", 3, "abc…"},
		{"ééé€", 3, "ééé…"},      // characters, not bytes
		{"a\xffbc", 2, "a\xff…"}, // a stray byte is one character
		{"abc", 0, "…"},
	} {
		if got := Cut(tc.s, tc.n); got != tc.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
