package safetext

import "strings"

// Markdown returns s for Markdown prose (CommonMark with GitHub's extensions,
// as GitHub, GitLab, Azure DevOps and Bitbucket read it), shown as written:
// Text first (so no line break can start a block, a table row or a heading),
// then every ASCII punctuation character backslash-escaped. No character of s
// then starts emphasis, a link or image ("[", "](", "!["), raw HTML or a
// comment ("<"), an entity ("&"), a code span ("`"), a table cell ("|"), a
// list item, a heading, a footnote or a strike-through, and no autolink is
// recognised: GitHub links "www.", "http:" and e-mail addresses found in
// plain text, and each needs a "." , ":" or "@" that is escaped here.
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
	b.Grow(len(s) + len(s)/4)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isASCIIPunct(c) {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
		if breaksReference(s, i) {
			b.WriteString(zeroWidthSpace)
		}
	}
	return b.String()
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
