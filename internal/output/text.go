package output

import (
	"fmt"
	"io"
	"strings"

	"golang.org/x/term"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/safetext"
	"github.com/flipflop-dev/flipflop/internal/textwrap"
)

// textWidth is the column the text format wraps at when standard output is
// not a terminal (a CI log, a file, a pipe), and the JUnit report always.
const textWidth = 100

// minTextWidth is the narrowest a terminal's width is taken as.
const minTextWidth = 20

// terminalWidth returns the width of w in columns when w is a terminal whose
// size is known; tests replace it.
var terminalWidth = func(w io.Writer) (int, bool) {
	f, ok := w.(interface{ Fd() uintptr })
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return 0, false
	}
	width, _, err := term.GetSize(int(f.Fd()))
	return width, err == nil && width > 0
}

// wrapWidth is the column the text format wraps w at: the terminal's width
// when w is a terminal, else textWidth.
func wrapWidth(w io.Writer) int {
	if width, ok := terminalWidth(w); ok {
		return max(width, minTextWidth)
	}
	return textWidth
}

// writeText writes the report for a person at a terminal: per finding, what is
// shared, each object involved with file:line, why it breaks and the ways out.
// Colour (Options.Color) paints the severity, makes rule ids bold and dims
// locations, and leaves the layout alone. Prose wraps at the terminal's width
// when w is a terminal, else at textWidth columns.
func writeText(w io.Writer, report *evaluator.Report, opts Options) error {
	pal := palette{on: useColor(w, opts.Color)}
	width := wrapWidth(w)
	var b strings.Builder
	for i, f := range report.Findings {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "%s  %s  %s\n", pal.severity(f.Severity, strings.ToUpper(f.Severity)), pal.bold(f.Rule), f.Title)
		if f.PointerText != "" {
			fmt.Fprintf(&b, "  pointer  %s\n", safetext.Text(f.PointerText))
		}
		if wv := f.Waived; wv != nil {
			fmt.Fprintf(&b, "  waived   %s\n", pal.dim(waiverNote(wv)))
		}
		if f.RuleSeverity != "" {
			fmt.Fprintf(&b, "  severity %s\n", pal.dim(severityNote(f)))
		}
		autoSync, _ := f.Details["autoSync"].(map[string]any)
		for _, r := range f.Resources {
			line := fmt.Sprintf("  %-11s %-32s %s%s", safetext.Text(r.Kind), qualified(r), pal.dim(location(r)), resourceNote(r, autoSync))
			b.WriteString(strings.TrimRight(line, " ") + "\n")
		}
		b.WriteString("  why\n")
		b.WriteString(textwrap.Wrap(safetext.Text(f.Message), "    ", width))
		if f.Remediation != "" {
			b.WriteString("  fix\n")
			for _, line := range strings.Split(strings.TrimRight(f.Remediation, "\n"), "\n") {
				b.WriteString("    " + line + "\n")
			}
		}
		fmt.Fprintf(&b, "  more     %s\n", pal.dim("flipflop explain "+f.Rule))
	}
	if len(report.Errors) > 0 {
		if len(report.Findings) > 0 {
			b.WriteString("\n")
		}
		b.WriteString("input errors (these files or documents were not checked):\n")
		for _, e := range report.Errors {
			fmt.Fprintf(&b, "  %s %s\n", pal.dim(errorLocation(e)+":"), safetext.Text(e.Message))
		}
	}
	if len(report.Rendered) > 0 {
		if len(report.Findings) > 0 || len(report.Errors) > 0 {
			b.WriteString("\n")
		}
		writeRendered(&b, report.Rendered, pal, width)
	}
	if len(report.Excluded) > 0 {
		if len(report.Findings) > 0 || len(report.Errors) > 0 || len(report.Rendered) > 0 {
			b.WriteString("\n")
		}
		b.WriteString("excluded (not read and not checked):\n")
		for _, e := range report.Excluded {
			fmt.Fprintf(&b, "  %s  %s\n", safetext.Text(e.Path), pal.dim(safetext.Text(fmt.Sprintf("(%q, %s)", e.Pattern, e.Source))))
		}
	}
	if len(report.Findings) > 0 || len(report.Errors) > 0 || len(report.Rendered) > 0 || len(report.Excluded) > 0 {
		b.WriteString("\n")
	}
	s := report.Summary
	fmt.Fprintf(&b, "%s: %s, %s, %s",
		objectsChecked(s), plural(s.Error, "error"), plural(s.Warning, "warning"), plural(s.Info, "info"))
	b.WriteString(summaryTail(report) + "\n")
	if k := kargoNote(report.Kargo); k != "" {
		b.WriteString(pal.dim(k) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeRendered lists the directories read as Helm charts or kustomizations:
// a line per directory, so that a user can tell what was checked; the notes
// wrap at width.
func writeRendered(b *strings.Builder, roots []evaluator.RenderedRoot, pal palette, width int) {
	b.WriteString("rendered (the other paths were read as plain YAML):\n")
	for _, r := range roots {
		how := "kustomize "
		if r.Mode == evaluator.ModeHelm {
			how = "helm chart"
		}
		var note string
		switch {
		case r.Failed:
			note = "not rendered: see the input errors"
		default:
			note = plural(r.Objects, "object")
			if r.Chart != "" {
				note += ", chart " + safetext.Text(r.Chart)
			}
			if len(r.Values) > 0 {
				note += ", values: " + safetext.Text(strings.Join(r.Values, ", "))
			}
			if r.BaseOf != "" {
				note += ", also read as a base of " + safetext.Text(r.BaseOf)
			}
		}
		fmt.Fprintf(b, "  %s  %s  %s\n", how, safetext.Text(r.Path), pal.dim("("+note+")"))
		if len(r.NotListed) > 0 {
			why := "not listed by the kustomization, which is all that reads its directory, so nothing applies them: not checked: "
			if r.Mode == evaluator.ModeHelm {
				why = "not templates of the chart (outside templates/), which is all that reads its directory, so nothing applies them: not checked: "
			}
			b.WriteString(textwrap.Wrap(why+safetext.Text(strings.Join(r.NotListed, ", ")), "    ", width))
		}
	}
}

// kargoNote says which Kargo version the findings assume, and why: the
// version-dependent facts (fields a step may have, how the authorized-stage
// annotation is read) follow it. Escaped for display.
func kargoNote(k *evaluator.KargoVersion) string {
	return kargoSentence(k, safetext.Text, "--kargo-version")
}

// kargoSentence is kargoNote's sentence with each value (a version, where it
// was named) passed through value and the flag written as flag, so that each
// format escapes only the values.
func kargoSentence(k *evaluator.KargoVersion, value func(string) string, flag string) string {
	if k == nil || k.Version == "" {
		return ""
	}
	if k.Assumed {
		s := "Kargo " + value(k.Version) + " assumed, the newest release flipflop models (name yours with " + flag + ")"
		if k.Source != "" {
			s += "; " + value(k.Source)
		}
		return s
	}
	s := "Kargo " + value(k.Version)
	if k.Named != "" {
		s = "Kargo " + value(k.Named)
	}
	if k.Source != "" {
		s += " (from " + value(k.Source) + ")"
	}
	if k.Named != "" {
		s += ", read as " + value(k.Version) + ", the newest release flipflop models"
	}
	return s
}

// objectsChecked opens the summary line: "6 objects checked", and how many
// were skipped because no rule reads their kind.
func objectsChecked(s evaluator.Summary) string {
	out := plural(s.Objects, "object") + " checked"
	if s.Skipped > 0 {
		out += fmt.Sprintf(" (%d more skipped: no rule reads their kind)", s.Skipped)
	}
	return out
}

// summaryTail is what the summary line adds after the severity counts:
// waived findings and input errors, when there are any.
func summaryTail(report *evaluator.Report) string {
	var s string
	if n := report.Summary.Waived; n > 0 {
		s += fmt.Sprintf("; %d waived", n)
	}
	if n := len(report.Errors); n > 0 {
		s += "; " + plural(n, "input error")
	}
	if n := len(report.Excluded); n > 0 {
		s += "; " + plural(n, "path") + " excluded"
	}
	return s
}

// waiverNote says why and by what a finding is waived, escaped for display:
// "reason; by waiver 1 (rule); expires 2031-01-31".
func waiverNote(wv *evaluator.Waived) string {
	s := wv.Reason
	if wv.By != "" {
		s += "; by " + wv.By
	}
	if wv.Expires != "" {
		s += "; expires " + wv.Expires
	}
	return safetext.Text(s)
}

// errorLocation is where a load error is, escaped for display: "path:line"
// or "path" (the part of LoadError.Error before the message).
func errorLocation(e evaluator.LoadError) string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d", safetext.Text(e.Path), e.Line)
	}
	return safetext.Text(e.Path)
}

// qualified names a resource for display: "namespace/name", each part
// quoted when Kubernetes would reject it.
func qualified(r evaluator.Resource) string {
	if r.Namespace == "" {
		return safetext.Name(r.Name)
	}
	return safetext.Name(r.Namespace) + "/" + safetext.Name(r.Name)
}

// key is a resource's "namespace/name" as the policies spell it, for lookups.
func key(r evaluator.Resource) string {
	if r.Namespace == "" {
		return r.Name
	}
	return r.Namespace + "/" + r.Name
}

// location is a resource's "file:line", escaped for display.
func location(r evaluator.Resource) string {
	switch {
	case r.File == "":
		return ""
	case r.Line > 0:
		return fmt.Sprintf("%s:%d", safetext.Text(r.File), r.Line)
	default:
		return safetext.Text(r.File)
	}
}

func resourceNote(r evaluator.Resource, autoSync map[string]any) string {
	var notes []string
	if r.GeneratedBy != "" {
		notes = append(notes, "generated by "+safetext.Text(r.GeneratedBy))
	}
	if r.RenderedBy != "" {
		notes = append(notes, "rendered by "+safetext.Text(r.RenderedBy))
	}
	if r.Kind == "Application" {
		switch autoSync[key(r)] {
		case true:
			notes = append(notes, "auto-sync on")
		case false:
			notes = append(notes, "auto-sync off")
		case "unknown":
			notes = append(notes, "auto-sync unknown")
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return "  (" + strings.Join(notes, ", ") + ")"
}

func plural(n int, word string) string {
	if n == 1 || word == "info" {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// severityNote says that a finding is reported at a severity the settings
// gave its rule.
func severityNote(f evaluator.Finding) string {
	return fmt.Sprintf("%s by configuration (--severity or severity: in .flipflop.yaml); the rule's own is %s", f.Severity, f.RuleSeverity)
}
