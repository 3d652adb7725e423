// Package safetext makes values read from untrusted input safe to print where
// a person or a CI log reads them: a terminal, a CI log (GitHub Actions, Azure
// Pipelines, GitLab CI, TeamCity, Buildkite), a JUnit or SARIF viewer. Every
// human-facing renderer of flipflop passes each value that came from input
// (names, paths, messages that quote them, reasons) through Text, or Name for
// identifiers, before printing it.
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
//   - the log commands of the CI systems that act on the lines of their logs
//     (see below).
//
// A value does not know where in a line it is printed (and a line break in it
// is escaped), so a log command marker that a runner reads anywhere in a line
// is escaped anywhere in a value, and one that it reads only at the start of a
// line is escaped at the start of every word of a value (its start, or after
// white space, where word wrapping may start a line):
//
//   - "##", ASCII letters, "[", anywhere: Azure Pipelines logging commands
//     ("##vso[task.setvariable ...]", acted on wherever the agent finds them in
//     a line), its formatting commands and GitHub Actions' legacy ones
//     ("##[error]", "##[group]"), and TeamCity service messages
//     ("##teamcity[message ...]", also found anywhere in a line). The "[" is
//     escaped whatever the letters, so no spelling of them survives;
//   - "::" at the start of a word: GitHub Actions workflow commands ("::error",
//     "::add-mask::", "::stop-commands::"), read at the start of a line after
//     leading white space. The first ":" is escaped;
//   - "section_start:" and "section_end:", anywhere: GitLab CI collapsible
//     section markers, found anywhere in a line (and only with the CR and
//     ESC[0K that end them, which are escaped as control characters anyway).
//     The ":" is escaped;
//   - "---", "+++", "~~~" and "^^^" at the start of a word and followed by
//     white space or the end of the value: Buildkite's log groups ("--- name",
//     "+++ name", "~~~ name" at the start of a line) and "^^^ +++" (expand the
//     previous group). The first character is escaped.
//
// Escapes are written as Go escapes (\n, \t, \x1b, \u202e, \x5b for "[",
// \x3a for ":"), so that the value stays readable and its exact bytes can be
// recovered (strconv.Unquote of Quote's result gives them back). Text leaves
// its own output alone: an escaped value is never escaped twice. JSON output
// is data, not text for a person: it is left to encoding/json and not passed
// through here.
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
// control or format character, a byte that is not UTF-8, a log command
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
		}
		if _, n, what := logCommand(s, i); n > 0 {
			return i, what, true
		}
		i += size
	}
	return 0, "", false
}

// logCommand reports the log command marker (see the package comment) that
// starts at byte offset i of s: what to write in place of its first n bytes,
// and what it is. n is 0 when no marker starts at i.
func logCommand(s string, i int) (esc string, n int, what string) {
	switch c := s[i]; c {
	case '#':
		if !strings.HasPrefix(s[i:], "##") {
			break
		}
		j := i + 2
		for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
			j++
		}
		if j < len(s) && s[j] == '[' {
			what := "Azure Pipelines or GitHub Actions log command"
			switch s[i+2 : j] {
			case "vso":
				what = "Azure Pipelines logging command"
			case "teamcity":
				what = "TeamCity service message"
			}
			return s[i:j] + `\x5b`, j + 1 - i, s[i:j+1] + " (" + what + ")"
		}
	case ':':
		if strings.HasPrefix(s[i:], "::") && wordStart(s, i) {
			return `\x3a`, 1, ":: (GitHub Actions workflow command)"
		}
	case 's':
		for _, m := range [...]string{"section_start:", "section_end:"} {
			if strings.HasPrefix(s[i:], m) {
				return m[:len(m)-1] + `\x3a`, len(m), m + " (GitLab CI section marker)"
			}
		}
	case '-', '+', '~', '^':
		if i+3 <= len(s) && s[i+1] == c && s[i+2] == c && wordStart(s, i) && spaceOrEnd(s, i+3) {
			return fmt.Sprintf(`\x%02x`, c), 1, s[i:i+3] + " (Buildkite log group)"
		}
	}
	return "", 0, ""
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

// spaceOrEnd reports whether byte offset i of s is its end or white space.
func spaceOrEnd(s string, i int) bool {
	if i == len(s) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
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
		case quoted && (r == '"' || r == '\\'):
			b.WriteByte('\\')
			b.WriteRune(r)
		default:
			if esc, n, _ := logCommand(s, i); n > 0 {
				b.WriteString(esc)
				size = n
				break
			}
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

// Cut returns s cut to its first n characters, with "…" added when anything
// was left out: for a value an error quotes, whose length the input decides.
// A byte that is not UTF-8 counts as one character.
func Cut(s string, n int) string {
	for i := range s {
		if n == 0 {
			return s[:i] + "…"
		}
		n--
	}
	return s
}
