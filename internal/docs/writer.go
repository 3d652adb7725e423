package docs

import (
	"fmt"
	"strings"

	"github.com/flipflop-dev/flipflop/internal/textwrap"
)

// writer is what a page is rendered through: one implementation writes GitHub
// Markdown, the other plain text for a terminal, so both show the same content.
type writer interface {
	// title opens the page.
	title(id, title string)
	// facts lists name/value pairs (values may hold `code`).
	facts(kv [][2]string)
	heading(s string)
	// prose is text from METADATA: Markdown-light (paragraphs, lists, `code`,
	// > quotes), wrapped by its author.
	prose(s string)
	// para is one paragraph written here, unwrapped.
	para(s string)
	// code is a code block, optionally under a file name.
	code(lang, name, content string)
	// links lists description/URL pairs.
	links(l [][2]string)
}

type mdWriter struct{ b strings.Builder }

func (m *mdWriter) title(id, title string) { fmt.Fprintf(&m.b, "# %s: %s\n\n", id, mdEscape(title)) }

func (m *mdWriter) facts(kv [][2]string) {
	for _, f := range kv {
		fmt.Fprintf(&m.b, "- **%s:** %s\n", f[0], mdEscape(f[1]))
	}
	m.b.WriteString("\n")
}

func (m *mdWriter) heading(s string) { fmt.Fprintf(&m.b, "## %s\n\n", s) }

func (m *mdWriter) prose(s string) { fmt.Fprintf(&m.b, "%s\n\n", mdEscape(strings.TrimSpace(s))) }

func (m *mdWriter) para(s string) { fmt.Fprintf(&m.b, "%s\n\n", mdEscape(s)) }

func (m *mdWriter) code(lang, name, content string) {
	if name != "" {
		fmt.Fprintf(&m.b, "`%s`:\n\n", name)
	}
	fence := "```"
	for strings.Contains(content, fence) {
		fence += "`"
	}
	fmt.Fprintf(&m.b, "%s%s\n%s\n%s\n\n", fence, lang, strings.TrimRight(content, "\n"), fence)
}

func (m *mdWriter) links(l [][2]string) {
	for _, x := range l {
		desc := x[0]
		if desc == "" {
			desc = x[1]
		}
		fmt.Fprintf(&m.b, "- [%s](%s)\n", mdEscape(strings.NewReplacer("[", `\[`, "]", `\]`).Replace(desc)), x[1])
	}
	m.b.WriteString("\n")
}

func (m *mdWriter) String() string { return strings.TrimRight(m.b.String(), "\n") + "\n" }

// mdEscape makes METADATA text safe as GitHub Markdown without changing what
// it shows: outside code spans and fenced blocks, "<" (which GitHub would take
// for an HTML tag and drop, as in env/<stage>) becomes &lt; and "*" (emphasis)
// is escaped unless it starts a list item.
func mdEscape(s string) string {
	var b strings.Builder
	inSpan, inFence := false, false
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		trimmed := strings.TrimLeft(line, " ")
		if !inSpan && strings.HasPrefix(trimmed, "```") {
			inFence = !inFence
			b.WriteString(line)
			continue
		}
		if inFence {
			b.WriteString(line)
			continue
		}
		indent := len(line) - len(trimmed)
		for j := 0; j < len(line); j++ {
			c := line[j]
			switch {
			case c == '`':
				inSpan = !inSpan
				b.WriteByte(c)
			case inSpan:
				b.WriteByte(c)
			case c == '<':
				b.WriteString("&lt;")
			case c == '*' && (j != indent || !strings.HasPrefix(line[j:], "* ")):
				b.WriteString(`\*`)
			default:
				b.WriteByte(c)
			}
		}
		if strings.TrimSpace(line) == "" {
			inSpan = false // a code span never crosses a paragraph
		}
	}
	return b.String()
}

// textWidth is where plain-text paragraphs wrap.
const textWidth = 80

type textWriter struct{ b strings.Builder }

func (t *textWriter) title(id, title string) {
	head := id + ": " + title
	fmt.Fprintf(&t.b, "%s\n%s\n\n", head, strings.Repeat("=", min(len(head), textWidth)))
}

func (t *textWriter) facts(kv [][2]string) {
	width := 0
	for _, f := range kv {
		width = max(width, len(f[0]))
	}
	for _, f := range kv {
		fmt.Fprintf(&t.b, "  %-*s  %s\n", width, f[0], f[1])
	}
	t.b.WriteString("\n")
}

func (t *textWriter) heading(s string) { fmt.Fprintf(&t.b, "%s\n\n", strings.ToUpper(s)) }

func (t *textWriter) prose(s string) {
	for line := range strings.SplitSeq(strings.TrimSpace(s), "\n") {
		if strings.TrimSpace(line) == "" {
			t.b.WriteString("\n")
			continue
		}
		fmt.Fprintf(&t.b, "  %s\n", strings.TrimRight(line, " "))
	}
	t.b.WriteString("\n")
}

func (t *textWriter) para(s string) {
	t.b.WriteString(textwrap.Wrap(s, "  ", textWidth))
	t.b.WriteString("\n")
}

func (t *textWriter) code(_, name, content string) {
	if name != "" {
		fmt.Fprintf(&t.b, "  %s:\n", name)
	}
	for line := range strings.SplitSeq(strings.TrimRight(content, "\n"), "\n") {
		if line == "" {
			t.b.WriteString("\n")
			continue
		}
		fmt.Fprintf(&t.b, "    %s\n", line)
	}
	t.b.WriteString("\n")
}

func (t *textWriter) links(l [][2]string) {
	for _, x := range l {
		if x[0] != "" {
			fmt.Fprintf(&t.b, "  - %s\n    %s\n", x[0], x[1])
		} else {
			fmt.Fprintf(&t.b, "  - %s\n", x[1])
		}
	}
	t.b.WriteString("\n")
}

func (t *textWriter) String() string { return strings.TrimRight(t.b.String(), "\n") + "\n" }
