package explain

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/flipflop-dev/flipflop/evaluator"
	"github.com/flipflop-dev/flipflop/internal/safetext"
	"github.com/flipflop-dev/flipflop/internal/textwrap"
)

// width is where narrative sentences wrap (Kargo's messages never wrap, so
// they can be searched for).
const width = 100

// Write prints a timeline for every finding of a timeline rule (of rules, the
// bundle's) in report, then a line per other finding.
func Write(w io.Writer, m *evaluator.Model, report *evaluator.Report, rules []evaluator.Rule) error {
	timelines := Build(m, report, rules)
	timeline := Rules(rules)
	var b strings.Builder
	if len(timelines) == 0 {
		b.WriteString(textwrap.Wrap("No shared-branch contradiction: no Stage pins desiredRevision on a branch that "+
			"another promotion moves.", "", width))
	}
	for i, t := range timelines {
		if i > 0 {
			b.WriteString("\n")
		}
		t.write(&b)
	}
	var others []evaluator.Finding
	for _, f := range report.Findings {
		if !slices.Contains(timeline, f.Rule) {
			others = append(others, f)
		}
	}
	if len(others) > 0 {
		b.WriteString("\nOther findings (flipflop check shows them in full; flipflop explain RULE documents a rule):\n")
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		for _, f := range others {
			// What the finding is about: its pointer when it names no pin,
			// else its objects, else its key.
			about := resources(f)
			if f.PointerText != "" && len(f.Pins) == 0 {
				about = safetext.Text(f.PointerText)
			}
			if about == "" {
				about = safetext.Text(f.Key)
			}
			waived := ""
			if f.Waived != nil {
				waived = " (waived)"
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s%s\n", f.Severity, f.Rule, about, waived)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, safetext.Lines(b.String()))
	return err
}

// Text is the timeline as explain prints it: the pointer, who pins and pushes
// to it, each promotion and what it does to every pinning Stage's health, the
// health table and what Kargo reports; every value escaped for display.
func (t *Timeline) Text() string {
	var b strings.Builder
	t.write(&b)
	return safetext.Lines(b.String())
}

func resources(f evaluator.Finding) string {
	var parts []string
	for _, r := range f.Resources {
		parts = append(parts, fmt.Sprintf("%s %s/%s", safetext.Text(r.Kind), safetext.Name(r.Namespace), safetext.Name(r.Name)))
	}
	return strings.Join(parts, ", ")
}

func (t *Timeline) write(b *strings.Builder) {
	b.WriteString(safetext.Text(t.Pointer.Text) + "\n")
	if t.Pointer.Assumed {
		fmt.Fprintf(b, "  (an Application tracks HEAD, taken to be %s; set --default-branch if it is not)\n", safetext.Text(t.Pointer.Name))
	}
	for _, f := range t.Findings {
		waived := ""
		if f.Waived != nil {
			waived = fmt.Sprintf(" (waived: %s)", safetext.Text(f.Waived.Reason))
		}
		fmt.Fprintf(b, "  %s (%s): %s%s\n", f.Rule, f.Severity, f.Title, waived)
	}
	var pinned []string
	for _, s := range t.Pinners {
		pinned = append(pinned, fmt.Sprintf("%s → %s", t.name(s), t.pinnedApps(s)))
	}
	project := ""
	if ns := t.project(); ns != "" {
		project = fmt.Sprintf(" (Stages of project %s)", safetext.Name(ns))
	}
	fmt.Fprintf(b, "  pinned by: %s%s\n", strings.Join(pinned, ", "), project)
	fmt.Fprintf(b, "  pushed by: %s\n", t.list(t.Writers, "no Stage"))
	if len(t.Omitted) > 0 {
		b.WriteString(textwrap.Wrap(fmt.Sprintf("Left out of the replay below: %s.", t.list(t.Omitted, "")), "  ", width))
	}
	b.WriteString("\n")

	for i, s := range t.Steps {
		for j, line := range s.Lines {
			prefix := "     "
			if j == 0 {
				prefix = fmt.Sprintf("  %d. ", i+1)
			}
			b.WriteString(prefix + line + "\n")
		}
	}
	b.WriteString("\n")

	tw := tabwriter.NewWriter(b, 0, 4, 2, ' ', 0)
	head := safetext.Text(t.Pointer.Name)
	if head == "" {
		head = "head"
	}
	cols := []string{"  after", "promotion", head}
	for _, p := range t.Pinners {
		cols = append(cols, t.name(p))
	}
	fmt.Fprintln(tw, strings.Join(cols, "\t"))
	for i, s := range t.Steps {
		row := []string{fmt.Sprintf("  %d", i+1), t.name(s.Stage), orDash(s.Head)}
		for _, p := range t.Pinners {
			row = append(row, s.Health[p])
		}
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	_ = tw.Flush()
	b.WriteString("\n")

	if t.Issue != "" {
		fmt.Fprintf(b, "  Kargo then reports on Stage %s (status.health.issues):\n    %s\n", t.name(t.IssueStage), safetext.Text(t.Issue))
	}
	b.WriteString(textwrap.Wrap(t.closing(), "  ", width))
	if len(t.Findings) > 0 {
		fmt.Fprintf(b, "  Ways out, and what each costs: flipflop explain %s\n", t.Findings[0].Rule)
	}
}

// closing sums the replay up: who can be Healthy when, what Argo CD shows, and
// why auto-sync does not matter.
func (t *Timeline) closing() string {
	var s []string
	allWrite := true
	for _, p := range t.Pinners {
		if !slices.Contains(t.Writers, p) {
			allWrite = false
		}
	}
	var foreign []string
	for _, w := range t.Writers {
		if !slices.Contains(t.Pinners, w) {
			foreign = append(foreign, w)
		}
	}
	var never, sometimes []string
	for _, p := range t.Pinners {
		healthy := false
		for _, step := range t.Steps {
			healthy = healthy || step.Health[p] == Healthy
		}
		if healthy {
			sometimes = append(sometimes, p)
		} else {
			never = append(never, p)
		}
	}
	switch {
	case len(t.Pinners) > 1 && allWrite && len(foreign) == 0 && len(never) == 0:
		s = append(s, fmt.Sprintf("At most one of %s is Healthy at a time: the one promoted last.", t.list(t.Pinners, "")))
	case len(foreign) > 0 && len(sometimes) > 0:
		s = append(s, fmt.Sprintf("%s %s Healthy only until %s %s to %s again.",
			t.list(sometimes, ""), plural(len(sometimes), "stays", "stay"), t.list(foreign, ""), plural(len(foreign), "pushes", "push"), orName(t.Pointer.Name)))
	}
	if len(never) > 0 {
		s = append(s, fmt.Sprintf("%s %s never Healthy.", t.list(never, ""), plural(len(never), "is", "are")))
	}
	s = append(s, "Argo CD meanwhile shows the Applications Synced and Healthy.")
	var on []string
	off := len(t.AutoSync) > 0
	for _, app := range slicesSorted(t.AutoSync) {
		if t.AutoSync[app] == true {
			on = append(on, t.name(app))
		}
		off = off && t.AutoSync[app] == false
	}
	switch {
	case len(on) > 0:
		s = append(s, fmt.Sprintf("Auto-sync is on for %s; turning it off would not help: Argo CD refreshes status.sync.revision either way.", strings.Join(on, ", ")))
	case off:
		s = append(s, "Auto-sync being off does not help: Argo CD refreshes status.sync.revision without it.")
	default:
		s = append(s, "Auto-sync does not matter: Argo CD refreshes status.sync.revision with or without it.")
	}
	return strings.Join(s, " ")
}

func (t *Timeline) pinnedApps(stage string) string {
	var apps []string
	for _, p := range t.pins[stage] {
		if n := t.name(p.Application); !slices.Contains(apps, n) {
			apps = append(apps, n)
		}
	}
	return strings.Join(apps, ", ")
}

func (t *Timeline) project() string {
	ns := ""
	for _, s := range append(slices.Clone(t.Pinners), t.Writers...) {
		n := namespaceOf(s)
		if ns != "" && n != ns {
			return ""
		}
		ns = n
	}
	if ns == "" || t.label(t.Pinners[0]) == t.Pinners[0] {
		return ""
	}
	return ns
}

func (t *Timeline) list(keys []string, none string) string {
	if len(keys) == 0 {
		return none
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = t.name(k)
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func orName(s string) string {
	if s == "" {
		return "the branch"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return NotPromoted
	}
	return s
}

func slicesSorted(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
