// Package safetext makes values read from untrusted input safe to print where
// a person or a CI log reads them: a terminal, a GitHub Actions log, a JUnit
// or SARIF viewer. Every human-facing renderer of flipflop passes each value
// that came from input (names, paths, messages that quote them, reasons) through
// Text, or Name for identifiers, before printing it.
//
// What is neutralised, and why:
//
//   - every control character: C0 (including newline, carriage return and tab,
//     which would start a new log line or move the cursor), DEL, and C1
//     (U+0080–U+009F, where 8-bit terminals read CSI and OSC); ESC is among them,
//     so no ANSI or OSC sequence (colours, cursor moves, OSC 52 clipboard
//     writes, OSC 8 links) survives;
//   - Unicode format characters (category Cf: bidirectional overrides and
//     isolates such as U+202E, zero-width spaces and joiners, U+FEFF, soft
//     hyphen, tag characters) and the line and paragraph separators U+2028 and
//     U+2029, which reorder or hide what is shown ("Trojan Source");
//   - bytes that are not UTF-8;
//   - GitHub Actions workflow commands: the runner reads "::command::" at the
//     start of a line (after leading white space) and the legacy
//     "##[command]" anywhere in a line, so a "::" that starts a word and every
//     "##[" are escaped too.
//
// Escapes are written as Go escapes (\n, \t, \x1b, \u202e), so that the value
// stays readable and its exact bytes can be recovered. JSON output is data, not
// text for a person: it is left to encoding/json and not passed through here.
package safetext

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text returns s with every character that could control a terminal, a log
// viewer or the GitHub Actions runner escaped (see the package comment). A
// string that needs no escaping is returned as is.
func Text(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	write(&b, s, false)
	return b.String()
}

// Name returns an identifier read from input (an object name, a namespace, a
// branch) for display: as is when Kubernetes would accept it as a name (a
// DNS-1123 subdomain: lower-case letters, digits, '-' and '.', at most 253
// characters), else double-quoted with '"' and '\' escaped as well as
// everything Text escapes, so that a name Kubernetes would reject stands out
// and cannot pass for another.
func Name(s string) string {
	if IsKubernetesName(s) {
		return s
	}
	return Quote(s)
}

// Quote returns s double-quoted, with '"' and '\' escaped as well as everything
// Text escapes: for a literal read from input that should read as one.
func Quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteByte('"')
	write(&b, s, true)
	b.WriteByte('"')
	return b.String()
}

// Lines passes every line of out through Text and keeps the line breaks: for
// renderers whose whole output is plain text with no control character of its
// own but '\n' (no colour), as a last guard behind escaping each value. Text
// leaves escaped text alone, so values escaped before are not escaped twice.
func Lines(out string) string {
	if !needsEscape(strings.ReplaceAll(out, "\n", "")) {
		return out
	}
	lines := strings.SplitAfter(out, "\n")
	for i, l := range lines {
		body := strings.TrimSuffix(l, "\n")
		lines[i] = Text(body) + l[len(body):]
	}
	return strings.Join(lines, "")
}

// IsKubernetesName reports whether s is a valid DNS-1123 subdomain, the rule
// Kubernetes applies to most object names.
func IsKubernetesName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if (i == 0 || i == len(s)-1) && !alnum {
			return false
		}
		if !alnum && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

// Unsafe reports the first character of s that Text would have escaped (a
// control or format character, a byte that is not UTF-8, a workflow command
// marker), with its byte offset; ok is false when there is none. Tests use it
// to check whole outputs: pass the output with its intended line breaks (and
// colour sequences) removed.
func Unsafe(s string) (offset int, what string, ok bool) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return i, fmt.Sprintf("byte %#x (not UTF-8)", s[i]), true
		case isControl(r):
			return i, fmt.Sprintf("%U", r), true
		case strings.HasPrefix(s[i:], "##["):
			return i, "##[ (workflow command)", true
		case strings.HasPrefix(s[i:], "::") && wordStart(s, i):
			return i, ":: (workflow command)", true
		}
		i += size
	}
	return 0, "", false
}

// isControl reports whether r is escaped wherever it appears.
func isControl(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r < 0xa0:
		return false
	case r == '\u2028', r == '\u2029':
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

// wordStart reports whether byte offset i of s starts a word: the start of
// s, or right after white space.
func wordStart(s string, i int) bool {
	if i == 0 {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return unicode.IsSpace(r)
}

func needsEscape(s string) bool {
	_, _, bad := Unsafe(s)
	return bad
}

// write appends s escaped to b; quoted also escapes '"' and '\'.
func write(b *strings.Builder, s string, quoted bool) {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(b, `\x%02x`, s[i])
		case isControl(r):
			writeEscape(b, r)
		case strings.HasPrefix(s[i:], "##["):
			b.WriteString(`##\x5b`)
			size = 3
		case r == ':' && strings.HasPrefix(s[i:], "::") && wordStart(s, i):
			b.WriteString(`\x3a`)
		case quoted && (r == '"' || r == '\\'):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
}

func writeEscape(b *strings.Builder, r rune) {
	switch r {
	case '\n':
		b.WriteString(`\n`)
	case '\r':
		b.WriteString(`\r`)
	case '\t':
		b.WriteString(`\t`)
	default:
		switch {
		case r < 0x80:
			fmt.Fprintf(b, `\x%02x`, r)
		case r <= 0xffff:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			fmt.Fprintf(b, `\U%08x`, r)
		}
	}
}
