package output

import (
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/digest"
	"github.com/flipflop-dev/flipflop/internal/graph"
	"github.com/flipflop-dev/flipflop/internal/safetext"
)

// DefaultMarkdownLimit bounds the Markdown output, in bytes: under GitHub's
// 65,536 characters for a pull-request comment, and far under its 1 MiB for a
// job summary. Findings that do not fit are left out and counted.
const DefaultMarkdownLimit = 60 << 10

// Bounds on the parts of one finding in Markdown.
const (
	mdMaxObjects   = 10   // objects listed per finding
	mdMaxName      = 200  // runes of a name, a path or a pointer
	mdMaxCommand   = 600  // bytes of a fix command shown as is
	mdMaxErrorText = 300  // runes of an input error's message
	mdReserve      = 1024 // bytes kept for the closing lines
)

var ruleID = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// placeholder is a word of flipflop's own prose that stands for a value to
// fill in, such as env/<stage>.
var placeholder = regexp.MustCompile(`[^\s()<>]*<[a-z-]+>[^\s(),;<>]*`)

// prose returns flipflop's own text (rule titles, the ways' trade-offs, why
// no way out is previewed) for Markdown, where it is written as Markdown-safe
// prose and read as it is: only its placeholders become code spans, since a
// "<" would start an HTML tag. Values from the input never come here: they
// go through safetext.Markdown or safetext.MarkdownCode.
func prose(s string) string {
	return placeholder.ReplaceAllStringFunc(s, func(p string) string { return "`" + p + "`" })
}

// writeMarkdown writes the report for the places people read Markdown: a
// GitHub job summary, a merge-request note, a pull-request comment. A table of
// the findings by severity and rule; then, per error, the picture of the
// objects involved (a Mermaid flowchart: the finding's part of the graph
// `flipflop graph` draws), why in two sentences, and the way out with the
// command that previews it; then the other findings, one row each, and the
// input errors. Every value from the input, and every message that quotes
// one, is escaped for Markdown (safetext.Markdown, safetext.MarkdownCode) or
// for Mermaid (graph.Mermaid); flipflop's own sentences are not (prose),
// and the whole stays under Options.MarkdownLimit (DefaultMarkdownLimit when
// 0), saying how many findings were left out.
func writeMarkdown(w io.Writer, report *evaluator.Report, opts Options) error {
	d := opts.Digest
	if d == nil || d.Report != report {
		d = digest.Build(digest.Input{Report: report})
	}
	limit := opts.MarkdownLimit
	if limit <= 0 {
		limit = DefaultMarkdownLimit
	}
	var b strings.Builder
	s := report.Summary
	verdict := "no error"
	if s.Error > 0 {
		verdict = plural(s.Error, "error")
	}
	fmt.Fprintf(&b, "## flipflop: %s, %s\n\n", verdict, plural(s.Warning, "warning"))
	fmt.Fprintf(&b, "%s: %s, %s, %s%s.", objectsChecked(s), plural(s.Error, "error"), plural(s.Warning, "warning"), plural(s.Info, "info"), summaryTail(report))
	if k := kargoSentence(report.Kargo, safetext.Markdown, "`--kargo-version`"); k != "" {
		b.WriteString(" " + k + ".")
	}
	b.WriteString("\n\n")
	writeMarkdownCounts(&b, report)

	var errs, others []digest.Item
	for _, it := range d.Items {
		if it.Finding.Severity == evaluator.SeverityError && it.Finding.Waived == nil {
			errs = append(errs, it)
		} else {
			others = append(others, it)
		}
	}
	left := 0
	fits := func(part string) bool { return b.Len()+len(part)+mdReserve <= limit }
	fixable := map[string]bool{}
	for _, r := range opts.Rules {
		fixable[r.ID] = r.Fixable
	}
	for i, it := range errs {
		part := markdownError(it, d.NoFix, fixable[it.Finding.Rule])
		if !fits(part) {
			left += len(errs) - i
			break
		}
		b.WriteString(part)
	}
	if len(others) > 0 && left == 0 {
		head := "### Other findings\n\n| severity | rule | about | where |\n|---|---|---|---|\n"
		if fits(head) {
			b.WriteString(head)
			for i, it := range others {
				row := markdownRow(it.Finding)
				if !fits(row) {
					left += len(others) - i
					break
				}
				b.WriteString(row)
			}
			b.WriteString("\n")
		} else {
			left += len(others)
		}
	} else {
		left += len(others)
	}
	if len(report.Errors) > 0 {
		b.WriteString("### Input errors\n\nThese files or documents were not checked:\n\n")
		for i, e := range report.Errors {
			line := fmt.Sprintf("- %s: %s\n", safetext.MarkdownCode(digest.Clip(rawErrorLocation(e), mdMaxName)), safetext.Markdown(digest.Clip(e.Message, mdMaxErrorText)))
			if !fits(line) {
				fmt.Fprintf(&b, "- and %s more\n", plural(len(report.Errors)-i, "input error"))
				break
			}
			b.WriteString(line)
		}
		b.WriteString("\n")
	}
	writeMarkdownLeftOut(&b, report, fits)
	if left > 0 {
		fmt.Fprintf(&b, "**%s left out** to keep this under %d KiB: `flipflop check` lists every finding.\n\n", plural(left, "finding"), limit>>10)
	}
	if opts.Version != "" {
		fmt.Fprintf(&b, "<sub>flipflop %s</sub>\n", prose(opts.Version))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeMarkdownCounts writes the table of findings by severity and rule
// (waived findings apart).
func writeMarkdownCounts(b *strings.Builder, report *evaluator.Report) {
	type row struct{ severity, rule, title string }
	counts := map[row]int{}
	var rows []row
	waived := 0
	for _, f := range report.Findings {
		if f.Waived != nil {
			waived++
			continue
		}
		r := row{f.Severity, f.Rule, f.Title}
		if counts[r] == 0 {
			rows = append(rows, r)
		}
		counts[r]++
	}
	if len(rows) == 0 {
		if waived == 0 {
			b.WriteString("No finding.\n\n")
		}
		return
	}
	slices.SortStableFunc(rows, func(a, c row) int { return evaluator.SeverityRank(c.severity) - evaluator.SeverityRank(a.severity) })
	b.WriteString("| severity | rule | findings |\n|---|---|---:|\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s %s | %s: %s | %d |\n", severityMark(r.severity), r.severity, ruleLink(r.rule), prose(r.title), counts[r])
	}
	b.WriteString("\n")
}

// markdownError is the section of one error: title, objects, picture, why and
// the way out.
func markdownError(it digest.Item, noFix string, fixable bool) string {
	f := it.Finding
	var b strings.Builder
	fmt.Fprintf(&b, "### %s %s · %s: %s\n\n", severityMark(f.Severity), f.Severity, ruleLink(f.Rule), prose(f.Title))
	if f.PointerText != "" {
		fmt.Fprintf(&b, "On %s. ", safetext.MarkdownCode(digest.Clip(f.PointerText, mdMaxName)))
	}
	var objs []string
	for i, r := range f.Resources {
		if i == mdMaxObjects {
			objs = append(objs, fmt.Sprintf("and %d more", len(f.Resources)-i))
			break
		}
		o := safetext.Markdown(digest.Clip(r.Kind, mdMaxName)) + " " + safetext.MarkdownCode(digest.Clip(key(r), mdMaxName))
		if where := rawLocation(r); where != "" {
			o += " (" + safetext.MarkdownCode(digest.Clip(where, mdMaxName)) + ")"
		}
		objs = append(objs, o)
	}
	if len(objs) > 0 {
		b.WriteString("Objects: " + strings.Join(objs, ", ") + ".")
	}
	b.WriteString("\n\n")
	switch {
	case it.Picture != nil:
		b.WriteString("```mermaid\n" + graph.Mermaid(it.Picture) + "```\n\n" + mdPictureKey)
	case it.PictureNodes > 0:
		fmt.Fprintf(&b, "*No picture: %d objects are involved; `flipflop graph` draws them.*\n\n", it.PictureNodes)
	}
	fmt.Fprintf(&b, "**Why:** %s\n\n", safetext.Markdown(it.Why))
	if rec := it.Recommended(); rec != nil {
		fmt.Fprintf(&b, "**Way out:** `%s` — %s", rec.Way, prose(rec.TradeOff))
		if rec.Partial {
			b.WriteString(" (partly: the preview says what is left to do by hand)")
		}
		b.WriteString(". Preview it:\n\n")
		cmd := rec.Command
		if cmd == "" || len(cmd) > mdMaxCommand {
			cmd = "flipflop fix --way " + string(rec.Way) + " -- PATH..."
		}
		b.WriteString(codeBlock("sh", cmd))
		var also []string
		for _, w := range it.Ways {
			if w.Applicable && w.Way != rec.Way {
				also = append(also, fmt.Sprintf("`%s` (%s)", w.Way, prose(w.TradeOff)))
			}
		}
		if len(also) > 0 {
			b.WriteString("Other ways: " + strings.Join(also, "; ") + ". `flipflop fix` lists them with their commands.\n\n")
		}
	} else {
		why := ""
		switch {
		case len(it.Ways) > 0:
			why = " (" + safetext.Markdown(it.Ways[0].Reason) + ")"
		case noFix != "" && fixable:
			why = " (" + prose(noFix) + ")"
		}
		way := strings.TrimRight(digest.Sentences(unwrap(f.Remediation), 2, digest.MaxWhy), ".")
		fmt.Fprintf(&b, "**Way out:** %s%s. The ways out and what each costs: %s.\n\n",
			safetext.Markdown(way), why, safetext.MarkdownCode("flipflop explain "+f.Rule))
	}
	return b.String()
}

// mdPictureKey says what a picture's shapes are: Mermaid draws no column
// titles (graph.Mermaid says why).
const mdPictureKey = "*Rounded: Kargo Stages, upstream first · boxes: Argo CD Applications · cylinders: repository @ revision · dashed: pushes · red: what this error is about.*\n\n"

// markdownRow is one finding as a row of the table of other findings.
func markdownRow(f evaluator.Finding) string {
	about := f.PointerText
	if about == "" {
		about = f.Key
	}
	where := ""
	if i := primary(&f); i >= 0 {
		r := f.Resources[i]
		where = safetext.Markdown(digest.Clip(r.Kind+" "+key(r), mdMaxName)) + " " + safetext.Markdown(digest.Clip(rawLocation(r), mdMaxName))
	}
	sev := f.Severity
	if f.Waived != nil {
		sev += " (waived: " + safetext.Markdown(digest.Clip(f.Waived.Reason, 120)) + ")"
	}
	return fmt.Sprintf("| %s %s | %s | %s | %s |\n", severityMark(f.Severity), sev, ruleLink(f.Rule), safetext.Markdown(digest.Clip(about, 200)), where)
}

// ruleLink links a rule id to its documentation page; an id that is not one
// (a rule id is lower-case words joined by '-') is shown as text, unlinked.
func ruleLink(id string) string {
	if !ruleID.MatchString(id) {
		return safetext.Markdown(id)
	}
	return fmt.Sprintf("[`%s`](%s)", id, ruleDocURL(id))
}

func severityMark(severity string) string {
	switch severity {
	case evaluator.SeverityError:
		return "🔴"
	case "warning":
		return "🟠"
	}
	return "🔵"
}

// codeBlock fences text (one line, escaped by Text) as a code block of lang,
// with a fence longer than any backtick run in it.
func codeBlock(lang, text string) string {
	text = safetext.Text(text)
	fence := "```"
	for strings.Contains(text, fence) {
		fence += "`"
	}
	return fence + lang + "\n" + text + "\n" + fence + "\n\n"
}

// rawLocation is a resource's "file:line", unescaped (the caller escapes).
func rawLocation(r evaluator.Resource) string {
	switch {
	case r.File == "":
		return ""
	case r.Line > 0:
		return fmt.Sprintf("%s:%d", r.File, r.Line)
	default:
		return r.File
	}
}

// rawErrorLocation is where a load error is, unescaped.
func rawErrorLocation(e evaluator.LoadError) string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d", e.Path, e.Line)
	}
	return e.Path
}
