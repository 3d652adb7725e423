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
func Markdown(s string) string {
	s = Text(s)
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	for i := 0; i < len(s); i++ {
		if c := s[i]; isASCIIPunct(c) {
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
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
