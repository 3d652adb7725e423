package safetext

import "strings"

// Markdown returns s for Markdown prose (CommonMark with GitHub's extensions,
// as GitHub, GitLab, Azure DevOps and Bitbucket read it), shown as written:
// Text first (so no line break can start a block, a table row or a heading),
// then a backslash before each character Markdown could act on, and only
// those, so that a name, a path or a sentence quoting them stays readable
// where the Markdown is read as text (a chat message, a raw note):
//
//   - always: \ ` * _ ~ [ ] < > & | $ { } — no emphasis, strike-through,
//     code span, link, image, footnote or task-list box ("[", "](", "!["), raw
//     HTML, comment or autolink ("<"), entity ("&"), table cell ("|"), math
//     ("$") or GitLab inline diff ("{+", "[-"), and none of GitLab's label,
//     epic or snippet references ("~", "&", "$": GitLab's reference filters
//     skip an escaped character, kivikakk/comrak#367);
//   - before anything but a space (or at the end): ":" (emoji such as ":x:",
//     and the scheme of GitHub's and GitLab's autolinks: "http:", "mailto:"),
//     "#" (GitLab's "#1") and "@";
//   - "!" before "[" or a letter or digit (an image, GitLab's "!1"), "%"
//     before a letter, a digit, "_" or '"' (GitLab's milestones);
//   - the "." of "www." (GitHub's www autolinks);
//   - at the start of s, a character that starts a block at the start of a
//     line ("#", "-", "+", ">", "=", ...), and the "." or ")" after leading
//     digits ("1."): s may open a line.
//
// Every other character ("." "," "/" "(" ")" "-" "'" '"' ...) is left as it
// is: within a line, Markdown gives it no meaning.
//
// A backslash does not stop GitHub's mentions and references, though: they
// are found in the rendered text, after the escapes are gone, so "\@team"
// still notifies a team and "\#1" still links an issue (github/markup#1168,
// github/cmark-gfm#181). An entity does not either ("&#64;team", "&#35;1":
// decoded before the mention filter reads the text; cmark-gfm#181 and
// openjdk/skara#1548 tried them). What GitHub leaves alone is a character
// between the "@" or "#" and what follows it: the zero-width space U+200B,
// the workaround those threads report working. So a zero-width space,
// written as the entity "&#8203;" (the output stays ASCII, and shows
// nothing), follows every "@" and "#" that something follows, and the "-" of
// "GH-" before a digit (GitHub's other spelling of an issue reference). The
// value reads the same; copied from the page, it holds the invisible space.
func Markdown(s string) string {
	s = Text(s)
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	lead := leadingDigits(s)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if markdownActive(s, i, lead) {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
		if breaksReference(s, i) {
			b.WriteString(zeroWidthSpace)
		}
	}
	return b.String()
}

// markdownActive reports whether s[i] needs a backslash (see Markdown); lead
// is the length of the run of digits s starts with.
func markdownActive(s string, i, lead int) bool {
	c := s[i]
	if i == 0 && strings.IndexByte(blockStart, c) >= 0 {
		return true
	}
	next := byte(' ')
	if i+1 < len(s) {
		next = s[i+1]
	}
	switch c {
	case '\\', '`', '*', '_', '~', '[', ']', '<', '>', '&', '|', '$', '{', '}':
		return true
	case ':', '#', '@':
		return i+1 == len(s) || next != ' '
	case '!':
		return next == '[' || isAlnum(next)
	case '%':
		return next == '"' || next == '_' || isAlnum(next)
	case '.':
		return (i == lead && lead > 0) || i >= 3 && strings.EqualFold(s[i-3:i], "www")
	case ')':
		return i == lead && lead > 0
	}
	return false
}

// blockStart holds the characters that start a block (a heading, a list
// item, a quote, a thematic break, a setext underline, a table row, HTML) at
// the start of a line.
const blockStart = "#-+>=*_~`|<[!:\\"

func isAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// leadingDigits is the length of the run of ASCII digits s starts with.
func leadingDigits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// zeroWidthSpace is U+200B as a character reference.
const zeroWidthSpace = "&#8203;"

// breaksReference reports whether a zero-width space must follow s[i] so
// that GitHub reads no mention ("@team", "@org/team") and no issue or pull
// request reference ("#1", "owner/repo#1", "GH-1") there.
func breaksReference(s string, i int) bool {
	if i+1 >= len(s) || s[i+1] == ' ' {
		return false
	}
	switch s[i] {
	case '@', '#':
		return true
	case '-':
		return i >= 2 && strings.EqualFold(s[i-2:i], "gh") && s[i+1] >= '0' && s[i+1] <= '9'
	}
	return false
}

// MarkdownCode returns s as a Markdown code span, for names and paths: Text
// first, then fenced by a run of backticks longer than any in s (with a space
// inside each fence when s starts or ends with a backtick or a space), so that
// nothing in s is read as Markdown or HTML. Not for table cells: GitHub splits
// a table row at "|" even inside a code span; use Markdown there.
func MarkdownCode(s string) string {
	s = Text(s)
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	fence := strings.Repeat("`", longest+1)
	if s == "" || s[0] == '`' || s[len(s)-1] == '`' || s[0] == ' ' || s[len(s)-1] == ' ' {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

// isASCIIPunct reports whether c is one of the characters CommonMark lets a
// backslash escape.
func isASCIIPunct(c byte) bool {
	return c >= '!' && c <= '/' || c >= ':' && c <= '@' || c >= '[' && c <= '`' || c >= '{' && c <= '~'
}
