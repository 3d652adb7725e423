package diagnose

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/flipflop-dev/flipflop/internal/safetext"
	"github.com/flipflop-dev/flipflop/internal/textwrap"
)

// Formats lists the output formats Write knows.
func Formats() []string { return []string{"text", "json"} }

// Write renders a report as text or json.
func Write(w io.Writer, format string, r *Report) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	case "text", "":
		return writeText(w, r)
	}
	return fmt.Errorf("unknown output format %q", format)
}

func writeText(w io.Writer, r *Report) error {
	var b strings.Builder
	for _, d := range r.Diagnoses {
		label := "UNHEALTHY"
		if d.Contradiction {
			label = "FLIP-FLOP"
			if d.Kind == Unreachable {
				label = "NEVER-MATCHES"
			}
		}
		fmt.Fprintf(&b, "%s  Stage %s  %s\n", label, safetext.Text(d.Stage), d.Cause)
		if loc := location(d); loc != "" {
			fmt.Fprintf(&b, "  source     %s\n", loc)
		}
		if d.Pointer != "" {
			fmt.Fprintf(&b, "  pointer    %s\n", safetext.Text(d.Pointer))
		}
		if d.Head != "" {
			held := "no Stage's last Promotion"
			if len(d.HeadHeldBy) > 0 {
				held = "pinned by " + names(d.HeadHeldBy)
			}
			fmt.Fprintf(&b, "  head       %s  (%s)\n", safetext.Text(d.Head), held)
		}
		if d.Promotion != "" {
			fmt.Fprintf(&b, "  promotion  %s\n", safetext.Text(d.Promotion))
		}
		if len(d.Stages) > 0 {
			var table strings.Builder
			tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
			for _, s := range d.Stages {
				health := s.Health
				if health == "" {
					health = "(no status)"
				}
				first := true
				for _, p := range s.Desired {
					note := ""
					if s.HoldsHead && d.Head == p.Revision {
						note = "holds the head"
					}
					stage, h := "", ""
					if first {
						stage, h = "Stage "+safetext.Text(s.Stage), safetext.Text(health)
					}
					fmt.Fprintf(tw, "  %s\t%s\tpins %s\t%s\t%s\n", stage, h, appSource(safetext.Text(p.Application), p.Source), safetext.Text(p.Revision), note)
					first = false
				}
				if first {
					fmt.Fprintf(tw, "  Stage %s\t%s\tpins nothing it checks\t\t\n", safetext.Text(s.Stage), safetext.Text(health))
				}
			}
			tw.Flush()
			for _, line := range strings.SplitAfter(table.String(), "\n") {
				if line != "" {
					b.WriteString(strings.TrimRight(line, " \n") + "\n")
				}
			}
		}
		b.WriteString("  why\n")
		b.WriteString(textwrap.Wrap(safetext.Text(d.Message), "    ", 96))
		if len(d.Issues) > 0 {
			b.WriteString("  Kargo says\n")
			for _, i := range d.Issues {
				b.WriteString(textwrap.Wrap(safetext.Text(i), "    ", 96))
			}
		}
		if d.Remediation != "" {
			b.WriteString("  fix\n")
			for _, line := range strings.Split(strings.TrimRight(d.Remediation, "\n"), "\n") {
				b.WriteString("    " + line + "\n")
			}
		}
		b.WriteString("\n")
	}
	for _, e := range r.Errors {
		fmt.Fprintf(&b, "ERROR  could not read %s\n", safetext.Text(e.Error()))
	}
	if len(r.Errors) > 0 {
		b.WriteString("\n")
	}
	if r.Note != "" {
		lines := strings.Split(strings.TrimRight(r.Note, "\n"), "\n")
		b.WriteString(lines[0] + "\n")
		for _, line := range lines[1:] {
			b.WriteString(strings.TrimRight("  "+line, " ") + "\n")
		}
		b.WriteString("\n")
	}
	s := r.Summary
	fmt.Fprintf(&b, "%d Stage(s) read, %d with a health status: %d Unhealthy, %d on a desired-revision mismatch, %d explained by a configuration contradiction\n",
		s.Stages, s.WithHealth, s.Unhealthy, s.Mismatch, s.Contradictions)
	if len(r.Errors) > 0 {
		fmt.Fprintf(&b, "incomplete: %d input(s) could not be read; the diagnosis covers only what was read\n", len(r.Errors))
	}
	// Values from the cluster and the files (names, Kargo's messages) are
	// escaped as a whole, line by line: this text has no control character of
	// its own but line breaks.
	_, err := io.WriteString(w, safetext.Lines(b.String()))
	return err
}

func location(d Diagnosis) string {
	if d.Resource.File == "" {
		return ""
	}
	if d.Resource.Line > 0 {
		return fmt.Sprintf("%s:%d", safetext.Text(d.Resource.File), d.Resource.Line)
	}
	return safetext.Text(d.Resource.File)
}

func appSource(app string, source int) string {
	if source == 0 {
		return app
	}
	return fmt.Sprintf("%s (source %d)", app, source)
}
