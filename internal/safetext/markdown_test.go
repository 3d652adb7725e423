package safetext

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// markdownHostile are values a pull request could put in a name or a path,
// aimed at Markdown, GitHub's autolinks, HTML and tables.
var markdownHostile = []string{
	`a"]-->X;click A "javascript:alert(1)"`,
	`<img src=x onerror=alert(1)>`, `<script>alert(1)</script>`, `<!-- x`, `&lt;b&gt;`, "&#60;",
	`|`, `a | b`, "`", "``a`", "` x `", "x`", " ", "", `\`, `\|`,
	`](http://evil)`, `[x](http://evil)`, `![i](http://evil/i.png)`, `[x]: http://evil`, `[^1]`,
	"http://evil.example", "https://evil.example/a?b", "www.evil.example", "user@evil.example", "mailto:a@b.c",
	"# heading", "1. item", "- item", "> quote", "***", "~~strike~~", "**bold** _em_", "===",
	"x\n# heading\n| a | b |\n|---|---|", "line\r\n\n```\ncode", "\u202eevil", "\x1b[31mred",
	"+ item", "10) item", "= x", "WWW.evil.example", "HTTP://evil", "<http://evil>", "ftp://evil", "a:b",
	":smile:", "~label", "%milestone", "!1", "$x$", "{+ add +}", "[- del -]", "x_y_z", "a*b*c", "end\\",
	strings.Repeat("long ", 300),
}

var (
	tag      = regexp.MustCompile(`<(/?)([a-z0-9]+)[^>]*>`)
	markdown = goldmark.New(goldmark.WithExtensions(extension.GFM, extension.Footnote)) // GFM: tables, strike-through, autolinks (linkify), task lists
)

func renderMarkdown(t *testing.T, src string) string {
	t.Helper()
	var b bytes.Buffer
	if err := markdown.Convert([]byte(src), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// textOf returns the tags of rendered HTML and its text.
func textOf(out string) (tags []string, text string) {
	for _, m := range tag.FindAllStringSubmatch(out, -1) {
		tags = append(tags, m[2])
	}
	return tags, html.UnescapeString(tag.ReplaceAllString(out, ""))
}

// shown is what a reader sees of rendered text: without the zero-width
// spaces Markdown puts after "@" and "#" (a value's own are escaped by Text,
// so every one is Markdown's).
func shown(text string) string {
	return strings.ReplaceAll(text, "\u200b", "")
}

// Rendered through a GFM renderer (goldmark with GitHub's extensions), every
// value shows as its Text, and makes no element of its own: in prose, in a
// table cell, and as a code span.
func TestMarkdownRendersAsText(t *testing.T) {
	for _, s := range markdownHostile {
		want := Text(s)

		out := renderMarkdown(t, "Value: "+Markdown(s)+" end\n")
		tags, text := textOf(out)
		if strings.Join(tags, " ") != "p p" {
			t.Errorf("prose %q renders elements %v: %s", s, tags, out)
		}
		if got := strings.TrimSuffix(strings.TrimPrefix(shown(text), "Value: "), " end\n"); got != want {
			t.Errorf("prose %q shows %q, want %q", s, got, want)
		}

		out = renderMarkdown(t, "| a | b |\n|---|---|\n| "+Markdown(s)+" | z |\n")
		tags, _ = textOf(out)
		if got := strings.Count(out, "<td>"); got != 2 {
			t.Errorf("table cell %q: %d cells: %s", s, got, out)
		}
		for _, tg := range tags {
			if !strings.Contains(" table thead tbody tr th td ", " "+tg+" ") {
				t.Errorf("table cell %q renders <%s>: %s", s, tg, out)
			}
		}
		if cell := regexp.MustCompile(`<td>(.*?)</td>`).FindStringSubmatch(out); cell == nil || shown(html.UnescapeString(cell[1])) != strings.TrimSpace(want) {
			t.Errorf("table cell %q shows %q, want %q", s, cell, want)
		}

		out = renderMarkdown(t, "Name "+MarkdownCode(s)+" end\n")
		tags, text = textOf(out)
		if strings.Join(tags, " ") != "p code code p" {
			t.Errorf("code span %q renders elements %v: %s", s, tags, out)
		}
		code := regexp.MustCompile(`(?s)<code>(.*)</code>`).FindStringSubmatch(out)
		if code == nil {
			continue
		}
		got := html.UnescapeString(code[1])
		if want == "" || strings.TrimSpace(want) == "" {
			if strings.TrimSpace(got) != "" {
				t.Errorf("code span %q shows %q", s, got)
			}
		} else if got != want {
			t.Errorf("code span %q shows %q, want %q", s, got, want)
		}
		_ = text
	}
}

// Markdown backslashes only what Markdown could act on: a sentence, a name
// or a path reads as written where the Markdown is read as text (a chat
// message, a raw merge-request note).
func TestMarkdownLeavesPlainText(t *testing.T) {
	for in, want := range map[string]string{
		"acme dev 2": "acme dev 2",
		"acme/dev":   "acme/dev",
		"Kargo v1.11.2 assumed, the newest release (name yours); \"quoted\" it's 100% so.": "Kargo v1.11.2 assumed, the newest release (name yours); \"quoted\" it's 100% so.",
		"examples/contradiction/kargo.yaml:18":                                             `examples/contradiction/kargo.yaml\:18`,
		"github.com/acme/deploy @ main":                                                    "github.com/acme/deploy @ main",
		"Only one commit can be the head of it: every promotion":                           "Only one commit can be the head of it: every promotion",
		"a-b+c=d":          "a-b+c=d",
		"www.evil.example": `www\.evil.example`,
		"http://evil":      `http\://evil`,
		"# x":              `\# x`,
		"1. x":             `1\. x`,
		"12) x":            `12\) x`,
		"x 1. y":           "x 1. y",
		"*a* _b_ `c` [d]":  "\\*a\\* \\_b\\_ \\`c\\` \\[d\\]",
	} {
		if got := Markdown(in); got != want {
			t.Errorf("Markdown(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := MarkdownCode("a``b"), "```a``b```"; got != want {
		t.Errorf("MarkdownCode = %q, want %q", got, want)
	}
}

// GitLab links references in the rendered text too, but not at an escaped
// character (it marks backslash escapes for its reference filters to skip:
// kivikakk/comrak#367): labels, milestones, merge requests, epics, snippets,
// emoji, inline diffs and math keep their backslash.
func TestMarkdownStopsGitLabMarkers(t *testing.T) {
	for in, want := range map[string]string{
		"x ~label":       `x \~label`,
		"x %milestone":   `x \%milestone`,
		"x !12":          `x \!12`,
		"x &3":           `x \&3`,
		"x $snippet":     `x \$snippet`,
		"x :smile:":      `x \:smile\:`,
		"x {+ added +}":  `x \{+ added +\}`,
		"x [- gone -]":   `x \[- gone -\]`,
		"x $a^2$":        `x \$a^2\$`,
		"x #1":           `x \#&#8203;1`,
		"Healthy! Then:": `Healthy! Then\:`,
	} {
		if got := Markdown(in); got != want {
			t.Errorf("Markdown(%q) = %q, want %q", in, got, want)
		}
	}
}

// GitHub mentions and links references after rendering, in the text (not in
// code): a backslash before "@" or "#" does not stop it (github/markup#1168,
// github/cmark-gfm#181), nor does an entity (&#64;, &#35;: decoded before the
// mention filter sees the text). These patterns are what it acts on.
var githubReference = regexp.MustCompile(`(?i)@[a-z0-9]|#[0-9]|\bgh-[0-9]`)

// A value read from input mentions nobody and links no issue where GitHub
// renders Markdown (a job summary, a pull-request comment): in prose, in a
// table cell.
func TestMarkdownMentionsNobody(t *testing.T) {
	for _, s := range []string{
		"@team", "@acme/platform", "ping @octocat please", `\@team`, "&#64;team", "x@y",
		"#1", "fixes #12", "acme/deploy#3", `\#4`, "&#35;5", "GH-6", "gh-7", "(#8)", "[#9]",
		"@@a", "##1", "a@b.example",
	} {
		for _, src := range []string{"Value: " + Markdown(s) + " end\n", "| a | b |\n|---|---|\n| " + Markdown(s) + " | z |\n"} {
			out := renderMarkdown(t, src)
			_, text := textOf(out)
			if m := githubReference.FindString(text); m != "" {
				t.Errorf("%q renders as %q: GitHub reads %q as a reference", s, text, m)
			}
			if got := shown(text); !strings.Contains(got, Text(s)) {
				t.Errorf("%q renders as %q, want it shown as %q", s, text, Text(s))
			}
		}
	}
}
